package polyagamma

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"gonum.org/v1/gonum/mathext"
)

// Xoshiro must give the words of the published xoshiro256++ and seed it
// through SplitMix64 as Seed describes: the values are those of
// testdata/xoshiro.c, an independent C transcription of both.
func TestXoshiroReference(t *testing.T) {
	x := &Xoshiro{s: [4]uint64{1, 2, 3, 4}}
	for i, want := range []uint64{0x2800001, 0x3800067, 0xcc00003800067, 0xcc201994400b2, 0x8012a2019ac433cd} {
		if got := x.Uint64(); got != want {
			t.Fatalf("word %d from state 1 2 3 4 is %#x, want %#x", i, got, want)
		}
	}
	for range 999995 {
		x.Uint64()
	}
	if got, want := x.Uint64(), uint64(0x2b62c8853564dfd4); got != want {
		t.Errorf("word 1000000 is %#x, want %#x", got, want)
	}
	for _, c := range []struct {
		a, b uint64
		want [3]uint64
	}{
		{0, 0, [3]uint64{0x997a6d0938252a7, 0x30822c2f07840c06, 0x17a2101566dbe78c}},
		{12345, 67890, [3]uint64{0x2f187bc955773858, 0x59ac8bda5ca15cc2, 0x8754cd0930784bca}},
	} {
		x := NewXoshiro(c.a, c.b)
		for i, want := range c.want {
			if got := x.Uint64(); got != want {
				t.Errorf("seed %d %d: word %d is %#x, want %#x", c.a, c.b, i, got, want)
			}
		}
	}
}

// The inline generator must give exactly the words the *Xoshiro would,
// and leave it where it would have been.
func TestInlineXoshiro(t *testing.T) {
	for _, seed := range [][2]uint64{{0, 0}, {1, 2}, {^uint64(0), 12345}, {0xdeadbeef, ^uint64(0)}} {
		src, ref := NewXoshiro(seed[0], seed[1]), NewXoshiro(seed[0], seed[1])
		g := newRNG(src)
		if g.src != src {
			t.Fatal("a *Xoshiro did not take the inline path")
		}
		for i := range 1000 {
			if got, want := g.uint64(), ref.Uint64(); got != want {
				t.Fatalf("seed %v: word %d is %#x, Xoshiro gives %#x", seed, i, got, want)
			}
		}
		g.release()
		for i := range 3 {
			if got, want := src.Uint64(), ref.Uint64(); got != want {
				t.Fatalf("seed %v: after release, word %d is %#x, want %#x", seed, i, got, want)
			}
		}
	}
}

// Fill must leave Src exactly where the same draws by Rand leave it.
func TestFillAdvancesSource(t *testing.T) {
	bs := []float64{1, 3, 0.4, 250}
	cs := []float64{0.5, -2, 30, 1}
	a, b := NewXoshiro(9, 9), NewXoshiro(9, 9)
	Sampler{Src: a}.Fill(make([]float64, len(bs)), bs, cs)
	s := Sampler{Src: b}
	for i := range bs {
		s.Rand(bs[i], cs[i])
	}
	if x, y := a.Uint64(), b.Uint64(); x != y {
		t.Errorf("after Fill the source gives %#x, after Rand %#x", x, y)
	}
}

// Any other Source seeds the inline state with two of its words per call,
// so its draws are reproducible and it advances by exactly two words.
func TestOtherSource(t *testing.T) {
	var seed [32]byte
	seed[0] = 7
	draws := func() []float64 {
		s := Sampler{Src: rand.NewChaCha8(seed)}
		return []float64{s.Rand(1, 0.5), s.Rand(30, 2), s.Rand(0.5, 0)}
	}
	x, y := draws(), draws()
	if !slices.Equal(x, y) {
		t.Errorf("same seed, different draws: %v and %v", x, y)
	}
	if x[0] == x[1] || x[1] == x[2] {
		t.Errorf("draws repeat: %v", x)
	}
	src, ref := rand.NewChaCha8(seed), rand.NewChaCha8(seed)
	Sampler{Src: src}.Rand(3, 1)
	ref.Uint64()
	ref.Uint64()
	if a, b := src.Uint64(), ref.Uint64(); a != b {
		t.Errorf("Rand did not take exactly two words from a source other than Xoshiro")
	}
}

