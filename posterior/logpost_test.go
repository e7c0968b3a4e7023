package posterior

import (
	"context"
	"fmt"
	"math"
	"math/big"
	"math/rand/v2"
	"testing"

	"github.com/pwe-project/pwe/formats"
)

// naiveLogLik evaluates the likelihood term by term with big.Float
// logarithms of the sigmoid, as an implementation independent of
// logSigmoid's case split.
func naiveLogSigmoid(x float64) float64 {
	// log sig(x) = -log(1 + e^-x), with e^-x evaluated in high precision
	// so that neither overflow nor cancellation occurs.
	e := new(big.Float).SetPrec(200).SetFloat64(math.Exp(-math.Abs(x)))
	if x < 0 {
		// 1 + e^{|x|} = e^{|x|} (1 + e^{-|x|}).
		one := new(big.Float).SetPrec(200).SetFloat64(1)
		s, _ := new(big.Float).Add(one, e).Float64()
		return x - math.Log(s)
	}
	f, _ := e.Float64()
	return -math.Log1p(f)
}

func TestLogSigmoidStable(t *testing.T) {
	for _, x := range []float64{-800, -40, -5, -1e-9, 0, 1e-9, 0.3, 5, 40, 800} {
		got, want := logSigmoid(x), naiveLogSigmoid(x)
		if math.Abs(got-want) > 1e-14*math.Max(1, math.Abs(want)) {
			t.Errorf("logSigmoid(%v) = %v, want %v", x, got, want)
		}
		// The pair form n_pos log sig(x) + n_neg log sig(-x).
		n, kappa := 7.0, 1.5 // n_pos 5, n_neg 2
		want = 5*naiveLogSigmoid(x) + 2*naiveLogSigmoid(-x)
		if got := pairLogLik(x, n, kappa); math.Abs(got-want) > 1e-13*math.Max(1, math.Abs(want)) {
			t.Errorf("pairLogLik(%v) = %v, want %v", x, got, want)
		}
	}
}

func TestGradientMatchesFiniteDifferences(t *testing.T) {
	// D = 3 takes the compiled loops, D = 17 gonum's assembly axpy.
	for _, dim := range []int{3, 17} {
		t.Run(fmt.Sprintf("D=%d", dim), func(t *testing.T) { gradientMatchesFiniteDifferences(t, dim) })
	}
}

func gradientMatchesFiniteDifferences(t *testing.T, dim int) {
	d, truth := simulate(t, 7, dim, 400, 1)
	p := truth.Clone()
	for k := range p.Rho {
		p.Rho[k] *= 0.7
		p.Alpha[k] *= 1.2
	}
	const sd = 1.3
	grad := NewParams(p.V, p.D)
	lp := Gradient(d, p, sd, grad)
	if want := LogPosterior(d, p, sd); math.Abs(lp-want) > 1e-10*math.Abs(want) {
		t.Fatalf("Gradient returns log posterior %v, LogPosterior %v", lp, want)
	}
	// Central differences with h = 1e-5 have error about h^2 f''' ~ 1e-8
	// relative; rounding adds about eps |f| / h ~ 1e-9.
	const h = 1e-5
	check := func(name string, x, g []float64) {
		for k := range x {
			old := x[k]
			x[k] = old + h
			up := LogPosterior(d, p, sd)
			x[k] = old - h
			down := LogPosterior(d, p, sd)
			x[k] = old
			fd := (up - down) / (2 * h)
			if math.Abs(fd-g[k]) > 1e-6*math.Max(1, math.Abs(fd)) {
				t.Errorf("%s[%d]: gradient %v, finite difference %v", name, k, g[k], fd)
			}
		}
	}
	check("rho", p.Rho, grad.Rho)
	check("alpha", p.Alpha, grad.Alpha)
}

func TestEvaluatorIndependentOfThreads(t *testing.T) {
	d, truth := simulate(t, 40, 4, 5000, 2)
	var ref []float64
	for _, threads := range []int{1, 2, 3, 7} {
		pl := startPool(context.Background(), threads, nil)
		e := newEvaluator(d, truth.D, threads)
		grad := NewParams(truth.V, truth.D)
		lp := e.eval(pl, truth, 1, grad)
		pl.stop()
		got := append([]float64{lp}, append(grad.Rho, grad.Alpha...)...)
		if ref == nil {
			ref = got
			continue
		}
		for k := range ref {
			if math.Float64bits(got[k]) != math.Float64bits(ref[k]) {
				t.Fatalf("threads %d: value %d is %v, with 1 thread %v", threads, k, got[k], ref[k])
			}
		}
	}
}

// TestDrawLogLik compares drawLogLik with the sum of naiveLogSigmoid terms
// on pairs whose counts cover the product path (1 to 8, whole), the log1p
// path (larger and fractional counts) and logits from 0 to far past where
// 1 + exp(-|x|) rounds to 1. The tolerance is drawLogLik's stated bound
// (2.25 x 2^-53 per factor) plus the rounding of summing the terms in
// either order.
func TestDrawLogLik(t *testing.T) {
	const v, dim = 40, 3
	r := rand.New(rand.NewPCG(4, 4))
	var rows []formats.CountRow
	for i := range v {
		for j := range v {
			if r.IntN(3) == 0 {
				continue
			}
			pos, neg := float64(r.IntN(6)), float64(r.IntN(5))
			switch r.IntN(5) {
			case 0:
				pos += float64(r.IntN(500)) // the log1p path
			case 1:
				neg += r.Float64() // expected negatives: fractional counts
			}
			if pos+neg == 0 {
				pos = 1
			}
			rows = append(rows, formats.CountRow{TargetID: int32(i), ContextID: int32(j), NPos: pos, NNeg: neg})
		}
	}
	d := buildData(t, v, rows)
	p := NewParams(v, dim)
	for k := range p.Rho {
		// Scales from 0.01 to 100 give logits from about 0 to 1e4.
		p.Rho[k] = r.NormFloat64() * math.Pow(10, float64(r.IntN(5)-2))
		p.Alpha[k] = r.NormFloat64()
	}
	for i := range v {
		ctx, n, kappa := d.TargetPairs(i)
		var want, mass, scale float64
		for k, j := range ctx {
			x := dot(p.Target(i), p.Context(int(j)))
			pos := kappa[k] + n[k]/2
			term := pos*naiveLogSigmoid(x) + (n[k]-pos)*naiveLogSigmoid(-x)
			want += term
			mass += n[k]
			scale += math.Abs(term) + n[k]*math.Abs(x)
		}
		tol := 0x1p-53 * (2.25*mass + 4*scale)
		if got := drawLogLik(d, p, i); math.Abs(got-want) > tol {
			t.Errorf("token %d: drawLogLik = %.17g, want %.17g (tolerance %.3g)", i, got, want, tol)
		}
	}
}
