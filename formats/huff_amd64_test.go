//go:build amd64 && !purego

package formats

import (
	"bytes"
	"math/bits"
	"math/rand/v2"
	"testing"
)

// TestHuffGroupsBMI2 checks that appendStream writes the same streams with
// huffGroupsBMI2 as with its loop in Go, for bytes whose codes run from one
// bit to the longest, after a prefix in dst and from every length modulo
// four.
func TestHuffGroupsBMI2(t *testing.T) {
	if !hasBMI2 {
		t.Skip("no BMI2")
	}
	rng := rand.New(rand.NewPCG(3, 4))
	gen := map[string]func() byte{
		"geometric": func() byte { return byte(bits.TrailingZeros32(rng.Uint32() | 1<<20)) },
		"uniform":   func() byte { return byte(rng.Uint32()) },
		// One byte nine times in ten: one-bit codes, and codes of the
		// longest length for the rare bytes.
		"skewed": func() byte {
			if rng.IntN(10) != 0 {
				return 7
			}
			return byte(rng.Uint32())
		},
	}
	for name, next := range gen {
		for _, n := range []int{12, 13, 14, 15, 1000, 4099, 1 << 16} {
			src := make([]byte, n)
			for i := range src {
				src[i] = next()
			}
			var h huffEncoder
			var count [256]uint32
			h.histogram(src, &count)
			var length [256]uint8
			maxBits := huffLengths(&count, &length, &h.lens)
			h.assignCodes(&length, maxBits)
			prefix := []byte{1, 2, 3}
			want := h.appendStream(bytes.Clone(prefix), src)
			hasBMI2 = false
			got := h.appendStream(bytes.Clone(prefix), src)
			hasBMI2 = true
			if !bytes.Equal(got, want) {
				t.Fatalf("%s, %d bytes: %d bytes from Go, %d with BMI2, not the same", name, n, len(got), len(want))
			}
		}
	}
}
