package posterior

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"runtime"
	"time"

	"gonum.org/v1/gonum/floats"
	"gonum.org/v1/gonum/optimize"
)

// ErrNotConverged is returned (wrapped) by MAP when the optimiser stopped
// before the gradient norm reached the tolerance; the Params and MAPResult
// returned with it are the best point found.
var ErrNotConverged = errors.New("posterior: MAP did not converge")

// DefaultMAPStarts is MAPConfig.Starts when it is zero. On simulated data
// with V = 200, D = 10 and Zipf pairs, 10 of 32 single starts ended at a
// local optimum 2 to 10 nats below the best, and chains started at the
// worst of them reached a quarter of the smallest bulk ESS (BENCHMARKS.md).
// Four starts cost four optimisations: a few per cent of a default fit at
// D <= 20, but about a third of the sampling time at V = 5000, D = 100.
const DefaultMAPStarts = 4

// MAPConfig configures MAP. Zero fields take the defaults given.
type MAPConfig struct {
	Dim     int     // dimension D of the vectors; required
	PriorSD float64 // prior standard deviation s; default 1
	InitSD  float64 // standard deviation of the random starts' coordinates; default 0.1
	Seed    uint64  // seed of the random starts
	// Starts is the number of independent random starts; MAP keeps the
	// optimum with the highest log posterior. Default DefaultMAPStarts.
	Starts int
	// GradTol stops the optimiser once every coordinate's gradient of the
	// log posterior, divided by sqrt(1/s^2 + n/4) with n the token's total
	// count on that side (about the square root of the curvature), is at
	// most GradTol: the optimum is then known to about GradTol posterior
	// standard deviations. Default 1e-3.
	GradTol float64
	MaxIter int // limit on L-BFGS iterations of each start, over its restarts; default 20000
	Threads int // goroutines evaluating the gradient; default GOMAXPROCS
	// OnEval, if set, is called after every evaluation of the log
	// posterior and its gradient, from MAP's goroutine, for progress
	// reports.
	OnEval func()
}

func (c MAPConfig) withDefaults() MAPConfig {
	if c.PriorSD == 0 {
		c.PriorSD = 1
	}
	if c.InitSD == 0 {
		c.InitSD = 0.1
	}
	if c.Starts == 0 {
		c.Starts = DefaultMAPStarts
	}
	if c.GradTol == 0 {
		c.GradTol = 1e-3
	}
	if c.MaxIter == 0 {
		c.MaxIter = 20000
	}
	if c.Threads == 0 {
		c.Threads = runtime.GOMAXPROCS(0)
	}
	return c
}

// Validate reports the first invalid field, after defaults are applied.
func (c MAPConfig) Validate() error {
	c = c.withDefaults()
	switch {
	case c.Dim < 1:
		return fmt.Errorf("posterior: dimension %d must be positive", c.Dim)
	case !(c.PriorSD > 0) || math.IsInf(c.PriorSD, 0):
		return fmt.Errorf("posterior: prior sd %v must be positive and finite", c.PriorSD)
	case !(c.InitSD > 0) || math.IsInf(c.InitSD, 0):
		return fmt.Errorf("posterior: MAP init sd %v must be positive and finite", c.InitSD)
	case c.Starts < 1:
		return fmt.Errorf("posterior: MAP starts %d, want at least 1", c.Starts)
	case !(c.GradTol > 0):
		return fmt.Errorf("posterior: MAP gradient tolerance %v must be positive", c.GradTol)
	case c.MaxIter < 0:
		return fmt.Errorf("posterior: MAP iteration limit %d is negative", c.MaxIter)
	case c.Threads < 0:
		return fmt.Errorf("posterior: threads %d is negative", c.Threads)
	}
	return nil
}

