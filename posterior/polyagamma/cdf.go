package polyagamma

import (
	"math"
	"math/cmplx"
)

// logCF returns log phi(t) for complex t, where phi(t) = E[exp(i t W)] =
// cosh^b(y1) / cosh^b(sqrt(y1^2 - i t/2)) and y1 = |c|/2. The principal root
// has Re w >= 0, so |exp(-2w)| <= 1 and log cosh w = w + log(1+exp(-2w)) - log 2
// neither overflows nor cancels; y1 - w is formed as (i t/2)/(y1 + w).
func logCF(b, y1 float64, t complex128) complex128 {
	w := cmplx.Sqrt(complex(y1*y1, 0) - 1i*t/2)
	d := (1i * t / 2) / (complex(y1, 0) + w)
	return complex(b, 0) * (d + complex(math.Log1p(math.Exp(-2*y1)), 0) - cmplx.Log(1+cmplx.Exp(-2*w)))
}

// CDF returns P(W <= x) for W ~ PG(b, c) by Gil-Pelaez inversion,
//
//	F(x) = 1/2 - (1/pi) int_0^inf Im(exp(-i t x) phi(t)) / t dt.
//
// Along the real axis the integrand decays only like exp(-b sqrt(t)/2) while
// oscillating ever faster, so the half-line is rotated (Cauchy's theorem) to
// the ray t = r exp(-i theta), 0 < theta < pi/2. phi is analytic in the lower
// half plane except on the negative imaginary axis, where its singularities
// lie; the pole of 1/t at 0 contributes theta, giving
//
//	F(x) = 1/2 - (Im J - theta)/pi,  J = int_0^inf exp(-i t x) phi(t) / r dr.
//
// On the ray exp(-i t x) decays like exp(-r x sin theta), so J needs only a
// few hundred nodes of an exp-sinh rule. Below the mean, exp(-i t x) phi(t)
// first grows like exp(r sin(theta) (mean - x)) before the higher cumulants
// damp it, so theta shrinks with the distance below the mean; where the
// Chernoff bound exp(lambda x) E[exp(-lambda W)] already puts F below 1e-17
// (far left tail) that bound's answer, 0, is returned instead.
func CDF(b, c, x float64) float64 {
	ready()
	if !(b > 0) {
		panic("polyagamma: b must be > 0")
	}
	if x <= 0 {
		return 0
	}
	if math.IsInf(x, 1) {
		return 1
	}
	theta, r0, zero := contour(b, c, x)
	if zero {
		return 0
	}
	return 0.5 - (rayIntegral(b, c, x, theta, r0, 1.0/64)-theta)/math.Pi
}

// contour picks the ray angle theta and the quadrature scale r0 for x, or
// reports that the Chernoff bound puts F(x) below 1e-17. Above the mean
// theta = pi/6 damps the oscillation fastest; below it the bump
// exp(r sin(theta) (mean - x)) has to be kept small, which theta = 0.4 does
// within 4 standard deviations and theta = asin(1.6/z) beyond (both measured
// against a 0.35 rad ray with step 1/200: within 5e-12 over b = 0.1 .. 1e5,
// |c| <= 1e4).
func contour(b, c, x float64) (theta, r0 float64, zero bool) {
	k1, k2, _, _ := unitCumulants(c)
	mu, sd := b*k1, math.Sqrt(b*k2)
	if x >= mu {
		return math.Pi / 6, 1 / (sd + x - mu), false
	}
	zl := (mu - x) / sd
	if zl <= 4 {
		return 0.4, 1 / sd, false
	}
	if chernoffLeft(b, c, x) < 1e-17 {
		return 0, 0, true
	}
	return math.Asin(1.6 / zl), 1 / sd, false
}

// chernoffLeft returns min over lambda > 0 of exp(lambda x) E[exp(-lambda W)],
// an upper bound on P(W <= x) for 0 < x < E[W]. The minimiser tilts PG(b, c)
// to PG(b, c') with mean x, c'^2 = c^2 + 2 lambda; Mean decreases in |c'|,
// so c' is found by bisection.
func chernoffLeft(b, c, x float64) float64 {
	lo, hi := math.Abs(c), math.Abs(c)+1
	for Mean(b, hi) > x {
		lo, hi = hi, 2*hi
	}
	for i := 0; i < 100 && hi-lo > 1e-12*hi; i++ {
		if m := (lo + hi) / 2; Mean(b, m) > x {
			lo = m
		} else {
			hi = m
		}
	}
	lambda := (hi*hi - c*c) / 2
	return math.Exp(lambda*x) * Laplace(b, c, lambda)
}

// rayIntegral returns Im J (see CDF) by the exp-sinh rule
// r = r0 exp((pi/2) sinh u), trapezoidal in u; dr/r = (pi/2) cosh u du, so
// the 1/r of the integrand cancels.
// CDF uses step h = 1/64; TestCDFContourIndependent checks it against a
// finer rule on another ray.
func rayIntegral(b, c, x, theta, r0, h float64) float64 {
	const uMax = 4.5
	y1 := math.Abs(c) / 2
	dir := complex(math.Cos(theta), -math.Sin(theta))
	var sum float64
	for i := -int(uMax / h); i <= int(uMax/h); i++ {
		u := float64(i) * h
		r := r0 * math.Exp(math.Pi/2*math.Sinh(u))
		t := complex(r, 0) * dir
		z := -1i*t*complex(x, 0) + logCF(b, y1, t)
		wt := math.Pi / 2 * math.Cosh(u)
		mag := math.Exp(real(z)) * wt
		sum += mag * math.Sin(imag(z))
		if i > 0 && mag < 1e-18 {
			break
		}
	}
	return sum * h
}
