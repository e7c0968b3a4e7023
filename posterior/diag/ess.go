package diag

import (
	"math"
	"math/bits"

	"gonum.org/v1/gonum/dsp/fourier"
)

// eps is R's .Machine$double.eps, posterior's tolerance for constant draws.
const eps = 0x1p-52

// directLagsPerLog2 sets where the FFT takes over: summing one lag
// directly costs about M·S multiply-adds, the FFT route M forward real
// transforms of length 2S' (S' ≥ S the next size with no prime factor above
// 5) and one inverse. Measured with gonum's FFT for M = 8 split chains, the
// FFT route took as long as 135 directly summed lags at S = 250 and 158 at
// S = 500, about 16·log2(2S'). Well-mixing chains end Geyer's sequence
// within a handful of lags and never reach the FFT.
const directLagsPerLog2 = 16

// probeLag is where lag decides whether to give up summing directly: if
// the autocorrelation at probeLag, extrapolated geometrically, is still
// above probeLevel at maxLags, Geyer's sequence would run past maxLags
// anyway and the direct sums so far would be wasted. Both routes compute
// the same autocovariances, so the choice affects only speed.
const (
	probeLag   = 16
	probeLevel = 0.05
)

// essWork holds the scratch space of the ESS computation.
type essWork struct {
	centred []float64 // chains minus their means, M×S
	means   []float64 // chain means
	acov    []float64 // chain-averaged autocovariance by lag
	nAcov   int       // lags of acov computed so far
	maxLags int       // lags to sum directly before switching to the FFT
	probed  bool      // whether decaysSlowly has been asked since the reset
	meanVar float64   // W, the mean within-chain variance
	varPlus float64   // var⁺
	rho     []float64 // Geyer's sequence
	m, n    int       // chains, draws per chain

	fft    *fourier.FFT
	padded []float64
	coeff  []complex128
	power  []float64
	seq    []float64
}

// ess returns the effective sample size of the m chains of n draws stored
// one after the other in x, or NaN where posterior returns NA.
func (w *essWork) ess(x []float64, m, n int) float64 {
	if n < 3 || !w.chainMeans(x, m, n) {
		return math.NaN()
	}
	w.m, w.n = m, n
	w.centred = grow(w.centred, m*n)
	w.acov = grow(w.acov, n)
	var ss float64 // lag 0, summed while centring
	for c := range m {
		chain := x[c*n : (c+1)*n]
		mean := w.means[c]
		dst := w.centred[c*n : (c+1)*n]
		dst = dst[:len(chain)]
		for i, v := range chain {
			d := v - mean
			dst[i] = d
			ss += d * d
		}
	}
	w.acov[0] = ss / float64(n) / float64(m)
	w.nAcov = 1
	w.probed = false
	w.maxLags = directLagsPerLog2 * bits.Len(uint(2*nextGoodSize(n)))

	w.meanVar = w.acov[0] * float64(n) / float64(n-1)
	w.varPlus = w.meanVar * float64(n-1) / float64(n)
	if m > 1 {
		w.varPlus += sampleVariance(w.means)
	}
	rhoAt := func(t int) float64 { return w.rhoOf(w.lag(t)) }

	// Geyer's initial positive sequence, with posterior's loop bounds.
	rho := grow(w.rho, n)
	w.rho = rho
	clear(rho)
	rhoEven, rhoOdd := 1.0, rhoAt(1)
	rho[0], rho[1] = rhoEven, rhoOdd
	t := 0
	for t < n-5 && rhoEven+rhoOdd > 0 { // false for NaN as well
		t += 2
		rhoEven, rhoOdd = rhoAt(t), rhoAt(t+1)
		if rhoEven+rhoOdd >= 0 {
			rho[t], rho[t+1] = rhoEven, rhoOdd
		}
	}
	maxT := t
	if rhoEven > 0 {
		rho[maxT] = rhoEven
	}
	// Geyer's initial monotone sequence.
	for t = 2; t <= maxT-2; t += 2 {
		if rho[t]+rho[t+1] > rho[t-2]+rho[t-1] {
			rho[t] = (rho[t-2] + rho[t-1]) / 2
			rho[t+1] = rho[t]
		}
	}
	var sum float64
	if maxT == 0 {
		// posterior sums rho_hat_t[1:max_t]; in R, 1:0 selects element 1.
		sum = rho[0]
	} else {
		for _, r := range rho[:maxT] {
			sum += r
		}
	}
	tau := -1 + 2*sum + rho[maxT]
	total := float64(m * n)
	if bound := 1 / math.Log10(total); tau < bound {
		tau = bound
	}
	return total / tau
}

