package posterior

import (
	"fmt"
	"math"

	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/blas64"
)

// Metric names, as in the metric column of evaluation.parquet.
const (
	// MetricRMSE is the reference paper's distance to the truth: the root
	// mean square difference, over all V x V pairs, between the true
	// co-occurrence probabilities sigmoid(rho_i . alpha_j) and the
	// estimate's.
	MetricRMSE = "rmse_prob"
	// MetricCoverage90 is the fraction of the V x V true probabilities
	// inside their equal-tailed 90% posterior interval.
	MetricCoverage90 = "coverage_90"
	// MetricHeldOut is the held-out log-likelihood per observation,
	// sum_ij n_pos log p_ij + n_neg log(1 - p_ij) over sum_ij n_pos + n_neg.
	MetricHeldOut = "heldout_loglik"
)

// Estimator names, as in the estimator column of evaluation.parquet.
const (
	// EstimatorMAP plugs the MAP vectors into sigmoid(rho_i . alpha_j).
	EstimatorMAP = "map"
	// EstimatorMeanVectors plugs the posterior means of the vectors in;
	// they are meaningful because the anchors identify the posterior.
	EstimatorMeanVectors = "posterior_mean_vectors"
	// EstimatorMeanProb is the posterior mean of the probability
	// sigmoid(rho_i . alpha_j) over the draws; for held-out data it is the
	// posterior predictive probability.
	EstimatorMeanProb = "posterior_mean"
	// EstimatorInterval names the equal-tailed 90% posterior intervals.
	EstimatorInterval = "interval_90"
)

// Metric is one figure of an evaluation.
type Metric struct {
	Name      string  `json:"metric"`
	Estimator string  `json:"estimator"`
	Value     float64 `json:"value"`
	// N is what Value averages over: the V^2 pairs for the metrics against
	// the truth, the held-out observations (sum of n_pos + n_neg) for the
	// log-likelihood.
	N float64 `json:"n"`
	// Draws is the number of posterior draws behind Value (0 for the MAP).
	Draws int `json:"draws"`
}

// ProbRMSE returns the root mean square difference, over all V x V pairs,
// between sigmoid(rho_i . alpha_j) under truth and under est.
func ProbRMSE(truth, est *Params) float64 {
	checkShapes(truth, est)
	var ss float64
	for i := range truth.V {
		for j := range truth.V {
			e := sigmoid(truth.Logit(i, j)) - sigmoid(est.Logit(i, j))
			ss += e * e
		}
	}
	return math.Sqrt(ss / float64(truth.V*truth.V))
}

// HeldOutLogLik returns the log-likelihood per observation of the held-out
// counts test under the vectors p.
func HeldOutLogLik(test *Data, p *Params) float64 {
	if test.V() != p.V {
		panic(fmt.Sprintf("posterior: held-out counts for %d tokens, vectors for %d", test.V(), p.V))
	}
	return LogLik(test, p) / test.Total()
}

func checkShapes(a, b *Params) {
	if a.V != b.V || a.D != b.D {
		panic(fmt.Sprintf("posterior: vectors of V=%d, D=%d against V=%d, D=%d", a.V, a.D, b.V, b.D))
	}
}

// Evaluator accumulates posterior draws, as a Sink of Gibbs or fed from
// draws.parquet, and measures them against true vectors and held-out
// counts. Its memory is, per chain, 2 V D float64 for the vector means,
// with a truth V^2 float64 for the probability means (plus, in all, the
// V^2 float64 true logits, 2 V^2 int32 interval counters and a panel of
// logitPanelRows x V float64), and with held-out counts 2 float64 per
// held-out pair.
//
// The sums are kept per chain and added in chain order at the end, so the
// figures do not depend on the order in which the chains' draws arrive.
//
// The 90% interval of a probability runs from the ceil(0.05 S)-th to the
// ceil(0.95 S)-th smallest of its S draws (the inverse of the empirical
// distribution function), so whether it covers the truth is counted as
// the draws stream by: it does when at least ceil(0.05 S) draws are at
// most the truth and fewer than ceil(0.95 S) are below it. Draws are
// compared as logits, the sigmoid being monotone, so probabilities that
// round to 0 or 1 do not tie.
type Evaluator struct {
	truth *Params
	test  *Data
	v, d  int

	truthLogit    []float64 // [i*V + j], with a truth
	below, atMost []int32   // draws with logit < and <= the true one
	panel         []float64 // a draw's logits, logitPanelRows targets at a time
	chains        []*evalChain
}

