//go:build !race && !purego

#include "textflag.h"

// func encodeEvents(out unsafe.Pointer, in unsafe.Pointer, n int, last int64, gw uint64) (done, written int, t int64, exits uint64)
//
// encodeRunGeneric's loop (raw.go), step for step: two events at a time
// while both have fields below 1<<14 (quad), otherwise one, with fields
// below 1<<21 (pair). Registers: SI the next event, R8 the end of the
// events, DI the output, R9 the last time, R10 the goroutine's word, R11
// the exits, R12 the lanes' bit 14, R13 the lanes' 0x3f80 (both quad's
// carry constant and its second group's mask); AX, BX, CX, DX and R15
// are scratch.
TEXT ·encodeEvents(SB), NOSPLIT, $0-72
	MOVQ	out+0(FP), DI
	MOVQ	in+8(FP), SI
	MOVQ	n+16(FP), R8
	SHLQ	$4, R8
	ADDQ	SI, R8
	MOVQ	last+24(FP), R9
	MOVQ	gw+32(FP), R10
	XORQ	R11, R11
	MOVQ	$0x4000400040004000, R12
	MOVQ	$0x3f803f803f803f80, R13

loop:
	LEAQ	32(SI), AX
	CMPQ	AX, R8
	JA	single	// one event left, or none
	// The words first, then the times: a word not yet written stops
	// the loop before its time is read.
	MOVQ	0(SI), AX
	XORQ	R10, AX	// op
	MOVQ	16(SI), BX
	XORQ	R10, BX	// op2
	MOVQ	AX, CX
	ORQ	BX, CX
	CMPQ	CX, $0x4000
	JAE	single
	CMPQ	AX, $3	// RawGoroutineOp
	JEQ	done
	CMPQ	BX, $3
	JEQ	single
	MOVQ	8(SI), CX	// the first time
	MOVQ	CX, DX
	SUBQ	R9, DX	// d
	MOVQ	DX, R15
	SARQ	$63, R15
	ADDQ	DX, DX
	XORQ	R15, DX	// z
	MOVQ	24(SI), R15
	SUBQ	CX, R15	// d2
	MOVQ	R15, CX
	SARQ	$63, CX
	ADDQ	R15, R15
	XORQ	CX, R15	// z2
	MOVQ	DX, CX
	ORQ	R15, CX
	CMPQ	CX, $0x4000
	JAE	single
	MOVQ	24(SI), R9	// last = the second time
	MOVQ	AX, CX
	ANDQ	$1, CX
	ADDQ	CX, R11	// an exit's op is odd
	MOVQ	BX, CX
	ANDQ	$1, CX
	ADDQ	CX, R11
	// w = op | z<<16 | op2<<32 | z2<<48
	SHLQ	$16, DX
	ORQ	DX, AX
	SHLQ	$32, BX
	ORQ	BX, AX
	SHLQ	$48, R15
	ORQ	R15, AX
	// quad(w): c = (w + 0x3f80*lanes) & (1<<14*lanes); s = w + w&(0x3f80*lanes) | c>>7
	LEAQ	(AX)(R13*1), CX
	ANDQ	R12, CX	// c
	MOVQ	AX, DX
	ANDQ	R13, DX
	ADDQ	DX, AX
	MOVQ	CX, DX
	SHRQ	$7, DX
	ORQ	DX, AX	// s
	// Four overlapping stores, the output moving on by each field's
	// length.
	MOVQ	AX, 0(DI)
	MOVQ	CX, DX
	SHRQ	$14, DX
	ANDQ	$1, DX
	LEAQ	1(DI)(DX*1), DI
	SHRQ	$16, AX
	MOVQ	AX, 0(DI)
	MOVQ	CX, DX
	SHRQ	$30, DX
	ANDQ	$1, DX
	LEAQ	1(DI)(DX*1), DI
	SHRQ	$16, AX
	MOVQ	AX, 0(DI)
	MOVQ	CX, DX
	SHRQ	$46, DX
	ANDQ	$1, DX
	LEAQ	1(DI)(DX*1), DI
	SHRQ	$16, AX
	MOVQ	AX, 0(DI)
	SHRQ	$62, CX
	LEAQ	1(DI)(CX*1), DI
	ADDQ	$32, SI
	JMP	loop

single:
	CMPQ	SI, R8
	JAE	done
	MOVQ	0(SI), AX
	XORQ	R10, AX	// op
	CMPQ	AX, $0x200000
	JAE	done
	CMPQ	AX, $3
	JEQ	done
	MOVQ	8(SI), CX
	SUBQ	R9, CX	// d
	MOVQ	CX, DX
	SARQ	$63, DX
	ADDQ	CX, CX
	XORQ	DX, CX	// z
	CMPQ	CX, $0x200000
	JAE	done
	MOVQ	8(SI), R9	// last
	MOVQ	AX, DX
	ANDQ	$1, DX
	ADDQ	DX, R11
	SHLQ	$24, CX
	ORQ	CX, AX	// w = op | z<<24
	// pair(w)
	MOVQ	$0x1fff801fff80, DX	// pairK1
	ADDQ	AX, DX
	MOVQ	$0x200000200000, BX	// pairBit
	ANDQ	BX, DX	// c1
	MOVQ	$0x1fc0001fc000, CX	// pairK2, also pairLo7<<14
	ADDQ	AX, CX
	ANDQ	BX, CX	// c2
	MOVQ	$0x1fc0001fc000, BX
	ANDQ	AX, BX
	MOVQ	$0xffffffff80ffff80, R15	// ^pairLo7
	ANDQ	AX, R15
	ADDQ	R15, AX
	LEAQ	(AX)(BX*2), AX
	MOVQ	DX, BX
	SHRQ	$14, BX
	ORQ	BX, AX
	MOVQ	CX, BX
	SHRQ	$6, BX
	ORQ	BX, AX	// s
	ADDQ	CX, DX
	SHRQ	$21, DX	// cnt
	MOVQ	DX, CX
	ANDQ	$3, CX
	INCQ	CX	// ln
	MOVQ	CX, R15
	SHLQ	$3, CX
	MOVQ	AX, BX
	SHRQ	$24, BX
	SHLQ	CX, BX
	ANDQ	$0xffffff, AX
	ORQ	BX, AX
	MOVQ	AX, 0(DI)
	SHRQ	$24, DX
	LEAQ	1(DI)(R15*1), DI
	ADDQ	DX, DI
	ADDQ	$16, SI
	JMP	loop

done:
	SUBQ	in+8(FP), SI
	SHRQ	$4, SI
	MOVQ	SI, done+40(FP)
	SUBQ	out+0(FP), DI
	MOVQ	DI, written+48(FP)
	MOVQ	R9, t+56(FP)
	MOVQ	R11, exits+64(FP)
	RET
