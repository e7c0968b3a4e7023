//go:build amd64 && !purego && !openblas

#include "textflag.h"

// Constants of expNegFMA, each in the four lanes of a 32-byte block so
// that it can be an instruction's memory operand.
DATA expnegSign<>+0(SB)/8, $0x8000000000000000
DATA expnegSign<>+8(SB)/8, $0x8000000000000000
DATA expnegSign<>+16(SB)/8, $0x8000000000000000
DATA expnegSign<>+24(SB)/8, $0x8000000000000000
GLOBL expnegSign<>(SB), RODATA|NOPTR, $32
DATA expnegClamp<>+0(SB)/8, $0xc086200000000000
DATA expnegClamp<>+8(SB)/8, $0xc086200000000000
DATA expnegClamp<>+16(SB)/8, $0xc086200000000000
DATA expnegClamp<>+24(SB)/8, $0xc086200000000000
GLOBL expnegClamp<>(SB), RODATA|NOPTR, $32
DATA expnegLog2e<>+0(SB)/8, $0x3ff71547652b82fe
DATA expnegLog2e<>+8(SB)/8, $0x3ff71547652b82fe
DATA expnegLog2e<>+16(SB)/8, $0x3ff71547652b82fe
DATA expnegLog2e<>+24(SB)/8, $0x3ff71547652b82fe
GLOBL expnegLog2e<>(SB), RODATA|NOPTR, $32
DATA expnegLn2Hi<>+0(SB)/8, $0x3fe62e42fee00000
DATA expnegLn2Hi<>+8(SB)/8, $0x3fe62e42fee00000
DATA expnegLn2Hi<>+16(SB)/8, $0x3fe62e42fee00000
DATA expnegLn2Hi<>+24(SB)/8, $0x3fe62e42fee00000
GLOBL expnegLn2Hi<>(SB), RODATA|NOPTR, $32
DATA expnegLn2Lo<>+0(SB)/8, $0x3dea39ef35793c76
DATA expnegLn2Lo<>+8(SB)/8, $0x3dea39ef35793c76
DATA expnegLn2Lo<>+16(SB)/8, $0x3dea39ef35793c76
DATA expnegLn2Lo<>+24(SB)/8, $0x3dea39ef35793c76
GLOBL expnegLn2Lo<>(SB), RODATA|NOPTR, $32
DATA expnegC0<>+0(SB)/8, $0x3ff0000000000000
DATA expnegC0<>+8(SB)/8, $0x3ff0000000000000
DATA expnegC0<>+16(SB)/8, $0x3ff0000000000000
DATA expnegC0<>+24(SB)/8, $0x3ff0000000000000
GLOBL expnegC0<>(SB), RODATA|NOPTR, $32
DATA expnegC1<>+0(SB)/8, $0x3ff0000000000000
DATA expnegC1<>+8(SB)/8, $0x3ff0000000000000
DATA expnegC1<>+16(SB)/8, $0x3ff0000000000000
DATA expnegC1<>+24(SB)/8, $0x3ff0000000000000
GLOBL expnegC1<>(SB), RODATA|NOPTR, $32
DATA expnegC2<>+0(SB)/8, $0x3fe0000000000000
DATA expnegC2<>+8(SB)/8, $0x3fe0000000000000
DATA expnegC2<>+16(SB)/8, $0x3fe0000000000000
DATA expnegC2<>+24(SB)/8, $0x3fe0000000000000
GLOBL expnegC2<>(SB), RODATA|NOPTR, $32
DATA expnegC3<>+0(SB)/8, $0x3fc5555555555555
DATA expnegC3<>+8(SB)/8, $0x3fc5555555555555
DATA expnegC3<>+16(SB)/8, $0x3fc5555555555555
DATA expnegC3<>+24(SB)/8, $0x3fc5555555555555
GLOBL expnegC3<>(SB), RODATA|NOPTR, $32
DATA expnegC4<>+0(SB)/8, $0x3fa5555555555555
DATA expnegC4<>+8(SB)/8, $0x3fa5555555555555
DATA expnegC4<>+16(SB)/8, $0x3fa5555555555555
DATA expnegC4<>+24(SB)/8, $0x3fa5555555555555
GLOBL expnegC4<>(SB), RODATA|NOPTR, $32
DATA expnegC5<>+0(SB)/8, $0x3f81111111111111
DATA expnegC5<>+8(SB)/8, $0x3f81111111111111
DATA expnegC5<>+16(SB)/8, $0x3f81111111111111
DATA expnegC5<>+24(SB)/8, $0x3f81111111111111
GLOBL expnegC5<>(SB), RODATA|NOPTR, $32
DATA expnegC6<>+0(SB)/8, $0x3f56c16c16c16c17
DATA expnegC6<>+8(SB)/8, $0x3f56c16c16c16c17
DATA expnegC6<>+16(SB)/8, $0x3f56c16c16c16c17
DATA expnegC6<>+24(SB)/8, $0x3f56c16c16c16c17
GLOBL expnegC6<>(SB), RODATA|NOPTR, $32
DATA expnegC7<>+0(SB)/8, $0x3f2a01a01a01a01a
DATA expnegC7<>+8(SB)/8, $0x3f2a01a01a01a01a
DATA expnegC7<>+16(SB)/8, $0x3f2a01a01a01a01a
DATA expnegC7<>+24(SB)/8, $0x3f2a01a01a01a01a
GLOBL expnegC7<>(SB), RODATA|NOPTR, $32
DATA expnegC8<>+0(SB)/8, $0x3efa01a01a01a01a
DATA expnegC8<>+8(SB)/8, $0x3efa01a01a01a01a
DATA expnegC8<>+16(SB)/8, $0x3efa01a01a01a01a
DATA expnegC8<>+24(SB)/8, $0x3efa01a01a01a01a
GLOBL expnegC8<>(SB), RODATA|NOPTR, $32
DATA expnegC9<>+0(SB)/8, $0x3ec71de3a556c734
DATA expnegC9<>+8(SB)/8, $0x3ec71de3a556c734
DATA expnegC9<>+16(SB)/8, $0x3ec71de3a556c734
DATA expnegC9<>+24(SB)/8, $0x3ec71de3a556c734
GLOBL expnegC9<>(SB), RODATA|NOPTR, $32
DATA expnegC10<>+0(SB)/8, $0x3e927e4fb7789f5c
DATA expnegC10<>+8(SB)/8, $0x3e927e4fb7789f5c
DATA expnegC10<>+16(SB)/8, $0x3e927e4fb7789f5c
DATA expnegC10<>+24(SB)/8, $0x3e927e4fb7789f5c
GLOBL expnegC10<>(SB), RODATA|NOPTR, $32
DATA expnegC11<>+0(SB)/8, $0x3e5ae64567f544e4
DATA expnegC11<>+8(SB)/8, $0x3e5ae64567f544e4
DATA expnegC11<>+16(SB)/8, $0x3e5ae64567f544e4
DATA expnegC11<>+24(SB)/8, $0x3e5ae64567f544e4
GLOBL expnegC11<>(SB), RODATA|NOPTR, $32
DATA expnegC12<>+0(SB)/8, $0x3e21eed8eff8d898
DATA expnegC12<>+8(SB)/8, $0x3e21eed8eff8d898
DATA expnegC12<>+16(SB)/8, $0x3e21eed8eff8d898
DATA expnegC12<>+24(SB)/8, $0x3e21eed8eff8d898
GLOBL expnegC12<>(SB), RODATA|NOPTR, $32
DATA expnegC13<>+0(SB)/8, $0x3de6124613a86d09
DATA expnegC13<>+8(SB)/8, $0x3de6124613a86d09
DATA expnegC13<>+16(SB)/8, $0x3de6124613a86d09
DATA expnegC13<>+24(SB)/8, $0x3de6124613a86d09
GLOBL expnegC13<>(SB), RODATA|NOPTR, $32

