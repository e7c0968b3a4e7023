package formats

import (
	"bytes"
	"cmp"
	"encoding/binary"
	"fmt"
	"math"
	"math/bits"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/klauspost/compress/zstd"
)

// literalBlocks walks a frame written by literalFrames with a parser
// written from RFC 8878 for this test, independently of the writer: it
// checks the frame header and returns the type and content size of every
// block and the regenerated size of the literals of compressed blocks.
func literalBlocks(t *testing.T, frame []byte) (types []int, regen int) {
	t.Helper()
	if len(frame) < 6 || binary.LittleEndian.Uint32(frame) != 0xFD2FB528 {
		t.Fatalf("frame does not start with the zstd magic: % x", frame[:min(len(frame), 8)])
	}
	fhd := frame[4]
	if fhd&(1<<5) == 0 || fhd&0x1f != 0 {
		t.Fatalf("frame header descriptor %08b: want single segment, no checksum, no dictionary", fhd)
	}
	p := 5
	var content uint64
	switch fhd >> 6 {
	case 0:
		content = uint64(frame[p])
		p++
	case 1:
		content = uint64(binary.LittleEndian.Uint16(frame[p:])) + 256
		p += 2
	case 2:
		content = uint64(binary.LittleEndian.Uint32(frame[p:]))
		p += 4
	default:
		content = binary.LittleEndian.Uint64(frame[p:])
		p += 8
	}
	for last := false; !last; {
		if p+3 > len(frame) {
			t.Fatalf("block header at %d runs past the frame (%d bytes)", p, len(frame))
		}
		h := uint32(frame[p]) | uint32(frame[p+1])<<8 | uint32(frame[p+2])<<16
		p += 3
		last = h&1 == 1
		typ, size := int(h>>1&3), int(h>>3)
		types = append(types, typ)
		switch typ {
		case 0:
			regen += size
			p += size
		case 1:
			regen += size
			p++
		case 2:
			lh := frame[p]
			if lh&3 != 2 || lh>>2&3 != 3 {
				t.Fatalf("literals header %08b: want Huffman-coded, 4 streams, 18-bit sizes", lh)
			}
			v := uint64(frame[p]) | uint64(frame[p+1])<<8 | uint64(frame[p+2])<<16 | uint64(frame[p+3])<<24 | uint64(frame[p+4])<<32
			lits, comp := int(v>>4&(1<<18-1)), int(v>>22&(1<<18-1))
			if 5+comp+1 != size {
				t.Fatalf("block of %d bytes holds %d bytes of literals after their header, and a sequences byte", size, comp)
			}
			if frame[p+size-1] != 0 {
				t.Fatalf("compressed block ends with %d sequences, want none", frame[p+size-1])
			}
			if lits > 128<<10 {
				t.Fatalf("block regenerates %d bytes, above 128 KiB", lits)
			}
			regen += lits
			p += size
		default:
			t.Fatalf("reserved block type at %d", p-3)
		}
	}
	if p != len(frame) {
		t.Fatalf("frame ends at %d of %d bytes", p, len(frame))
	}
	if uint64(regen) != content {
		t.Fatalf("blocks regenerate %d bytes, the frame header says %d", regen, content)
	}
	return types, regen
}

