package polyagamma

import (
	"math"
	"math/cmplx"
	"testing"
)

func relErr(got, want float64) float64 {
	if want == 0 {
		return math.Abs(got)
	}
	return math.Abs(got-want) / math.Abs(want)
}

func TestMeanVarAtZero(t *testing.T) {
	for _, b := range []float64{0.1, 1, 7.5, 1e6} {
		for _, c := range []float64{0, 1e-12, -1e-12, 1e-8} {
			if e := relErr(Mean(b, c), b/4); e > 1e-15 {
				t.Errorf("Mean(%g, %g) = %g, want b/4 (rel err %g)", b, c, Mean(b, c), e)
			}
			if e := relErr(Var(b, c), b/24); e > 1e-15 {
				t.Errorf("Var(%g, %g) = %g, want b/24 (rel err %g)", b, c, Var(b, c), e)
			}
		}
	}
}

// naiveMoments uses the textbook closed forms, which are accurate away from
// c = 0 and below overflow.
func naiveMoments(b, c float64) (mean, variance float64) {
	th := math.Tanh(c / 2)
	sech := 1 / math.Cosh(c/2)
	return b * th / (2 * c), b / (2 * c * c * c) * (th - c/2*sech*sech)
}

func TestMeanVarClosedForm(t *testing.T) {
	for _, c := range []float64{-3, 0.9, 1, 1.1, 5, 20, 100, 700} {
		m, v := naiveMoments(2.5, c)
		if e := relErr(Mean(2.5, c), m); e > 1e-14 {
			t.Errorf("Mean(2.5, %g) rel err %g", c, e)
		}
		if e := relErr(Var(2.5, c), v); e > 1e-12 {
			t.Errorf("Var(2.5, %g) rel err %g", c, e)
		}
	}
	// Huge |c|: mean -> b/(2|c|), variance -> b/(2|c|^3).
	for _, c := range []float64{710, -1e4, 1e8, 1e300} {
		if e := relErr(Mean(3, c), 3/(2*math.Abs(c))); e > 1e-15 {
			t.Errorf("Mean(3, %g) rel err %g", c, e)
		}
		// sech^2(c/2) < e^-700 here, so the variance is b/(2|c|^3) to rounding.
		want := 3 / (2 * math.Abs(c) * c * c)
		if e := relErr(Var(3, c), want); e > 1e-14 {
			t.Errorf("Var(3, %g) = %g, want %g", c, Var(3, c), want)
		}
	}
}

// The series branch and the closed-form branch of unitCumulants must meet
// at |c| = 2 seriesY; a kink there would bias every moment test near it.
func TestSeriesClosedFormContinuity(t *testing.T) {
	edge := 2 * seriesY
	a1, a2, a3, a4 := unitCumulants(edge * (1 - 1e-12))
	b1, b2, b3, b4 := unitCumulants(edge)
	for i, p := range [][2]float64{{a1, b1}, {a2, b2}, {a3, b3}, {a4, b4}} {
		if e := relErr(p[0], p[1]); e > 1e-12 {
			t.Errorf("k%d jumps by rel %g at |c| = %g", i+1, e, edge)
		}
	}
}

// Cumulant (Poisson summation / Euler-Maclaurin) against unitCumulants
// (derivatives of tanh / Taylor series): two independent derivations.
func TestCumulantTwoMethods(t *testing.T) {
	for _, c := range []float64{0, 1e-12, 1e-4, 0.5, 1, 1.9, 2, 5, 20, 35, 177, 710, 1e4} {
		k := [4]float64{}
		k[0], k[1], k[2], k[3] = unitCumulants(c)
		for n := 1; n <= 4; n++ {
			got := Cumulant(n, 1, c)
			if e := relErr(got, k[n-1]); e > 1e-12 {
				t.Errorf("Cumulant(%d, 1, %g) = %.16g, closed form %.16g (rel %g)", n, c, got, k[n-1], e)
			}
		}
	}
}

