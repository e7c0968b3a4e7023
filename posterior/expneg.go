package posterior

import "math"

// expNegClamp is the lowest exponent expNegs evaluates: e^-708 is still a
// normal double, so the result can be scaled by writing its exponent bits.
// Below it the result is e^-708 instead of a smaller number, which changes
// log1p(e^-|x|) by less than 1e-307: nothing, next to a log-likelihood.
const expNegClamp = -708

// expNegCoef are the Taylor coefficients 1/k! of e^r, k = 0..13: with
// |r| <= ln2/2 the first term left out, r^14/14!, is below 4.1e-18 of
// the sum.
var expNegCoef = func() (c [14]float64) {
	f := 1.0
	for k := range c {
		if k > 0 {
			f *= float64(k)
		}
		c[k] = 1 / f
	}
	return c
}()

// ln2Hi + ln2Lo = ln 2 to about 2^-86; ln2Hi has 32 significant bits, so
// k ln2Hi is exact for |k| < 2^21.
const (
	ln2Hi = 6.93147180369123816490e-01
	ln2Lo = 1.90821492927058770002e-10
)

// expNegs sets dst[i] = exp(-|x[i]|) for the first len(dst) elements of x,
// to within one unit in the last place (TestExpNegs; math.Exp, which
// serves without the AVX2+FMA kernel, to within two), clamped below at
// e^-708 (see expNegClamp). Its results depend only on each x[i]: the
// assembly, where there is one, does four at a time and expNegOne the
// rest, with the same fused operations in the same order.
func expNegs(dst, x []float64) {
	x = x[:len(dst)]
	q := 0
	if hasFMA {
		q = len(dst) &^ 3
		expNegFMA(dst[:q], x[:q])
	}
	for i := q; i < len(dst); i++ {
		dst[i] = expNegOne(x[i])
	}
}

// expNegOne is exp(-|x|) as expNegs computes it: t = max(-|x|, -708),
// k = t log2(e) rounded to even, r = t - k ln2 in two fused steps,
// e^r by Horner's rule in fused steps, and 2^k added to the exponent
// bits. Without the AVX2+FMA kernel math.FMA is exact in software and
// slow, so math.Exp serves instead.
func expNegOne(x float64) float64 {
	if !hasFMA {
		return math.Exp(max(-math.Abs(x), expNegClamp))
	}
	t := -math.Abs(x)
	if t < expNegClamp { // false for NaN, as in the kernel
		t = expNegClamp
	}
	k := math.RoundToEven(t * math.Log2E)
	r := math.FMA(-k, ln2Hi, t)
	r = math.FMA(-k, ln2Lo, r)
	c := &expNegCoef
	p := c[13]
	for i := 12; i >= 0; i-- {
		p = math.FMA(p, r, c[i])
	}
	return math.Float64frombits(math.Float64bits(p) + uint64(int64(k))<<52)
}
