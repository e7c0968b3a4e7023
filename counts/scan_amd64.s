//go:build amd64 && !purego

#include "textflag.h"

DATA lanes8<>+0(SB)/4, $0
DATA lanes8<>+4(SB)/4, $1
DATA lanes8<>+8(SB)/4, $2
DATA lanes8<>+12(SB)/4, $3
DATA lanes8<>+16(SB)/4, $4
DATA lanes8<>+20(SB)/4, $5
DATA lanes8<>+24(SB)/4, $6
DATA lanes8<>+28(SB)/4, $7
GLOBL lanes8<>(SB), RODATA|NOPTR, $32

// func scanEntriesAVX512(blk []uint64, base, t int32, tg, cx []int32, np, nn []float64, scale float64) (rows int, unique int64)
TEXT ·scanEntriesAVX512(SB), NOSPLIT, $0-152
	MOVQ blk_base+0(FP), SI
	MOVQ blk_len+8(FP), CX
	MOVQ tg_base+32(FP), R8
	MOVQ cx_base+56(FP), R9
	MOVQ np_base+80(FP), R10
	MOVQ nn_base+104(FP), R11
	XORQ DX, DX // rows
	XORQ BX, BX // unique
	SHRQ $3, CX
	JEQ done

	// R12 says whether the positive counts are divided by the scale.
	MOVSD scale+128(FP), X15
	MOVQ $0x3ff0000000000000, AX // 1.0
	MOVQ X15, R12
	XORQ AX, R12
	VBROADCASTSD X15, Z15
	MOVL t+28(FP), AX
	VPBROADCASTD AX, Y14
	MOVL base+24(FP), AX
	VPBROADCASTD AX, Y13
	VPADDD lanes8<>+0(SB), Y13, Y13 // the contexts of the first eight entries
	MOVL $8, AX
	VPBROADCASTD AX, Y12
	MOVQ $0xffffffff, AX
	VPBROADCASTQ AX, Z11

loop:
	// The entries that are not zero, packed at the low lanes with their
	// contexts; the other lanes are written too, and overwritten by the
	// next rows.
	VMOVDQU64 (SI), Z0
	VPTESTMQ Z0, Z0, K1
	VPTESTMQ Z11, Z0, K2 // positive counts
	VPCOMPRESSQ.Z Z0, K1, Z1
	VPCOMPRESSD.Z Y13, K1, Y2
	VPMOVQD Z1, Y3
	VPSRLQ $32, Z1, Z4
	VPMOVQD Z4, Y4
	VCVTUDQ2PD Y3, Z5
	VCVTUDQ2PD Y4, Z6
	TESTQ R12, R12
	JEQ store
	VDIVPD Z15, Z5, Z5

store:
	VMOVDQU32 Y14, (R8)(DX*4)
	VMOVDQU32 Y2, (R9)(DX*4)
	VMOVUPD Z5, (R10)(DX*8)
	VMOVUPD Z6, (R11)(DX*8)
	KMOVW K1, AX
	POPCNTL AX, AX
	ADDQ AX, DX
	KMOVW K2, AX
	POPCNTL AX, AX
	ADDQ AX, BX
	VPADDD Y12, Y13, Y13
	ADDQ $64, SI
	DECQ CX
	JNE loop
	VZEROUPPER

done:
	MOVQ DX, rows+136(FP)
	MOVQ BX, unique+144(FP)
	RET
