package polyagamma

import (
	"math"
	"math/rand/v2"
	"sync"
)

// maxModerate is the largest b that may be drawn as a sum of exact PG(1, c)
// variates (about 30 ns each with the set-up shared); above it the gamma sum
// needs at most four exact head terms and is both faster and, at these b,
// far below detectable error.
const maxModerate = 20

// minModerate is the smallest b drawn as one gamma sum. Below it the plan
// (the cumulants, about three Devroye draws' worth) and the tail cost more
// than the Devroye sum saves.
const minModerate = 5

// moderateMaxHead is the largest number of head terms for which the gamma
// sum of a whole PG(n, c), integer minModerate <= n <= maxModerate, is
// still cheaper than the sum of n Devroye draws (measured with
// BenchmarkRand at fixed c): the plan and the tail cost about as much as
// three Devroye draws and each head term about 0.8 of one.
func moderateMaxHead(n int) int {
	return max(int(1.2*float64(n)-4), moderateMinHead)
}

// moderateCMax[n] is the |c| below which PG(b, c), n = floor(b) in
// minModerate .. maxModerate, is drawn as one gamma sum: up to there the
// sum takes at most moderateMaxHead(n) head terms (fewer for b > n).
// Beyond it the head grows with |c| (until, with |c| in the thousands, the
// whole draw is almost normal and it shrinks again) and the Devroye sum is
// cheaper. The head size grows
// with |c| up to there (TestModerateCMax), so a scan and a bisection find it.
var moderateCMax [maxModerate + 1]float64

func makeModerateCMax() (t [maxModerate + 1]float64) {
	for n := minModerate; n <= maxModerate; n++ {
		kMax := moderateMaxHead(n)
		fits := func(c float64) bool {
			_, _, _, _, ok := tailPlan(float64(n), float64(n), c, moderateMinHead, kMax, moderateExcessTol)
			return ok
		}
		// Scan up in steps of 25% for the first |c| that does not fit,
		// then bisect.
		lo, hi := 0.0, 0.25
		for fits(hi) && hi < moderateCSearch {
			lo, hi = hi, 1.25*hi
		}
		if hi >= moderateCSearch {
			t[n] = moderateCSearch
			continue
		}
		for hi-lo > 1e-3*hi {
			if m := (lo + hi) / 2; fits(m) {
				lo = m
			} else {
				hi = m
			}
		}
		t[n] = lo
	}
	return t
}

// moderateCSearch bounds the search for moderateCMax.
const moderateCSearch = 1000.0

// moderateGammaSum reports whether draw makes PG(b, c), 1 <= b <=
// maxModerate, one gamma sum.
func moderateGammaSum(b, c float64) bool {
	return b >= minModerate && math.Abs(c) < moderateCMax[int(b)]
}

// tablesOnce fills the package's tables on first use rather than at
// init: every pwe command links the package, and the tables took 2.4 ms of
// each command's start (GODEBUG=inittrace=1), most of it altTTable's
// bisections.
var tablesOnce sync.Once

// ready fills the tables if they are not yet; every exported function that
// reads them calls it first.
func ready() { tablesOnce.Do(loadTables) }

func loadTables() {
	hCoef = makeHCoef()
	hSeries = makeHSeries()
	logRhoTable, pLeftTable = makeRhoTables()
	altTTable = makeAltTTable()
	moderateCMax = makeModerateCMax()
}

// Sampler draws Pólya-Gamma variates. Src must be set; the zero value is
// not usable.
//
// With a *Xoshiro as Src the draws use exactly the words Src would give,
// in order, so Fill gives the same draws as repeated Rand and leaves Src in
// the same state; the sampler steps a copy of the Xoshiro state inline and
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
	ready()
	g := newRNG(s.Src)
	x := draw(&g, b, c)
	g.release()
	return x
}

// Fill sets dst[i] to a draw of PG(b[i], c[i]). It panics if the lengths
// differ.
func (s Sampler) Fill(dst, b, c []float64) {
	ready()
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
	if b < 1 || b > maxModerate {
		return gammaSum(g, b, b, c, minHead(b))
	}
	if moderateGammaSum(b, c) {
		K, loc, scale, shape, _ := tailPlan(b, b, c, moderateMinHead, maxHead, moderateExcessTol)
		return drawPlan(g, b, c, K, loc, scale, shape)
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