// lag returns the chain-averaged biased autocovariance at lag t. Lags must
// be asked for in increasing order after each reset of nAcov; Geyer's
// sequence asks for them in pairs, which are summed in one pass.
func (w *essWork) lag(t int) float64 {
	for w.nAcov <= t {
		k := w.nAcov
		if k >= probeLag && !w.probed {
			w.probed = true
			if w.decaysSlowly() {
				w.acovFFT()
				break
			}
		}
		switch {
		case k >= w.maxLags:
			w.acovFFT()
		case k+1 < w.n:
			w.acov[k], w.acov[k+1] = w.directLags(k)
			w.nAcov += 2
		default:
			w.acov[k] = w.directLag(k)
			w.nAcov++
		}
	}
	return w.acov[t]
}

// rhoOf returns Geyer's ρ for the chain-averaged autocovariance g.
func (w *essWork) rhoOf(g float64) float64 { return 1 - (w.meanVar-g)/w.varPlus }

// decaysSlowly reports whether ρ at lag probeLag, extrapolated
// geometrically, stays above probeLevel up to maxLags.
func (w *essWork) decaysSlowly() bool {
	r := w.rhoOf(w.acov[probeLag])
	return r > 0 && float64(w.maxLags)/probeLag*math.Log(r) > math.Log(probeLevel)
}

// directLag sums the lag-t products of every chain.
func (w *essWork) directLag(t int) float64 {
	n := w.n
	var s0, s1 float64
	for c := range w.m {
		a := w.centred[c*n : (c+1)*n-t]
		b := w.centred[c*n+t : (c+1)*n]
		b = b[:len(a)]
		i := 0
		for ; i+2 <= len(a); i += 2 {
			s0 += a[i] * b[i]
			s1 += a[i+1] * b[i+1]
		}
		for ; i < len(a); i++ {
			s0 += a[i] * b[i]
		}
	}
	return (s0 + s1) / float64(n) / float64(w.m)
}

// directLags sums the lag-t and lag-(t+1) products of every chain in one
// pass; t+1 must be below n.
func (w *essWork) directLags(t int) (float64, float64) {
	n := w.n
	var e0, e1, o0, o1 float64
	for c := range w.m {
		chain := w.centred[c*n : (c+1)*n]
		a := chain[:n-t-1]
		b := chain[t : n-1]
		d := chain[t+1 : n]
		b, d = b[:len(a)], d[:len(a)]
		i := 0
		for ; i+2 <= len(a); i += 2 {
			e0 += a[i] * b[i]
			o0 += a[i] * d[i]
			e1 += a[i+1] * b[i+1]
			o1 += a[i+1] * d[i+1]
		}
		for ; i < len(a); i++ {
			e0 += a[i] * b[i]
			o0 += a[i] * d[i]
		}
		e0 += chain[n-t-1] * chain[n-1]
	}
	scale := float64(n) * float64(w.m)
	return (e0 + e1) / scale, (o0 + o1) / scale
}

