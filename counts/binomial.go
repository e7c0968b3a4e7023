package counts

import (
	"math"
	"math/bits"
)

func mul64(a, b uint64) (hi, lo uint64) { return bits.Mul64(a, b) }

// binomialInversionMax is the mean n*p below which binomial draws search the
// CDF from 0 (expected cost about n*p + 1 steps) instead of using BTPE.
const binomialInversionMax = 20

// binomial draws an exact Binomial(n, p) variate: CDF inversion for small
// means and BTPE (Kachitvichyanukul & Schmeiser 1988) otherwise, with the
// final acceptance test evaluated exactly from log-gamma functions.
func binomial(r *rng, n int64, p float64) int64 {
	if p > 0 && p <= 0.5 {
		return binomialLogQ(r, n, p, math.Log1p(-p))
	}
	switch {
	case n <= 0 || p <= 0:
		return 0
	case p >= 1:
		return n
	default:
		return n - binomial(r, n, 1-p)
	}
}

// binomialLogQ is binomial for 0 < p <= 1/2 with log(1-p) precomputed.
func binomialLogQ(r *rng, n int64, p, logQ float64) int64 {
	switch {
	case n <= 0:
		return 0
	case float64(n)*p < binomialInversionMax:
		return binomialInversion(r, n, p, logQ)
	default:
		return binomialBTPE(r, n, p)
	}
}

// binomialInversion searches the CDF with the pmf recurrence
// f(x+1) = f(x) * ((n+1)/(x+1) - 1) * p/q; p <= 1/2 and n*p is small, so
// f(0) = q^n does not underflow.
func binomialInversion(r *rng, n int64, p, logQ float64) int64 {
	q := 1 - p
	s := p / q
	a := float64(n+1) * s
	f0 := math.Exp(float64(n) * logQ)
	for {
		u := r.float()
		f := f0
		for x := int64(0); x <= n; x++ {
			if u < f {
				return x
			}
			u -= f
			f *= a/float64(x+1) - s
			if f <= 0 {
				break
			}
		}
		// u fell in the rounding residue beyond the last representable
		// term: draw again, which keeps the result exact.
	}
}

// binomialBTPE is the triangle-parallelogram-exponential rejection sampler
// for n*p >= binomialInversionMax and p <= 1/2.
func binomialBTPE(r *rng, n int64, p float64) int64 {
	nf := float64(n)
	q := 1 - p
	npq := nf * p * q
	fm := nf*p + p
	m := math.Floor(fm)
	p1 := math.Floor(2.195*math.Sqrt(npq)-4.6*q) + 0.5
	xm := m + 0.5
	xl := xm - p1
	xr := xm + p1
	c := 0.134 + 20.5/(15.3+m)
	al := (fm - xl) / (fm - xl*p)
	lamL := al * (1 + 0.5*al)
	ar := (xr - fm) / (xr * q)
	lamR := ar * (1 + 0.5*ar)
	p2 := p1 * (1 + 2*c)
	p3 := p2 + c/lamL
	p4 := p3 + c/lamR
	logP, logQ := math.Log(p), math.Log1p(-p)
	lgN, _ := math.Lgamma(nf + 1)
	logPMF := func(k float64) float64 {
		a, _ := math.Lgamma(k + 1)
		b, _ := math.Lgamma(nf - k + 1)
		return lgN - a - b + k*logP + (nf-k)*logQ
	}
	logFm := logPMF(m)
	for {
		u := r.float() * p4
		v := r.openFloat()
		var y float64
		switch {
		case u <= p1:
			// Triangle: accepted without evaluating the pmf.
			return int64(math.Floor(xm - p1*v + u))
		case u <= p2:
			x := xl + (u-p1)/c
			v = v*c + 1 - math.Abs(m-x+0.5)/p1
			if v > 1 || v <= 0 {
				continue
			}
			y = math.Floor(x)
		case u <= p3:
			y = math.Floor(xl + math.Log(v)/lamL)
			if y < 0 {
				continue
			}
			v *= (u - p2) * lamL
		default:
			y = math.Floor(xr - math.Log(v)/lamR)
			if y > nf {
				continue
			}
			v *= (u - p3) * lamR
		}
		if math.Log(v) <= logPMF(y)-logFm {
			return int64(y)
		}
	}
}
