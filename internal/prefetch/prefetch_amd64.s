//go:build amd64 && !purego

#include "textflag.h"

// func window(base unsafe.Pointer, marks *byte, idx []uint32, off int, shift uint, bias int)
TEXT ·window(SB), NOSPLIT, $0-64
	MOVQ base+0(FP), AX
	MOVQ marks+8(FP), R9
	MOVQ idx_base+16(FP), SI
	MOVQ idx_len+24(FP), R8
	MOVQ off+40(FP), BX
	MOVQ shift+48(FP), CX
	MOVQ bias+56(FP), R10
	MOVQ AX, DI
	SUBQ BX, DI
	ADDQ BX, AX
	TESTQ R8, R8
	JEQ done

loop:
	MOVLQZX (SI), DX
	LEAQ (DX)(R10*1), R11
	SHRQ $3, R11
	PREFETCHT0 (R9)(R11*1)
	SHLQ CX, DX
	PREFETCHT0 (DI)(DX*1)
	PREFETCHT0 (AX)(DX*1)
	ADDQ $4, SI
	DECQ R8
	JNE loop

done:
	RET
