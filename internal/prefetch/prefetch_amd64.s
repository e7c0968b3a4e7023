//go:build amd64 && !purego

#include "textflag.h"

// func ends(base unsafe.Pointer, idx []uint32, off int, shift uint)
TEXT ·ends(SB), NOSPLIT, $0-48
	MOVQ base+0(FP), AX
	MOVQ idx_base+8(FP), SI
	MOVQ idx_len+16(FP), R8
	MOVQ off+32(FP), BX
	MOVQ shift+40(FP), CX
	MOVQ AX, DI
	SUBQ BX, DI
	ADDQ BX, AX
	TESTQ R8, R8
	JEQ done

loop:
	MOVLQZX (SI), DX
	SHLQ CX, DX
	PREFETCHT0 (DI)(DX*1)
	PREFETCHT0 (AX)(DX*1)
	ADDQ $4, SI
	DECQ R8
	JNE loop

done:
	RET

// func bitsAt(base *byte, idx []uint32, bias int)
TEXT ·bitsAt(SB), NOSPLIT, $0-40
	MOVQ base+0(FP), AX
	MOVQ idx_base+8(FP), SI
	MOVQ idx_len+16(FP), CX
	MOVQ bias+32(FP), BX
	TESTQ CX, CX
	JEQ done

loop:
	MOVLQZX (SI), DX
	ADDQ BX, DX
	SHRQ $3, DX
	PREFETCHT0 (AX)(DX*1)
	ADDQ $4, SI
	DECQ CX
	JNE loop

done:
	RET
