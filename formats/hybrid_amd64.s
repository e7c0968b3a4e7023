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

// func packGroupsWideAVX2(src []int32, dst []byte, w uint) int
TEXT ·packGroupsWideAVX2(SB), NOSPLIT, $0-64
	MOVQ src_base+0(FP), SI
	MOVQ src_len+8(FP), CX
	SHRQ $3, CX
	MOVQ dst_base+24(FP), DI
	MOVQ w+48(FP), R8
	LEAQ (R8)(R8*1), R9  // 2w
	LEAQ (R9)(R8*1), R10 // 3w
	LEAQ (R8*4), R11     // 4w
	MOVQ $64, R12
	SUBQ R11, R12        // 64 - 4w
	XORQ AX, AX
	TESTQ CX, CX
	JZ wdone
	// The first group is packed whatever it holds.
	JMP wpack

wnext:
	CMPQ AX, CX
	JEQ wdone
	VMOVDQU (SI), Y0
	VPBROADCASTD (SI), Y1
	VPCMPEQD Y0, Y1, Y2
	VPMOVMSKB Y2, DX
	CMPL DX, $-1
	JEQ wdone

wpack:
	// The low four values in BX, the high four in R13, 4w bits each.
	MOVL (SI), BX
	MOVL 4(SI), DX
	SHLXQ R8, DX, DX
	ORQ DX, BX
	MOVL 8(SI), DX
	SHLXQ R9, DX, DX
	ORQ DX, BX
	MOVL 12(SI), DX
	SHLXQ R10, DX, DX
	ORQ DX, BX
	MOVL 16(SI), R13
	MOVL 20(SI), DX
	SHLXQ R8, DX, DX
	ORQ DX, R13
	MOVL 24(SI), DX
	SHLXQ R9, DX, DX
	ORQ DX, R13
	MOVL 28(SI), DX
	SHLXQ R10, DX, DX
	ORQ DX, R13
	SHLXQ R11, R13, DX
	ORQ DX, BX
	MOVQ BX, (DI)
	SHRXQ R12, R13, R13
	MOVQ R13, 8(DI)
	ADDQ $32, SI
	ADDQ R8, DI
	INCQ AX
	JMP wnext

wdone:
	MOVQ AX, ret+56(FP)
	VZEROUPPER
	RET
