package diag

import (
	"math"
	"math/bits"
	"slices"

	"gonum.org/v1/gonum/stat/distuv"
)

// madConstant scales the median absolute deviation to the standard
// deviation of a normal distribution, as R's mad does.
const madConstant = 1.4826

// Summary holds the posterior summary statistics and convergence
// diagnostics of one scalar quantity, named as in R's posterior package.
type Summary struct {
	Mean      float64 // mean of all draws
	Median    float64 // median of all draws
	SD        float64 // standard deviation (n−1 denominator)
	MAD       float64 // 1.4826 · median absolute deviation from the median
	Q5        float64 // 5% quantile (type 7)
	Q95       float64 // 95% quantile (type 7)
	MCSEMean  float64 // Monte Carlo standard error of the mean
	MCSESD    float64 // Monte Carlo standard error of the SD
	ESSBulk   float64 // ESS of the rank-normalised split chains
	ESSTail   float64 // smaller ESS of the 5% and 95% quantile indicators
	Rhat      float64 // larger of the bulk and folded rank-normalised split R-hats
	ESSBasic  float64 // ESS of the split chains
	RhatBasic float64 // R-hat of the split chains
}

// Summarizer computes Summaries, keeping its scratch space between calls so
// that summarising many quantities with the same numbers of chains and draws
// allocates nothing after the first. The zero value is ready to use. A
// Summarizer must not be used by more than one goroutine at a time.
type Summarizer struct {
	// Geometry of the current input and the tables that depend on it.
	chains, draws int // C chains of D draws
	half          int // draws per split chain
	splitPos      []int32
	zTable        []float64 // Φ⁻¹((j/2 − 3/8)/(n + 1/4)) at index j, for n split draws
	zTableN       int

	flat       []float64 // draws, chain after chain
	keys       []uint64  // sort keys with the draw index in the low bits
	keysTmp    []uint64  // radix sort buffer
	radixCount [1 << radixDigit]int32
	order      []int32   // draw indices in ascending order of value
	sorted     []float64 // draws in ascending order
	folded     []float64 // |x − median| in ascending order
	foldedAt   []int32   // draw indices of folded
	split      []float64 // split chains of some transform of the draws
	work       essWork
}

// Summarize returns the summary of chains[c][d], draw d of chain c. All
// chains must have the same length; Summarize panics otherwise.
func (s *Summarizer) Summarize(chains [][]float64) Summary {
	s.load(chains)
	return s.summary()
}

// SummarizeFlat is Summarize for draws stored chain after chain in one
// slice: draw d of chain c is draws[c*len(draws)/nChains+d]. It panics if
// nChains does not divide len(draws).
func (s *Summarizer) SummarizeFlat(draws []float64, nChains int) Summary {
	s.loadFlat(draws, nChains)
	return s.summary()
}

// load copies chains into s.flat and sets up the geometry.
func (s *Summarizer) load(chains [][]float64) {
	d := 0
	if len(chains) > 0 {
		d = len(chains[0])
	}
	s.flat = grow(s.flat, len(chains)*d)
	for c, chain := range chains {
		if len(chain) != d {
			panic("diag: chains of different lengths")
		}
		copy(s.flat[c*d:], chain)
	}
	s.setGeometry(len(chains), d)
}

func (s *Summarizer) loadFlat(draws []float64, nChains int) {
	if nChains <= 0 || len(draws)%nChains != 0 {
		panic("diag: number of chains does not divide the number of draws")
	}
	s.flat = grow(s.flat, len(draws))
	copy(s.flat, draws)
	s.setGeometry(nChains, len(draws)/nChains)
}

