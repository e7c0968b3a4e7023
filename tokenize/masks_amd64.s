//go:build amd64 && !purego

#include "textflag.h"

// BCAST puts byte b in every byte of register X.
#define BCAST(b, X) MOVQ $(b*0x0101010101010101), AX; MOVQ AX, X; PUNPCKLQDQ X, X

// CHUNK classifies the sixteen bytes at off(SI) and ors their masks, shifted
// left by off, into R8 (word runes), R9 (upper case) and R10 (white space).
// PCMPGTB A, B sets each byte of B to all ones where B's is greater than
// A's, as signed bytes.
#define CHUNK(off) \
	MOVOU off(SI), X0; \
	MOVO X0, X1; POR X6, X1; \
	MOVO X1, X2; PCMPGTB X7, X2; \
	MOVO X8, X3; PCMPGTB X1, X3; \
	PAND X3, X2; \
	MOVO X0, X3; PCMPGTB X9, X3; \
	MOVO X10, X1; PCMPGTB X0, X1; \
	PAND X1, X3; \
	MOVO X0, X1; PCMPGTB X11, X1; \
	MOVO X12, X4; PCMPGTB X0, X4; \
	PAND X4, X1; POR X1, X2; \
	MOVO X0, X1; PCMPEQB X13, X1; POR X1, X2; \
	MOVO X0, X1; PCMPEQB X6, X1; \
	MOVO X0, X4; PCMPGTB X14, X4; \
	MOVO X15, X5; PCMPGTB X0, X5; \
	PAND X5, X4; POR X4, X1; \
	PMOVMSKB X2, AX; SHLQ $off, AX; ORQ AX, R8; \
	PMOVMSKB X3, AX; SHLQ $off, AX; ORQ AX, R9; \
	PMOVMSKB X1, AX; SHLQ $off, AX; ORQ AX, R10

// func blockClasses(p *byte) (word, upper, white uint64)
TEXT ·blockClasses(SB), NOSPLIT, $0-32
	MOVQ p+0(FP), SI
	BCAST(0x20, X6)  // ' ', and the bit that lowers a letter
	BCAST(0x60, X7)  // 'a' - 1
	BCAST(0x7b, X8)  // 'z' + 1
	BCAST(0x40, X9)  // 'A' - 1
	BCAST(0x5b, X10) // 'Z' + 1
	BCAST(0x2f, X11) // '0' - 1
	BCAST(0x3a, X12) // '9' + 1
	BCAST(0x5f, X13) // '_'
	BCAST(0x08, X14) // '\t' - 1
	BCAST(0x0e, X15) // '\r' + 1
	XORQ R8, R8
	XORQ R9, R9
	XORQ R10, R10
	CHUNK(0)
	CHUNK(16)
	CHUNK(32)
	CHUNK(48)
	MOVQ R8, word+8(FP)
	MOVQ R9, upper+16(FP)
	MOVQ R10, white+24(FP)
	RET
