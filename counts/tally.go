package counts

import (
	"math/bits"

	"github.com/pwe-project/pwe/internal/cacheline"
)

// tally sums values per id and lists the touched ids in increasing order.
// A two-level bitset finds them without sorting: the summary has a bit per
// non-empty word of the bitset. Negative draws tally in uint32, which halves
// the randomly accessed memory; merged positive counts need uint64.
type tally[T uint32 | uint64] struct {
	_       cacheline.Pad
	sums    []T
	bitset  []uint64
	summary []uint64
	_       cacheline.Pad
}

func newTally[T uint32 | uint64](v int) *tally[T] {
	words := (v + 63) / 64
	return &tally[T]{sums: make([]T, v), bitset: make([]uint64, words), summary: make([]uint64, (words+63)/64)}
}

func (t *tally[T]) add(j int32, v T) {
	t.sums[j] += v
	w := j >> 6
	t.bitset[w] |= 1 << (j & 63)
	t.summary[w>>6] |= 1 << (w & 63)
}

// drain appends the touched ids and their sums in increasing order and
// resets the tally.
func (t *tally[T]) drain(cs []int32, vs []uint64) ([]int32, []uint64) {
	for s, sw := range t.summary {
		if sw == 0 {
			continue
		}
		t.summary[s] = 0
		for sw != 0 {
			w := s<<6 | bits.TrailingZeros64(sw)
			sw &= sw - 1
			word := t.bitset[w]
			t.bitset[w] = 0
			for word != 0 {
				j := w<<6 | bits.TrailingZeros64(word)
				word &= word - 1
				cs = append(cs, int32(j))
				vs = append(vs, uint64(t.sums[j]))
				t.sums[j] = 0
			}
		}
	}
	return cs, vs
}

// reset empties the tally.
func (t *tally[T]) reset() {
	clear(t.sums)
	clear(t.bitset)
	clear(t.summary)
}

// drainAll is drain by a scan of every sum, for a tally whose bitsets may
// not list every touched id.
func (t *tally[T]) drainAll(cs []int32, vs []uint64) ([]int32, []uint64) {
	for j, x := range t.sums {
		if x != 0 {
			cs = append(cs, int32(j))
			vs = append(vs, uint64(x))
			t.sums[j] = 0
		}
	}
	clear(t.bitset)
	clear(t.summary)
	return cs, vs
}