// logitPanelRows is how many targets' logits Draw forms per matrix
// product. gonum's Dgemm hands out 64 x 64 blocks of the product to its
// goroutines, so 64 rows make whole blocks, while the panel, 64 V float64,
// stays small beside the V^2 sums.
const logitPanelRows = 64

// logits sets dst, row-major (hi-lo) x V, to the logits rho_i . alpha_j of
// the targets i in [lo, hi) against every context j, by one matrix
// product, and returns it.
func logits(dst []float64, p *Params, lo, hi int) []float64 {
	dst = dst[:(hi-lo)*p.V]
	blas64.Gemm(blas.NoTrans, blas.Trans, 1,
		blas64.General{Rows: hi - lo, Cols: p.D, Stride: p.D, Data: p.Rho[lo*p.D : hi*p.D]},
		blas64.General{Rows: p.V, Cols: p.D, Stride: p.D, Data: p.Alpha[:p.V*p.D]},
		0, blas64.General{Rows: hi - lo, Cols: p.V, Stride: p.V, Data: dst})
	return dst
}

// evalChain holds one chain's sums.
type evalChain struct {
	draws   int
	vec     []float64 // Rho then Alpha
	prob    []float64 // sigmoid(x_ij), with a truth
	testPos []float64 // sigmoid(x), per held-out pair in target order
	testNeg []float64 // sigmoid(-x)
}

// NewEvaluator returns an Evaluator of vectors of v tokens in d dimensions
// against truth and against the held-out counts test; either may be nil.
func NewEvaluator(v, d int, truth *Params, test *Data) *Evaluator {
	e := &Evaluator{truth: truth, test: test, v: v, d: d}
	if truth != nil {
		checkShapes(truth, &Params{V: v, D: d})
		// Formed panel by panel as Draw forms a draw's, so that the same
		// vectors give the same logits to the bit (Dgemm's order of
		// summation depends on the shape) and a draw equal to the truth
		// ties with it.
		e.truthLogit = make([]float64, v*v)
		for lo := 0; lo < v; lo += logitPanelRows {
			logits(e.truthLogit[lo*v:], truth, lo, min(lo+logitPanelRows, v))
		}
		e.below, e.atMost = make([]int32, v*v), make([]int32, v*v)
		e.panel = make([]float64, min(v, logitPanelRows)*v)
	}
	if test != nil && test.V() != v {
		panic(fmt.Sprintf("posterior: held-out counts for %d tokens, evaluator for %d", test.V(), v))
	}
	return e
}

// Draws returns the number of draws seen.
func (e *Evaluator) Draws() int {
	n := 0
	for _, c := range e.chains {
		if c != nil {
			n += c.draws
		}
	}
	return n
}

// Draw adds one draw of chain; it implements Sink.
func (e *Evaluator) Draw(chain, _ int, p *Params, _ DrawStats) error {
	if p.V != e.v || p.D != e.d {
		return fmt.Errorf("posterior: evaluator for V=%d, D=%d got a draw with V=%d, D=%d", e.v, e.d, p.V, p.D)
	}
	if chain < 0 {
		return fmt.Errorf("posterior: negative chain %d", chain)
	}
	for len(e.chains) <= chain {
		e.chains = append(e.chains, nil)
	}
	c := e.chains[chain]
	if c == nil {
		c = &evalChain{vec: make([]float64, 2*e.v*e.d)}
		if e.truth != nil {
			c.prob = make([]float64, e.v*e.v)
		}
		if e.test != nil {
			c.testPos, c.testNeg = make([]float64, e.test.Pairs()), make([]float64, e.test.Pairs())
		}
		e.chains[chain] = c
	}
	c.draws++
	axpy(1, p.Rho, c.vec[:e.v*e.d])
	axpy(1, p.Alpha, c.vec[e.v*e.d:])
	if e.truth != nil {
		for lo := 0; lo < e.v; lo += logitPanelRows {
			hi := min(lo+logitPanelRows, e.v)
			for k, x := range logits(e.panel, p, lo, hi) {
				q := lo*e.v + k
				t := e.truthLogit[q]
				c.prob[q] += sigmoid(x)
				if x < t {
					e.below[q]++
				}
				if x <= t {
					e.atMost[q]++
				}
			}
		}
	}
	if e.test != nil {
		k := 0
		for i := range e.v {
			ctx, _, _ := e.test.TargetPairs(i)
			rho := p.Target(i)
			for _, j := range ctx {
				x := dot(rho, p.Context(int(j)))
				c.testPos[k] += sigmoid(x)
				c.testNeg[k] += sigmoid(-x)
				k++
			}
		}
	}
	return nil
}