// MAPResult reports how MAP ended. The optimum's figures are those of the
// start kept; Iterations, Evaluations and Seconds count every start.
type MAPResult struct {
	Iterations   int     // L-BFGS major iterations
	Evaluations  int     // evaluations of the log posterior and its gradient
	LogPosterior float64 // log posterior at the optimum (LogPosterior)
	GradNorm     float64 // largest scaled gradient coordinate at the optimum (see GradTol)
	Converged    bool    // GradNorm <= GradTol
	Status       string  // the optimiser's termination status
	Seconds      float64
	// Start is the index of the start kept, and StartLogPosteriors the
	// log posterior each start reached: values that differ by more than
	// the optimiser's tolerance show that the posterior has several local
	// optima.
	Start              int
	StartLogPosteriors []float64
}

// maxRestarts bounds the L-BFGS restarts after a failed line search.
const maxRestarts = 5

var statusCancelled = optimize.NewStatus("Cancelled", true, nil)

// cancelConverger stops the optimiser at the next iteration once the
// context is done.
type cancelConverger struct{ ctx context.Context }

func (cancelConverger) Init(int) {}

func (c cancelConverger) Converged(*optimize.Location) optimize.Status {
	if c.ctx.Err() != nil {
		return statusCancelled
	}
	return optimize.NotTerminated
}

// MAP maximises the log posterior over all 2VD coordinates (no anchors:
// the prior makes the optimum a point, up to the rotations that leave both
// likelihood and prior unchanged, and the anchors are chosen from it
// afterwards) by L-BFGS from Starts seeded random starts, one after the
// other, each evaluating the gradient in parallel over tokens, and keeps
// the highest optimum (the first on ties). The result does not depend on
// Threads. When the kept optimum did not reach the gradient tolerance,
// MAP returns it with an error wrapping ErrNotConverged.
func MAP(ctx context.Context, d *Data, cfg MAPConfig) (*Params, MAPResult, error) {
	if err := cfg.Validate(); err != nil {
		return nil, MAPResult{}, err
	}
	if d.Pairs() == 0 {
		return nil, MAPResult{}, ErrNoPairs
	}
	cfg = cfg.withDefaults()
	began := time.Now()
	pl := startPool(ctx, cfg.Threads, nil)
	defer pl.stop()
	o := newMAPOptimiser(d, cfg)
	var best *Params
	var out MAPResult
	var bestErr error
	lps := make([]float64, cfg.Starts)
	iters, evals := 0, 0
	for k := range cfg.Starts {
		p, res, err := o.run(ctx, pl, k)
		if err != nil && !errors.Is(err, ErrNotConverged) {
			return nil, MAPResult{}, err
		}
		lps[k] = res.LogPosterior
		iters += res.Iterations
		evals += res.Evaluations
		if best == nil || res.LogPosterior > out.LogPosterior {
			best, out, bestErr = p, res, err
			out.Start = k
		}
	}
	out.Iterations, out.Evaluations, out.StartLogPosteriors = iters, evals, lps
	out.Seconds = time.Since(began).Seconds()
	return best, out, bestErr
}

// mapOptimiser runs L-BFGS from one random start in the scaled
// coordinates; its evaluator and scales serve every start.
type mapOptimiser struct {
	d     *Data
	cfg   MAPConfig
	e     *evaluator
	scale []float64
}

func newMAPOptimiser(d *Data, cfg MAPConfig) *mapOptimiser {
	v, dim := d.v, cfg.Dim
	// Optimise in scaled coordinates y = c x with c^2 = 1/s^2 + n/4, n the
	// token's total count on that side: about the square root of the
	// curvature, so that y's gradient reads in posterior standard
	// deviations and L-BFGS starts well conditioned.
	scale := make([]float64, 2*v*dim)
	for s := range 2 {
		for i := range v {
			var n float64
			_, ns, _ := d.side(s, i)
			for _, x := range ns {
				n += x
			}
			c := math.Sqrt(1/(cfg.PriorSD*cfg.PriorSD) + n/4)
			off := (s*v + i) * dim
			for k := range dim {
				scale[off+k] = c
			}
		}
	}
	return &mapOptimiser{d: d, cfg: cfg, e: newEvaluator(d, dim, cfg.Threads), scale: scale}
}

