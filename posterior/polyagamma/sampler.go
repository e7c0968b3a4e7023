package polyagamma

import (
	"math"
	"math/rand/v2"
)

// maxDevroye is the largest b drawn as a sum of exact PG(1, c) variates
// (about 50 ns each with the set-up shared). Below it the exact sum keeps
// PG(10, c) near 2 M draws/s; above it the gamma sum needs at most four
// exact head terms and is both faster and, at these b, far below
// detectable error.
const maxDevroye = 20

// Sampler draws Pólya-Gamma variates. Src must be set; the zero value is
// not usable.
type Sampler struct {
	Src rand.Source
}

// Rand returns one draw of PG(b, c). It panics if b is not a positive finite
// number or c is not finite.
func (s Sampler) Rand(b, c float64) float64 {
	return draw(rng{rand.New(s.Src)}, b, c)
}

// Fill sets dst[i] to a draw of PG(b[i], c[i]). It panics if the lengths
// differ.
func (s Sampler) Fill(dst, b, c []float64) {
	if len(b) != len(dst) || len(c) != len(dst) {
		panic("polyagamma: Fill slices differ in length")
	}
	g := rng{rand.New(s.Src)}
	for i := range dst {
		dst[i] = draw(g, b[i], c[i])
	}
}

func draw(g rng, b, c float64) float64 {
	if !(b > 0) || math.IsInf(b, 1) {
		panic("polyagamma: b must be positive and finite")
	}
	if math.IsNaN(c) || math.IsInf(c, 0) {
		panic("polyagamma: c must be finite")
	}
	if b < 1 || b > maxDevroye {
		return gammaSum(g, b, c, Var(b, c), minHead(b))
	}
	n := math.Floor(b)
	d := newDevroye(c)
	var x float64
	for i := 0; i < int(n); i++ {
		x += d.draw(g)
	}
	x /= 4
	if r := b - n; r > 0 {
		// The fractional part's approximation error is judged against the
		// variance of the whole draw, which the exact part dominates.
		x += gammaSum(g, r, c, Var(b, c), 0)
	}
	return x
}
