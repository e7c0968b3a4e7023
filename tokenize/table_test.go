package tokenize

import (
	"bytes"
	"math/rand/v2"
	"testing"
)

// TestStrtabLengths: strings held in their slot (up to 7 bytes), in the
// arena with their length in the slot, and of 255 bytes or more (length
// looked up in ends) are all found, and near misses of every kind are not:
// the same bytes with one changed, one added or one removed, including zero
// bytes, which an inline slot must not confuse with padding.
//
// With a constant hash every string has the same tag and home slot, so
// that only the rest of the slot tells strings apart; with the home slot
// the last one, every probe wraps around. Each table is sized for every
// string or grows from the smallest size, which its rehashes must survive:
// they take the home slots from the hash bits the slots keep, so they
// follow the hash used here, not the table's own.
func TestStrtabLengths(t *testing.T) {
	for _, hash := range []uint64{0, 42 << 32, ^uint64(0) &^ 0xffffffff} {
		for _, presize := range []bool{true, false} {
			testStrtabLengths(t, hash, presize)
		}
	}
}

func testStrtabLengths(t *testing.T, constantHash uint64, presize bool) {
	rng := rand.New(rand.NewPCG(5, 6))
	alphabet := []byte{0, 1, 'a', 'b', 0xff}
	var strs [][]byte
	seen := map[string]int{}
	for n := range 300 {
		for range 8 {
			b := make([]byte, n)
			for i := range b {
				b[i] = alphabet[rng.IntN(len(alphabet))]
			}
			if _, ok := seen[string(b)]; !ok {
				seen[string(b)] = len(strs)
				strs = append(strs, b)
			}
		}
	}
	tab := newStrtab(0)
	if presize {
		tab = newStrtab(len(strs))
	}
	hash := tab.hash
	if constantHash != 0 {
		hash = func([]byte) uint64 { return constantHash }
	}
	for i, b := range strs {
		h := hash(b)
		slot, id := tab.find(b, h)
		if id >= 0 {
			t.Fatalf("%q found as %d before insertion", b, id)
		}
		if got := tab.insert(b, h, slot); got != i {
			t.Fatalf("insert(%q) = %d, want %d", b, got, i)
		}
	}
	for i, b := range strs {
		if _, id := tab.find(b, hash(b)); id != i {
			t.Fatalf("find(%q) = %d, want %d", b, id, i)
		}
		if !bytes.Equal(tab.str(i), b) {
			t.Fatalf("str(%d) = %q, want %q", i, tab.str(i), b)
		}
		var variants [][]byte
		variants = append(variants, append(bytes.Clone(b), 0), append(bytes.Clone(b), 'a'))
		if len(b) > 0 {
			variants = append(variants, b[:len(b)-1], b[1:])
			for _, p := range []int{0, len(b) / 2, len(b) - 1} {
				v := bytes.Clone(b)
				v[p] ^= 0x80
				variants = append(variants, v)
			}
		}
		for _, v := range variants {
			want, ok := seen[string(v)]
			if !ok {
				want = -1
			}
			if _, id := tab.find(v, hash(v)); id != want {
				t.Fatalf("find(%q), a variant of %q: %d, want %d", v, b, id, want)
			}
		}
	}
}
