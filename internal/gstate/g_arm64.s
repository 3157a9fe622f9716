#include "textflag.h"

// func read(goidOff uintptr) (goid uint64, panicking uintptr, ticks int64)
// See g_amd64.s. The counter is the virtual count register CNTVCT_EL0.
TEXT ·read(SB),NOSPLIT,$0-32
	MOVD	goidOff+0(FP), R0
	MOVD	(g)(R0), R1
	MOVD	R1, goid+8(FP)
	MOVD	32(g), R1
	MOVD	R1, panicking+16(FP)
	MRS	CNTVCT_EL0, R2
	MOVD	R2, ticks+24(FP)
	RET

// func Ticks() int64
TEXT ·Ticks(SB),NOSPLIT,$0-8
	MRS	CNTVCT_EL0, R0
	MOVD	R0, ret+0(FP)
	RET

// func word(off uintptr) uint64
TEXT ·word(SB),NOSPLIT,$0-16
	MOVD	off+0(FP), R0
	MOVD	(g)(R0), R1
	MOVD	R1, ret+8(FP)
	RET

// func Caller(hops uintptr) uintptr: see g_amd64.s.
TEXT ·Caller(SB),NOSPLIT,$0-16
	MOVD	R29, R0
	MOVD	hops+0(FP), R1
loop:
	CBZ	R1, done
	MOVD	(R0), R0
	SUB	$1, R1
	B	loop
done:
	MOVD	8(R0), R0
	MOVD	R0, ret+8(FP)
	RET
