#include "textflag.h"

// func read(goidOff uintptr) (goid uint64, panicking uintptr, ticks int64)
//
// One call gives the hot path everything it needs from the machine: the
// current goroutine's id, whether it is panicking (g._panic, at offset
// panicOff in every Go release calltrail knows, checked at start-up), and
// the time stamp counter.
TEXT ·read(SB),NOSPLIT,$0-32
	MOVQ	TLS, CX
	MOVQ	0(CX)(TLS*1), CX
	MOVQ	goidOff+0(FP), AX
	MOVQ	(CX)(AX*1), AX
	MOVQ	AX, goid+8(FP)
	MOVQ	32(CX), AX
	MOVQ	AX, panicking+16(FP)
	RDTSC
	SHLQ	$32, DX
	ORQ	DX, AX
	MOVQ	AX, ticks+24(FP)
	RET

// func Ticks() int64
TEXT ·Ticks(SB),NOSPLIT,$0-8
	RDTSC
	SHLQ	$32, DX
	ORQ	DX, AX
	MOVQ	AX, ret+0(FP)
	RET

// func word(off uintptr) uint64 reads the word at offset off of the
// current goroutine's g. Used only at start-up, to find and check offsets.
TEXT ·word(SB),NOSPLIT,$0-16
	MOVQ	TLS, CX
	MOVQ	0(CX)(TLS*1), CX
	MOVQ	off+0(FP), AX
	MOVQ	(CX)(AX*1), AX
	MOVQ	AX, ret+8(FP)
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
