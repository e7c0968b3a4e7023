package polyagamma

import (
	"math"
)

// devroyeT is the truncation point between the two proposal pieces; 0.64 is
// the value Devroye (2009) and Polson, Scott & Windle (2013, Section 4)
// found nearly optimal for every z.
const devroyeT = 0.64

// acceptAtOnce bounds the first alternating-series ratio a_1(x)/a_0(x)
// on both pieces: 3 exp(-4/t) = 0.00579 for x <= t and 3 exp(-pi^2 t) =
// 0.00541 for x > t. A uniform below 1 minus it is accepted without
// evaluating any term.
const acceptAtOnce = 1 - 0.00580

// devroye holds the per-z set-up of the exact sampler of J*(1, z)
// (PG(1, 2z) = J*(1, z)/4), shared by all the PG(1, c) summands of one draw.
type devroye struct {
	z       float64 // |c|/2
	k       float64 // pi^2/8 + z^2/2, rate of the right-hand exponential piece
	mu      float64 // 1/z, mean of the left-hand inverse-Gaussian piece
	pLeft   float64 // probability of proposing from the left-hand piece
	logRho  float64 // log(pLeft/(1-pLeft)), set with haveLog
	haveLog bool
	lamLow  float64 // lower bound on lambda (see draw)
	lambda  float64 // exact lambda, computed only when needed
	lamDone bool
}

// The envelope's masses are p = pi/(2K) exp(-K t) on (t, inf) and
// q = 2 exp(-z) IG(t | 1/z, 1) on (0, t) (PSW 2013, Section 4.1), with
// IG(t | 1/z, 1) = Phi((tz-1)/sqrt t) + exp(2z) Phi(-(tz+1)/sqrt t).
// Evaluating them costs two erfc, two exp and two log, more than the rest of
// a draw, so the sampler proposes from the left piece with a probability
// pLeft >= q/(p+q) that it gets cheaply: from a table of q/(p+q) itself for
// z < pTableZ (where 1 - q/(p+q) > 0.01), from a table of log(q/p) for
// z < tableZ, both padded by tableTol, and from the bound IG <= 1 above. The
// envelope then has to be scaled up by p/(1-pLeft) (relative to proposing
// with the exact weights), and a left proposal is accepted with the extra
// factor lambda = (q/p) (1-pLeft)/pLeft <= 1, where lambda >= lamLow =
// 1 - 3 tableTol (1/pLeft + 1/(1-pLeft)) (first table), exp(-2 tableTol)
// (second) or Phi((tz-1)/sqrt t) >= 1 - 1e-6 (z >= tableZ); the first is
// replaced by its minimum over the table, lamLowP, which saves two divisions
// per set-up. The tables'
// interpolation error is checked to be below tableTol/4 by
// TestDevroyeTables.
// Only a uniform falling between lamLow and 1 times the series bound needs
// the exact masses, which keeps the sampler exact at the cost of a 0.6%
// slow path.

const (
	pTableZ   = 4
	tableZ    = 8
	tableStep = 1.0 / 256
	tableTol  = 1e-8
	// lamLowP bounds 1 - 3 tableTol (1/pLeft + 1/(1-pLeft)) on z < pTableZ,
	// where 1/pLeft < 2 and 1/(1-pLeft) < 100 (TestDevroyeTables).
	lamLowP = 1 - 3.1e-6
)

// logRhoTable[i+1] = log(q/p) and pLeftTable[i+1] = q/(p+q) at
// z = i*tableStep, i = -1 .. tableZ/tableStep+2 (both are even in z).
var logRhoTable, pLeftTable = func() ([]float64, []float64) {
	n := int(tableZ/tableStep) + 4
	lr, pl := make([]float64, n), make([]float64, n)
	for i := range lr {
		lr[i] = exactLogRho(float64(i-1) * tableStep)
		pl[i] = 1 / (1 + math.Exp(-lr[i]))
	}
	return lr, pl
}()

// exactLogRho returns log(q/p), the log ratio of the left to the right
// envelope mass, finite for every z (it is even in z).
func exactLogRho(z float64) float64 {
	t := devroyeT
	k := math.Pi*math.Pi/8 + z*z/2
	logP := math.Log(math.Pi/(2*k)) - k*t
	st := math.Sqrt(t)
	phiA := 0.5 * math.Erfc(-(t*z-1)/st/math.Sqrt2)
	// exp(2z) Phi(-b) through logs: Phi(-b) underflows to 0 (log -Inf) long
	// before exp(2z) would overflow its product.
	tailB := math.Exp(2*z + math.Log(0.5*math.Erfc((t*z+1)/st/math.Sqrt2)))
	return math.Ln2 - z + math.Log(phiA+tailB) - logP
}

