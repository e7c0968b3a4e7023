package polyagamma

import (
	"math"
)

// Notation used throughout: s = c^2/4 and y = sqrt(s) = |c|/2. With
// h(s) = tanh(sqrt s)/sqrt s the log Laplace transform of PG(b, c) is
// b [log cosh(sqrt s) - log cosh(sqrt(s + t/2))], so the cumulants per unit
// of b are
//
//	k_n(c) = (-1)^(n-1) h^(n-1)(s) / 2^(n+1).
//
// h has the Taylor series h(s) = sum_j hCoef[j] s^j with radius pi^2/4;
// hCoef[j] = (2/pi^2) (-1)^j lambda(2j+2) / pi^(2j) and
// lambda(m) = sum_{k>=1} (k-1/2)^-m, which follows from the partial
// fractions tanh(pi a)/a = (2/pi) sum_k 1/((k-1/2)^2 + a^2).

// seriesY is the |c|/2 below which the cumulants come from the Taylor series.
// Above it the closed forms lose at most a factor y^-7 < 130 of relative
// precision (k4), i.e. they stay accurate to about 1e-13.
const seriesY = 0.5

// nSeries (even) terms of the Taylor series give full double precision for
// s <= seriesY^2 = 0.25: the ratio of successive terms is about 4s/pi^2 < 0.11.
const nSeries = 26

var hCoef [nSeries + 4]float64

func makeHCoef() [nSeries + 4]float64 {
	var h [nSeries + 4]float64
	for j := range h {
		h[j] = 2 / (math.Pi * math.Pi) * lambda(2*j+2) / math.Pow(math.Pi, float64(2*j))
		if j%2 == 1 {
			h[j] = -h[j]
		}
	}
	return h
}

// hSeries[j][n] is the coefficient of s^j in the n-th derivative of h,
// (j+1)...(j+n) hCoef[j+n], so that one Horner pass gives h and its first
// three derivatives (the sampler needs them for every draw with b < 1 or
// b > 20).
var hSeries [nSeries][4]float64

func makeHSeries() (t [nSeries][4]float64) {
	for j := range t {
		t[j] = [4]float64{hCoef[j], float64(j+1) * hCoef[j+1],
			float64((j+1)*(j+2)) * hCoef[j+2], float64((j+1)*(j+2)*(j+3)) * hCoef[j+3]}
	}
	return t
}

// lambda returns sum_{k>=1} (k-1/2)^-m for m >= 2 (the Dirichlet lambda
// function times 2^m): closed forms for m <= 8, else a direct sum whose
// remainder is below 40^-m.
func lambda(m int) float64 {
	p2 := math.Pi * math.Pi
	switch m {
	case 2:
		return p2 / 2
	case 4:
		return p2 * p2 / 6
	case 6:
		return p2 * p2 * p2 / 15
	case 8:
		return 17 * p2 * p2 * p2 * p2 / 630
	}
	var sum float64
	for k := 40; k >= 1; k-- {
		sum += math.Pow(float64(k)-0.5, -float64(m))
	}
	return sum + math.Pow(40, 1-float64(m))/float64(m-1)
}

// unitCumulants returns k1..k4 of PG(1, c) (cumulants per unit of b).
func unitCumulants(c float64) (k1, k2, k3, k4 float64) {
	y := math.Abs(c) / 2
	if y < seriesY {
		s := y * y
		// Horner in s^2 for the even and the odd coefficients of h, h',
		// h'', h''' at once: eight independent chains of nSeries/2 steps
		// rather than four of nSeries, which halves the latency.
		s2 := s * s
		var e0, e1, e2, e3, o0, o1, o2, o3 float64
		for j := nSeries - 2; j >= 0; j -= 2 {
			a, b := &hSeries[j], &hSeries[j+1]
			e0, o0 = e0*s2+a[0], o0*s2+b[0]
			e1, o1 = e1*s2+a[1], o1*s2+b[1]
			e2, o2 = e2*s2+a[2], o2*s2+b[2]
			e3, o3 = e3*s2+a[3], o3*s2+b[3]
		}
		h0, h1, h2, h3 := e0+s*o0, e1+s*o1, e2+s*o2, e3+s*o3
		return h0 / 4, -h1 / 8, h2 / 16, -h3 / 32
	}
	// tanh and sech^2 from one exponential, so neither cancels for large y.
	q := math.Exp(-2 * y)
	t := (1 - q) / (1 + q)
	u := 4 * q / ((1 + q) * (1 + q))
	iy := 1 / y
	iy2 := iy * iy
	h0 := t * iy
	h1 := (u/2 - t*iy/2) * iy2
	h2 := (-t*u/2 - 3*u*iy/4 + 3*t*iy2/4) * iy2 * iy
	h3 := (-(u*u-2*t*t*u)/4 + 3*t*u*iy/2 + 15*u*iy2/8 - 15*t*iy2*iy/8) * iy2 * iy2
	return h0 / 4, -h1 / 8, h2 / 16, -h3 / 32
}

// Mean returns E[PG(b, c)] = b tanh(c/2) / (2c), b/4 at c = 0.
func Mean(b, c float64) float64 {
	ready()
	k1, _, _, _ := unitCumulants(c)
	return b * k1
}