// setGeometry prepares the split-chain layout for c chains of d draws:
// split chain 2k is the first half of chain k and 2k+1 its second half,
// without the middle draw when d is odd. A single draw per chain is not
// split, as in posterior.
func (s *Summarizer) setGeometry(c, d int) {
	if c == s.chains && d == s.draws && s.splitPos != nil {
		return
	}
	s.chains, s.draws = c, d
	s.half = d / 2
	s.splitPos = make([]int32, c*d)
	for k := range c {
		for i := range d {
			p := int32(-1)
			switch {
			case d == 1:
				p = int32(k)
			case i < s.half:
				p = int32(2*k*s.half + i)
			case i >= d-s.half:
				p = int32((2*k+1)*s.half + i - (d - s.half))
			}
			s.splitPos[k*d+i] = p
		}
	}
}

// splitShape returns the number of split chains and their length.
func (s *Summarizer) splitShape() (m, n int) {
	if s.draws == 1 {
		return s.chains, 1
	}
	return 2 * s.chains, s.half
}

func nanSummary() Summary {
	n := math.NaN()
	return Summary{n, n, n, n, n, n, n, n, n, n, n, n, n}
}

// summary computes every statistic of the loaded draws.
func (s *Summarizer) summary() Summary {
	x := s.flat
	if len(x) == 0 || hasNaN(x) {
		return nanSummary()
	}
	mean, m2, m4 := moments(x)
	out := nanSummary()
	out.Mean = mean
	out.SD = math.Sqrt(m2 * float64(len(x)) / float64(len(x)-1))
	s.sortDraws()
	out.Median = median(s.sorted)
	out.Q5 = Quantile(s.sorted, 0.05)
	out.Q95 = Quantile(s.sorted, 0.95)
	s.foldDraws(out.Median)
	out.MAD = madConstant * median(s.folded)
	if !allFinite(x) {
		return out
	}
	out.Rhat, out.ESSBulk = s.rankDiagnostics(true)
	out.ESSBasic, out.RhatBasic = s.basicDiagnostics(true)
	out.MCSEMean = out.SD / math.Sqrt(out.ESSBasic)
	out.MCSESD = s.mcseSD(mean, m2, m4)
	out.ESSTail = s.essTail()
	return out
}

// rankDiagnostics returns the rank-normalised R-hat (the larger of bulk
// and folded) and, if withESS, the bulk ESS. The draws must be sorted and
// folded.
func (s *Summarizer) rankDiagnostics(withESS bool) (rh, essBulk float64) {
	m, n := s.splitShape()
	split := s.splitBuf()
	s.rankNormal(split, s.order, s.sorted)
	bulk := s.work.rhat(split, m, n)
	essBulk = math.NaN()
	if withESS {
		essBulk = s.work.ess(split, m, n)
	}
	s.rankNormal(split, s.foldedAt, s.folded)
	tail := s.work.rhat(split, m, n)
	if math.IsNaN(bulk) || math.IsNaN(tail) {
		return math.NaN(), essBulk
	}
	return max(bulk, tail), essBulk
}

// basicDiagnostics returns the ESS and, if withRhat, the R-hat of the split
// draws.
func (s *Summarizer) basicDiagnostics(withRhat bool) (ess, rh float64) {
	m, n := s.splitShape()
	split := s.splitBuf()
	s.splitOf(split, func(v float64) float64 { return v })
	rh = math.NaN()
	if withRhat {
		rh = s.work.rhat(split, m, n)
	}
	return s.work.ess(split, m, n), rh
}

// mcseSD returns the MCSE of the SD from the mean and the second and fourth
// central moments (denominator n) of the draws.
func (s *Summarizer) mcseSD(mean, m2, m4 float64) float64 {
	m, n := s.splitShape()
	split := s.splitBuf()
	s.splitOf(split, func(v float64) float64 { d := v - mean; return d * d })
	essSq := s.work.ess(split, m, n)
	varVar := (m4 - m2*m2) / essSq
	return math.Sqrt(varVar / m2 / 4)
}

// moments returns the mean and the second and fourth central moments
// (denominator n) of x.
func moments(x []float64) (mean, m2, m4 float64) {
	var sum float64
	for _, v := range x {
		sum += v
	}
	mean = sum / float64(len(x))
	for _, v := range x {
		d := v - mean
		d2 := d * d
		m2 += d2
		m4 += d2 * d2
	}
	n := float64(len(x))
	return mean, m2 / n, m4 / n
}

