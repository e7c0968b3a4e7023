package counts

import (
	"math/bits"
	"slices"
	"unsafe"

	"github.com/pwe-project/pwe/internal/pages"
)

// The dense tables count the pairs of ids both below F, one table per
// accumulator: entry hi*(hi+1)/2 + lo holds the sum of the weights of the
// pair (hi, lo), lo <= hi < F. An entry keeps the low bits of its sum, as
// many as its type has, and the few sums that go past that range keep the
// number of times they wrapped around beside the table. The counts are
// uint16 where the window's weights are at most smallWeight, uint32
// otherwise: a table of 2048 ids then takes 4.2 MB instead of 8.4, and the
// increments, which wait on its cache misses, take less time. On bench-raw
// (19.2 M dense keys, 11 wraps), adding the keys took 127-160 ms instead
// of 158-235, and count 2.2 % less CPU on one thread and 4.5 % on two
// (median per-round ratios of 8-10 alternating rounds, default budget).
// The merge adds the wraps back, and a pair of the dense range never goes
// to the pair buffer.

// denseCount is the type of a dense table's counts.
type denseCount interface{ ~uint16 | ~uint32 }

// smallWeight is the largest window weight for which the dense counts are
// uint16 (uniform weights, linear ones up to a window of 255): an entry
// then wraps around at most once every 257 additions, so wraps stay rare
// even for the most frequent pairs.
const smallWeight = 255

// denseIndex says where a pair key's entry lies and what it adds.
type denseIndex struct {
	tri            []int    // hi*(hi+1)/2
	wt             []uint32 // the weight of each distance
	hiShift, dBits uint
	idMask, dMask  uint64
}

// denseAdder is an accumulator's dense table, of either type.
type denseAdder interface {
	// add adds the pairs of the keys.
	add(keys []uint64, ix *denseIndex)
}

// denseTable is one accumulator's table with counts of type T.
type denseTable[T denseCount] struct {
	counts []T
	// wraps counts, by pair (hi<<32 | lo), how many times its entry went
	// past T's range.
	wraps map[uint64]uint64
}

func newDenseTable[T denseCount](f int) *denseTable[T] {
	d := &denseTable[T]{counts: make([]T, f*(f+1)/2)}
	pages.Touch(d.counts)
	return d
}

func (d *denseTable[T]) add(keys []uint64, ix *denseIndex) {
	counts, tri, wt := d.counts, ix.tri, ix.wt
	hiShift, dBits, idMask, dMask := ix.hiShift, ix.dBits, ix.idMask, ix.dMask
	for _, k := range keys {
		hi, lo := k>>hiShift, k>>dBits&idMask
		i := tri[hi] + int(lo)
		old := counts[i]
		x := old + T(wt[k&dMask])
		counts[i] = x
		if x < old {
			d.wrap(hi<<32 | lo)
		}
	}
}

// wrap records that the entry of pair went past T's range once more. Out
// of add's loop, which it would otherwise slow.
//
//go:noinline
func (d *denseTable[T]) wrap(pair uint64) {
	if d.wraps == nil {
		d.wraps = make(map[uint64]uint64)
	}
	d.wraps[pair]++
}

// denseBytes is the size of a dense count where the window's largest
// weight is maxWeight.
func denseBytes(maxWeight uint64) int {
	if maxWeight <= smallWeight {
		return 2
	}
	return 4
}

// newDenseAdder makes an accumulator's table of f ids with counts of the
// given size in bytes.
func newDenseAdder(f, size int) denseAdder {
	if size == 2 {
		return newDenseTable[uint16](f)
	}
	return newDenseTable[uint32](f)
}

// denseRows gives the rows of the accumulators' dense tables, summed.
type denseRows interface {
	// size is F.
	size() int32
	// row appends the non-zero entries of row t < F by increasing context.
	row(t int32, cs []int32, vs []uint64) ([]int32, []uint64, error)
}

// denseSet is the accumulators' tables with counts of type T, read by the
// merge.
type denseSet[T denseCount] struct {
	tables [][]T
	f      int32
	// wrapped lists, by target, what the wrap-arounds of its entries add:
	// both ends of a pair see its wraps.
	wrapped map[int32][]wrapEntry
}

type wrapEntry struct {
	context int32
	add     uint64
}

// collectDense takes the dense tables of the accumulators, which must all
// be there, for the merge; nil if there are none.
func collectDense(accs []*Accumulator, f int) denseRows {
	if len(accs) == 0 || f == 0 {
		return nil
	}
	switch accs[0].dense.(type) {
	case *denseTable[uint16]:
		return newDenseSet[uint16](accs, f)
	default:
		return newDenseSet[uint32](accs, f)
	}
}

func newDenseSet[T denseCount](accs []*Accumulator, f int) *denseSet[T] {
	s := &denseSet[T]{f: int32(f)}
	unit := uint64(1) << (8 * unsafe.Sizeof(T(0)))
	for _, a := range accs {
		d := a.dense.(*denseTable[T])
		a.dense = nil
		s.tables = append(s.tables, d.counts)
		for pair, n := range d.wraps {
			if s.wrapped == nil {
				s.wrapped = make(map[int32][]wrapEntry)
			}
			hi, lo := int32(pair>>32), int32(uint32(pair))
			add := n * unit
			s.wrapped[hi] = append(s.wrapped[hi], wrapEntry{lo, add})
			if lo != hi {
				s.wrapped[lo] = append(s.wrapped[lo], wrapEntry{hi, add})
			}
		}
	}
	return s
}

func (s *denseSet[T]) size() int32 { return s.f }

func (s *denseSet[T]) row(t int32, cs []int32, vs []uint64) ([]int32, []uint64, error) {
	start := len(cs)
	dense, f := s.tables, s.f
	base := int(t) * int(t+1) / 2
	for c := range int(t) + 1 {
		if v := denseSum(dense, base+c); v != 0 {
			cs = append(cs, int32(c))
			vs = append(vs, v)
		}
	}
	idx := base + 2*int(t) + 1 // entry (t, t+1)
	for c := t + 1; c < f; c++ {
		if v := denseSum(dense, idx); v != 0 {
			cs = append(cs, c)
			vs = append(vs, v)
		}
		idx += int(c) + 1
	}
	for _, w := range s.wrapped[t] {
		row := cs[start:]
		j, found := slices.BinarySearch(row, w.context)
		if found {
			var carry uint64
			if vs[start+j], carry = bits.Add64(vs[start+j], w.add, 0); carry != 0 {
				return cs, vs, errOverflow
			}
			continue
		}
		// The entry's low bits are all zero in every table.
		cs = slices.Insert(cs, start+j, w.context)
		vs = slices.Insert(vs, start+j, w.add)
	}
	return cs, vs, nil
}

// denseSum returns the sum of entry i of the tables.
func denseSum[T denseCount](dense [][]T, i int) uint64 {
	v := uint64(dense[0][i])
	for _, d := range dense[1:] {
		v += uint64(d[i])
	}
	return v
}