// acovFFT fills every remaining lag of acov through the zero-padded FFT:
// padding to twice a length with no prime factor above 5 makes the
// circular autocorrelation equal to the linear one. The power spectra of
// the chains are summed first, so that one inverse transform gives the
// chain-averaged autocovariance.
func (w *essWork) acovFFT() {
	n := w.n
	size := 2 * nextGoodSize(n)
	if w.fft == nil {
		w.fft = fourier.NewFFT(size)
	} else if w.fft.Len() != size {
		w.fft.Reset(size)
	}
	w.padded = grow(w.padded, size)
	w.seq = grow(w.seq, size)
	w.coeff = growComplex(w.coeff, size/2+1)
	w.power = grow(w.power, size/2+1)
	clear(w.power)
	for c := range w.m {
		copy(w.padded, w.centred[c*n:(c+1)*n])
		clear(w.padded[n:])
		w.fft.Coefficients(w.coeff, w.padded)
		for i, v := range w.coeff {
			re, im := real(v), imag(v)
			w.power[i] += re*re + im*im
		}
	}
	for i, p := range w.power {
		w.coeff[i] = complex(p, 0)
	}
	w.fft.Sequence(w.seq, w.coeff)
	scale := float64(size) * float64(n) * float64(w.m)
	for t := w.nAcov; t < n; t++ {
		w.acov[t] = w.seq[t] / scale
	}
	w.nAcov = n
}

// nextGoodSize returns the smallest integer ≥ n, and ≥ 2, with no prime
// factor above 5.
func nextGoodSize(n int) int {
	if n <= 2 {
		return 2
	}
	for ; ; n++ {
		m := n
		for m%2 == 0 {
			m /= 2
		}
		for m%3 == 0 {
			m /= 3
		}
		for m%5 == 0 {
			m /= 5
		}
		if m == 1 {
			return n
		}
	}
}

// rhat returns the R-hat of the m chains of n draws stored one after the
// other in x, or NaN where posterior returns NA.
func (w *essWork) rhat(x []float64, m, n int) float64 {
	if n < 2 || m < 2 || !w.chainMeans(x, m, n) {
		return math.NaN()
	}
	var sumVar float64
	for c := range m {
		chain := x[c*n : (c+1)*n]
		mean := w.means[c]
		var ss float64
		for _, v := range chain {
			d := v - mean
			ss += d * d
		}
		sumVar += ss / float64(n-1)
	}
	varBetween := float64(n) * sampleVariance(w.means)
	varWithin := sumVar / float64(m)
	return math.Sqrt((varBetween/varWithin + float64(n) - 1) / float64(n))
}

// chainMeans stores the means of the m chains of n draws in x in w.means
// and reports whether x is usable: false where posterior's
// should_return_NA is true, that is for a non-finite value or a range below
// eps.
func (w *essWork) chainMeans(x []float64, m, n int) bool {
	w.means = grow(w.means, m)
	lo, hi := x[0], x[0]
	var bad float64 // v*0 is NaN exactly when v is not finite
	for c := range m {
		var sum float64
		for _, v := range x[c*n : (c+1)*n] {
			sum += v
			if v < lo {
				lo = v
			}
			if v > hi {
				hi = v
			}
			bad += v * 0
		}
		w.means[c] = sum / float64(n)
	}
	return bad == 0 && hi-lo >= eps
}

// meanOf returns the arithmetic mean of x.
func meanOf(x []float64) float64 {
	var s float64
	for _, v := range x {
		s += v
	}
	return s / float64(len(x))
}

// sampleVariance returns the variance of x with the n−1 denominator.
func sampleVariance(x []float64) float64 {
	mean := meanOf(x)
	var ss float64
	for _, v := range x {
		d := v - mean
		ss += d * d
	}
	return ss / float64(len(x)-1)
}

// grow returns a slice of length n reusing b's storage when it is large
// enough. The contents are unspecified.
func grow(b []float64, n int) []float64 {
	if cap(b) < n {
		return make([]float64, n)
	}
	return b[:n]
}

func growComplex(b []complex128, n int) []complex128 {
	if cap(b) < n {
		return make([]complex128, n)
	}
	return b[:n]
}
