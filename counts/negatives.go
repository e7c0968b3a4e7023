package counts

import (
	"math"
	"math/bits"
	"slices"
)

// negTable is the negative-sampling distribution P(j) ∝ count_j^power with
// the tables its samplers need. Ids are sorted by descending count, so P is
// non-increasing and the conditional-binomial chain meets the large
// categories first.
type negTable struct {
	p []float64 // P(j)
	// Alias table (Vose): draw j uniform, keep it if 32 other random bits
	// fall below alias[j].keep, else take alias[j].other.
	alias []aliasEntry
	// compact, for at most 2^16 categories where aliasDrawsAVX2 runs, is
	// alias in half the memory: alias[j].keep's upper 16 bits above
	// alias[j].other. The alias table is read at random, and the negatives
	// drawn into count's tally share the core's cache with it.
	compact []uint32
	// cond[j] = P(j) / sum_{k>=j} P(k): the success probability of the
	// j-th binomial of the chain; 1 at the last category with P > 0.
	cond []float64
	// logQ[j] = log(1 - cond[j]) where cond[j] <= 1/2.
	logQ []float64
	last int // last category with P > 0
}

type aliasEntry struct {
	keep  uint32
	other int32 // the category itself where it is always kept
}

func newNegTable(counts []int64, power float64) (*negTable, bool) {
	v := len(counts)
	t := &negTable{
		p: make([]float64, v), alias: make([]aliasEntry, v),
		cond: make([]float64, v), logQ: make([]float64, v), last: -1,
	}
	var sum float64
	for j, c := range counts {
		if c > 0 {
			t.p[j] = math.Pow(float64(c), power)
			sum += t.p[j]
			t.last = j
		}
	}
	if math.IsInf(sum, 0) {
		// A power so large that the powers overflow (count^150): of the
		// counts relative to the largest, which the powers do not change
		// but make finite. Only then, so that the tables of the powers
		// that do not overflow keep their bits.
		top := float64(slices.Max(counts))
		sum = 0
		for j, c := range counts {
			if c > 0 {
				t.p[j] = math.Pow(float64(c)/top, power)
				sum += t.p[j]
			}
		}
	}
	if t.last < 0 || !(sum > 0) || math.IsInf(sum, 0) {
		return nil, false
	}
	for j := range t.p {
		t.p[j] /= sum
	}
	tail := 0.0
	for j := t.last; j >= 0; j-- {
		tail += t.p[j]
		if t.p[j] > 0 {
			t.cond[j] = min(1, t.p[j]/tail)
		}
	}
	t.cond[t.last] = 1
	for j, c := range t.cond {
		if c <= 0.5 {
			t.logQ[j] = math.Log1p(-c)
		}
	}
	t.buildAlias()
	return t, true
}

func (t *negTable) buildAlias() {
	v := len(t.p)
	scaled := make([]float64, v)
	var small, large []int32
	for j, pj := range t.p {
		scaled[j] = pj * float64(v)
		t.alias[j] = aliasEntry{keep: math.MaxUint32, other: int32(j)}
		if scaled[j] < 1 {
			small = append(small, int32(j))
		} else {
			large = append(large, int32(j))
		}
	}
	for len(small) > 0 && len(large) > 0 {
		s := small[len(small)-1]
		small = small[:len(small)-1]
		l := large[len(large)-1]
		t.alias[s] = aliasEntry{keep: uint32(scaled[s] * (1 << 32)), other: l}
		scaled[l] -= 1 - scaled[s]
		if scaled[l] < 1 {
			large = large[:len(large)-1]
			small = append(small, l)
		}
	}
	// What is left has weight 1 up to rounding and keeps itself, except
	// categories of probability 0, which must never be returned.
	for _, j := range small {
		if t.p[j] == 0 {
			t.alias[j] = aliasEntry{keep: 0, other: int32(t.last)}
		}
	}
	if hasAVX2 && v <= 1<<16 {
		t.compact = make([]uint32, v)
		for j, e := range t.alias {
			t.compact[j] = e.keep&^0xffff | uint32(e.other)
		}
	}
}

