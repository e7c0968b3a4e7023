package polyagamma

import (
	"math"
	"slices"
	"testing"
)

// jDensity is the J*(h) density from its alternating series, summed
// naively in log space with enough terms for x <= 16.
func jDensity(h, x float64) float64 {
	lg, _ := math.Lgamma(h)
	var s float64
	for n := 0; n < 400; n++ {
		ln, _ := math.Lgamma(float64(n) + h)
		lf, _ := math.Lgamma(float64(n) + 1)
		k := 2*float64(n) + h
		term := math.Exp(h*math.Ln2+ln-lg-lf-k*k/(2*x)) * k / math.Sqrt(2*math.Pi*x*x*x)
		if n%2 == 1 {
			term = -term
		}
		s += term
	}
	return s
}

func TestAltTruncation(t *testing.T) {
	if t1 := altTrunc(1); math.Abs(t1-0.64) > 0.01 {
		t.Errorf("t(1) = %g, Devroye's optimum is 0.64", t1)
	}
	for h := 1.0; h <= altMaxH; h += 0.01 {
		tr := altTrunc(h)
		// a_0 must dominate f left of t: the terms decrease from n = 0.
		if r := (h + 2) * math.Exp(-2*(h+1)/tr); !(r < 1) {
			t.Errorf("h=%g: a_1/a_0 = %g at t = %g", h, r, tr)
		}
		lgh, _ := math.Lgamma(h)
		if r := altLogRatio(h, lgh, tr); math.Abs(r) > 1e-3 {
			t.Errorf("h=%g: log(a_0/k_R) = %g at t(h) = %g, want the crossing", h, r, tr)
		}
	}
}

// The right-hand kernel must bound the density everywhere and be tight in
// the tail; the published (pi/2)^(h/2) constant must fail.
func TestAltRightBound(t *testing.T) {
	for _, h := range []float64{1, 1.5, 2.7, 3.25, 4} {
		lg, _ := math.Lgamma(h)
		kr := func(x, logConst float64) float64 {
			return math.Exp(logConst + (h-1)*math.Log(x) - math.Pi*math.Pi*x/8 - lg)
		}
		for x := 0.05; x <= 16; x += 0.05 {
			f := jDensity(h, x)
			if k := kr(x, h*math.Log(math.Pi/2)); f > k*(1+1e-9) {
				t.Errorf("h=%g x=%g: density %g above k_R %g", h, x, f, k)
			}
		}
		f := jDensity(h, 16)
		if ratio := f / kr(16, h*math.Log(math.Pi/2)); ratio < 0.5 {
			t.Errorf("h=%g: f/k_R = %g at x = 16, the bound is loose", h, ratio)
		}
		if h > 1 {
			if k := kr(16, h/2*math.Log(math.Pi/2)); f <= k {
				t.Errorf("h=%g: the (pi/2)^(h/2) kernel %g bounds f = %g at x = 16", h, k, f)
			}
		}
	}
}

// TestAlternateKS draws J*(h, z)/4 straight from the alternate sampler and
// compares with the exact CDF of PG(h, 2z) (KS at family-wise level 1e-3)
// and the exact mean (z-test).
func TestAlternateKS(t *testing.T) {
	hs := []float64{1.01, 1.5, 2, 2.7, 3.25, 4}
	zs := []float64{0, 0.3, 1, 2.5, 10, 100}
	n := 20000
	if fullMode() {
		n = 1_000_000
	}
	crit := ksCritical(1e-3/float64(len(hs)*len(zs)), n)
	xs := make([]float64, n)
	for i, h := range hs {
		for j, z := range zs {
			g := newRNG(NewXoshiro(uint64(i), uint64(j)))
			a := newAlternate(h, z)
			var sum float64
			for k := range xs {
				xs[k] = a.draw(&g) / 4
				sum += xs[k]
			}
			b, c := h, 2*z
			if zs := (sum/float64(n) - Mean(b, c)) / math.Sqrt(Var(b, c)/float64(n)); math.Abs(zs) > 5 {
				t.Errorf("h=%g z=%g: mean z-score %.2f", h, z, zs)
			}
			slices.Sort(xs)
			lo, hi := ksBounds(xs, func(x float64) float64 { return CDF(b, c, x) }, 40, crit)
			if hi > crit {
				t.Errorf("h=%g z=%g: KS D in [%.4g, %.4g] above %.4g", h, z, lo, hi, crit)
			}
		}
	}
}
