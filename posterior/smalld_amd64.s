//go:build amd64 && !purego && !openblas

#include "textflag.h"

// A group of four pairs (c_q, w_q) adds sum_q w_q c_q[i] c_q[j] to
// prec[i][j], j >= i. Rows go in twos, as in addQuads: with a_q = w_q c_q[i]
// and b_q = w_q c_q[i+1] broadcast, every four columns j > i load each c_q
// once for eight fused multiply-adds into rows i and i+1; the last one to
// three columns take a two-lane and a one-lane step, so nothing outside
// the triangle is touched.
//
// Registers: CX dim, BX groups left, SI idx, DI omega, R8-R11 c_0..c_3,
// R14 row stride in bytes, R13 the largest row offset in other (at the
// start of a group), AX row i, DX &prec[i][0], R12 &prec[i+1][0],
// R15 column j, R13 j+4 or j+2; Y4-Y7 a_q, Y8-Y11 b_q, Y12-Y15 c_q[j:j+4],
// Y0 and Y1 the columns of rows i and i+1.

// ROWS adds sum_q w_q c_q[i] c_q[j] to C[i][j] for 0 <= i <= j < CX, rows
// in twos as described above. In: CX the size, R8-R11 c_0..c_3, DI &w[0],
// DX &C[0][0], R14 C's row stride in bytes, AX 0. Clobbers AX, DX, R12,
// R13, R15, X0-X15. Go assembler labels are local to a TEXT block, so the
// macro serves both functions below.
#define ROWS \
rows: \
	CMPQ AX, CX; \
	JGE  rowsend; \
	VMOVSD       (R8)(AX*8), X4; \
	VMULSD       0(DI), X4, X4; \
	VMOVSD       (R9)(AX*8), X5; \
	VMULSD       8(DI), X5, X5; \
	VMOVSD       (R10)(AX*8), X6; \
	VMULSD       16(DI), X6, X6; \
	VMOVSD       (R11)(AX*8), X7; \
	VMULSD       24(DI), X7, X7; \
	VMOVSD       (DX)(AX*8), X0; \
	VFMADD231SD  (R8)(AX*8), X4, X0; \
	VFMADD231SD  (R9)(AX*8), X5, X0; \
	VFMADD231SD  (R10)(AX*8), X6, X0; \
	VFMADD231SD  (R11)(AX*8), X7, X0; \
	VMOVSD       X0, (DX)(AX*8); \
	LEAQ         1(AX), R15; \
	CMPQ         R15, CX; \
	JGE          rowsend; \
	VBROADCASTSD X4, Y4; \
	VBROADCASTSD X5, Y5; \
	VBROADCASTSD X6, Y6; \
	VBROADCASTSD X7, Y7; \
	VMOVSD       (R8)(R15*8), X8; \
	VMULSD       0(DI), X8, X8; \
	VBROADCASTSD X8, Y8; \
	VMOVSD       (R9)(R15*8), X9; \
	VMULSD       8(DI), X9, X9; \
	VBROADCASTSD X9, Y9; \
	VMOVSD       (R10)(R15*8), X10; \
	VMULSD       16(DI), X10, X10; \
	VBROADCASTSD X10, Y10; \
	VMOVSD       (R11)(R15*8), X11; \
	VMULSD       24(DI), X11, X11; \
	VBROADCASTSD X11, Y11; \
	LEAQ         (DX)(R14*1), R12; \
cols4: \
	LEAQ        4(R15), R13; \
	CMPQ        R13, CX; \
	JGT         cols2; \
	VMOVUPD     (R8)(R15*8), Y12; \
	VMOVUPD     (R9)(R15*8), Y13; \
	VMOVUPD     (R10)(R15*8), Y14; \
	VMOVUPD     (R11)(R15*8), Y15; \
	VMOVUPD     (DX)(R15*8), Y0; \
	VMOVUPD     (R12)(R15*8), Y1; \
	VFMADD231PD Y12, Y4, Y0; \
	VFMADD231PD Y12, Y8, Y1; \
	VFMADD231PD Y13, Y5, Y0; \
	VFMADD231PD Y13, Y9, Y1; \
	VFMADD231PD Y14, Y6, Y0; \
	VFMADD231PD Y14, Y10, Y1; \
	VFMADD231PD Y15, Y7, Y0; \
	VFMADD231PD Y15, Y11, Y1; \
	VMOVUPD     Y0, (DX)(R15*8); \
	VMOVUPD     Y1, (R12)(R15*8); \
	MOVQ        R13, R15; \
	JMP         cols4; \
