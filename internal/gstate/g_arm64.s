#include "textflag.h"

// func Ticks() int64
TEXT ·Ticks(SB),NOSPLIT,$0-8
	MRS	CNTVCT_EL0, R0
	MOVD	R0, ret+0(FP)
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

// func readP() (goid uint64, panicking uintptr, ticks int64, p int64)
// See g_amd64.s. The counter is the virtual count register CNTVCT_EL0.
TEXT ·readP(SB),NOSPLIT,$0-32
	MOVD	·goidOff(SB), R0
	MOVD	(g)(R0), R1
	MOVD	R1, goid+0(FP)
	MOVD	32(g), R1
	MOVD	R1, panicking+8(FP)
	MOVD	$-1, R1
	MOVD	·pOff(SB), R0
	CBZ	R0, nop
	MOVD	48(g), R1
	MOVD	(R1)(R0), R1
	MOVW	(R1), R1
nop:
	MOVD	R1, p+24(FP)
	MRS	CNTVCT_EL0, R2
	MOVD	R2, ticks+16(FP)
	RET

// func at(addr uintptr) uint64
TEXT ·at(SB),NOSPLIT,$0-16
	MOVD	addr+0(FP), R0
	MOVD	(R0), R1
	MOVD	R1, ret+8(FP)
	RET

// func gptr() uintptr
TEXT ·gptr(SB),NOSPLIT,$0-8
	MOVD	g, R0
	MOVD	R0, ret+0(FP)
	RET
