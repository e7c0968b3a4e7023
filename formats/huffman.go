package formats

import (
	"encoding/binary"
	"slices"

	"github.com/klauspost/compress/fse"
)

// huffEncoder writes zstd's Huffman-coded literals (RFC 8878, 4.2): a
// tree description and four streams behind their jump table. klauspost's
// huff0 writes the same format, but it counts the bytes with one histogram,
// whose increments wait on each other where a byte repeats (as the bit-packed
// dictionary indices of the counts columns do: that count alone was 4 % of
// the count stage), and it has no way to be given a histogram. This one
// counts into four.
type huffEncoder struct {
	// code[b] is b's code in its low 16 bits and the code's length above.
	code   [256]uint32
	counts [4][256]uint32
	fse    fse.Scratch
	lens   huffScratch
}

// huffScratch is the space huffLengths works in.
type huffScratch struct {
	weight [511]uint64
	parent [511]uint16
	depth  [511]uint8
	// lists are limitLengths's.
	lists [huffMaxBits][huffListLen]uint64
}

// huffResult says what encode made of a block.
type huffResult int

const (
	huffCoded huffResult = iota // Huffman-coded
	huffRLE                     // one byte repeated
	huffRaw                     // not worth coding
)

const (
	// huffMaxBits is the longest code zstd allows.
	huffMaxBits = 11
	// huffListLen is the length of a package-merge list: 256 leaves, 255
	// packages and two ends.
	huffListLen = 513
	// huffWeightsTableLog is the FSE table log of the weights' description.
	huffWeightsTableLog = 6
)

// encode appends to dst the tree description and the four streams of src,
// which must hold at least 12 and at most 128 Ki bytes, and reports
// huffCoded; or it leaves dst as it is and reports why not.
func (h *huffEncoder) encode(dst, src []byte) ([]byte, huffResult) {
	var count [256]uint32
	h.histogram(src, &count)
	last, maxCount := 0, uint32(0)
	for b, n := range count {
		if n > 0 {
			last = b
			maxCount = max(maxCount, n)
		}
	}
	switch {
	case int(maxCount) == len(src):
		return dst, huffRLE
	case maxCount == 1 || int(maxCount) < len(src)>>7:
		// As huff0 judges: no byte stands out, so coding gains little.
		return dst, huffRaw
	}
	var length [256]uint8
	maxBits := huffLengths(&count, &length, &h.lens)

	start := len(dst)
	dst, ok := h.appendTree(dst, &length, last, maxBits)
	if !ok {
		return dst[:start], huffRaw
	}
	h.assignCodes(&length, maxBits)

	// Four streams of (n+3)/4 bytes, the last taking the rest, behind
	// the compressed sizes of the first three.
	jump := len(dst)
	dst = append(dst, 0, 0, 0, 0, 0, 0)
	seg := (len(src) + 3) / 4
	for i := range 4 {
		part := src[min(i*seg, len(src)):min((i+1)*seg, len(src))]
		s := len(dst)
		dst = h.appendStream(dst, part)
		if i < 3 {
			n := len(dst) - s
			if n > 0xffff {
				return dst[:start], huffRaw
			}
			binary.LittleEndian.PutUint16(dst[jump+2*i:], uint16(n))
		}
	}
	return dst, huffCoded
}

// histogram counts the bytes of src into count, in four histograms
// interleaved so that repeated bytes do not make each increment wait for
// the one before.
func (h *huffEncoder) histogram(src []byte, count *[256]uint32) {
	c0, c1, c2, c3 := &h.counts[0], &h.counts[1], &h.counts[2], &h.counts[3]
	*c0, *c1, *c2, *c3 = [256]uint32{}, [256]uint32{}, [256]uint32{}, [256]uint32{}
	for len(src) >= 4 {
		c0[src[0]]++
		c1[src[1]]++
		c2[src[2]]++
		c3[src[3]]++
		src = src[4:]
	}
	for _, b := range src {
		c0[b]++
	}
	for b := range count {
		count[b] = c0[b] + c1[b] + c2[b] + c3[b]
	}
}