// TestLiteralFrames round-trips data of every kind and size boundary
// through klauspost's zstd decoder and checks which blocks were written:
// skewed bytes must be Huffman-coded (else the writer gains nothing),
// random ones stored raw, a repeated byte as RLE.
func TestLiteralFrames(t *testing.T) {
	dec, err := zstd.NewReader(nil)
	if err != nil {
		t.Fatal(err)
	}
	defer dec.Close()
	rng := rand.New(rand.NewPCG(1, 2))
	skewed := func(n int) []byte {
		b := make([]byte, n)
		for i := range b {
			// Geometric bytes: entropy about 2 bits.
			x := 0
			for x < 255 && rng.IntN(2) == 0 {
				x++
			}
			b[i] = byte(x)
		}
		return b
	}
	random := func(n int) []byte {
		b := make([]byte, n)
		for i := range b {
			b[i] = byte(rng.Uint32())
		}
		return b
	}
	// Byte b appears fib(b+2) times: Huffman's lengths for such counts
	// grow by one a byte, past the 11 bits zstd allows, so the encoder's
	// limit is exercised; all 256 bytes appear, so the weights must be
	// FSE-compressed.
	deep := func() []byte {
		var b []byte
		f0, f1 := 1, 2
		for v := range 22 {
			b = append(b, bytes.Repeat([]byte{byte(v)}, f0)...)
			f0, f1 = f1, f0+f1
		}
		for v := 22; v < 256; v++ {
			b = append(b, byte(v))
		}
		rng.Shuffle(len(b), func(i, j int) { b[i], b[j] = b[j], b[i] })
		return b
	}
	// k bytes, one of them a tenth of the time and the others equally
	// often: codes of one or two bits.
	few := func(k int) []byte {
		b := make([]byte, 5000)
		for i := range b {
			if rng.IntN(10) != 0 {
				b[i] = byte(200 + rng.IntN(k-1) + 1)
			} else {
				b[i] = 200
			}
		}
		return b
	}
	const (
		raw, rle, huff = 0, 1, 2
	)
	cases := []struct {
		name  string
		data  []byte
		types []int
	}{
		{"empty", nil, []int{raw}},
		{"one byte", []byte{7}, []int{raw}},
		{"255 bytes", skewed(255), []int{raw}},
		{"256 bytes", skewed(256), []int{raw}},
		{"below Huffman", skewed(literalMinHuffman - 1), []int{raw}},
		{"Huffman", skewed(literalMinHuffman), []int{huff}},
		{"2-byte size, largest", skewed(256 + 1<<16 - 1), []int{huff}},
		{"4-byte size, smallest", skewed(256 + 1<<16), []int{huff}},
		{"one full block", skewed(zstdBlockMax), []int{huff}},
		{"block and a byte", skewed(zstdBlockMax + 1), []int{huff, raw}},
		{"random", random(5000), []int{raw}},
		{"deep tree", deep(), []int{huff}},
		{"two bytes", few(2), []int{huff}},
		{"three bytes", few(3), []int{huff}},
		{"repeated byte", bytes.Repeat([]byte{3}, 4000), []int{rle}},
		{"mixed blocks", append(append(skewed(zstdBlockMax), random(zstdBlockMax)...), bytes.Repeat([]byte{9}, 2000)...), []int{huff, raw, rle}},
	}
	var l literalFrames
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			prefix := []byte("kept")
			frame := l.appendFrame(append([]byte(nil), prefix...), c.data, true)
			if !bytes.Equal(frame[:len(prefix)], prefix) {
				t.Fatal("appendFrame overwrote dst")
			}
			frame = frame[len(prefix):]
			types, n := literalBlocks(t, frame)
			if fmt.Sprint(types) != fmt.Sprint(c.types) {
				t.Errorf("block types %v, want %v", types, c.types)
			}
			if n != len(c.data) {
				t.Errorf("blocks regenerate %d bytes, want %d", n, len(c.data))
			}
			got, err := dec.DecodeAll(frame, nil)
			if err != nil {
				t.Fatalf("zstd decoder: %v", err)
			}
			if !bytes.Equal(got, c.data) {
				t.Fatalf("decoded %d bytes differ from the %d written", len(got), len(c.data))
			}
			if len(c.types) == 1 && c.types[0] == huff && len(frame) > len(c.data)*2/5 {
				t.Errorf("%d bytes of about 2 bits each coded in %d", len(c.data), len(frame))
			}
			// Stored: the same bytes in raw blocks alone.
			stored := l.appendFrame(nil, c.data, false)
			types, n = literalBlocks(t, stored)
			wantRaw := max(1, (len(c.data)+zstdBlockMax-1)/zstdBlockMax)
			if slices.ContainsFunc(types, func(b int) bool { return b != raw }) || len(types) != wantRaw || n != len(c.data) {
				t.Errorf("stored: block types %v regenerating %d bytes, want %d raw blocks of %d", types, n, wantRaw, len(c.data))
			}
			if got, err := dec.DecodeAll(stored, nil); err != nil || !bytes.Equal(got, c.data) {
				t.Fatalf("stored: zstd decoder gave %d bytes (%v), want the %d written", len(got), err, len(c.data))
			}
		})
	}
}

