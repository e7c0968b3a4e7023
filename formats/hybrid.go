package formats

import (
	"encoding/binary"
	"slices"
)

// appendHybrid appends idx, whose values are below 1<<width (0 <= width <=
// 32), in Parquet's RLE/bit-packed hybrid encoding, choosing its runs as
// parquet-go's rle.Encoding.EncodeInt32 does in its purego build: a group
// of eight values that all equal the first value of the first such group
// in a row makes, with those after it, one run; groups that are not
// uniform are bit-packed together; the last len(idx)%8 values are runs of
// equal values; width 0 (every index 0) is one run of them all. On amd64
// with AVX2, parquet-go's encoder ends a packed block early at a group
// whose two halves are each uniform (its check broadcasts lane by lane), so
// the bytes of counts.parquet depended on the build; they no longer do.
//
// The dictionary indices of counts.parquet's float columns alternate short
// runs with short packed blocks (on bench-raw, 651 615 runs and 652 416
// blocks of 12 groups on average), and parquet-go's packer sets up its
// vector registers for every block: that setup was most of its 6.2 % of
// count's samples on one thread (perf record, session 36). Here a block
// costs its header alone (BenchmarkAppendHybrid).
func appendHybrid(dst []byte, idx []int32, width int) []byte {
	if width == 0 {
		return binary.AppendUvarint(dst, uint64(len(idx))<<1)
	}
	w := uint(width)
	whole := len(idx) &^ 7
	for i := 0; i < whole; {
		v := idx[i]
		j := i
		for j < whole && uniform8((*[8]int32)(idx[j:j+8]), v) {
			j += 8
		}
		if j > i {
			dst = appendRun(dst, j-i, v, width)
			i = j
			continue
		}
		if hasAVX2 && (w == 8 || hasBMI2 && w >= 9 && w <= 15) {
			var k int
			dst, k = appendPackedAVX2(dst, idx[i:whole], w)
			i += 8 * k
			continue
		}
		for j = i + 8; j < whole && !uniform8((*[8]int32)(idx[j:j+8]), idx[j]); j += 8 {
		}
		dst = appendPacked(dst, idx[i:j], w)
		i = j
	}
	for i := whole; i < len(idx); {
		j := i + 1
		for j < len(idx) && idx[j] == idx[i] {
			j++
		}
		dst = appendRun(dst, j-i, idx[i], width)
		i = j
	}
	return dst
}

// appendPackedAVX2 appends a bit-packed block of values of w bits, 8 or
// 9 to 15, as appendPacked does, made of vals's first group and the groups
// after it up to the first uniform one, which it finds as it packs them
// (packGroups8AVX2, packGroupsWideAVX2); it returns the number of groups.
// Since the counts columns' indices of 5 to 8 bits are stored in whole
// bytes (indexWidth), most of their blocks are packed here, and the rest
// mostly in 9 to 12 bits: 0.13 ns a value against 0.84 at 8 bits
// (BenchmarkAppendHybrid).
func appendPackedAVX2(dst []byte, vals []int32, w uint) ([]byte, int) {
	// The header, uvarint(groups<<1 | 1), takes one byte below 64 groups:
	// the groups are packed behind one byte, and moved for a longer one.
	n := len(dst)
	room := len(vals) / 8 * int(w)
	dst = slices.Grow(dst, binary.MaxVarintLen64+room+16)
	var k int
	if w == 8 {
		k = packGroups8AVX2(vals, dst[n+1:n+1+room])
	} else {
		k = packGroupsWideAVX2(vals, dst[n+1:n+1+room+16], w)
	}
	size := k * int(w)
	var head [binary.MaxVarintLen64]byte
	h := binary.PutUvarint(head[:], uint64(k)<<1|1)
	out := dst[n : n+h+size]
	if h > 1 {
		copy(out[h:], out[1:1+size])
	}
	copy(out, head[:h])
	return dst[:n+h+size], k
}

func uniform8(g *[8]int32, v int32) bool {
	// Branch-free: the groups of a packed block are rarely uniform but
	// often start with a repeat.
	return (g[0]^v)|(g[1]^v)|(g[2]^v)|(g[3]^v)|(g[4]^v)|(g[5]^v)|(g[6]^v)|(g[7]^v) == 0
}

// appendRun appends a run of n copies of v: its header, then v in the
// fewest whole bytes that hold width bits.
func appendRun(dst []byte, n int, v int32, width int) []byte {
	dst = binary.AppendUvarint(dst, uint64(n)<<1)
	for k := 0; k < width; k += 8 {
		dst = append(dst, byte(v>>k))
	}
	return dst
}

// appendPacked appends vals, a whole number of groups of eight, as one
// bit-packed block: its header, then each group in width bytes, the first
// value in the lowest bits.
func appendPacked(dst []byte, vals []int32, w uint) []byte {
	groups := len(vals) / 8
	dst = binary.AppendUvarint(dst, uint64(groups)<<1|1)
	n := len(dst)
	// Each group is stored with whole 8-byte words, up to 16 bytes past its
	// end, which the next group or the final length covers.
	dst = slices.Grow(dst, groups*int(w)+32)
	out := dst[:cap(dst)]
	for g := 0; g < groups; g++ {
		v := vals[8*g : 8*g+8 : 8*g+8]
		switch {
		case w <= 8:
			x := uint64(v[0]) | uint64(v[1])<<w | uint64(v[2])<<(2*w) | uint64(v[3])<<(3*w) |
				uint64(v[4])<<(4*w) | uint64(v[5])<<(5*w) | uint64(v[6])<<(6*w) | uint64(v[7])<<(7*w)
			binary.LittleEndian.PutUint64(out[n:], x)
		case w <= 16:
			// Four values in each half, s = 4w bits; the high half
			// straddles the two words unless s is 64 (a shift by 64 gives
			// 0 in Go).
			lo := uint64(v[0]) | uint64(v[1])<<w | uint64(v[2])<<(2*w) | uint64(v[3])<<(3*w)
			hi := uint64(v[4]) | uint64(v[5])<<w | uint64(v[6])<<(2*w) | uint64(v[7])<<(3*w)
			s := 4 * w
			binary.LittleEndian.PutUint64(out[n:], lo|hi<<s)
			binary.LittleEndian.PutUint64(out[n+8:], hi>>(64-s))
		default:
			var acc uint64
			var have uint
			m := n
			for _, x := range v {
				acc |= uint64(uint32(x)) << have
				have += w
				if have >= 32 {
					binary.LittleEndian.PutUint32(out[m:], uint32(acc))
					m += 4
					acc >>= 32
					have -= 32
				}
			}
			binary.LittleEndian.PutUint32(out[m:], uint32(acc))
		}
		n += int(w)
	}
	return dst[:n]
}
