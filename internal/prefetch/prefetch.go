// Package prefetch asks the processor to bring memory into its caches
// ahead of use, for loops whose loads go to places known in advance but
// scattered too widely for the hardware to guess.
package prefetch

import (
	"math/bits"
	"unsafe"
)

// Window prefetches, for every index x in idx, the cache lines that hold
// the words of base from x-span to x+span, and the one that holds bit
// x+bias of the bitset marks: base[x-span], base[x+span] and the bit must
// lie within base and marks for every x. It only hints; where the
// processor has no prefetch instruction that pwe uses, it does nothing.
func Window[W uint16 | uint32](base []W, marks []byte, bias int, idx []uint32, span int) {
	if len(idx) == 0 || len(base) == 0 || len(marks) == 0 {
		return
	}
	size := int(unsafe.Sizeof(base[0]))
	window(unsafe.Pointer(&base[0]), &marks[0], idx, span*size, uint(bits.TrailingZeros(uint(size))), bias)
}