// FuzzLiteralFrames: any bytes, written as a frame of literals or of raw
// blocks, decode to themselves.
func FuzzLiteralFrames(f *testing.F) {
	f.Add([]byte{})
	f.Add(bytes.Repeat([]byte{1, 1, 1, 2}, 600))
	f.Add(bytes.Repeat([]byte{0}, 2000))
	dec, err := zstd.NewReader(nil, zstd.WithDecoderConcurrency(1))
	if err != nil {
		f.Fatal(err)
	}
	defer dec.Close()
	var l literalFrames
	f.Fuzz(func(t *testing.T, data []byte) {
		for _, huffman := range []bool{true, false} {
			frame := l.appendFrame(nil, data, huffman)
			literalBlocks(t, frame)
			got, err := dec.DecodeAll(frame, nil)
			if err != nil {
				t.Fatalf("zstd decoder: %v", err)
			}
			if !bytes.Equal(got, data) {
				t.Fatalf("huffman %v: decoded %d bytes differ from the %d written", huffman, len(got), len(data))
			}
		}
	})
}

// TestHuffLengths checks the code lengths on random histograms, skewed ones
// whose Huffman codes run past 11 bits, and two-byte ones: the code is
// complete (the Kraft sum is 1), no length exceeds 11, every counted byte
// and no other has a length, and where Huffman's code fits in 11 bits the
// total length is that of a Huffman code built with a heap in the test.
func TestHuffLengths(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	limited := 0
	var sc huffScratch
	for trial := range 3000 {
		var count [256]uint32
		switch k := trial % 3; {
		case k == 0:
			for range 2 + rng.IntN(255) {
				count[rng.IntN(256)] += uint32(1 + rng.IntN(1000))
			}
		case k == 1:
			// Near-Fibonacci counts over a random set of bytes.
			f0, f1 := uint32(1), uint32(1)
			for _, b := range rng.Perm(256)[:2+rng.IntN(40)] {
				count[b] = f0 + uint32(rng.IntN(2))
				f0, f1 = f1, f0+f1
			}
		default:
			count[rng.IntN(128)] = uint32(1 + rng.IntN(5))
			count[128+rng.IntN(128)] = uint32(1 + rng.IntN(5))
		}
		var length [256]uint8
		longest := huffLengths(&count, &length, &sc)
		kraft, cost, top := 0.0, uint64(0), uint8(0)
		for b, l := range length {
			if (l > 0) != (count[b] > 0) {
				t.Fatalf("trial %d: byte %d counted %d times has length %d", trial, b, count[b], l)
			}
			if l > 0 {
				kraft += math.Ldexp(1, -int(l))
				cost += uint64(count[b]) * uint64(l)
				top = max(top, l)
			}
		}
		if kraft != 1 || top > huffMaxBits || top != longest {
			t.Fatalf("trial %d: Kraft sum %v, longest %d (returned %d)", trial, kraft, top, longest)
		}
		want, depth := heapHuffman(count[:])
		if depth > huffMaxBits {
			// The optimal limited code, by a package-merge that carries
			// every item's leaves along.
			want = naiveLimited(count[:], huffMaxBits)
			limited++
		}
		if cost != want {
			t.Fatalf("trial %d: total length %d, optimal %d (Huffman's depth %d)", trial, cost, want, depth)
		}
	}
	if limited == 0 {
		t.Fatal("no histogram needed its lengths limited")
	}
}