// interpolate evaluates a table at z by four-point Lagrange cubics.
func interpolate(tab []float64, z float64) float64 {
	u := z * (1 / tableStep)
	i := int(u)
	s := u - float64(i)
	f0, f1, f2, f3 := tab[i], tab[i+1], tab[i+2], tab[i+3]
	// Nodes at s = -1, 0, 1, 2.
	return f1 + s*((f2-f0)*0.5+s*((f0-2*f1+f2)*0.5+(s-1)*(f3-3*f2+3*f1-f0)*(1.0/6)))
}

func newDevroye(c float64) devroye {
	z := math.Abs(c) / 2
	k := math.Pi*math.Pi/8 + z*z/2
	d := devroye{z: z, k: k, mu: 1 / z}
	switch {
	case z < pTableZ:
		d.pLeft = interpolate(pLeftTable, z) + tableTol
		d.lamLow = lamLowP
		return d
	case z < tableZ:
		d.logRho = interpolate(logRhoTable, z) + tableTol
		d.lamLow = math.Exp(-2 * tableTol)
	default:
		// log(2 exp(-z) / p), an upper bound since IG(t | 1/z, 1) <= 1.
		d.logRho = math.Log(4*k/math.Pi) - z + k*devroyeT
		d.lamLow = 1 - 1e-6
	}
	d.haveLog = true
	d.pLeft = 1 / (1 + math.Exp(-d.logRho))
	return d
}

// exactLambda returns the extra acceptance factor of left proposals.
func (d *devroye) exactLambda() float64 {
	if !d.lamDone {
		if !d.haveLog {
			d.logRho = math.Log(d.pLeft) - math.Log1p(-d.pLeft)
		}
		d.lambda = math.Exp(exactLogRho(d.z) - d.logRho)
		d.lamDone = true
	}
	return d.lambda
}

// draw returns one J*(1, z) variate (not yet divided by 4).
func (d *devroye) draw(g rng) float64 {
	for {
		// The uniform that picks the piece, rescaled, is uniform on (0, 1)
		// and independent of x given the piece, so it serves as the
		// acceptance uniform too. The rescaling (a division) is done only
		// when the quick tests fail.
		u := g.unif()
		if u >= d.pLeft {
			x := devroyeT + g.exp()/d.k
			du := u - d.pLeft
			if du <= acceptAtOnce*(1-d.pLeft) || seriesAccept(x, du/(1-d.pLeft), true) {
				return x
			}
			continue
		}
		x := d.left(g)
		// Accept iff v = u/pLeft <= lambda * f(x)/a_0(x), lambda in
		// [lamLow, 1].
		if u <= d.lamLow*acceptAtOnce*d.pLeft {
			return x
		}
		if v := u / d.pLeft / d.exactLambda(); v < 1 && seriesAccept(x, v, false) {
			return x
		}
	}
}

// seriesAccept decides v * a_0(x) <= f(x) by Devroye's alternating series,
// with a_n/a_0 = (2n+1) exp(-2n(n+1)/x) left of t and
// (2n+1) exp(-n(n+1) pi^2 x/2) right of t; the a_n decrease in n on each
// side (Devroye 2009, Lemma), so the partial sums bracket the density.
func seriesAccept(x, v float64, right bool) bool {
	s := 1.0
	for n := 1; ; n++ {
		fn := float64(n)
		var r float64
		if right {
			r = (2*fn + 1) * math.Exp(-fn*(fn+1)*math.Pi*math.Pi*x/2)
		} else {
			r = (2*fn + 1) * math.Exp(-2*fn*(fn+1)/x)
		}
		if n%2 == 1 {
			s -= r
			if v <= s {
				return true
			}
		} else {
			s += r
			if v > s {
				return false
			}
		}
	}
}

// left draws from the inverse-Gaussian IG(1/z, 1) truncated to (0, t).
func (d *devroye) left(g rng) float64 {
	const t = devroyeT
	if d.mu > t {
		// 1/chi^2_1 truncated to (0, t), from the normal tail |N| > 1/sqrt t
		// by Devroye's exponential proposal, then tilted by exp(-z^2 x/2).
		for {
			var e float64
			for {
				e = g.exp()
				if e*e <= (2/t)*g.exp() {
					break
				}
			}
			x := t / ((1 + t*e) * (1 + t*e))
			a := d.z * d.z * x * 0.5
			u := g.unif()
			if u <= 1-a || u <= math.Exp(-a) {
				return x
			}
		}
	}
	// Michael, Schucany & Haas (1976), written as mu/(1 + w + sqrt(2w + w^2))
	// so it does not cancel when mu is tiny (|c| in the thousands).
	for {
		y := g.norm()
		w := d.mu * y * y * 0.5
		x := d.mu / (1 + w + math.Sqrt(w*(2+w)))
		// Keep x with probability mu/(mu+x), else take mu^2/x.
		if g.unif()*(d.mu+x) > d.mu {
			x = d.mu * d.mu / x
		}
		if x < t {
			return x
		}
	}
}
