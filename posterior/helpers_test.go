package posterior

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/pwe-project/pwe/formats"
)

// buildData builds a Data from rows, failing the test on error.
func buildData(t testing.TB, v int, rows []formats.CountRow) *Data {
	t.Helper()
	b := NewDataBuilder(v)
	if err := b.Add(rows); err != nil {
		t.Fatal(err)
	}
	return b.Build()
}

// simulate draws true vectors from the Normal(0, 1) prior, then n pair
// events with (target, context) uniform over all v^2 pairs and a Bernoulli
// label of probability sigmoid(rho_i . alpha_j), aggregated into count rows.
func simulate(t testing.TB, v, dim, n int, seed uint64) (*Data, *Params) {
	t.Helper()
	r := rand.New(rand.NewPCG(seed, 99))
	truth := NewParams(v, dim)
	for k := range truth.Rho {
		truth.Rho[k] = r.NormFloat64()
		truth.Alpha[k] = r.NormFloat64()
	}
	pairs := func() (int, int) { return r.IntN(v), r.IntN(v) }
	return labelPairs(t, truth, n, r, pairs), truth
}

// labelPairs draws n pair events from pairs, labels each positive with
// probability sigmoid(rho_i . alpha_j) under truth, and aggregates them into
// Data.
func labelPairs(t testing.TB, truth *Params, n int, r *rand.Rand, pairs func() (int, int)) *Data {
	t.Helper()
	v := truth.V
	pos := make([]float64, v*v)
	neg := make([]float64, v*v)
	for range n {
		i, j := pairs()
		if r.Float64() < sigmoid(truth.Logit(i, j)) {
			pos[i*v+j]++
		} else {
			neg[i*v+j]++
		}
	}
	var rows []formats.CountRow
	for i := range v {
		for j := range v {
			if pos[i*v+j]+neg[i*v+j] > 0 {
				rows = append(rows, formats.CountRow{TargetID: int32(i), ContextID: int32(j), NPos: pos[i*v+j], NNeg: neg[i*v+j]})
			}
		}
	}
	return buildData(t, v, rows)
}

func sigmoid(x float64) float64 { return 1 / (1 + math.Exp(-x)) }

// collector is a Sink keeping every draw of chosen scalar functions of the
// parameters, per chain.
type collector struct {
	fns   []func(p *Params) float64
	draws [][][]float64 // [quantity][chain][draw]
	stats [][]DrawStats
}

func newCollector(chains int, fns ...func(p *Params) float64) *collector {
	c := &collector{fns: fns, draws: make([][][]float64, len(fns)), stats: make([][]DrawStats, chains)}
	for q := range fns {
		c.draws[q] = make([][]float64, chains)
	}
	return c
}

func (c *collector) Draw(chain, draw int, p *Params, st DrawStats) error {
	for q, f := range c.fns {
		if len(c.draws[q][chain]) != draw {
			panic("draws out of order")
		}
		c.draws[q][chain] = append(c.draws[q][chain], f(p))
	}
	c.stats[chain] = append(c.stats[chain], st)
	return nil
}