// func expNegFMA(dst, x []float64)
//
// Four lanes at a time, the steps of expNegOne: t = max(-|x|, -708) (-|x|
// by setting the sign bit; a NaN
// kept: VMAXPD returns its last operand when either is NaN), k = t log2(e)
// rounded to even, r = t - k ln2Hi - k ln2Lo, p = e^r by Horner's rule in
// fused multiply-adds, and k added to p's exponent bits.
// Registers: SI x, DI dst, CX groups left; Y0 t, then r; Y1 k; Y2 p; X3/Y3
// k as integers; Y4 the sign bit, Y5 -708.
TEXT ·expNegFMA(SB), NOSPLIT, $0-48
	MOVQ dst_base+0(FP), DI
	MOVQ dst_len+8(FP), CX
	MOVQ x_base+24(FP), SI
	SHRQ $2, CX
	JZ   done
	VMOVUPD expnegSign<>(SB), Y4
	VMOVUPD expnegClamp<>(SB), Y5
loop:
	VMOVUPD      (SI), Y0
	VORPD        Y4, Y0, Y0
	VMAXPD       Y0, Y5, Y0
	VMULPD       expnegLog2e<>(SB), Y0, Y1
	VROUNDPD     $0, Y1, Y1
	VFNMADD231PD expnegLn2Hi<>(SB), Y1, Y0
	VFNMADD231PD expnegLn2Lo<>(SB), Y1, Y0
	VMOVUPD      expnegC13<>(SB), Y2
	VFMADD213PD  expnegC12<>(SB), Y0, Y2
	VFMADD213PD  expnegC11<>(SB), Y0, Y2
	VFMADD213PD  expnegC10<>(SB), Y0, Y2
	VFMADD213PD  expnegC9<>(SB), Y0, Y2
	VFMADD213PD  expnegC8<>(SB), Y0, Y2
	VFMADD213PD  expnegC7<>(SB), Y0, Y2
	VFMADD213PD  expnegC6<>(SB), Y0, Y2
	VFMADD213PD  expnegC5<>(SB), Y0, Y2
	VFMADD213PD  expnegC4<>(SB), Y0, Y2
	VFMADD213PD  expnegC3<>(SB), Y0, Y2
	VFMADD213PD  expnegC2<>(SB), Y0, Y2
	VFMADD213PD  expnegC1<>(SB), Y0, Y2
	VFMADD213PD  expnegC0<>(SB), Y0, Y2
	VCVTPD2DQY   Y1, X3
	VPMOVSXDQ    X3, Y3
	VPSLLQ       $52, Y3, Y3
	VPADDQ       Y3, Y2, Y2
	VMOVUPD      Y2, (DI)
	ADDQ         $32, SI
	ADDQ         $32, DI
	DECQ         CX
	JNZ          loop
	VZEROUPPER
done:
	RET
