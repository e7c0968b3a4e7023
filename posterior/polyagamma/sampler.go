package polyagamma

import (
	"math"
	"math/rand/v2"
)

// maxDevroye is the largest b drawn as a sum of exact PG(1, c) variates
// (about 30 ns each with the set-up shared, so PG(10, c) near 3 M draws/s);
// above it the gamma sum needs at most four exact head terms and is both
// faster and, at these b, far below detectable error.
const maxDevroye = 20

// Sampler draws Pólya-Gamma variates. Src must be set; the zero value is
// not usable.
//
// With a *rand.PCG as Src the draws use exactly the words Src would give,
// in order, so Fill gives the same draws as repeated Rand and leaves Src in
// the same state; the sampler steps a copy of the PCG state inline and
// writes it back, which is much faster than a call through the interface
// per word. Any other Source seeds that inline state with two of its words
// per Rand or Fill call: the draws are still determined by Src's seed, but
// a Fill then differs from the same draws made by Rand.
type Sampler struct {
	Src rand.Source
}

// Rand returns one draw of PG(b, c). It panics if b is not a positive finite
// number or c is not finite.
func (s Sampler) Rand(b, c float64) float64 {
	g := newRNG(s.Src)
	x := draw(&g, b, c)
	g.release()
	return x
}

// Fill sets dst[i] to a draw of PG(b[i], c[i]). It panics if the lengths
// differ.
func (s Sampler) Fill(dst, b, c []float64) {
	if len(b) != len(dst) || len(c) != len(dst) {
		panic("polyagamma: Fill slices differ in length")
	}
	g := newRNG(s.Src)
	for i := range dst {
		dst[i] = draw(&g, b[i], c[i])
	}
	g.release()
}

func draw(g *rng, b, c float64) float64 {
	if !(b > 0 && b < math.Inf(1)) {
		panic("polyagamma: b must be positive and finite")
	}
	if !(math.Abs(c) < math.Inf(1)) {
		panic("polyagamma: c must be finite")
	}
	if b < 1 || b > maxDevroye {
		return gammaSum(g, b, b, c, minHead(b))
	}
	var d devroye
	d.init(c)
	x := d.draw(g)
	n := int(b)
	for i := 1; i < n; i++ {
		x += d.draw(g)
	}
	x /= 4
	if r := b - float64(n); r > 0 {
		// The fractional part's approximation error is judged against the
		// variance of the whole draw, which the exact part dominates.
		x += gammaSum(g, r, b, c, 0)
	}
	return x
}
