package posterior

import (
	"context"
	"math"

	"gonum.org/v1/gonum/floats"
)

// logSigmoid returns log(1/(1+exp(-x))) without overflow or cancellation.
func logSigmoid(x float64) float64 {
	if x >= 0 {
		return -math.Log1p(math.Exp(-x))
	}
	return x - math.Log1p(math.Exp(x))
}

// logistic returns sig(x) = 1/(1 + exp(-x)), through exp(x) for x < 0 so
// that tiny probabilities keep their relative precision.
func logistic(x float64) float64 {
	if x >= 0 {
		return 1 / (1 + math.Exp(-x))
	}
	e := math.Exp(x)
	return e / (1 + e)
}

// pairLogLik returns n_pos log sig(x) + n_neg log sig(-x) for a pair with
// n trials and kappa = n_pos - n/2, using log sig(-x) = log sig(x) - x.
func pairLogLik(x, n, kappa float64) float64 {
	return n*logSigmoid(x) - (n/2-kappa)*x
}

// pairScore returns the derivative of pairLogLik in x,
// n_pos - n sig(x) = kappa - (n/2) tanh(x/2).
func pairScore(x, n, kappa float64) float64 {
	return kappa - n/2*math.Tanh(x/2)
}

// LogLik returns the log-likelihood of the counts at p.
func LogLik(d *Data, p *Params) float64 {
	var s float64
	for i := range d.v {
		s += targetLogLik(d, p, i, nil, nil)
	}
	return s
}

// LogPrior returns the log density of the Normal(0, priorSD^2) prior over
// every coordinate of p, without its normalising constant.
func LogPrior(p *Params, priorSD float64) float64 {
	return -(sumSquares(p.Rho) + sumSquares(p.Alpha)) / (2 * priorSD * priorSD)
}

// LogPosterior returns LogLik + LogPrior: the unnormalised log posterior
// density of all 2VD coordinates.
func LogPosterior(d *Data, p *Params, priorSD float64) float64 {
	return LogLik(d, p) + LogPrior(p, priorSD)
}

// Gradient stores the gradient of LogPosterior at p in grad and returns
// LogPosterior.
func Gradient(d *Data, p *Params, priorSD float64, grad *Params) float64 {
	e := newEvaluator(d, p.D, 1)
	pl := startPool(context.Background(), 1, nil)
	defer pl.stop()
	return e.eval(pl, p, priorSD, grad)
}

// targetLogLik returns the log-likelihood of the pairs of target i and, if
// grad is not nil, adds their gradient in rho_i to grad and stores each
// pair's score (the derivative of its log-likelihood in rho_i . alpha_j)
// in score, which holds target i's pairs.
func targetLogLik(d *Data, p *Params, i int, grad, score []float64) float64 {
	ctx, n, kappa := d.TargetPairs(i)
	rho := p.Target(i)
	var ll float64
	for k, j := range ctx {
		alpha := p.Context(int(j))
		x := dot4(rho, alpha)
		ll += pairLogLik(x, n[k], kappa[k])
		if grad != nil {
			s := pairScore(x, n[k], kappa[k])
			score[k] = s
			axpyLong(s, alpha, grad)
		}
	}
	return ll
}

// contextGrad adds the gradient of the log-likelihood in alpha_j to grad,
// from the pairs' scores that targetLogLik stored (indexed as the
// by-target pairs).
func contextGrad(d *Data, p *Params, j int, grad, score []float64) {
	tgt, _, _ := d.ContextPairs(j)
	pos := d.contextPairPos(j)
	for k, i := range tgt {
		axpyLong(score[pos[k]], p.Target(int(i)), grad)
	}
}

// productTerms is the largest count whose log1p term logLikSum folds
// into its running product as a power of 1 + exp(-|x|); larger counts
// take math.Log1p. Each factor is at most 2, so the product gains at most
// 2^productTerms per pair before it is flushed. The power takes at most
// four roundings, fewer than the count's repeated multiplications would.
const productTerms = 8

// logLikSum adds up pairs' log-likelihoods pos log sig(x) + neg log sig(-x)
// (pos = kappa + n/2 and neg = n/2 - kappa of n trials) in the form
// n min(x, 0) - neg x - n log1p(exp(-|x|)), about twice as fast as one
// log1p per pair: the sum of n log1p(exp(-|x|)) over pairs with small n
// is the log of a product of factors 1 + exp(-|x|), which costs one
// multiplication per factor and one logarithm per token. exp(-|x|) errs
// by less than one unit in the last place (expNegs; 1.25 through
// math.Exp), and each factor is rounded, so each factor errs by at most
// 2.25 x 2^-53 in its logarithm and the total by at most the pairs'
// counts times 2.5e-16 against targetLogLik. The kept draws'
// log-likelihoods are summed by it twice over, inside the next sweep
// (sampler.sweep) and on their own (drawLogLik); both see the same x in
// the same order, so they agree to the bit.
type logLikSum struct{ lin, logs, prod float64 }

func newLogLikSum() logLikSum { return logLikSum{prod: 1} }

