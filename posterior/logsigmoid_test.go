package posterior

import (
	"math"
	"math/big"
	"math/rand/v2"
	"testing"
)

// refPrec is the precision of the big.Float references, far beyond the
// bits the 20 squarings of bigExp and the series sums lose.
const refPrec = 256

// bigExp returns exp(y) for |y| <= 1024: the Taylor series at y / 2^k,
// |y / 2^k| < 2^-8, then k squarings.
func bigExp(y *big.Float) *big.Float {
	k := 0
	a := new(big.Float).SetPrec(refPrec).Set(y)
	for a.MantExp(nil) > -8 && a.Sign() != 0 {
		a.SetMantExp(a, -1)
		k++
	}
	sum := new(big.Float).SetPrec(refPrec).SetInt64(1)
	term := new(big.Float).SetPrec(refPrec).SetInt64(1)
	tiny := new(big.Float).SetMantExp(big.NewFloat(1), -refPrec-8)
	for n := int64(1); ; n++ {
		term.Mul(term, a)
		term.Quo(term, new(big.Float).SetInt64(n))
		sum.Add(sum, term)
		if new(big.Float).Abs(term).Cmp(tiny) < 0 {
			break
		}
	}
	for range k {
		sum.Mul(sum, sum)
	}
	return sum
}

// bigLog1p returns log(1 + t) for 0 <= t <= 1 as 2 atanh(t / (2 + t)), the
// odd series in s = t / (2 + t) <= 1/3.
func bigLog1p(t *big.Float) *big.Float {
	two := new(big.Float).SetPrec(refPrec).SetInt64(2)
	s := new(big.Float).SetPrec(refPrec).Add(two, t)
	s.Quo(t, s)
	z := new(big.Float).SetPrec(refPrec).Mul(s, s)
	sum := new(big.Float).SetPrec(refPrec).Set(s)
	pow := new(big.Float).SetPrec(refPrec).Set(s)
	rel := new(big.Float).SetMantExp(big.NewFloat(1), -refPrec-8)
	for n := int64(3); s.Sign() != 0; n += 2 {
		pow.Mul(pow, z)
		term := new(big.Float).SetPrec(refPrec).Quo(pow, new(big.Float).SetInt64(n))
		sum.Add(sum, term)
		if new(big.Float).Quo(term, sum).Cmp(rel) < 0 {
			break
		}
	}
	return sum.Mul(sum, two)
}

// refLogSigmoid returns log sig(x) = min(x, 0) - log1p(exp(-|x|)) to
// about 250 bits.
func refLogSigmoid(x float64) *big.Float {
	ax := new(big.Float).SetPrec(refPrec).SetFloat64(-math.Abs(x))
	l := bigLog1p(bigExp(ax))
	l.Neg(l)
	if x < 0 {
		l.Add(l, new(big.Float).SetFloat64(x))
	}
	return l
}

// ulpErr returns |got - want| in units of the spacing of float64 at want
// (at least the smallest subnormal).
func ulpErr(got float64, want *big.Float) float64 {
	w, _ := want.Float64()
	ulp := math.Max(math.Abs(math.Nextafter(w, math.Inf(1))-w), math.SmallestNonzeroFloat64)
	d := new(big.Float).SetPrec(refPrec).Sub(new(big.Float).SetFloat64(got), want)
	e, _ := d.Float64()
	return math.Abs(e) / ulp
}

// TestLogSigmoidAccuracy checks logSigmoid against the big.Float reference
// over a dense grid of [-800, 800], random points and tiny |x|: within 2.5
// ulps, the 1 of math.Log1p plus the 1 of math.Exp (an error in exp(-|x|)
// reaches log1p(exp(-|x|)) damped by exp/((1 + exp) log1p(exp)) <= 1),
// plus a half for the subtraction when x < 0. About 1.7 is seen.
func TestLogSigmoidAccuracy(t *testing.T) {
	var args []float64
	n := 8000
	if testing.Short() {
		n = 2000
	}
	for k := -n; k <= n; k++ {
		args = append(args, 800*float64(k)/float64(n))
	}
	r := rand.New(rand.NewPCG(33, 34))
	for range n {
		x := 40 * r.NormFloat64()
		args = append(args, x, math.Ldexp(r.Float64()-0.5, -r.IntN(1000)))
	}
	for _, x := range []float64{1e-300, 1e-17, 0x1p-30, 1e-8, 36, 37, 38, 700, 709, 745, 746, 799.9} {
		args = append(args, x, -x)
	}
	var worst, at float64
	for _, x := range args {
		if u := ulpErr(logSigmoid(x), refLogSigmoid(x)); u > worst {
			worst, at = u, x
		}
	}
	t.Logf("largest error %.3f ulp at %v over %d arguments", worst, at, len(args))
	if worst > 2.5 {
		t.Errorf("logSigmoid(%v) is %.3f ulp off", at, worst)
	}
	for _, c := range []struct{ x, want float64 }{
		{math.Inf(1), 0}, {math.Inf(-1), math.Inf(-1)}, {0, -math.Ln2},
	} {
		if got := logSigmoid(c.x); got != c.want {
			t.Errorf("logSigmoid(%v) = %v, want %v", c.x, got, c.want)
		}
	}
	if got := logSigmoid(math.NaN()); !math.IsNaN(got) {
		t.Errorf("logSigmoid(NaN) = %v", got)
	}
}

// BenchmarkLogSigmoid times logSigmoid over arguments like the linear
// predictors of a chain, half of them negative.
func BenchmarkLogSigmoid(b *testing.B) {
	xs := make([]float64, 1024)
	r := rand.New(rand.NewPCG(35, 36))
	for k := range xs {
		xs[k] = 3 * r.NormFloat64()
	}
	var s float64
	cpu := cpuTime()
	for i := range b.N {
		s += logSigmoid(xs[i%len(xs)])
	}
	reportCPU(b, cpu)
	if math.IsNaN(s) {
		b.Fatal("NaN")
	}
}