// Cumulants against a brute-force sum of the series definition.
func TestCumulantBruteForce(t *testing.T) {
	for _, c := range []float64{0, 0.3, 2, 9} {
		a2 := c * c / (4 * math.Pi * math.Pi)
		for n := 2; n <= 6; n++ {
			var s float64
			const terms = 200000
			for k := terms; k >= 1; k-- {
				d := (float64(k)-0.5)*(float64(k)-0.5) + a2
				s += math.Pow(d, -float64(n))
			}
			s += math.Pow(terms, float64(1-2*n)) / float64(2*n-1) // integral remainder
			lg, _ := math.Lgamma(float64(n))
			want := 2 * math.Exp(lg) * s / math.Pow(2*math.Pi*math.Pi, float64(n))
			if e := relErr(Cumulant(n, 2, c), want); e > 1e-12 {
				t.Errorf("Cumulant(%d, 2, %g) = %g, brute force %g (rel %g)", n, c, Cumulant(n, 2, c), want, e)
			}
		}
	}
}

// Cumulants against numerical derivatives of log Laplace(t) at t = 0:
// kappa_n = (-1)^n d^n/dt^n log L. Central differences with step h have
// error O(h^2), removed to O(h^4) by Richardson extrapolation from h and 2h;
// the tolerance covers the rest and rounding.
func TestCumulantLaplaceDerivatives(t *testing.T) {
	for _, c := range []float64{0, 1, 5, 40} {
		b := 3.0
		sd := math.Sqrt(Var(b, c))
		derivs := func(h float64) [4]float64 {
			f := func(k float64) float64 { return math.Log(Laplace(b, c, k*h)) }
			return [4]float64{
				-(f(1) - f(-1)) / 2 / h,
				(f(1) - 2*f(0) + f(-1)) / (h * h),
				-(f(2) - 2*f(1) + 2*f(-1) - f(-2)) / 2 / (h * h * h),
				(f(2) - 4*f(1) + 6*f(0) - 4*f(-1) + f(-2)) / (h * h * h * h),
			}
		}
		h := 0.02 / sd // t * W changes by 2% of a standard deviation
		fine, coarse := derivs(h), derivs(2*h)
		for n := range fine {
			d := fine[n] + (fine[n]-coarse[n])/3
			want := Cumulant(n+1, b, c)
			scale := math.Pow(sd, float64(n+1))
			if math.Abs(d-want) > 1e-5*scale {
				t.Errorf("c=%g: kappa_%d = %g, numerical derivative %g", c, n+1, want, d)
			}
		}
	}
}

func TestLaplace(t *testing.T) {
	for _, tc := range []struct{ b, c, t float64 }{{1, 0, 1}, {2.5, 3, 0.7}, {10, -20, 4}, {0.3, 1e-12, 2}} {
		want := math.Pow(math.Cosh(tc.c/2)/math.Cosh(math.Sqrt(tc.c*tc.c/4+tc.t/2)), tc.b)
		if e := relErr(Laplace(tc.b, tc.c, tc.t), want); e > 1e-13 {
			t.Errorf("Laplace%v rel err %g", tc, e)
		}
	}
	// Huge c and b: log L = b (log cosh(c/2) - log cosh(sqrt(c^2/4+t/2)))
	// = -b (t/(2c) - t^2/(4c^3) + t^3/(4c^5) - ...) for t << c^2.
	for _, tc := range []struct{ b, c, t float64 }{{1e6, 1e4, 10}, {1e5, 710, 3}, {1, 1e300, 1}} {
		c := math.Abs(tc.c)
		want := math.Exp(-tc.b * (tc.t/(2*c) - tc.t*tc.t/(4*c*c*c) + tc.t*tc.t*tc.t/(4*c*c*c*c*c)))
		if e := relErr(Laplace(tc.b, tc.c, tc.t), want); e > 1e-9 {
			t.Errorf("Laplace%v = %g, want %g", tc, Laplace(tc.b, tc.c, tc.t), want)
		}
	}
	if got := Laplace(1, 0, -math.Pi*math.Pi/2-1e-9); !math.IsInf(got, 1) {
		t.Errorf("Laplace beyond the first pole = %g, want +Inf", got)
	}
}

// altCDF is the alternating-series CDF of PG(h, 0) = J*(h)/4 from the
// density series of J*(h) (Windle, Polson & Scott 2014, eq. for J*(h)):
// F(4x) = 2^h/Gamma(h) sum_n (-1)^n Gamma(n+h)/n! erfc((2n+h)/sqrt(2 * 4x)).
// Its terms decrease fast for x <~ 1.
func altCDF(h, x float64) float64 {
	xj := 4 * x
	lg, _ := math.Lgamma(h)
	var s float64
	for n := 0; n < 200; n++ {
		ln, _ := math.Lgamma(float64(n) + h)
		lf, _ := math.Lgamma(float64(n) + 1)
		term := math.Exp(h*math.Ln2-lg+ln-lf) * math.Erfc((2*float64(n)+h)/math.Sqrt(2*xj))
		if n%2 == 1 {
			term = -term
		}
		s += term
	}
	return s
}