// run optimises from start k, whose coordinates are InitSD times normals
// from the stream of (Seed, k). Its MAPResult has Start and
// StartLogPosteriors unset.
func (o *mapOptimiser) run(ctx context.Context, pl *pool, k int) (*Params, MAPResult, error) {
	cfg, scale := o.cfg, o.scale
	began := time.Now()
	v, dim := o.d.v, cfg.Dim
	y := make([]float64, 2*v*dim)
	rng := rand.New(rand.NewPCG(streamSeeds(cfg.Seed, k, 0, sideMAPStart, 0)))
	for j := range y {
		y[j] = cfg.InitSD * rng.NormFloat64() * scale[j]
	}

	// gonum asks for the value and the gradient at the same point in
	// separate calls; one pass computes both, so remember the last point.
	lastY := make([]float64, len(y))
	x := make([]float64, len(y))
	lastG := make([]float64, len(y))
	lastF := math.NaN()
	evals := 0
	evalAt := func(yy []float64) {
		if !math.IsNaN(lastF) && floats.Equal(yy, lastY) {
			return
		}
		copy(lastY, yy)
		floats.DivTo(x, yy, scale)
		lastF = -o.e.eval(pl, paramsOver(v, dim, x), cfg.PriorSD, paramsOver(v, dim, lastG))
		for j := range lastG {
			lastG[j] /= -scale[j]
		}
		evals++
		if cfg.OnEval != nil {
			cfg.OnEval()
		}
	}
	problem := optimize.Problem{
		Func: func(yy []float64) float64 { evalAt(yy); return lastF },
		Grad: func(g, yy []float64) { evalAt(yy); copy(g, lastG) },
	}
	// A line search can fail near the optimum when the objective's
	// rounding error swamps its decrease; restarting L-BFGS from the point
	// reached drops the curvature history that misled it.
	var res *optimize.Result
	var optErr error
	iters := 0
	for range maxRestarts + 1 {
		settings := &optimize.Settings{
			GradientThreshold: cfg.GradTol,
			MajorIterations:   cfg.MaxIter - iters,
			Converger:         cancelConverger{ctx},
		}
		res, optErr = optimize.Minimize(problem, y, settings, &optimize.LBFGS{GradStopThreshold: math.NaN()})
		if res == nil || ctx.Err() != nil {
			break
		}
		iters += res.MajorIterations
		copy(y, res.X)
		if floats.Norm(res.Gradient, math.Inf(1)) <= cfg.GradTol || iters >= cfg.MaxIter || res.MajorIterations == 0 {
			break
		}
	}
	if err := ctx.Err(); err != nil {
		return nil, MAPResult{}, fmt.Errorf("posterior: MAP: %w", err)
	}
	if res == nil {
		return nil, MAPResult{}, fmt.Errorf("posterior: MAP: %w", optErr)
	}
	p := NewParams(v, dim)
	floats.DivTo(p.Rho, res.X[:v*dim], scale[:v*dim])
	floats.DivTo(p.Alpha, res.X[v*dim:], scale[v*dim:])
	out := MAPResult{
		Iterations:   iters,
		Evaluations:  evals,
		LogPosterior: -res.F,
		GradNorm:     floats.Norm(res.Gradient, math.Inf(1)),
		Status:       res.Status.String(),
		Seconds:      time.Since(began).Seconds(),
	}
	out.Converged = out.GradNorm <= cfg.GradTol
	if !out.Converged {
		reason := out.Status
		if optErr != nil {
			reason = optErr.Error()
		}
		return p, out, fmt.Errorf("%w: gradient norm %.3g above tolerance %.3g after %d iterations of start %d (%s)",
			ErrNotConverged, out.GradNorm, cfg.GradTol, out.Iterations, k, reason)
	}
	return p, out, nil
}
