package formats

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/parquet-go/parquet-go/encoding/rle"
)

// hybridIndices returns n values below 1<<width made of runs of one value
// and stretches of random values, each of a random length up to maxRun, so
// that runs of whole groups, groups broken by a run and runs in the last
// partial group all occur.
func hybridIndices(r *rand.Rand, n, width, maxRun int) []int32 {
	out := make([]int32, 0, n)
	for len(out) < n {
		k := min(1+r.IntN(maxRun), n-len(out))
		if r.IntN(2) == 0 {
			v := int32(r.Uint64N(1 << width))
			for range k {
				out = append(out, v)
			}
		} else {
			for range k {
				out = append(out, int32(r.Uint64N(1<<width)))
			}
		}
	}
	return out
}

// naiveHybrid is the encoding appendHybrid documents, written bit by bit.
func naiveHybrid(idx []int32, width int) []byte {
	var out []byte
	if width == 0 {
		return binary.AppendUvarint(out, uint64(len(idx))<<1)
	}
	run := func(n int, v int32) {
		out = binary.AppendUvarint(out, uint64(n)<<1)
		for k := 0; k < (width+7)/8; k++ {
			out = append(out, byte(v>>(8*k)))
		}
	}
	uniform := func(g []int32, v int32) bool {
		for _, x := range g {
			if x != v {
				return false
			}
		}
		return true
	}
	whole := len(idx) / 8 * 8
	i := 0
	for i < whole {
		j := i
		for j < whole && uniform(idx[j:j+8], idx[i]) {
			j += 8
		}
		if j > i {
			run(j-i, idx[i])
			i = j
			continue
		}
		j = i + 8
		for j < whole && !uniform(idx[j:j+8], idx[j]) {
			j += 8
		}
		out = binary.AppendUvarint(out, uint64((j-i)/8)<<1|1)
		packed := make([]byte, (j-i)*width/8)
		for k, v := range idx[i:j] {
			for b := range width {
				if v>>b&1 == 1 {
					bit := k*width + b
					packed[bit/8] |= 1 << (bit % 8)
				}
			}
		}
		out = append(out, packed...)
		i = j
	}
	for i < len(idx) {
		j := i
		for j < len(idx) && idx[j] == idx[i] {
			j++
		}
		run(j-i, idx[i])
		i = j
	}
	return out
}

// TestAppendHybrid checks appendHybrid's bytes against naiveHybrid for
// every width, for lengths around whole groups and for run lengths short
// and long (and, in 8 to 16 bits, packed blocks of 64 groups and more, whose
// headers take two bytes), appended after a prefix as the page writer
// does, and that
// parquet-go decodes them to the indices. (parquet-go's own encoder is no
// reference for the bytes: on amd64 with AVX2 it ends a packed block
// early at a group whose two halves are each uniform.)
func TestAppendHybrid(t *testing.T) {
	r := rand.New(rand.NewPCG(36, 1))
	for width := 0; width <= 32; width++ {
		for trial := range 200 {
			n := r.IntN(300)
			maxRun := []int{1, 4, 9, 40}[trial%4]
			switch {
			case trial < 20:
				n = trial
			case width >= 8 && width <= 16 && trial%3 == 0:
				n, maxRun = 500+r.IntN(3000), 1
			}
			idx := hybridIndices(r, n, width, maxRun)
			want := naiveHybrid(idx, width)
			got := appendHybrid([]byte{0xAB}, idx, width)
			if got[0] != 0xAB || !bytes.Equal(got[1:], want) {
				t.Fatalf("width %d, %d values %v:\n got %x\nwant %x", width, n, idx, got[1:], want)
			}
			back, err := (&rle.Encoding{BitWidth: width}).DecodeInt32(nil, got[1:])
			if err != nil || !slices.Equal(back[:min(len(back), n)], idx) || len(back) < n {
				t.Fatalf("width %d, %d values %v: parquet-go decodes %v (%v)", width, n, idx, back, err)
			}
		}
	}
}

// BenchmarkAppendHybrid encodes indices shaped like bench-raw's float
// columns (session 36: 9-bit indices, packed blocks of 12 groups on average
// between runs of one or two groups), by appendHybrid and by parquet-go.
func BenchmarkAppendHybrid(b *testing.B) {
	for _, width := range []int{6, 8, 9} {
		r := rand.New(rand.NewPCG(36, 2))
		var idx []int32
		for len(idx) < 1<<16 {
			for range 8 * (1 + r.IntN(2)) {
				idx = append(idx, 0)
			}
			for range 8 * (1 + r.IntN(23)) {
				idx = append(idx, int32(r.IntN(1<<width)))
			}
		}
		buf := make([]byte, 0, 4*len(idx))
		b.Run(fmt.Sprintf("appendHybrid/%d", width), func(b *testing.B) {
			b.SetBytes(4 * int64(len(idx)))
			for b.Loop() {
				buf = appendHybrid(buf[:0], idx, width)
			}
		})
		b.Run(fmt.Sprintf("parquet-go/%d", width), func(b *testing.B) {
			b.SetBytes(4 * int64(len(idx)))
			for b.Loop() {
				buf, _ = (&rle.Encoding{BitWidth: width}).EncodeInt32(buf[:0], idx)
			}
		})
	}
}
