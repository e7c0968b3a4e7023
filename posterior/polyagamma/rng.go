package polyagamma

import (
	"math"
	"math/rand/v2"
)

// rng draws the uniform, exponential, normal and gamma variates the
// samplers need from one rand.Source; exponential and normal variates come
// from math/rand/v2's ziggurat generators.
type rng struct {
	r *rand.Rand
}

// unif returns a uniform variate on the open interval (0, 1), so its log is
// finite.
func (g rng) unif() float64 {
	return (float64(g.r.Uint64()>>11) + 0.5) * (1.0 / (1 << 53))
}

func (g rng) exp() float64  { return g.r.ExpFloat64() }
func (g rng) norm() float64 { return g.r.NormFloat64() }

// gamma returns a Gamma(shape, 1) variate by Marsaglia & Tsang (2000),
// "A simple method for generating gamma variables", ACM TOMS 26(3); for
// shape < 1 it uses their boost Gamma(shape+1) * U^(1/shape).
func (g rng) gamma(shape float64) float64 {
	if shape < 1 {
		return g.gamma(shape+1) * math.Exp(math.Log(g.unif())/shape)
	}
	d := shape - 1.0/3
	c := 1 / math.Sqrt(9*d)
	for {
		x := g.norm()
		v := 1 + c*x
		if v <= 0 {
			continue
		}
		v = v * v * v
		u := g.unif()
		x2 := x * x
		if u < 1-0.0331*x2*x2 {
			return d * v
		}
		if math.Log(u) < 0.5*x2+d*(1-v+math.Log(v)) {
			return d * v
		}
	}
}
