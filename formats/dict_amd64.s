//go:build amd64 && !purego

#include "textflag.h"

// func smallIndexAVX2(vals []float64, small *[countsSmallDict]int32, out []int32) (n int, or int32)
//
// Four values at a time: truncated to int32 and back, a value whose bits
// come back unchanged is a whole number (not -0, whose bits come back as
// +0's); below 4096 it indexes small. The loop stops at the first group
// with a value that is not such a number or whose slot is empty.
TEXT ·smallIndexAVX2(SB), NOSPLIT, $0-68
	MOVQ vals_base+0(FP), SI
	MOVQ vals_len+8(FP), CX
	MOVQ small+24(FP), DX
	MOVQ out_base+32(FP), DI
	XORQ AX, AX             // values done
	VPXOR X9, X9, X9        // zero
	VPCMPEQD X10, X10, X10  // -1 in every lane
	MOVL $0xfffff000, BX    // bits that must be clear in an index below 4096
	VMOVD BX, X8
	VPBROADCASTD X8, X8
	VPXOR X11, X11, X11     // the indices or-ed
	SUBQ $4, CX
	JLT done

loop:
	VMOVUPD (SI)(AX*8), Y0
	VCVTTPD2DQY Y0, X1
	VCVTDQ2PD X1, Y2
	VPCMPEQQ Y0, Y2, Y2     // lanes whose value is whole
	VMOVMSKPD Y2, BX
	VPAND X8, X1, X3
	VPCMPEQD X9, X3, X3     // lanes below 4096 (and not negative)
	VMOVMSKPS X3, R8
	ANDL R8, BX
	CMPL BX, $15
	JNE done
	VMOVDQU X10, X4         // the gather's mask, which it clears
	VPXOR X5, X5, X5
	VPGATHERDD X4, (DX)(X1*4), X5
	VPCMPGTD X9, X5, X6     // lanes whose slot holds an index + 1
	VMOVMSKPS X6, BX
	CMPL BX, $15
	JNE done
	VPADDD X10, X5, X5
	VMOVDQU X5, (DI)(AX*4)
	VPOR X5, X11, X11
	ADDQ $4, AX
	CMPQ AX, CX
	JLE loop

done:
	MOVQ AX, n+56(FP)
	VPSHUFD $0x4e, X11, X12
	VPOR X12, X11, X11
	VPSHUFD $0xb1, X11, X12
	VPOR X12, X11, X11
	VMOVD X11, BX
	MOVL BX, or+64(FP)
	VZEROUPPER
	RET