func (s *Summarizer) splitBuf() []float64 {
	m, n := s.splitShape()
	s.split = grow(s.split, m*n)
	return s.split
}

func hasNaN(x []float64) bool {
	for _, v := range x {
		if v != v {
			return true
		}
	}
	return false
}

func allFinite(x []float64) bool {
	for _, v := range x {
		if math.IsInf(v, 0) || v != v {
			return false
		}
	}
	return true
}

// essTail returns the smaller ESS of the indicators x ≤ q05 and x ≤ q95.
func (s *Summarizer) essTail() float64 {
	e05 := s.essQuantile(0.05)
	e95 := s.essQuantile(0.95)
	if math.IsNaN(e05) || math.IsNaN(e95) {
		return math.NaN()
	}
	return min(e05, e95)
}

// essQuantile returns the ESS of the indicator x ≤ q, q the p-quantile of
// all draws. The draws must be sorted.
func (s *Summarizer) essQuantile(p float64) float64 {
	m, n := s.splitShape()
	split := s.splitBuf()
	q := Quantile(s.sorted, p)
	clear(split)
	for i, v := range s.sorted {
		if !(v <= q) {
			break
		}
		if pos := s.splitPos[s.order[i]]; pos >= 0 {
			split[pos] = 1
		}
	}
	return s.work.ess(split, m, n)
}

// splitOf writes f of every draw into its place among the split chains.
func (s *Summarizer) splitOf(split []float64, f func(float64) float64) {
	for i, v := range s.flat {
		if pos := s.splitPos[i]; pos >= 0 {
			split[pos] = f(v)
		}
	}
}

// sortDraws fills s.order and s.sorted. The sort keys are the draws' bit
// patterns, mapped so that unsigned order is numeric order, with the low
// bits replaced by the draw index; sorting plain integers is several times
// faster than sorting (value, index) pairs. Draws whose keys agree above
// the index bits end up adjacent and are then ordered by their full value.
func (s *Summarizer) sortDraws() {
	x := s.flat
	nb := uint(bits.Len(uint(len(x) - 1)))
	low := uint64(1)<<nb - 1
	s.keys = growUint64(s.keys, len(x))
	for i, v := range x {
		s.keys[i] = orderedBits(v)&^low | uint64(i)
	}
	s.radixSort(nb)
	s.order = growInt32(s.order, len(x))
	for i, k := range s.keys {
		s.order[i] = int32(k & low)
	}
	for i := 0; i < len(x); {
		j := i + 1
		for j < len(x) && s.keys[j]&^low == s.keys[i]&^low {
			j++
		}
		if j-i > 1 {
			slices.SortFunc(s.order[i:j], func(a, b int32) int {
				ka, kb := orderedBits(x[a]), orderedBits(x[b])
				switch {
				case ka < kb:
					return -1
				case ka > kb:
					return 1
				}
				return 0
			})
		}
		i = j
	}
	s.sorted = grow(s.sorted, len(x))
	for i, idx := range s.order {
		s.sorted[i] = x[idx]
	}
}

// radixDigit is the digit width of radixSort: 2^11 counters fit in L1
// cache and five passes cover the 53 bits above a 2^11 draw index.
const radixDigit = 11

// radixSort sorts s.keys with a least-significant-digit radix sort, which
// unlike a comparison sort does not mispredict a branch per comparison.
// The low bits below from hold the draw index and are already in order,
// so the passes start there; passes whose digit is the same for every key
// are skipped.
func (s *Summarizer) radixSort(from uint) {
	keys := s.keys
	n := len(keys)
	s.keysTmp = growUint64(s.keysTmp, n)
	tmp := s.keysTmp
	const size = 1 << radixDigit
	const mask = size - 1
	for shift := from; shift < 64; shift += radixDigit {
		count := &s.radixCount
		clear(count[:])
		for _, k := range keys {
			count[(k>>shift)&mask]++
		}
		if count[(keys[0]>>shift)&mask] == int32(n) {
			continue
		}
		var sum int32
		for d, c := range count {
			count[d] = sum
			sum += c
		}
		for _, k := range keys {
			d := (k >> shift) & mask
			tmp[count[d]] = k
			count[d]++
		}
		keys, tmp = tmp, keys
	}
	if &keys[0] != &s.keys[0] {
		copy(s.keys, keys)
	}
}