// drawAlias draws one category.
func (t *negTable) drawAlias(r *rng) int32 {
	x := r.next()
	j := (x & 0xffffffff) * uint64(len(t.alias)) >> 32
	e := t.alias[j]
	if uint32(x>>32) < e.keep {
		return int32(j)
	}
	return e.other
}

// negMethod selects how a target's negatives are drawn.
type negMethod int

const (
	// negAuto picks alias draws or the chain by cost.
	negAuto negMethod = iota
	// negAlias makes m alias draws.
	negAlias
	// negChain runs the conditional binomials.
	negChain
)

// Relative costs, measured by BenchmarkNegatives: an alias draw with its
// tally against one binomial step of the chain.
const (
	costAlias    = 1
	costBinomial = 8
	sortDrawsMax = 32 // below this many draws, sorting beats the tally
)

// negSampler draws the negatives of one target at a time; it owns scratch
// space so that a merge worker allocates it once.
type negSampler struct {
	t     *negTable
	draws []int32
	tally *tally[uint32] // m <= 4.5 V draws fit uint32
}

func newNegSampler(t *negTable) *negSampler {
	return &negSampler{t: t, tally: newTally[uint32](len(t.p))}
}

// sample appends to (cs, ns) the contexts, in increasing order, and the
// counts of an exact Multinomial(m, P) draw.
func (s *negSampler) sample(r *rng, m uint64, method negMethod, cs []int32, ns []uint64) ([]int32, []uint64) {
	if m == 0 {
		return cs, ns
	}
	t := s.t
	if method == negAlias || method == negAuto && s.aliasCheaper(m) {
		if m < sortDrawsMax {
			s.draws = s.draws[:0]
			for range m {
				s.draws = append(s.draws, t.drawAlias(r))
			}
			return s.sorted(cs, ns)
		}
		s.aliasTally(r, m)
		return s.tally.drain(cs, ns)
	}
	// Conditional binomials: given the counts of categories < j, the count
	// of j is Binomial(remaining, P(j) / P(k >= j)).
	n := m
	for j := 0; n > 0 && j <= t.last; j++ {
		var x int64
		if c := t.cond[j]; c <= 0.5 {
			x = binomialLogQ(r, int64(n), c, t.logQ[j])
		} else {
			x = binomial(r, int64(n), c)
		}
		if x > 0 {
			cs = append(cs, int32(j))
			ns = append(ns, uint64(x))
			n -= uint64(x)
		}
	}
	return cs, ns
}

// aliasCheaper reports whether alias draws cost less than the chain for m
// draws.
func (s *negSampler) aliasCheaper(m uint64) bool {
	return m*costAlias <= uint64(s.t.last+1)*costBinomial
}

// tallies reports whether sample, in negAuto mode, draws m negatives into
// the tally, for merger.tallyRows.
func (s *negSampler) tallies(m uint64) bool {
	return m >= sortDrawsMax && s.aliasCheaper(m)
}

// sorted appends the draws as sorted (category, count) pairs.
func (s *negSampler) sorted(cs []int32, ns []uint64) ([]int32, []uint64) {
	d := s.draws
	slices.Sort(d)
	for i := 0; i < len(d); {
		k := i + 1
		for k < len(d) && d[k] == d[i] {
			k++
		}
		cs = append(cs, d[i])
		ns = append(ns, uint64(k-i))
		i = k
	}
	return cs, ns
}

// aliasTally makes m alias draws into the tally, in blocks: first the
// draws (aliasDraws), then their tally, which keeps the two streams of
// random accesses from waiting on each other (twice as fast as alternating
// them).
func (s *negSampler) aliasTally(r *rng, m uint64) {
	aliasTallyInto(r, m, s.t, s.tally.sums, 1, s.tally.bitset, s.tally.summary)
}

