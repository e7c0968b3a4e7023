//go:build amd64 && !purego

#include "textflag.h"

// In each 128-bit lane, the low bytes of its four int32 to the lane's
// first four bytes; the rest zero.
DATA narrow8<>+0(SB)/8, $0x808080800c080400
DATA narrow8<>+8(SB)/8, $0x8080808080808080
DATA narrow8<>+16(SB)/8, $0x808080800c080400
DATA narrow8<>+24(SB)/8, $0x8080808080808080
GLOBL narrow8<>(SB), (RODATA|NOPTR), $32

// func packGroups8AVX2(src []int32, dst []byte) int
TEXT ·packGroups8AVX2(SB), NOSPLIT, $0-56
	MOVQ src_base+0(FP), SI
	MOVQ src_len+8(FP), CX
	SHRQ $3, CX
	MOVQ dst_base+24(FP), DI
	XORQ AX, AX
	TESTQ CX, CX
	JZ done
	VMOVDQU narrow8<>(SB), Y6
	// The first group is packed whatever it holds.
	VMOVDQU (SI), Y0
	JMP pack

next:
	CMPQ AX, CX
	JEQ done
	VMOVDQU (SI), Y0
	VPBROADCASTD (SI), Y1
	VPCMPEQD Y0, Y1, Y2
	VPMOVMSKB Y2, DX
	CMPL DX, $-1
	JEQ done

pack:
	VPSHUFB Y6, Y0, Y3
	VEXTRACTI128 $1, Y3, X4
	VPUNPCKLDQ X4, X3, X5
	VMOVQ X5, (DI)
	ADDQ $32, SI
	ADDQ $8, DI
	INCQ AX
	JMP next

done:
	MOVQ AX, ret+48(FP)
	VZEROUPPER
	RET