// huffLengths sets the code length of every byte counted (0 for the others)
// by Huffman's construction, limited to huffMaxBits, and returns the
// longest. At least two bytes must be counted.
func huffLengths(count *[256]uint32, length *[256]uint8, sc *huffScratch) uint8 {
	// The leaves by increasing count, ties by byte, so that the lengths do
	// not depend on the sort's order: a count and its byte make one key.
	var keys [256]uint64
	n := 0
	for b, c := range count {
		if c > 0 {
			keys[n] = uint64(c)<<8 | uint64(b)
			n++
		}
	}
	slices.Sort(keys[:n])
	// Two queues: the leaves in order, and the internal nodes, whose
	// weights come out in order as they are made. Node i < n is leaf i;
	// node n+k is the k-th internal one.
	weight, parent, depth := &sc.weight, &sc.parent, &sc.depth
	for i, k := range keys[:n] {
		weight[i] = k >> 8
	}
	leaf, inner := 0, n
	for next := n; next < 2*n-1; next++ {
		var two [2]int
		for c := range two {
			if leaf < n && (inner >= next || weight[leaf] <= weight[inner]) {
				two[c] = leaf
				leaf++
			} else {
				two[c] = inner
				inner++
			}
		}
		weight[next] = weight[two[0]] + weight[two[1]]
		parent[two[0]], parent[two[1]] = uint16(next), uint16(next)
	}
	// Depths from the root down: a parent comes after its children.
	depth[2*n-2] = 0
	longest := uint8(0)
	for i := 2*n - 3; i >= 0; i-- {
		depth[i] = depth[parent[i]] + 1
		if i < n {
			longest = max(longest, depth[i])
		}
	}
	if longest > huffMaxBits {
		limitLengths(weight[:n], depth[:n], &sc.lists)
		longest = huffMaxBits
	}
	for i, k := range keys[:n] {
		length[byte(k)] = depth[i]
	}
	return longest
}

// limitLengths sets depth to the lengths of an optimal code of at most
// huffMaxBits bits for the leaves' weights, which are in increasing order,
// by package-merge (Larmore and Hirschberg): list k holds the leaves and
// the pairs of list k-1, by weight, and the 2n-2 lightest items of the last
// list give each leaf its length, the number of them it is in. The items
// taken from a list are always its lightest, so only their number need be
// carried down; and the leaves among them are the lightest leaves, so an
// item need only say whether it is a package. It is weight<<1 | 1 for a
// package and weight<<1 for a leaf, which comes first among equal
// weights: half the memory of a weight beside a leaf's index, and 4.0 µs
// against 5.6 (BenchmarkLimitLengths, medians of five).
func limitLengths(weight []uint64, depth []uint8, lists *[huffMaxBits][huffListLen]uint64) {
	n := len(weight)
	// Two ends follow a list's items: a package that holds one weighs
	// more than any item and is never taken.
	const end = 1 << 61
	leaves := &lists[0]
	for i, w := range weight {
		leaves[i] = w << 1
	}
	leaves[n], leaves[n+1] = end, end
	size := n
	for k := 1; k < huffMaxBits; k++ {
		prev, cur := &lists[k-1], &lists[k]
		size = n + size/2
		i, j := 0, 0
		for out := range size {
			p := (prev[j]>>1+prev[j+1]>>1)<<1 | 1
			if l := leaves[i]; p < l {
				cur[out] = p
				j += 2
			} else {
				cur[out] = l
				i++
			}
		}
		cur[size], cur[size+1] = end, end
	}
	var taken [huffMaxBits]int // leaves taken from each list
	take := 2*n - 2
	for k := huffMaxBits - 1; k >= 0; k-- {
		packages := 0
		for _, it := range lists[k][:take] {
			packages += int(it & 1)
		}
		taken[k] = take - packages
		take = 2 * packages
	}
	for i := range depth {
		d := uint8(0)
		for _, t := range taken {
			if i < t {
				d++
			}
		}
		depth[i] = d
	}
}

