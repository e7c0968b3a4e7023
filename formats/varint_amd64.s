//go:build amd64 && !purego

#include "textflag.h"

// For an id whose highest bit is bit k (BSR), the varint's continuation
// bits (varintMarks) and its length (varintLens): one byte for bits 0-6,
// two for 7-13, three for 14-20.
DATA varintMarks<>+0(SB)/4, $0
DATA varintMarks<>+4(SB)/4, $0
DATA varintMarks<>+8(SB)/4, $0
DATA varintMarks<>+12(SB)/4, $0
DATA varintMarks<>+16(SB)/4, $0
DATA varintMarks<>+20(SB)/4, $0
DATA varintMarks<>+24(SB)/4, $0
DATA varintMarks<>+28(SB)/4, $0x80
DATA varintMarks<>+32(SB)/4, $0x80
DATA varintMarks<>+36(SB)/4, $0x80
DATA varintMarks<>+40(SB)/4, $0x80
DATA varintMarks<>+44(SB)/4, $0x80
DATA varintMarks<>+48(SB)/4, $0x80
DATA varintMarks<>+52(SB)/4, $0x80
DATA varintMarks<>+56(SB)/4, $0x8080
DATA varintMarks<>+60(SB)/4, $0x8080
DATA varintMarks<>+64(SB)/4, $0x8080
DATA varintMarks<>+68(SB)/4, $0x8080
DATA varintMarks<>+72(SB)/4, $0x8080
DATA varintMarks<>+76(SB)/4, $0x8080
DATA varintMarks<>+80(SB)/4, $0x8080
GLOBL varintMarks<>(SB), RODATA|NOPTR, $84

DATA varintLens<>+0(SB)/8, $0x0201010101010101
DATA varintLens<>+8(SB)/8, $0x0303020202020202
DATA varintLens<>+16(SB)/8, $0x0000000303030303
GLOBL varintLens<>(SB), RODATA|NOPTR, $24

// func putIDsBMI2(b []byte, p int, ids []uint32) (int, int)
TEXT ·putIDsBMI2(SB), NOSPLIT, $0-72
	MOVQ b_base+0(FP), DI
	MOVQ p+24(FP), R8
	MOVQ ids_base+32(FP), SI
	MOVQ ids_len+40(FP), CX
	XORQ DX, DX // ids done
	MOVL $0x7f7f7f, R9
	LEAQ varintMarks<>(SB), R10
	LEAQ varintLens<>(SB), R11
	TESTQ CX, CX
	JEQ done

loop:
	MOVL (SI)(DX*4), AX
	CMPL AX, $0x200000
	JAE done // four bytes or more: left to the caller
	PDEPL R9, AX, BX // the id's 7-bit groups, one to a byte
	ORL $1, AX
	BSRL AX, AX
	ORL (R10)(AX*4), BX
	MOVL BX, (DI)(R8*1)
	MOVBQZX (R11)(AX*1), AX
	ADDQ AX, R8
	INCQ DX
	CMPQ DX, CX
	JNE loop

done:
	MOVQ R8, ret+56(FP)
	MOVQ DX, ret1+64(FP)
	RET

// func decodeIDsBMI2(ids []uint32, b []byte, q int, limit uint64) (n int, end int, bad bool)
TEXT ·decodeIDsBMI2(SB), NOSPLIT, $0-81
	MOVQ ids_base+0(FP), DI
	MOVQ ids_len+8(FP), R12
	MOVQ b_base+24(FP), SI
	MOVQ b_len+32(FP), R13
	MOVQ q+48(FP), R8
	MOVQ limit+56(FP), R9
	XORQ DX, DX // ids done
	MOVQ $0x8080808080808080, R14
	MOVQ $0x7f7f7f, R15

word:
	CMPQ DX, R12
	JAE out
	LEAQ 8(R8), R11
	CMPQ R11, R13
	JA out
	MOVQ (SI)(R8*1), AX
	ANDNQ R14, AX, BX // the ends of ids: bytes with the high bit clear
	XORQ CX, CX       // the bit where the next id starts

id:
	TESTQ BX, BX
	JEQ wordEnd
	CMPQ DX, R12
	JAE wordEnd
	TZCNTQ BX, R10
	INCQ R10          // the bit after the id
	MOVQ R10, R11
	SUBQ CX, R11      // its bits
	CMPQ R11, $24
	JA long
	SHRXQ CX, AX, CX
	BZHIQ R11, CX, CX
	PEXTQ R15, CX, CX // its 7-bit groups
	CMPQ CX, R9
	JAE bad
	MOVL CX, (DI)(DX*4)
	INCQ DX
	MOVQ R10, CX
	BLSRQ BX, BX
	JMP id

wordEnd:
	TESTQ CX, CX
	JEQ out // eight bytes without an id's end
	SHRQ $3, CX
	ADDQ CX, R8
	JMP word

long:
	// An id of four or five bytes: left to the caller.
	SHRQ $3, CX
	ADDQ CX, R8
	JMP out

bad:
	MOVL CX, (DI)(DX*4)
	SUBQ R11, R10
	SHRQ $3, R10
	ADDQ R10, R8
	MOVQ DX, n+64(FP)
	MOVQ R8, end+72(FP)
	MOVB $1, bad+80(FP)
	RET

out:
	MOVQ DX, n+64(FP)
	MOVQ R8, end+72(FP)
	MOVB $0, bad+80(FP)
	RET
