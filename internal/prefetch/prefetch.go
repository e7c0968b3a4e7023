// Package prefetch asks the processor to bring memory into its caches
// ahead of use, for loops whose loads go to places known in advance but
// scattered too widely for the hardware to guess.
package prefetch

import (
	"math/bits"
	"unsafe"
)

// Words prefetches, for every index x in idx, the cache lines that hold
// the words of base from x-span to x+span: base[x-span] and base[x+span]
// must lie within base for every x. It only hints; where the processor has
// no prefetch instruction that pwe uses, it does nothing.
func Words[W uint16 | uint32](base []W, idx []uint32, span int) {
	if len(idx) == 0 || len(base) == 0 {
		return
	}
	size := int(unsafe.Sizeof(base[0]))
	ends(unsafe.Pointer(&base[0]), idx, span*size, uint(bits.TrailingZeros(uint(size))))
}

// Bits prefetches, for every index x in idx, the cache line that holds bit
// x+bias of the bitset bits, whose length must cover it for every x.
func Bits(bits []byte, idx []uint32, bias int) {
	if len(idx) == 0 || len(bits) == 0 {
		return
	}
	bitsAt(&bits[0], idx, bias)
}