// mean returns the sums of field over the chains, added in chain order,
// divided by the number of draws.
func (e *Evaluator) mean(field func(*evalChain) []float64, n int) []float64 {
	out := make([]float64, n)
	for _, c := range e.chains {
		if c != nil {
			axpy(1, field(c), out)
		}
	}
	s := float64(e.Draws())
	for k := range out {
		out[k] /= s
	}
	return out
}

// Metrics returns the figures of the MAP vectors m (skipped when nil) and
// of the draws seen (skipped when none): against the truth RMSE for the
// MAP, the posterior mean of the probabilities and the posterior-mean
// vectors, and coverage; against the held-out counts the log-likelihood
// per observation for the MAP, the posterior-mean vectors and the
// posterior predictive.
func (e *Evaluator) Metrics(m *Params) []Metric {
	var out []Metric
	s := e.Draws()
	var meanVec *Params
	if s > 0 {
		meanVec = paramsOver(e.v, e.d, e.mean(func(c *evalChain) []float64 { return c.vec }, 2*e.v*e.d))
	}
	if m != nil {
		checkShapes(m, &Params{V: e.v, D: e.d})
	}
	if e.truth != nil {
		pairs := float64(e.v * e.v)
		if m != nil {
			out = append(out, Metric{MetricRMSE, EstimatorMAP, ProbRMSE(e.truth, m), pairs, 0})
		}
		if s > 0 {
			prob := e.mean(func(c *evalChain) []float64 { return c.prob }, e.v*e.v)
			var ss float64
			for q, p := range prob {
				d := p - sigmoid(e.truthLogit[q])
				ss += d * d
			}
			lo, hi := int32((5*s+99)/100), int32((95*s+99)/100)
			hit := 0
			for q := range e.below {
				if e.atMost[q] >= lo && e.below[q] < hi {
					hit++
				}
			}
			out = append(out,
				Metric{MetricRMSE, EstimatorMeanProb, math.Sqrt(ss / pairs), pairs, s},
				Metric{MetricRMSE, EstimatorMeanVectors, ProbRMSE(e.truth, meanVec), pairs, s},
				Metric{MetricCoverage90, EstimatorInterval, float64(hit) / pairs, pairs, s})
		}
	}
	if e.test != nil {
		total := e.test.Total()
		if m != nil {
			out = append(out, Metric{MetricHeldOut, EstimatorMAP, HeldOutLogLik(e.test, m), total, 0})
		}
		if s > 0 {
			pos := e.mean(func(c *evalChain) []float64 { return c.testPos }, e.test.Pairs())
			neg := e.mean(func(c *evalChain) []float64 { return c.testNeg }, e.test.Pairs())
			var ll float64
			k := 0
			for i := range e.v {
				_, n, kappa := e.test.TargetPairs(i)
				for r := range n {
					ll += xlogy(kappa[r]+n[r]/2, pos[k]) + xlogy(n[r]/2-kappa[r], neg[k])
					k++
				}
			}
			out = append(out,
				Metric{MetricHeldOut, EstimatorMeanVectors, HeldOutLogLik(e.test, meanVec), total, s},
				Metric{MetricHeldOut, EstimatorMeanProb, ll / total, total, s})
		}
	}
	return out
}

// xlogy returns x log y, zero when x is.
func xlogy(x, y float64) float64 {
	if x == 0 {
		return 0
	}
	return x * math.Log(y)
}