// aliasTallyInto is aliasTally for any tally's arrays: each draw adds unit
// to its category's sum and marks it in bitset and summary, unless they
// are nil (a tally drained by a scan).
func aliasTallyInto[T uint32 | uint64](r *rng, m uint64, t *negTable, sums []T, unit T, bitset, summary []uint64) {
	var block [256]uint32
	for m > 0 {
		b := block[:min(m, uint64(len(block)))]
		m -= uint64(len(b))
		r.s = t.aliasDraws(b, r.s)
		if bitset == nil {
			for _, j := range b {
				sums[j] += unit
			}
			continue
		}
		for _, j := range b {
			sums[j] += unit
			w := j >> 6
			bitset[w] |= 1 << (j & 63)
			summary[w>>6] |= 1 << (w & 63)
		}
	}
}

// aliasDraws fills b with the alias draws that the function aliasDraws
// makes, four at a time from the compact table where there is one
// (aliasDrawsAVX2): x / 2^32 at or above keep is known from their upper 16
// bits unless those are equal (one draw in 2^16), and then the full table
// makes the group of four. On bench-raw (--max-vocab 65536, one thread),
// count's samples in the draws fell from 1121 to 817-846, 770-792 of them
// in the assembly (perf record, two runs), and count's CPU by 2 % (medians
// of 8 alternating runs, 1.360 CPU-s against 1.330). The vector loop
// alone, on a table in cache, took 1.20 ns a draw against 1.72 in Go
// (medians of two); with the full table it took 1.17, but it gained less
// in count, where the table and the tally do not fit the core's cache
// together; with AVX2's gather, 1.40.
func (t *negTable) aliasDraws(b []uint32, s uint64) uint64 {
	for t.compact != nil && len(b) >= 4 {
		n := aliasDrawsAVX2(b, t.compact, s)
		s += uint64(n) * wyIncrement
		b = b[n:]
		if len(b) >= 4 {
			s = aliasDraws(b[:4], t.alias, s)
			b = b[4:]
		}
	}
	return aliasDraws(b, t.alias, s)
}

// aliasDraws fills b with alias draws, as drawAlias makes them but from a
// wyrand stream (Wang Yi's generator, which Go's runtime uses for its cheap
// random numbers) whose counter is the state s, and returns the state after
// them. A wyrand step is one 64x64-bit multiplication where splitmix64's
// has two: BenchmarkNegatives's alias draws of 65536 took 4.68 ns a draw,
// tally included, against 5.0 (medians of three), and count on bench-raw
// 2-3 % less CPU. In a function of its own, not inlined, the state stays in
// a register: in aliasTallyInto's loop it went to the stack and back for
// every draw (4.30-4.42 ns a draw against 4.68-4.91 inlined, as the
// cheaper step let the compiler do).
//
// Where the table's size is a power of two, 2^k, the index (x mod 2^32)
// 2^k / 2^32 is a shift of x (aliasDrawsPow2): the same draws without the
// multiplication. With --max-vocab 65536 on bench-raw, count's samples in
// aliasDraws fell from 1581 and 1174 to 1219 and 1000 (perf record, two
// pairs of runs), about 1 % of count.
//
//go:noinline
func aliasDraws(b []uint32, alias []aliasEntry, s uint64) uint64 {
	v := uint64(len(alias))
	if v&(v-1) == 0 {
		return aliasDrawsPow2(b, alias, s, 32-uint(bits.TrailingZeros64(v)))
	}
	for i := range b {
		s += wyIncrement
		hi, lo := bits.Mul64(s, s^wyMix)
		x := hi ^ lo
		j := (x & 0xffffffff) * v >> 32
		if e := alias[j]; uint32(x>>32) >= e.keep {
			j = uint64(uint32(e.other))
		}
		b[i] = uint32(j)
	}
	return s
}

// aliasDrawsPow2 is aliasDraws for a table of 2^(32-shift) entries.
func aliasDrawsPow2(b []uint32, alias []aliasEntry, s uint64, shift uint) uint64 {
	for i := range b {
		s += wyIncrement
		hi, lo := bits.Mul64(s, s^wyMix)
		x := hi ^ lo
		j := uint32(x) >> shift
		if e := alias[j]; uint32(x>>32) >= e.keep {
			j = uint32(e.other)
		}
		b[i] = j
	}
	return s
}

// wyrand's constants.
const (
	wyIncrement = 0xa0761d6478bd642f
	wyMix       = 0xe7037ed1a0b428db
)