// Var returns Var[PG(b, c)] = b (tanh(c/2) - (c/2) sech^2(c/2)) / (2 c^3),
// b/24 at c = 0.
func Var(b, c float64) float64 {
	ready()
	_, k2, _, _ := unitCumulants(c)
	return b * k2
}

// Cumulant returns the n-th cumulant of PG(b, c),
//
//	kappa_n = b (n-1)! / (2 pi^2)^n * S_n,  S_n = sum_{k>=1} ((k-1/2)^2 + a^2)^-n,
//
// with a = |c|/(2 pi). It panics if n < 1.
func Cumulant(n int, b, c float64) float64 {
	if n < 1 {
		panic("polyagamma: cumulant order must be >= 1")
	}
	a := math.Abs(c) / (2 * math.Pi)
	lg, _ := math.Lgamma(float64(n))
	return b * math.Exp(lg-float64(n)*math.Log(2*math.Pi*math.Pi)) * sumS(n, a)
}

// sumS returns S_n(a) = sum_{k>=1} ((k-1/2)^2 + a^2)^-n.
//
// For a >= 0.3 it uses Poisson summation: the summand is even in k-1/2, so
// S_n = (1/2) sum_m (-1)^m fhat(m) with fhat the Fourier transform of
// (x^2 + a^2)^-n, whose m-th term is O(m^(n-1) e^(-2 pi a m)) (at most 0.16^m).
// For a < 0.3 it sums 200 terms directly and adds the remainder by the
// midpoint Euler-Maclaurin formula with the integral expanded in a^2/x^2.
func sumS(n int, a float64) float64 {
	if a >= 0.3 {
		return poissonS(n, a)
	}
	const nDirect = 200
	a2 := a * a
	var sum float64
	for k := nDirect; k >= 1; k-- {
		d := (float64(k)-0.5)*(float64(k)-0.5) + a2
		sum += math.Pow(d, -float64(n))
	}
	// Remainder sum_{k>N} f(k-1/2) = int_N^inf f + f'(N)/24 - 7 f'''(N)/5760 + ...
	N := float64(nDirect)
	fn := float64(n)
	var integral float64
	coef := 1.0 // binom(-n, j)
	r := a2 / (N * N)
	pw := math.Pow(N, 1-2*fn)
	for j := 0; j < 40; j++ {
		term := coef * pw / (2*fn + 2*float64(j) - 1)
		integral += term
		if math.Abs(term) < 1e-18*math.Abs(integral) {
			break
		}
		coef *= -(fn + float64(j)) / float64(j+1)
		pw *= r
	}
	d := N*N + a2
	f1 := -2 * fn * N * math.Pow(d, -fn-1)
	f3 := -2 * fn * (2*fn + 1) * (2*fn + 2) * math.Pow(N, -2*fn-3)
	return sum + integral + f1/24 - 7*f3/5760
}

// poissonS evaluates S_n(a) by Poisson summation, using
// fhat(xi) = pi e^(-w a) / ((n-1)! 4^(n-1) a^(2n-1)) sum_{k<n} (2n-2-k)!/(k!(n-1-k)!) (2 a w)^k
// with w = 2 pi |xi|.
func poissonS(n int, a float64) float64 {
	fhat := func(w float64) float64 {
		lfact := func(m int) float64 { v, _ := math.Lgamma(float64(m) + 1); return v }
		base := math.Log(math.Pi) - w*a - lfact(n-1) - float64(n-1)*math.Log(4) - float64(2*n-1)*math.Log(a)
		var sum float64
		for k := 0; k < n; k++ {
			l := base + lfact(2*n-2-k) - lfact(k) - lfact(n-1-k)
			if k > 0 {
				l += float64(k) * math.Log(2*a*w)
			}
			sum += math.Exp(l)
		}
		return sum
	}
	total := fhat(0)
	for m := 1; m < 200; m++ {
		term := 2 * fhat(2*math.Pi*float64(m))
		if m%2 == 1 {
			term = -term
		}
		total += term
		if math.Abs(term) < 1e-18*total {
			break
		}
	}
	return total / 2
}

// logCoshDiff returns log cosh(y1) - log cosh(y2) for y1, y2 >= 0 without
// overflow or cancellation, given d = y1 - y2 computed stably by the caller.
func logCoshDiff(y1, y2, d float64) float64 {
	return d + math.Log1p(math.Exp(-2*y1)) - math.Log1p(math.Exp(-2*y2))
}

// Laplace returns E[exp(-t W)] for W ~ PG(b, c),
// cosh^b(c/2) / cosh^b(sqrt(c^2/4 + t/2)). It is finite for
// t > -(c^2/2 + pi^2/2) and +Inf below.
func Laplace(b, c, t float64) float64 {
	if t == 0 {
		return 1
	}
	y1 := math.Abs(c) / 2
	s := y1*y1 + t/2
	if s >= 0 {
		y2 := math.Sqrt(s)
		// y1 - y2 = -(t/2)/(y1+y2) avoids cancellation for huge |c|.
		return math.Exp(b * logCoshDiff(y1, y2, -(t/2)/(y1+y2)))
	}
	v := math.Sqrt(-s)
	if v >= math.Pi/2 {
		return math.Inf(1)
	}
	lc1 := y1 + math.Log1p(math.Exp(-2*y1)) - math.Ln2
	return math.Exp(b * (lc1 - math.Log(math.Cos(v))))
}
