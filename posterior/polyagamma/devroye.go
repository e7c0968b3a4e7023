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
	mu      float64 // 1/z, mean of the left-hand inverse-Gaussian piece, once needed
	pLeft   float64 // probability of proposing from the left-hand piece
	lamLow  float64 // lower bound on lambda (see draw)
	lambda  float64 // exact lambda, computed only when needed
	lamDone bool
}

// The envelope's masses are p = pi/(2K) exp(-K t) on (t, inf) and
// q = 2 exp(-z) IG(t | 1/z, 1) on (0, t) (PSW 2013, Section 4.1), with
// IG(t | 1/z, 1) = Phi((tz-1)/sqrt t) + exp(2z) Phi(-(tz+1)/sqrt t).
// Evaluating them costs two erfc, two exp and two log, more than the rest of
// a draw, so the sampler proposes from the left piece with a probability
// pLeft >= q/(p+q) that it gets cheaply: by linear interpolation in a table
// of q/(p+q) itself for z < pTableZ (where 1 - q/(p+q) > 0.01), in a table
// of log(q/p) for z < tableZ, both padded by tableTol, and from the bound
// IG <= 1 above. The envelope then has to be scaled up by p/(1-pLeft)
// (relative to proposing with the exact weights), and a left proposal is
// accepted with the extra factor lambda = (q/p) (1-pLeft)/pLeft <= 1, where
// lambda >= lamLow = 1 - 3 tableTol (1/pLeft + 1/(1-pLeft)) (first table),
// exp(-2 tableTol) (second) or Phi((tz-1)/sqrt t) >= 1 - 1e-6
// (z >= tableZ); the first is replaced by its minimum over the table,
// lamLowP. The tables' interpolation error is checked to be below
// tableTol/4 by TestDevroyeTables.
// Only a uniform falling between lamLow and 1 times the series bound needs
// the exact masses, which keeps the sampler exact; that happens for at most
// one left proposal in 400 (1 - lamLowP), and the padded envelope wastes a
// share of order tableTol of the proposals. Linear interpolation with this
// tolerance is cheaper than the cubic one a tolerance of 1e-8 would need.

const (
	pTableZ   = 4
	tableZ    = 8
	tableStep = 1.0 / 256
	tableTol  = 1e-5
	// lamLowP bounds 1 - 3 tableTol (1/pLeft + 1/(1-pLeft)) on z < pTableZ,
	// where 1/pLeft < 2.4 and 1/(1-pLeft) < 80 (TestDevroyeTables).
	lamLowP = 1 - 2.5e-3
)

// logRhoTable[i] = log(q/p) and pLeftTable[i] = q/(p+q) at z = i*tableStep,
// i = 0 .. tableZ/tableStep+1.
var logRhoTable, pLeftTable []float64

func makeRhoTables() ([]float64, []float64) {
	n := int(tableZ/tableStep) + 2
	lr, pl := make([]float64, n), make([]float64, n)
	for i := range lr {
		lr[i] = exactLogRho(float64(i) * tableStep)
		pl[i] = 1 / (1 + math.Exp(-lr[i]))
	}
	return lr, pl
}

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

// interpolate evaluates a table at 0 <= z < tableZ linearly.
func interpolate(tab []float64, z float64) float64 {
	u := z * (1 / tableStep)
	i := int(u)
	f0, f1 := tab[i], tab[i+1]
	return f0 + (u-float64(i))*(f1-f0)
}

// init sets d up for c.
func (d *devroye) init(c float64) {
	z := math.Abs(c) / 2
	k := math.Pi*math.Pi/8 + z*z/2
	*d = devroye{z: z, k: k}
	switch {
	case z < pTableZ:
		d.pLeft = interpolate(pLeftTable, z) + tableTol
		d.lamLow = lamLowP
	case z < tableZ:
		d.pLeft = 1 / (1 + math.Exp(-d.logRho()))
		d.lamLow = math.Exp(-2 * tableTol)
	default:
		// q/(p+q) with IG <= 1 in q: 1/(1 + (pi/(4K)) exp(z - Kt)), the
		// exponential underflowing harmlessly for large z.
		d.pLeft = k / (k + math.Pi/4*math.Exp(z-k*devroyeT))
		d.lamLow = 1 - 1e-6
	}
}

// logRho returns log(pLeft/(1-pLeft)), the log mass ratio the envelope is
// scaled to, for z >= pTableZ.
func (d *devroye) logRho() float64 {
	if d.z < tableZ {
		return interpolate(logRhoTable, d.z) + tableTol
	}
	return math.Log(4*d.k/math.Pi) - d.z + d.k*devroyeT
}