// orderedBits maps a float64 to a uint64 with the same order (−0 below +0).
func orderedBits(v float64) uint64 {
	b := math.Float64bits(v)
	if b>>63 != 0 {
		return ^b
	}
	return b | 1<<63
}

// foldDraws fills s.folded and s.foldedAt with |x − med| in ascending
// order by merging the draws below the median, walked downwards, with
// those at or above it. m − x is exactly |x − m| for x < m, so no sort is
// needed.
func (s *Summarizer) foldDraws(med float64) {
	n := len(s.sorted)
	s.folded = grow(s.folded, n)
	s.foldedAt = growInt32(s.foldedAt, n)
	above, _ := slices.BinarySearch(s.sorted, med) // first index with sorted ≥ med
	below := above - 1
	sorted, order := s.sorted, s.order
	folded, foldedAt := s.folded[:n], s.foldedAt[:n]
	for k := range n {
		// Written so that the compiler can select without branching: which
		// side comes next is unpredictable.
		lv, av := math.Inf(1), math.Inf(1)
		if below >= 0 {
			lv = med - sorted[below]
		}
		if above < n {
			av = sorted[above] - med
		}
		v, pos, fromBelow := av, above, 0
		if lv < av || above == n { // the second test guards infinite draws
			v, pos, fromBelow = lv, below, 1
		}
		folded[k] = v
		foldedAt[k] = order[pos]
		below -= fromBelow
		above += 1 - fromBelow
	}
}

// rankNormal writes the rank-normalised values of the split draws into
// split, given all draws in ascending order of value (vals) with their
// indices (at). Draws left out of the split chains are left out of the
// ranking too; tied values get their average rank.
func (s *Summarizer) rankNormal(split []float64, at []int32, vals []float64) {
	z := s.zScores(len(split))
	pos := s.splitPos
	rank := 0 // ranks of the split draws placed so far
	for i := 0; i < len(vals); {
		v := vals[i]
		j := i + 1
		for j < len(vals) && vals[j] == v {
			j++
		}
		if j == i+1 { // no tie, the common case
			if p := pos[at[i]]; p >= 0 {
				rank++
				split[p] = z[2*rank]
			}
			i = j
			continue
		}
		// The tie group vals[i:j] holds the split draws ranked rank+1 …
		// rank+k, whose average rank is (2·rank+k+1)/2.
		k := 0
		for _, idx := range at[i:j] {
			if pos[idx] >= 0 {
				k++
			}
		}
		if k > 0 {
			zr := z[2*rank+k+1]
			for _, idx := range at[i:j] {
				if p := pos[idx]; p >= 0 {
					split[p] = zr
				}
			}
		}
		rank += k
		i = j
	}
}

// zScores returns the table of Φ⁻¹((j/2 − 3/8)/(n + 1/4)) by j for n split
// draws; average ranks are multiples of 1/2.
func (s *Summarizer) zScores(n int) []float64 {
	if s.zTableN == n && s.zTable != nil {
		return s.zTable
	}
	s.zTable = make([]float64, 2*n+1)
	for j := 2; j <= 2*n; j++ {
		r := float64(j) / 2
		s.zTable[j] = distuv.UnitNormal.Quantile((r - 3.0/8) / (float64(n) + 1.0/4))
	}
	s.zTableN = n
	return s.zTable
}

func growUint64(b []uint64, n int) []uint64 {
	if cap(b) < n {
		return make([]uint64, n)
	}
	return b[:n]
}

func growInt32(b []int32, n int) []int32 {
	if cap(b) < n {
		return make([]int32, n)
	}
	return b[:n]
}
