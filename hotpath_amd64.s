//go:build !race

#include "go_asm.h"
#include "textflag.h"

// The common cases of tracer.enter and tracer.exitErr (see hotpath_asm.go),
// step for step, but for how they find the P's ring: take the ring the
// goroutine came to own last and check that it is the ring of the P it
// runs on, and that the goroutine owns it still (OWNRING), stamp the event as
// clock.Units does and take a slot as ring.Take does (TAKE), and fill it
// as ring.Put does. Any other case jumps to the Go code, with the
// arguments as they came.
//
// The g is the one in R14. Go code, which alone calls these functions,
// keeps the g there (the register ABI's fixed register), and an
// assembly function entered from it finds it there. That saves the load
// through the thread's storage, the first of the chain of loads that
// ends at the ring's slot: each costs a traced call its latency, and this
// one 0.04-0.07x the floor (README, Benchmarks). setHot checks at
// start-up that R14 holds the g (gInR14), or leaves every call to Go.

// OWNRING leaves in SI the ring that the goroutine in R9, running on g
// (in CX), last came to own (the tracer's owned table), if it is the ring
// of the P it runs on, by the P's address, and the goroutine owns it
// still; it jumps to fail if not. hot.pOff is in SI. The table is read
// beside the m and its P, not after them: through the P's id, the ring
// is two dependent loads further, which cost a tenth of a traced call
// (README, Benchmarks). For the same reason its entry is the g's
// (ownedKey), not the goroutine id's, and its address is in ownedTable,
// not in the tracer.
#define OWNRING(fail) \
	MOVQ	CX, DI \
	SHRQ	$const_ownedShift, DI \
	ANDQ	$const_ownedMask, DI \
	MOVQ	·ownedTable(SB), DX \
	MOVQ	(DX)(DI*8), DI		/* the ring it last owned */ \
	TESTQ	DI, DI \
	JZ	fail \
	MOVQ	const_gM(CX), CX	/* g.m */ \
	MOVQ	(CX)(SI*1), CX		/* m.p */ \
	CMPQ	CX, const_ringP(DI) \
	JNE	fail			/* another P's ring */ \
	CMPQ	R9, const_ringOwner(DI) \
	JNE	fail \
	MOVQ	DI, SI

// TAKE reads the time into AX and takes the next slot of the ring in SI,
// into R10; it jumps to fail if the ring is full.
#define TAKE(fail) \
	RDTSC \
	SHLQ	$32, DX \
	ORQ	DX, AX \
	MOVQ	·hot+hotState_shift(SB), CX \
	SARQ	CX, AX \
	MOVQ	const_ringState(SI), R10 \
	SHRQ	$const_ringShift, R10	/* head */ \
	LEAQ	1(R10), R11 \
	MOVQ	R11, R12 \
	SUBQ	const_ringTail(SI), R12 \
	MOVQ	$const_ringHeadMask, R13 \
	ANDQ	R13, R12 \
	CMPQ	R12, const_ringLen(SI) \
	JHI	fail \
	ANDQ	R13, R11 \
	SHLQ	$const_ringShift, R11 \
	MOVQ	R11, const_ringState(SI) \
	ANDQ	const_ringMask(SI), R10 \
	SHLQ	$const_slotShift, R10 \
	ADDQ	const_ringSlots(SI), R10

// func enterFast(f *Func) Call
TEXT ·enterFast(SB),NOSPLIT,$0-16
	MOVQ	·hot+hotState_pOff(SB), SI
	TESTQ	SI, SI
	JZ	slow
	MOVQ	f+0(FP), BX
	MOVL	Func_id(BX), R8		// R8 = id, with the idMain flag
	TESTL	R8, R8
	JZ	slow
	MOVQ	R14, CX			// g
	MOVQ	·hot+hotState_goidOff(SB), DI
	MOVQ	(CX)(DI*1), R9
	MOVQ	$const_gMask, DI
	ANDQ	DI, R9			// R9 = the goroutine, as a Call keeps it
	OWNRING(slow)
	TAKE(slow)
	MOVQ	AX, const_slotTime(R10)
	MOVL	R8, DX
	ANDL	$const_fidMask, DX
	SHLQ	$2, DX
	ORQ	$const_enterOp, DX
	SHLQ	$const_opBits, R9
	ORQ	R9, DX			// DX = tracewrite.RawEnter(g, id)
	MOVQ	DX, const_slotWord(R10)
	ANDL	$const_idMain, R8
	SHLQ	$const_mainShift, R8
	ORQ	R8, DX			// the Call, with callMain
	MOVQ	DX, ret+8(FP)
	RET
slow:
	JMP	·enterSlow(SB)

// func exitFast(c Call)
TEXT ·exitFast(SB),NOSPLIT,$0-8
	MOVQ	·hot+hotState_pOff(SB), SI
	TESTQ	SI, SI
	JZ	xslow
	MOVQ	c+0(FP), R9
	MOVQ	R9, R8
	SHRQ	$62, R8
	JNZ	xslow			// callRoot or callMain
	SHRQ	$const_opBits, R9	// R9 = the goroutine
	MOVQ	R14, CX			// g
	CMPQ	const_gPanic(CX), $0
	JNE	xslow			// panicking: exitKind tells how the call ends
	OWNRING(xslow)
	TAKE(xslow)
	MOVQ	AX, const_slotTime(R10)
	SHLQ	$const_opBits, R9
	ORQ	$const_returnOp, R9	// tracewrite.RawExit(g, records.Return)
	MOVQ	R9, const_slotWord(R10)
	RET
xslow:
	JMP	·exitSlow(SB)

// func gInR14() uintptr
TEXT ·gInR14(SB),NOSPLIT,$0-8
	MOVQ	R14, ret+0(FP)
	RET