// add adds the pairs whose linear predictors are psi, with counts n and
// kappas kappa. The exponentials are taken expBlock at a time by expNegs,
// whose result for each pair depends on nothing else.
func (s *logLikSum) add(psi, n, kappa []float64) {
	const flush = 0x1p900
	n, kappa = n[:len(psi)], kappa[:len(psi)]
	lin, logs, prod := s.lin, s.logs, s.prod
	var us [expBlock]float64
	for lo := 0; lo < len(psi); lo += expBlock {
		hi := min(lo+expBlock, len(psi))
		u := us[:hi-lo]
		expNegs(u, psi[lo:hi])
		for k, x := range psi[lo:hi] {
			nk := n[lo+k]
			lin += nk*min(x, 0) - (nk/2-kappa[lo+k])*x
			if nk > productTerms || nk != math.Trunc(nk) {
				logs += nk * math.Log1p(u[k])
				continue
			}
			// The factor's power from a table rather than a loop of nk
			// steps, whose exit the branch predictor cannot foresee.
			f := 1 + u[k]
			f2 := f * f
			f3, f4 := f2*f, f2*f2
			pow := [productTerms + 1]float64{1, f, f2, f3, f4, f4 * f, f4 * f2, f4 * f3, f4 * f4}
			prod *= pow[int(nk)]
			if prod > flush {
				logs += math.Log(prod)
				prod = 1
			}
		}
	}
	s.lin, s.logs, s.prod = lin, logs, prod
}

// expBlock is the number of pairs whose exponentials logLikSum.add, and
// whose linear predictors drawLogLik, compute at a time.
const expBlock = 64

func (s *logLikSum) value() float64 { return s.lin - s.logs - math.Log(s.prod) }

// pairsLogLik returns the log-likelihood of pairs whose linear predictors
// are psi.
func pairsLogLik(psi, n, kappa []float64) float64 {
	s := newLogLikSum()
	s.add(psi, n, kappa)
	return s.value()
}

// drawLogLik returns the log-likelihood of target i's pairs, as
// targetLogLik(d, p, i, nil) does to within rounding (see logLikSum). Its
// linear predictors are computed as gatherPsiB computes them, a block at a
// time.
func drawLogLik(d *Data, p *Params, i int) float64 {
	ctx, n, kappa := d.TargetPairs(i)
	rho := p.Target(i)
	var psi [expBlock]float64
	s := newLogLikSum()
	for lo := 0; lo < len(ctx); lo += len(psi) {
		hi := min(lo+len(psi), len(ctx))
		for k, j := range ctx[lo:hi] {
			psi[k] = dot(rho, p.Context(int(j)))
		}
		s.add(psi[:hi-lo], n[lo:hi], kappa[lo:hi])
	}
	return s.value()
}

// axpyLong is axpy through gonum's assembly kernel for long vectors,
// where it is faster than the compiled loop.
func axpyLong(a float64, x, y []float64) {
	if len(x) < 16 {
		axpy(a, x, y)
		return
	}
	floats.AddScaled(y[:len(x)], a, x)
}

func axpy(a float64, x, y []float64) {
	y = y[:len(x)]
	for k, v := range x {
		y[k] += a * v
	}
}

func sumSquares(x []float64) float64 {
	var s float64
	for _, v := range x {
		s += v * v
	}
	return s
}

// evaluator computes the log posterior and its gradient in parallel. The
// per-token partial sums are added in token order, so the result does not
// depend on the number of threads.
type evaluator struct {
	d       *Data
	targets []chunk
	ctxs    []chunk
	partial []float64
	score   []float64 // each pair's score, by target; made by the first gradient
}

func newEvaluator(d *Data, dim, threads int) *evaluator {
	return &evaluator{
		d:       d,
		targets: partition(d.v, threads, func(i int) float64 { return float64(d.degree(sideRho, i)*dim + dim) }),
		ctxs:    partition(d.v, threads, func(j int) float64 { return float64(d.degree(sideAlpha, j)*dim + dim) }),
		partial: make([]float64, d.v),
	}
}

// logLik returns the log-likelihood at p.
func (e *evaluator) logLik(pl *pool, p *Params) float64 {
	pl.forEach(e.targets, func(_ *workspace, c chunk) {
		for i := c.lo; i < c.hi; i++ {
			e.partial[i] = drawLogLik(e.d, p, i)
		}
	})
	return sumInOrder(e.partial)
}

// eval returns the log posterior at p and, if grad is not nil, stores its
// gradient there.
func (e *evaluator) eval(pl *pool, p *Params, priorSD float64, grad *Params) float64 {
	if grad == nil {
		return e.logLik(pl, p) + LogPrior(p, priorSD)
	}
	prec := 1 / (priorSD * priorSD)
	if e.score == nil {
		e.score = make([]float64, e.d.Pairs())
	}
	pl.forEach(e.targets, func(_ *workspace, c chunk) {
		for i := c.lo; i < c.hi; i++ {
			g := grad.Target(i)
			rho := p.Target(i)
			for k := range g {
				g[k] = -prec * rho[k]
			}
			e.partial[i] = targetLogLik(e.d, p, i, g, e.score[e.d.tOff[i]:e.d.tOff[i+1]])
		}
	})
	pl.forEach(e.ctxs, func(_ *workspace, c chunk) {
		for j := c.lo; j < c.hi; j++ {
			g := grad.Context(j)
			alpha := p.Context(j)
			for k := range g {
				g[k] = -prec * alpha[k]
			}
			contextGrad(e.d, p, j, g, e.score)
		}
	})
	return sumInOrder(e.partial) + LogPrior(p, priorSD)
}