// altCDFRight is the large-x alternating series of PG(1, 0):
// 1 - F(x) = (4/pi) sum_n (-1)^n/(2n+1) exp(-(2n+1)^2 pi^2 (4x)/8).
func altCDFRight(x float64) float64 {
	var s float64
	for n := 0; n < 50; n++ {
		k := float64(2*n + 1)
		term := 4 / math.Pi / k * math.Exp(-k*k*math.Pi*math.Pi*4*x/8)
		if n%2 == 1 {
			term = -term
		}
		s += term
	}
	return 1 - s
}

func TestCDFAlternatingSeries(t *testing.T) {
	for _, b := range []float64{1, 2, 3} {
		for x := 0.005; x < 0.6*b; x += 0.005 * b {
			if d := math.Abs(CDF(b, 0, x) - altCDF(b, x)); d > 1e-12 {
				t.Errorf("b=%g x=%g: Gil-Pelaez %.15g, series %.15g (diff %g)", b, x, CDF(b, 0, x), altCDF(b, x), d)
			}
		}
	}
	for x := 0.1; x < 3; x += 0.05 {
		if d := math.Abs(CDF(1, 0, x) - altCDFRight(x)); d > 1e-12 {
			t.Errorf("x=%g: Gil-Pelaez %.15g, right series %.15g (diff %g)", x, CDF(1, 0, x), altCDFRight(x), d)
		}
	}
	// Non-integer b, where only the general series applies.
	for _, b := range []float64{0.5, 2.7} {
		for x := 0.01; x < 0.4; x += 0.01 {
			if d := math.Abs(CDF(b, 0, x) - altCDF(b, x)); d > 1e-11 {
				t.Errorf("b=%g x=%g: Gil-Pelaez %.15g, series %.15g (diff %g)", b, x, CDF(b, 0, x), altCDF(b, x), d)
			}
		}
	}
}

// For c != 0 the density is the tilted series cosh^b(c/2) exp(-c^2 x/2) f(x|b,0);
// integrate it numerically (Gauss-Legendre on small panels) and compare.
func TestCDFTiltedDensity(t *testing.T) {
	density := func(b, c, x float64) float64 {
		xj := 4 * x
		lg, _ := math.Lgamma(b)
		var s float64
		for n := 0; n < 200; n++ {
			ln, _ := math.Lgamma(float64(n) + b)
			lf, _ := math.Lgamma(float64(n) + 1)
			k := 2*float64(n) + b
			term := math.Exp(b*math.Ln2-lg+ln-lf-k*k/(2*xj)) * k / math.Sqrt(2*math.Pi*xj*xj*xj)
			if n%2 == 1 {
				term = -term
			}
			s += term
		}
		return 4 * s * math.Exp(b*math.Log(math.Cosh(c/2))-c*c*x/2)
	}
	gx := []float64{-0.9061798459386640, -0.5384693101056831, 0, 0.5384693101056831, 0.9061798459386640}
	gw := []float64{0.2369268850561891, 0.4786286704993665, 0.5688888888888889, 0.4786286704993665, 0.2369268850561891}
	for _, tc := range []struct{ b, c float64 }{{1, 2}, {2.7, -4}, {0.5, 1}, {3, 8}} {
		var integral, lo float64
		const step = 0.0005
		for k := 1; k <= 1000; k++ {
			hi := float64(k) * step
			for i := range gx {
				integral += gw[i] * step / 2 * density(tc.b, tc.c, lo+(hi-lo)*(gx[i]+1)/2)
			}
			lo = hi
			if k%100 == 0 {
				if d := math.Abs(CDF(tc.b, tc.c, hi) - integral); d > 1e-11 {
					t.Errorf("b=%g c=%g x=%g: CDF %.14g, integrated density %.14g", tc.b, tc.c, hi, CDF(tc.b, tc.c, hi), integral)
				}
			}
		}
	}
}

