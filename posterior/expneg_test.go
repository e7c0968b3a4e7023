package posterior

import (
	"math"
	"math/big"
	"math/rand/v2"
	"testing"
)

// bigExpNeg returns exp(-a), a >= 0, at 256 bits: the Taylor series of
// exp(-a/2^10), squared ten times.
func bigExpNeg(a float64) *big.Float {
	const prec = 256
	x := new(big.Float).SetPrec(prec).SetFloat64(-a / 1024)
	sum := new(big.Float).SetPrec(prec).SetInt64(1)
	term := new(big.Float).SetPrec(prec).SetInt64(1)
	for n := int64(1); n < 80; n++ {
		term.Mul(term, x)
		term.Quo(term, new(big.Float).SetPrec(prec).SetInt64(n))
		sum.Add(sum, term)
	}
	for range 10 {
		sum.Mul(sum, sum)
	}
	return sum
}

// TestExpNegs checks exp(-|x|) against a 256-bit reference: within one
// unit in the last place of the exact value (faithful rounding; two
// without the kernel, where math.Exp serves), over |x| from 0 to the clamp at 708 (and the clamp
// itself), and that every element gets the same bits whether the kernel
// or the scalar code computes it (the by-target and one-off
// log-likelihoods rely on that; see logLikSum).
func TestExpNegs(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 5))
	const n = 4003 // not a multiple of four: a tail for the scalar code
	x := make([]float64, n)
	for i := range x {
		switch i % 4 {
		case 0:
			x[i] = r.Float64() * 2
		case 1:
			x[i] = -r.Float64() * 40
		case 2:
			x[i] = r.Float64() * 708
		default:
			x[i] = math.Ldexp(r.Float64(), -r.IntN(60))
		}
	}
	x[0], x[4], x[8], x[12] = 0, math.Copysign(0, -1), 708, 1000
	got := make([]float64, n)
	expNegs(got, x)
	var worst float64
	for i, v := range x {
		a := min(math.Abs(v), -expNegClamp)
		exact := bigExpNeg(a)
		near, _ := exact.Float64()
		ulp := math.Nextafter(near, math.Inf(1)) - near
		diff := new(big.Float).Sub(new(big.Float).SetFloat64(got[i]), exact)
		e, _ := diff.Quo(diff.Abs(diff), new(big.Float).SetFloat64(ulp)).Float64()
		if e > worst {
			worst = e
		}
		if one := expNegOne(v); math.Float64bits(one) != math.Float64bits(got[i]) {
			t.Fatalf("exp(-|%v|): %v in a group of four, %v alone", v, got[i], one)
		}
	}
	t.Logf("largest error %.3f units in the last place (hasFMA %t)", worst, hasFMA)
	// Without the kernel math.Exp serves; its amd64 assembly errs by up to
	// about 1.25 units.
	limit := 1.0
	if !hasFMA {
		limit = 2
	}
	if worst >= limit {
		t.Errorf("largest error %.3f units in the last place, want below %v", worst, limit)
	}
	// A NaN stays a NaN.
	nan := []float64{math.NaN(), 1, 2, 3}
	expNegs(nan, nan)
	if !math.IsNaN(nan[0]) || math.IsNaN(nan[1]) {
		t.Errorf("NaN and 1 give %v and %v", nan[0], nan[1])
	}
}

func BenchmarkExpNegs(b *testing.B) {
	x := make([]float64, 64)
	for i := range x {
		x[i] = float64(i) / 10
	}
	dst := make([]float64, 64)
	for b.Loop() {
		expNegs(dst, x)
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*len(x)), "ns/exp")
}