// The layers of both ziggurats must have equal areas: the recursion from
// Marsaglia and Tsang's r must close at the top (x_256 = 0) to rounding.
func TestZigguratClosure(t *testing.T) {
	for _, tc := range []struct {
		name string
		z    *ziggurat
	}{{"exponential", &expZig}, {"normal", &normZig}} {
		v := tc.z.w[0] * (1 << 53) * tc.z.f[1]
		top := tc.z.w[zigLayers-1] * (1 << 53) * (1 - tc.z.f[zigLayers-1])
		if e := relErr(top, v); e > 1e-12 {
			t.Errorf("%s: top layer area %g, the others %g (rel %g)", tc.name, top, v, e)
		}
	}
}

// ksOneSample returns the one-sample KS statistic of xs against cdf.
func ksOneSample(xs []float64, cdf func(float64) float64) float64 {
	slices.Sort(xs)
	n := float64(len(xs))
	var d float64
	for i, x := range xs {
		f := cdf(x)
		d = math.Max(d, math.Max(float64(i+1)/n-f, f-float64(i)/n))
	}
	return d
}

// The variates of rng against their exact CDFs (KS at family-wise level
// 1e-3), plus a z-test of the mass beyond the ziggurats' base layers, which
// only the slow paths produce.
func TestVariates(t *testing.T) {
	const n = 200_000
	g := newRNG(NewXoshiro(3, 5))
	gammas := []float64{0.3, 1, 2.5, 100}
	crit := ksCritical(1e-3/float64(3+len(gammas)), n)
	xs := make([]float64, n)
	check := func(name string, draw func() float64, cdf func(float64) float64) {
		t.Helper()
		for i := range xs {
			xs[i] = draw()
		}
		if d := ksOneSample(xs, cdf); d > crit {
			t.Errorf("%s: KS D = %.5f above %.5f", name, d, crit)
		}
	}
	check("uniform", g.unif, func(x float64) float64 { return x })
	check("exponential", g.exp, func(x float64) float64 { return -math.Expm1(-x) })
	check("normal", g.norm, func(x float64) float64 { return 0.5 * math.Erfc(-x/math.Sqrt2) })
	for _, a := range gammas {
		gg := newGammaGen(a)
		check("gamma", func() float64 { return gg.draw(&g) }, func(x float64) float64 { return mathext.GammaIncReg(a, x) })
	}

}

// The share of draws below every layer boundary x_i of both ziggurats (the
// mass beyond r = x_1 comes only from the tail paths, that in the top
// layers mostly from the wedge tests), and the normal's sign, against the
// exact CDFs: z-tests with |z| <= 5 over the 511 of them.
func TestZigguratLayers(t *testing.T) {
	const m = 4_000_000
	g := newRNG(NewXoshiro(8, 1))
	for _, tc := range []struct {
		name string
		z    *ziggurat
		draw func() float64
		cdf  func(float64) float64 // of |X|
	}{
		{"exponential", &expZig, g.exp, func(x float64) float64 { return -math.Expm1(-x) }},
		{"normal", &normZig, g.norm, func(x float64) float64 { return math.Erf(x / math.Sqrt2) }},
	} {
		// bounds[j] = x_{255-j}, increasing.
		bounds := make([]float64, zigLayers-1)
		for j := range bounds {
			bounds[j] = tc.z.w[zigLayers-1-j] * (1 << 53)
		}
		below := make([]float64, len(bounds)+1)
		var negative float64
		for range m {
			x := tc.draw()
			if x < 0 {
				negative++
			}
			j, _ := slices.BinarySearch(bounds, math.Abs(x))
			below[j]++
		}
		var cum float64
		for j, b := range bounds {
			cum += below[j]
			p := tc.cdf(b)
			if z := (cum - m*p) / math.Sqrt(m*p*(1-p)); math.Abs(z) > 5 {
				t.Errorf("%s: %g draws below x_%d = %g, expected %.0f (z = %.1f)", tc.name, cum, zigLayers-1-j, b, m*p, z)
			}
		}
		if tc.name == "normal" {
			if z := (negative - m/2) / math.Sqrt(m/4); math.Abs(z) > 5 {
				t.Errorf("normal: %g negative draws of %d (z = %.1f)", negative, m, z)
			}
		}
	}
}