// Cauchy's theorem makes the rotated-ray integral independent of the angle;
// comparing two angles checks the quadrature on the whole plane.
func TestCDFContourIndependent(t *testing.T) {
	for _, b := range []float64{0.1, 1, 13, 1e3, 1e5} {
		for _, c := range []float64{0, 5, 60, 710, 1e4} {
			mu, sd := Mean(b, c), math.Sqrt(Var(b, c))
			for _, z := range []float64{-1.5, -0.5, 0, 1, 3, 6} {
				x := mu + z*sd
				if x <= 0 {
					continue
				}
				theta, r0, zero := contour(b, c, x)
				if zero {
					continue
				}
				f1 := CDF(b, c, x)
				f2 := 0.5 - (rayIntegral(b, c, x, 0.8*theta, 1.5*r0, 1.0/160)-0.8*theta)/math.Pi
				if math.Abs(f1-f2) > 1e-11 {
					t.Errorf("b=%g c=%g x=mu%+gsd: F = %.14g or %.14g", b, c, z, f1, f2)
				}
			}
		}
	}
}

func TestDevroyeTables(t *testing.T) {
	for z := 0.0; z < tableZ; z += tableStep / 7.3 {
		exact := exactLogRho(z)
		if z < pTableZ {
			p := interpolate(pLeftTable, z)
			if e := math.Abs(p - 1/(1+math.Exp(-exact))); e > tableTol/4 {
				t.Fatalf("pLeft table at z=%g off by %g", z, e)
			}
			p += tableTol
			if l := 1 - 3*tableTol*(1/p+1/(1-p)); l < lamLowP {
				t.Fatalf("z=%g: lambda bound %.10g below lamLowP", z, l)
			}
		}
		if e := math.Abs(interpolate(logRhoTable, z) - exact); e > tableTol/4 {
			t.Fatalf("log rho table at z=%g off by %g", z, e)
		}
	}
	// Above tableZ the left mass is bounded by IG <= 1; check that the
	// bound holds and lambda stays within [lamLow, 1].
	for _, c := range []float64{16, 20, 100, 1e4} {
		var d devroye
		d.init(c)
		if l := d.exactLambda(); l > 1+1e-12 || l < d.lamLow {
			t.Errorf("c=%g: lambda %g outside [%g, 1]", c, l, d.lamLow)
		}
	}
	for c := 0.0; c < 2*tableZ; c += 0.37 {
		var d devroye
		d.init(c)
		if l := d.exactLambda(); l > 1+1e-12 || l < d.lamLow {
			t.Errorf("c=%g: lambda %g outside [%g, 1]", c, l, d.lamLow)
		}
	}
}

// approxCDFError returns the largest |F_approx(x) - F(x)| over xs, where
// F_approx is the CDF of what draw produces for PG(b, c) with the
// fractional or b < 1 part from the gamma sum: its characteristic function
// is known exactly (products of gamma characteristic functions and, for
// the exact Devroye part, phi itself), so both CDFs come from the same
// rotated-ray inversion.
func approxCDFError(b, c float64, xs []float64) float64 {
	// Follow draw's choice of method.
	n, r, kMin, tol := 0.0, b, minHead(b), tailExcessTol
	if b >= 1 && b <= maxModerate {
		n, r, kMin = math.Floor(b), b-math.Floor(b), 0
		if moderateGammaSum(b, c) {
			n, r, kMin, tol = 0, b, moderateMinHead, moderateExcessTol
		}
	}
	if r == 0 {
		return 0
	}
	K, loc, scale, shape, _ := tailPlan(r, b, c, kMin, maxHead, tol)
	ws := make([]float64, K)
	for k := range ws {
		ws[k] = headWeight(k+1, c*c/(4*math.Pi*math.Pi))
	}
	y1 := math.Abs(c) / 2
	clog1p := func(z complex128) complex128 {
		if cmplx.Abs(z) < 0.5 {
			return complex(0.5*math.Log1p(2*real(z)+real(z)*real(z)+imag(z)*imag(z)), math.Atan2(imag(z), 1+real(z)))
		}
		return cmplx.Log(1 + z)
	}
	logApprox := func(t complex128) complex128 {
		var l complex128
		if n > 0 {
			l = logCF(n, y1, t)
		}
		for _, w := range ws {
			l -= complex(r, 0) * clog1p(-1i*t*complex(w, 0))
		}
		l += 1i * t * complex(loc, 0)
		if shape > 0 {
			l -= complex(shape, 0) * clog1p(-1i*t*complex(scale, 0))
		}
		return l
	}
	logExact := func(t complex128) complex128 { return logCF(b, y1, t) }
	ray := func(lcf func(complex128) complex128, x, theta, r0 float64) float64 {
		const h = 1.0 / 64
		dir := complex(math.Cos(theta), -math.Sin(theta))
		var sum float64
		for i := -288; i <= 288; i++ {
			u := float64(i) * h
			rr := r0 * math.Exp(math.Pi/2*math.Sinh(u))
			z := -1i*complex(rr, 0)*dir*complex(x, 0) + lcf(complex(rr, 0)*dir)
			mag := math.Exp(real(z)) * math.Pi / 2 * math.Cosh(u)
			sum += mag * math.Sin(imag(z))
			if i > 0 && mag < 1e-18 {
				break
			}
		}
		return sum * h
	}
	var worst float64
	for _, x := range xs {
		if x <= loc {
			// The approximation puts no mass below loc.
			worst = math.Max(worst, CDF(b, c, x))
			continue
		}
		theta, r0, zero := contour(b, c, x)
		if zero {
			continue
		}
		d := ray(logApprox, x, theta, r0) - ray(logExact, x, theta, r0)
		worst = math.Max(worst, math.Abs(d)/math.Pi)
	}
	return worst
}

