package posterior

import (
	"errors"
	"fmt"
	"math"

	"github.com/pwe-project/pwe/formats"
)

// ErrNoPairs is returned by MAP and Gibbs when no pair has a positive count.
var ErrNoPairs = errors.New("posterior: no pair has a positive count")

// ErrTooManyPairs is returned by DataBuilder.Add beyond 2^31 - 1 pairs with
// a positive count, the most the int32 pair positions can address.
var ErrTooManyPairs = errors.New("posterior: more than 2^31 - 1 pairs with a positive count")

// Data holds the pair counts of one fit, indexed both by target and by
// context so that either side's conditional can be computed from contiguous
// memory. Pairs whose n_pos + n_neg is zero carry no information and are
// left out. Data is immutable once built and safe for concurrent reads.
type Data struct {
	v     int
	total float64

	// By target: the pairs of target i are tCtx[tOff[i]:tOff[i+1]].
	tOff   []int64
	tCtx   []int32
	tN     []float64
	tKappa []float64

	// By context: the pairs of context j are cTgt[cOff[j]:cOff[j+1]], targets
	// ascending; own copies of n and kappa keep the alpha side contiguous.
	// cPair gives each pair's position in the by-target arrays, through
	// which the sampler's alpha side reads the Pólya-Gamma draws its rho
	// side stored in target order.
	cOff   []int64
	cTgt   []int32
	cN     []float64
	cKappa []float64
	cPair  []int32
}

// V returns the vocabulary size.
func (d *Data) V() int { return d.v }

// Pairs returns the number of stored pairs (those with n_pos + n_neg > 0).
func (d *Data) Pairs() int { return len(d.tCtx) }

// Total returns the sum of n_pos + n_neg over all pairs.
func (d *Data) Total() float64 { return d.total }

// TargetPairs returns the pairs of target i: context ids (ascending), trials
// n = n_pos + n_neg and kappa = n_pos - n/2. The slices alias the Data and
// must not be modified.
func (d *Data) TargetPairs(i int) (contexts []int32, n, kappa []float64) {
	lo, hi := d.tOff[i], d.tOff[i+1]
	return d.tCtx[lo:hi], d.tN[lo:hi], d.tKappa[lo:hi]
}

// ContextPairs returns the pairs of context j: target ids (ascending), n and
// kappa, as TargetPairs does.
func (d *Data) ContextPairs(j int) (targets []int32, n, kappa []float64) {
	lo, hi := d.cOff[j], d.cOff[j+1]
	return d.cTgt[lo:hi], d.cN[lo:hi], d.cKappa[lo:hi]
}

// side returns the pairs of token i as a target (side 0) or as a context
// (side 1).
func (d *Data) side(s, i int) (idx []int32, n, kappa []float64) {
	if s == sideRho {
		return d.TargetPairs(i)
	}
	return d.ContextPairs(i)
}

// contextPairPos returns the positions in the by-target arrays of context
// j's pairs, in the order of ContextPairs(j).
func (d *Data) contextPairPos(j int) []int32 {
	return d.cPair[d.cOff[j]:d.cOff[j+1]]
}

// degree returns the number of pairs of token i on side s.
func (d *Data) degree(s, i int) int {
	if s == sideRho {
		return int(d.tOff[i+1] - d.tOff[i])
	}
	return int(d.cOff[i+1] - d.cOff[i])
}

// maxDegree returns the largest number of pairs of any token on either side.
func (d *Data) maxDegree() int {
	m := 0
	for s := range 2 {
		for i := range d.v {
			m = max(m, d.degree(s, i))
		}
	}
	return m
}

// DataBuilder assembles a Data from count rows streamed in batches, in the
// order of counts.parquet: sorted by (target_id, context_id), unique.
type DataBuilder struct {
	v    int
	rows int64
	prev formats.CountRow
	d    *Data
}

// NewDataBuilder returns a builder for a vocabulary of v tokens. It panics
// if v < 1.
func NewDataBuilder(v int) *DataBuilder {
	if v < 1 {
		panic("posterior: vocabulary size must be positive")
	}
	return &DataBuilder{v: v, d: &Data{v: v, tOff: make([]int64, v+1)}}
}

// Add appends a batch of rows. It checks every row (ids inside the
// vocabulary, finite non-negative counts, strictly increasing pairs across
// batches) and names the offending row, counted from 0 over all batches.
func (b *DataBuilder) Add(rows []formats.CountRow) error {
	if b.d == nil {
		panic("posterior: DataBuilder used after Build")
	}
	d := b.d
	for k := range rows {
		r := rows[k]
		var prev *formats.CountRow
		if b.rows > 0 {
			prev = &b.prev
		}
		if err := formats.CheckCountRow(r, prev, b.v); err != nil {
			return fmt.Errorf("posterior: counts row %d: %w", b.rows, err)
		}
		b.rows++
		b.prev = r
		n := r.NPos + r.NNeg
		if n == 0 {
			continue
		}
		if len(d.tCtx) == math.MaxInt32 {
			return fmt.Errorf("posterior: counts row %d: %w", b.rows-1, ErrTooManyPairs)
		}
		d.tOff[r.TargetID+1]++
		d.tCtx = append(d.tCtx, r.ContextID)
		d.tN = append(d.tN, n)
		d.tKappa = append(d.tKappa, r.NPos-n/2)
		d.total += n
	}
	return nil
}

// Build finishes the Data: it turns the per-target counts into offsets and
// builds the transposed, by-context index. The builder cannot be used
// afterwards.
func (b *DataBuilder) Build() *Data {
	d := b.d
	b.d = nil
	for i := range d.v {
		d.tOff[i+1] += d.tOff[i]
	}
	m := len(d.tCtx)
	d.cOff = make([]int64, d.v+1)
	for _, j := range d.tCtx {
		d.cOff[j+1]++
	}
	for j := range d.v {
		d.cOff[j+1] += d.cOff[j]
	}
	d.cTgt = make([]int32, m)
	d.cN = make([]float64, m)
	d.cKappa = make([]float64, m)
	d.cPair = make([]int32, m)
	next := make([]int64, d.v)
	copy(next, d.cOff[:d.v])
	for i := range d.v {
		for p := d.tOff[i]; p < d.tOff[i+1]; p++ {
			j := d.tCtx[p]
			q := next[j]
			next[j]++
			d.cTgt[q] = int32(i)
			d.cN[q] = d.tN[p]
			d.cKappa[q] = d.tKappa[p]
			d.cPair[q] = int32(p)
		}
	}
	return d
}
