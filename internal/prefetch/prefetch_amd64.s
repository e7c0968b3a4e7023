//go:build amd64 && !purego

#include "textflag.h"

// func words(base *uint32, idx []uint32, off int)
TEXT ·words(SB), NOSPLIT, $0-40
	MOVQ base+0(FP), AX
	MOVQ idx_base+8(FP), SI
	MOVQ idx_len+16(FP), CX
	MOVQ off+32(FP), BX
	MOVQ AX, DI
	SUBQ BX, DI
	ADDQ BX, AX
	TESTQ CX, CX
	JEQ done

loop:
	MOVLQZX (SI), DX
	PREFETCHT0 (DI)(DX*4)
	PREFETCHT0 (AX)(DX*4)
	ADDQ $4, SI
	DECQ CX
	JNE loop

done:
	RET
