//go:build amd64 && !purego

#include "textflag.h"

// ADDCODE adds the code of the byte at off(SI) to the bits in AX, of which
// there are BX. The byte's entry in the table at R15 holds the code's value
// in its low 16 bits and its length in the byte above, each loaded on its
// own: loads issue on more ports than the shifts that would split them.
#define ADDCODE(off, r, t) \
	MOVBLZX off(SI), r; \
	MOVWLZX (R15)(r*4), t; \
	MOVBLZX 2(R15)(r*4), r; \
	SHLXQ BX, t, t; \
	ORQ t, AX; \
	ADDQ r, BX

// func huffGroupsBMI2(buf, src []byte, code *[256]uint32, c uint64, nb uint, pos int) (uint64, uint, int)
TEXT ·huffGroupsBMI2(SB), NOSPLIT, $0-104
	MOVQ buf_base+0(FP), DI
	MOVQ src_base+24(FP), SI
	MOVQ src_len+32(FP), CX
	MOVQ code+48(FP), R15
	MOVQ c+56(FP), AX
	MOVQ nb+64(FP), BX
	MOVQ pos+72(FP), DX
	ADDQ CX, SI
	SHRQ $2, CX
	JEQ done

loop:
	ADDCODE(-1, R8, R9)
	ADDCODE(-2, R10, R11)
	ADDCODE(-3, R12, R13)
	ADDCODE(-4, R8, R9)

	// Flush: store the eight bytes, step over the whole ones, keep the
	// rest.
	MOVQ AX, (DI)(DX*1)
	MOVQ BX, R9
	SHRQ $3, R9
	ADDQ R9, DX
	MOVQ BX, R9
	ANDQ $-8, R9
	SHRXQ R9, AX, AX
	ANDQ $7, BX

	SUBQ $4, SI
	DECQ CX
	JNE loop

done:
	MOVQ AX, ret+80(FP)
	MOVQ BX, ret1+88(FP)
	MOVQ DX, ret2+96(FP)
	RET