// appendTree appends the tree description: the weights (maxBits + 1 minus
// the length, 0 for an absent byte) of the bytes below last, the last
// one's being implied, as FSE-compressed or, failing that, 4-bit values.
// It reports false when neither way can describe them.
func (h *huffEncoder) appendTree(dst []byte, length *[256]uint8, last int, maxBits uint8) ([]byte, bool) {
	var weights [256]byte
	for b := range last {
		if l := length[b]; l > 0 {
			weights[b] = maxBits + 1 - l
		}
	}
	if last >= 2 {
		h.fse.TableLog = huffWeightsTableLog
		if c, err := fse.Compress(weights[:last], &h.fse); err == nil && len(c) < (last+1)/2 {
			dst = append(dst, byte(len(c)))
			return append(dst, c...), true
		}
	}
	if last > 128 {
		return dst, false
	}
	dst = append(dst, byte(127+last))
	for b := 0; b < last; b += 2 {
		dst = append(dst, weights[b]<<4|weights[b+1])
	}
	return dst, true
}

// assignCodes gives each byte its canonical code as the decoder rebuilds
// it from the weights: the codes of a length follow byte order, and the
// longer lengths come first.
func (h *huffEncoder) assignCodes(length *[256]uint8, maxBits uint8) {
	var perLength, next [huffMaxBits + 1]uint16
	for _, l := range length {
		perLength[l]++
	}
	v := uint16(0)
	for l := maxBits; l > 0; l-- {
		next[l] = v
		v = (v + perLength[l]) >> 1
	}
	for b, l := range length {
		if l == 0 {
			h.code[b] = 0
			continue
		}
		h.code[b] = uint32(next[l]) | uint32(l)<<16
		next[l]++
	}
}

// appendStream appends src as one Huffman stream: its codes from the last
// byte to the first, filled into bytes from their low bits, then a 1 bit
// that marks the end. The decoder reads the stream backwards from the mark,
// and so the bytes in order.
//
// With BMI2, huffGroupsBMI2 codes the groups of four: the compiler's loop
// kept the table's address and a code on the stack, and shifted by CL.
// BenchmarkLiteralFrames's megabyte took 0.93 ms against 1.21 (medians
// of three), and count's samples in the streams on bench-raw fell from
// 646-663 to 443-447 of about 12 000 (perf record, two runs each).
func (h *huffEncoder) appendStream(dst, src []byte) []byte {
	// A flush leaves at most 7 bits and four codes add at most 44, so an
	// 8-byte store after every four holds them all.
	w := huffBits{pos: len(dst)}
	dst = slices.Grow(dst, len(src)*huffMaxBits/8+16)
	buf := dst[:cap(dst)]
	code := &h.code
	i := len(src)
	for ; i%4 != 0; i-- {
		w = w.add(code[src[i-1]])
	}
	w = w.flush(buf)
	if hasBMI2 {
		w.c, w.nb, w.pos = huffGroupsBMI2(buf, src[:i], code, w.c, w.nb, w.pos)
		i = 0
	}
	for ; i >= 4; i -= 4 {
		s := src[i-4 : i : i]
		w = w.add(code[s[3]]).add(code[s[2]]).add(code[s[1]]).add(code[s[0]]).flush(buf)
	}
	w = w.add(1 | 1<<16)
	for w.nb > 0 {
		buf[w.pos] = byte(w.c)
		w.pos++
		w.c >>= 8
		w.nb -= min(w.nb, 8)
	}
	return buf[:w.pos]
}

// huffBits is a bit writer passed by value, so that it stays in registers.
type huffBits struct {
	c   uint64
	nb  uint
	pos int
}

// add adds a code: its bits in the low 16 of e, its length above.
func (w huffBits) add(e uint32) huffBits {
	w.c |= uint64(e&0xffff) << (w.nb & 63)
	w.nb += uint(e >> 16)
	return w
}

// flush stores the whole bytes with one 8-byte store at pos, which needs 8
// bytes of room, and keeps at most 7 bits.
func (w huffBits) flush(buf []byte) huffBits {
	binary.LittleEndian.PutUint64(buf[w.pos:], w.c)
	w.pos += int(w.nb >> 3)
	w.c >>= (w.nb &^ 7) & 63
	w.nb &= 7
	return w
}
