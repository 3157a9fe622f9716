#include "textflag.h"

// func Ticks() int64
TEXT ·Ticks(SB),NOSPLIT,$0-8
	RDTSC
	SHLQ	$32, DX
	ORQ	DX, AX
	MOVQ	AX, ret+0(FP)
	RET

// func Caller(hops uintptr) uintptr follows hops saved frame pointers up
// from the caller's frame and returns the return address stored beside
// the last one. Which hops value gives the return address of a given
// function is found at start-up (see probeHops).
TEXT ·Caller(SB),NOSPLIT,$0-16
	MOVQ	BP, AX
	MOVQ	hops+0(FP), CX
loop:
	TESTQ	CX, CX
	JZ	done
	MOVQ	(AX), AX
	DECQ	CX
	JMP	loop
done:
	MOVQ	8(AX), AX
	MOVQ	AX, ret+8(FP)
	RET

// func readP() (goid uint64, panicking uintptr, ticks int64, p int64)
//
// One call gives the hot path everything it needs from the machine: the
// current goroutine's id (g.goid, at goidOff), whether it is panicking
// (g._panic, at offset panicOff in every Go release calltrail knows,
// checked at start-up), the time stamp counter, and the id of the P the
// goroutine runs on: g.m at mOff (48), m.p at pOff, p.id at 0; or -1 if
// pOff is 0, unknown. It reads the offsets itself, which saves the
// caller passing them on the stack.
TEXT ·readP(SB),NOSPLIT,$0-32
	MOVQ	TLS, CX
	MOVQ	0(CX)(TLS*1), CX
	MOVQ	·goidOff(SB), AX
	MOVQ	(CX)(AX*1), AX
	MOVQ	AX, goid+0(FP)
	MOVQ	32(CX), AX
	MOVQ	AX, panicking+8(FP)
	MOVQ	$-1, DX
	MOVQ	·pOff(SB), AX
	TESTQ	AX, AX
	JZ	nop
	MOVQ	48(CX), DX
	MOVQ	(DX)(AX*1), DX
	MOVLQSX	(DX), DX
nop:
	MOVQ	DX, p+24(FP)
	RDTSC
	SHLQ	$32, DX
	ORQ	DX, AX
	MOVQ	AX, ticks+16(FP)
	RET

// func at(addr uintptr) uint64 reads the word at addr. Used only at
// start-up, to find and check offsets.
TEXT ·at(SB),NOSPLIT,$0-16
	MOVQ	addr+0(FP), AX
	MOVQ	(AX), AX
	MOVQ	AX, ret+8(FP)
	RET

// func gptr() uintptr returns the current goroutine's g.
TEXT ·gptr(SB),NOSPLIT,$0-8
	MOVQ	TLS, CX
	MOVQ	0(CX)(TLS*1), CX
	MOVQ	CX, ret+0(FP)
	RET