// naiveLimited returns the total length of an optimal code of at most
// limit bits for the counts: package-merge with each item holding how many
// times it contains each leaf.
func naiveLimited(counts []uint32, limit int) uint64 {
	type item struct {
		w     uint64
		times []int
	}
	var leaves []item
	var w []uint64 // leaf k's weight
	for _, c := range counts {
		if c > 0 {
			w = append(w, uint64(c))
		}
	}
	n := len(w)
	for k, x := range w {
		times := make([]int, n)
		times[k] = 1
		leaves = append(leaves, item{x, times})
	}
	byWeight := func(a, b item) int { return cmp.Compare(a.w, b.w) }
	slices.SortStableFunc(leaves, byWeight)
	list := slices.Clone(leaves)
	for range limit - 1 {
		next := slices.Clone(leaves)
		for i := 0; i+1 < len(list); i += 2 {
			times := make([]int, n)
			for k := range times {
				times[k] = list[i].times[k] + list[i+1].times[k]
			}
			next = append(next, item{list[i].w + list[i+1].w, times})
		}
		slices.SortStableFunc(next, byWeight)
		list = next
	}
	var total uint64
	for _, it := range list[:2*n-2] {
		for k, x := range it.times {
			total += uint64(x) * w[k]
		}
	}
	return total
}

// heapHuffman returns the total code length of a Huffman code for the
// counts, built by merging the two lightest subtrees, and its depth.
func heapHuffman(counts []uint32) (total uint64, depth int) {
	type tree struct {
		w     uint64
		depth int
	}
	var q []tree
	for _, c := range counts {
		if c > 0 {
			q = append(q, tree{uint64(c), 0})
		}
	}
	for len(q) > 1 {
		slices.SortFunc(q, func(a, b tree) int { return cmp.Compare(a.w, b.w) })
		a, b := q[0], q[1]
		// Merging adds the merged weight once more to the total length.
		total += a.w + b.w
		q = append(q[2:], tree{a.w + b.w, max(a.depth, b.depth) + 1})
	}
	return total, q[0].depth
}

// BenchmarkLiteralFrames codes 1 MiB of skewed bytes (about 2 bits of
// entropy each, as the counts columns' dictionary indices) into frames.
func BenchmarkLiteralFrames(b *testing.B) {
	rng := rand.New(rand.NewPCG(5, 6))
	data := make([]byte, 1<<20)
	for i := range data {
		data[i] = byte(bits.TrailingZeros32(rng.Uint32() | 1<<12))
	}
	var l literalFrames
	var out []byte
	b.SetBytes(int64(len(data)))
	for b.Loop() {
		out = l.appendFrame(out[:0], data, true)
	}
}

// BenchmarkLimitLengths limits the code of a block of 128 Ki bytes whose
// values fall off exponentially, as the counts columns' do: about 140
// distinct bytes, the rarest seen once, and Huffman's code 17 bits deep.
func BenchmarkLimitLengths(b *testing.B) {
	rng := rand.New(rand.NewPCG(7, 8))
	var count [256]uint32
	for range 1 << 17 {
		count[min(255, int(rng.ExpFloat64()*12))]++
	}
	var keys []uint64
	for c, n := range count {
		if n > 0 {
			keys = append(keys, uint64(n)<<8|uint64(c))
		}
	}
	slices.Sort(keys)
	weight := make([]uint64, len(keys))
	for i, k := range keys {
		weight[i] = k >> 8
	}
	if _, depth := heapHuffman(count[:]); depth <= huffMaxBits {
		b.Fatalf("Huffman's code is %d bits deep: nothing to limit", depth)
	}
	depth := make([]uint8, len(weight))
	var sc huffScratch
	for b.Loop() {
		limitLengths(weight, depth, &sc.lists)
	}
}
