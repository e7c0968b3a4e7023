//go:build amd64 && !purego

#include "textflag.h"

// k·wyIncrement for k = 1 to 4, and 4·wyIncrement at the end: the states
// of four draws in a row, and the step from each to the one four later.
DATA wyIncs<>+0(SB)/8, $0xa0761d6478bd642f
DATA wyIncs<>+8(SB)/8, $0x40ec3ac8f17ac85e
DATA wyIncs<>+16(SB)/8, $0xe162582d6a382c8d
DATA wyIncs<>+24(SB)/8, $0x81d87591e2f590bc
GLOBL wyIncs<>(SB), RODATA|NOPTR, $32

DATA wyMixQ<>+0(SB)/8, $0xe7037ed1a0b428db
GLOBL wyMixQ<>(SB), RODATA|NOPTR, $8

DATA lowDwordsQ<>+0(SB)/8, $0x00000000ffffffff
GLOBL lowDwordsQ<>(SB), RODATA|NOPTR, $8

DATA lowWordsQ<>+0(SB)/8, $0x000000000000ffff
GLOBL lowWordsQ<>(SB), RODATA|NOPTR, $8

// The even dwords of a vector first: the low halves of its four qwords.
DATA evenDwords<>+0(SB)/4, $0
DATA evenDwords<>+4(SB)/4, $2
DATA evenDwords<>+8(SB)/4, $4
DATA evenDwords<>+12(SB)/4, $6
DATA evenDwords<>+16(SB)/4, $0
DATA evenDwords<>+20(SB)/4, $0
DATA evenDwords<>+24(SB)/4, $0
DATA evenDwords<>+28(SB)/4, $0
GLOBL evenDwords<>(SB), RODATA|NOPTR, $32

// func aliasDrawsAVX2(b []uint32, compact []uint32, s uint64) int
TEXT ·aliasDrawsAVX2(SB), NOSPLIT, $0-64
	MOVQ b_base+0(FP), DI
	MOVQ b_len+8(FP), CX
	MOVQ compact_base+24(FP), AX
	MOVQ compact_len+32(FP), DX
	MOVQ s+48(FP), BX
	ANDQ $-4, CX
	MOVQ CX, SI // the draws asked for
	JEQ done

	MOVQ BX, X11
	VPBROADCASTQ X11, Y11
	VPADDQ wyIncs<>+0(SB), Y11, Y11 // the states of the first four draws
	VPBROADCASTQ wyIncs<>+24(SB), Y14
	VPBROADCASTQ wyMixQ<>+0(SB), Y15
	VPBROADCASTQ lowDwordsQ<>+0(SB), Y13
	VPBROADCASTQ lowWordsQ<>+0(SB), Y9
	MOVQ DX, X12
	VPBROADCASTQ X12, Y12
	VMOVDQU evenDwords<>+0(SB), Y10

loop:
	// x = hi ^ lo of the 128-bit product s·(s ^ mix), from four 32x32-bit
	// products: p0 = sl·ml, p1 = sl·mh, p2 = sh·ml, p3 = sh·mh.
	VPXOR Y15, Y11, Y0      // m
	VPSRLQ $32, Y11, Y1     // sh
	VPSRLQ $32, Y0, Y2      // mh
	VPMULUDQ Y0, Y11, Y3    // p0
	VPMULUDQ Y2, Y11, Y4    // p1
	VPMULUDQ Y0, Y1, Y5     // p2
	VPMULUDQ Y2, Y1, Y6     // p3
	VPSRLQ $32, Y3, Y7      // the middle column: p0's high half
	VPAND Y13, Y4, Y8
	VPADDQ Y8, Y7, Y7       // + p1's low half
	VPAND Y13, Y5, Y8
	VPADDQ Y8, Y7, Y7       // + p2's low half
	VPSRLQ $32, Y4, Y4
	VPADDQ Y4, Y6, Y6
	VPSRLQ $32, Y5, Y5
	VPADDQ Y5, Y6, Y6
	VPSRLQ $32, Y7, Y8
	VPADDQ Y8, Y6, Y6       // hi = p3 + the high halves of p1, p2 and the middle
	VPSLLQ $32, Y7, Y7
	VPAND Y13, Y3, Y3
	VPOR Y3, Y7, Y7         // lo = the middle's low half : p0's low half
	VPXOR Y7, Y6, Y0        // x

	// The category j = (x mod 2^32)·v / 2^32, and its entry, loaded from
	// general registers: AVX2's gather was slower on Zen 4.
	VPMULUDQ Y12, Y0, Y1
	VPSRLQ $32, Y1, Y1
	VMOVQ X1, R8
	VPEXTRQ $1, X1, R9
	VEXTRACTI128 $1, Y1, X4
	VMOVQ X4, R10
	VPEXTRQ $1, X4, R11
	VMOVD (AX)(R8*4), X3
	VPINSRD $1, (AX)(R9*4), X3, X3
	VPINSRD $2, (AX)(R10*4), X3, X3
	VPINSRD $3, (AX)(R11*4), X3, X3
	VPMOVZXDQ X3, Y3

	// x's upper 16 bits against keep's: above, the other category; below,
	// j; equal, undecided.
	VPSRLQ $48, Y0, Y0
	VPSRLQ $16, Y3, Y4
	VPCMPEQQ Y0, Y4, Y5
	VPTEST Y5, Y5
	JNE undecided
	VPCMPGTQ Y4, Y0, Y5
	VPAND Y9, Y3, Y3
	VPBLENDVB Y5, Y3, Y1, Y6
	VPERMD Y6, Y10, Y6
	VMOVDQU X6, (DI)

	VPADDQ Y14, Y11, Y11
	ADDQ $16, DI
	SUBQ $4, CX
	JNE loop

undecided:
	VZEROUPPER
	SUBQ CX, SI

done:
	MOVQ SI, ret+56(FP)
	RET