cols2: \
	LEAQ        2(R15), R13; \
	CMPQ        R13, CX; \
	JGT         cols1; \
	VMOVUPD     (R8)(R15*8), X12; \
	VMOVUPD     (R9)(R15*8), X13; \
	VMOVUPD     (R10)(R15*8), X14; \
	VMOVUPD     (R11)(R15*8), X15; \
	VMOVUPD     (DX)(R15*8), X0; \
	VMOVUPD     (R12)(R15*8), X1; \
	VFMADD231PD X12, X4, X0; \
	VFMADD231PD X12, X8, X1; \
	VFMADD231PD X13, X5, X0; \
	VFMADD231PD X13, X9, X1; \
	VFMADD231PD X14, X6, X0; \
	VFMADD231PD X14, X10, X1; \
	VFMADD231PD X15, X7, X0; \
	VFMADD231PD X15, X11, X1; \
	VMOVUPD     X0, (DX)(R15*8); \
	VMOVUPD     X1, (R12)(R15*8); \
	MOVQ        R13, R15; \
cols1: \
	CMPQ        R15, CX; \
	JGE         rowdone; \
	VMOVSD      (R8)(R15*8), X12; \
	VMOVSD      (R9)(R15*8), X13; \
	VMOVSD      (R10)(R15*8), X14; \
	VMOVSD      (R11)(R15*8), X15; \
	VMOVSD      (DX)(R15*8), X0; \
	VMOVSD      (R12)(R15*8), X1; \
	VFMADD231SD X12, X4, X0; \
	VFMADD231SD X12, X8, X1; \
	VFMADD231SD X13, X5, X0; \
	VFMADD231SD X13, X9, X1; \
	VFMADD231SD X14, X6, X0; \
	VFMADD231SD X14, X10, X1; \
	VFMADD231SD X15, X7, X0; \
	VFMADD231SD X15, X11, X1; \
	VMOVSD      X0, (DX)(R15*8); \
	VMOVSD      X1, (R12)(R15*8); \
rowdone: \
	ADDQ $2, AX; \
	LEAQ (DX)(R14*2), DX; \
	JMP  rows; \
rowsend:

// func addQuadsFMA(dim int, idx []int32, omega, other, prec []float64) (ok bool)
TEXT ·addQuadsFMA(SB), NOSPLIT, $0-105
	MOVQ dim+0(FP), CX
	MOVQ idx_base+8(FP), SI
	MOVQ idx_len+16(FP), BX
	SHRQ $2, BX
	JZ   done
	MOVQ omega_base+32(FP), DI
	MOVQ CX, R14
	SHLQ $3, R14

group:
	// R13 is the offset of the last row of other; a row offset above it,
	// as unsigned, is past the end or negative.
	MOVQ    other_len+64(FP), R13
	SHLQ    $3, R13
	SUBQ    R14, R13
	JCS     bad
	MOVQ    other_base+56(FP), R12
	MOVLQSX 0(SI), R8
	IMULQ   R14, R8
	CMPQ    R8, R13
	JHI     bad
	ADDQ    R12, R8
	MOVLQSX 4(SI), R9
	IMULQ   R14, R9
	CMPQ    R9, R13
	JHI     bad
	ADDQ    R12, R9
	MOVLQSX 8(SI), R10
	IMULQ   R14, R10
	CMPQ    R10, R13
	JHI     bad
	ADDQ    R12, R10
	MOVLQSX 12(SI), R11
	IMULQ   R14, R11
	CMPQ    R11, R13
	JHI     bad
	ADDQ    R12, R11
	MOVQ    prec_base+80(FP), DX
	XORQ    AX, AX

	ROWS

next:
	ADDQ $16, SI
	ADDQ $32, DI
	DECQ BX
	JNZ  group

done:
	VZEROUPPER
	MOVB $1, ok+104(FP)
	RET

bad:
	VZEROUPPER
	MOVB $0, ok+104(FP)
	RET

// func rank4FMA(l, stride int, u []float64, ustride int, w *[4]float64, c []float64)
TEXT ·rank4FMA(SB), NOSPLIT, $0-80
	MOVQ l+0(FP), CX
	MOVQ stride+8(FP), R14
	SHLQ $3, R14
	MOVQ u_base+16(FP), R8
	MOVQ ustride+40(FP), AX
	SHLQ $3, AX
	LEAQ (R8)(AX*1), R9
	LEAQ (R9)(AX*1), R10
	LEAQ (R10)(AX*1), R11
	MOVQ w+48(FP), DI
	MOVQ c_base+56(FP), DX
	XORQ AX, AX
	ROWS
	VZEROUPPER
	RET