// exactLambda returns the extra acceptance factor of left proposals.
func (d *devroye) exactLambda() float64 {
	if !d.lamDone {
		lr := d.logRho()
		if d.z < pTableZ {
			lr = math.Log(d.pLeft) - math.Log1p(-d.pLeft)
		}
		d.lambda = math.Exp(exactLogRho(d.z) - lr)
		d.lamDone = true
	}
	return d.lambda
}

// draw returns one J*(1, z) variate (not yet divided by 4).
func (d *devroye) draw(g *rng) float64 {
	for {
		// The uniform that picks the piece, rescaled, is uniform on (0, 1)
		// and independent of x given the piece, so it serves as the
		// acceptance uniform too. The rescaling (a division) is done only
		// when the quick tests fail.
		u := g.unif()
		if u >= d.pLeft {
			w := g.uint64()
			e, ok := expZig.fast(w)
			if !ok {
				e = g.expSlow(w)
			}
			x := devroyeT + e/d.k
			du := u - d.pLeft
			if du <= acceptAtOnce*(1-d.pLeft) || seriesAccept(x, du/(1-d.pLeft), true) {
				return x
			}
			continue
		}
		x := d.left(g)
		// Accept iff v/lambda <= f(x)/a_0(x) with v = u/pLeft and lambda
		// in [lamLow, 1]: at once if v/lamLow is below the bound on the
		// ratio, else by the series at v/lamLow (accept) and v (reject),
		// and only in between with the exact lambda.
		if u <= d.lamLow*acceptAtOnce*d.pLeft {
			return x
		}
		v := u / d.pLeft
		if seriesAccept(x, v/d.lamLow, false) {
			return x
		}
		if seriesAccept(x, v, false) && seriesAccept(x, v/d.exactLambda(), false) {
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

// tailA is 1/sqrt(t), where the normal tail of the left piece starts, and
// tailRate the rate of the exponential proposal for that tail,
// (a + sqrt(a^2+4))/2, which maximises its acceptance (Robert 1995,
// "Simulation of truncated normal variables", Stat. Comput. 5), to 0.895
// here against 0.723 for Marsaglia's rate a.
const (
	tailA    = 1.25
	tailRate = 1.8042476415070754
)

// left draws from the inverse-Gaussian IG(1/z, 1) truncated to (0, t).
func (d *devroye) left(g *rng) float64 {
	const t = devroyeT
	if d.z <= 1/t {
		// For z <= 1/t (so mu >= t): x = 1/N^2 with N the normal tail
		// beyond 1/sqrt t, drawn as a + E/rate, is 1/chi^2_1 truncated to
		// (0, t); tilting it by exp(-z^2 x/2) gives the target. Both
		// rejection steps are folded into one test, U <= exp(-A) with
		// A = (N - rate)^2/2 + z^2 x/2, decided by the bounds
		// 1 - A <= exp(-A) <= 1 - A + A^2/2 where they suffice. It takes
		// 2.2 random words per draw at z = 0 and 3.5 at z = 1/t, against
		// 9.4 and 3.1 for Michael, Schucany & Haas below.
		zz := d.z * d.z * 0.5
		for {
			w := g.uint64()
			e, ok := expZig.fast(w)
			if !ok {
				e = g.expSlow(w)
			}
			n := tailA + e*(1/tailRate)
			x := 1 / (n * n)
			a := (n-tailRate)*(n-tailRate)*0.5 + zz*x
			u := g.unif()
			if u <= 1-a {
				return x
			}
			if u <= 1-a+a*a*0.5 && u <= math.Exp(-a) {
				return x
			}
		}
	}
	// Michael, Schucany & Haas (1976): the two roots of the chi^2_1
	// equation are mu/r and mu r with r = 1 + w + sqrt(2w + w^2) >= 1
	// (a form that does not cancel when mu is tiny, |c| in the thousands),
	// the first kept with probability mu/(mu + mu/r) = r/(1+r). Testing
	// against t before dividing saves the division on rejection.
	mu := d.mu
	if mu == 0 {
		mu = 1 / d.z
		d.mu = mu
	}
	for {
		// y = |N| suffices: only y^2 enters.
		u := g.uint64()
		y, ok := normZig.fast(u)
		if !ok {
			y = g.normSlow(u)
		}
		w := mu * y * y * 0.5
		r := 1 + w + math.Sqrt(w*(2+w))
		if g.unif()*(1+r) <= r {
			if mu < t*r {
				return mu / r
			}
		} else if x := mu * r; x < t {
			return x
		}
	}
}
