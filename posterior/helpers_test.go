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
	d, err := NewData(v, rows)
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// simulate draws true vectors from the Normal(0, 1) prior (Simulate with
// SNR sqrt(D)), then n observations with pairs uniform over distinct
// (target, context) and Bernoulli labels of probability
// sigmoid(rho_i . alpha_j), aggregated into Data.
func simulate(t testing.TB, v, dim, n int, seed uint64) (*Data, *Params) {
	t.Helper()
	truth, rows, err := Simulate(SimConfig{V: v, D: dim, N: n, SNR: math.Sqrt(float64(dim)), Seed: seed})
	if err != nil {
		t.Fatal(err)
	}
	return buildData(t, v, rows), truth
}

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

// gaussianParams draws every coordinate of a V x D Params from
// Normal(0, sd^2), target and context coordinate k in turn.
func gaussianParams(r *rand.Rand, v, dim int, sd float64) *Params {
	p := NewParams(v, dim)
	for k := range p.Rho {
		p.Rho[k] = sd * r.NormFloat64()
		p.Alpha[k] = sd * r.NormFloat64()
	}
	return p
}