// TestGammaSumCDFError measures the distance between the CDF of what the
// gamma-sum branch produces and the exact CDF on a grid of 1/12 standard
// deviation over mean -6 .. +8 standard deviations; it must stay at 1e-4,
// ten times below what a Kolmogorov-Smirnov test with 10^6 draws can detect.
// The moderate regime (whole draws for minModerate <= b <= maxModerate) is
// checked at every integer b and at |c| just below moderateCMax, where the
// head is largest. Short mode checks the cells where the criterion is
// tightest.
func TestGammaSumCDFError(t *testing.T) {
	bs := []float64{0.1, 0.999, 2.7, 5, 50, 171}
	cs := []float64{0, 5, 60}
	if fullMode() {
		bs = []float64{0.1, 0.3, 0.5, 0.999, 2.7, 4.5, 13.01, 21, 50, 51, 170, 171, 1e3, 1e4, 1e5}
		cs = []float64{0, 1, 5, 20, 35, 60, 100, 200, 710}
		for n := minModerate; n <= maxModerate; n++ {
			bs = append(bs, float64(n))
		}
		bs = append(bs, 5.5, 19.99)
		cs = append(cs, 2, 3, 7, 10, 15)
	}
	check := func(b, c float64) {
		mu, sd := Mean(b, c), math.Sqrt(Var(b, c))
		var xs []float64
		for q := 0; q <= 12*14; q++ {
			if x := mu + sd*(float64(q)/12-6); x > 0 {
				xs = append(xs, x)
			}
		}
		if e := approxCDFError(b, c, xs); e > 1e-4 {
			t.Errorf("b=%g c=%g: gamma-sum CDF error %.2g", b, c, e)
		} else {
			t.Logf("b=%g c=%g: gamma-sum CDF error %.2g", b, c, e)
		}
	}
	for _, b := range bs {
		for _, c := range cs {
			check(b, c)
		}
		if n := int(b); b >= minModerate && b <= maxModerate {
			if cm := moderateCMax[n]; cm < moderateCSearch {
				check(b, cm*0.999)
			}
		}
	}
}

// TestModerateCMax checks the property moderateCMax is found by: below it
// the moderate gamma sum never needs more than moderateMaxHead head terms,
// and just above it (where the search stopped short of its bound) it does.
func TestModerateCMax(t *testing.T) {
	heads := func(b, c float64) int {
		K, _, _, _, _ := tailPlan(b, b, c, moderateMinHead, maxHead, moderateExcessTol)
		return K
	}
	for n := minModerate; n <= maxModerate; n++ {
		b, cm, kMax := float64(n), moderateCMax[n], moderateMaxHead(n)
		for c := 0.0; c < cm; c += cm / 500 {
			if K := heads(b, c); K > kMax {
				t.Errorf("b=%d c=%g below cMax %g: %d head terms, more than %d", n, c, cm, K, kMax)
			}
		}
		if cm < moderateCSearch {
			if K := heads(b, cm*1.002); K <= kMax {
				t.Errorf("b=%d: %d head terms just above cMax %g, at most %d", n, K, cm, kMax)
			}
		}
		// The fractional b above n use fewer terms.
		if K, K0 := heads(b+0.5, cm*0.999), heads(b, cm*0.999); K > K0 {
			t.Errorf("b=%g: %d head terms at c=%g, more than %d at b=%d", b+0.5, K, cm*0.999, K0, n)
		}
	}
}
