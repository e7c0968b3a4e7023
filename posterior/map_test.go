package posterior

import (
	"context"
	"errors"
	"math"
	"math/rand/v2"
	"testing"

	"gonum.org/v1/gonum/floats"
	"gonum.org/v1/gonum/optimize"

	"github.com/pwe-project/pwe/formats"
)

func TestMAPStationaryAndNotImprovable(t *testing.T) {
	d, _ := simulate(t, 25, 3, 6000, 3)
	cfg := MAPConfig{Dim: 3, Seed: 5, GradTol: 1e-7}
	p, res, err := MAP(context.Background(), d, cfg)
	if err != nil {
		t.Fatal(err)
	}
	grad := NewParams(p.V, p.D)
	lp := Gradient(d, p, 1, grad)
	// The tolerance applies to the gradient scaled by sqrt(1 + n/4), n the
	// token's total count on that side.
	gmax := 0.0
	for i := range p.V {
		_, nt, _ := d.TargetPairs(i)
		_, nc, _ := d.ContextPairs(i)
		for k := range p.D {
			gmax = math.Max(gmax, math.Abs(grad.Target(i)[k])/math.Sqrt(1+floats.Sum(nt)/4))
			gmax = math.Max(gmax, math.Abs(grad.Context(i)[k])/math.Sqrt(1+floats.Sum(nc)/4))
		}
	}
	if gmax > cfg.GradTol || !res.Converged || math.Abs(res.GradNorm-gmax) > 1e-12 {
		t.Fatalf("gradient norm %v (reported %v, converged %v), tolerance %v", gmax, res.GradNorm, res.Converged, cfg.GradTol)
	}
	if math.Abs(lp-res.LogPosterior) > 1e-9*math.Abs(lp) {
		t.Errorf("reported log posterior %v, recomputed %v", res.LogPosterior, lp)
	}
	if res.Iterations < 1 || res.Evaluations < res.Iterations {
		t.Errorf("iterations %d evaluations %d", res.Iterations, res.Evaluations)
	}
	// No random perturbation of size 1e-3 improves the optimum.
	r := rand.New(rand.NewPCG(1, 2))
	for range 50 {
		q := p.Clone()
		for k := range q.Rho {
			q.Rho[k] += 1e-3 * r.NormFloat64()
			q.Alpha[k] += 1e-3 * r.NormFloat64()
		}
		if got := LogPosterior(d, q, 1); got > lp {
			t.Fatalf("perturbation improves the log posterior: %v > %v", got, lp)
		}
	}
	// The same optimum with other thread counts, to the bit.
	for _, th := range []int{1, 3} {
		cfg.Threads = th
		q, _, err := MAP(context.Background(), d, cfg)
		if err != nil {
			t.Fatal(err)
		}
		for k := range q.Rho {
			if q.Rho[k] != p.Rho[k] || q.Alpha[k] != p.Alpha[k] {
				t.Fatalf("threads %d: MAP differs at coordinate %d", th, k)
			}
		}
	}
}

func TestMAPMatchesNelderMead(t *testing.T) {
	// V = 2, D = 1: four coordinates, small enough for a derivative-free
	// optimiser on the naive objective.
	rows := []formats.CountRow{
		{TargetID: 0, ContextID: 0, NPos: 3, NNeg: 5},
		{TargetID: 0, ContextID: 1, NPos: 9, NNeg: 2},
		{TargetID: 1, ContextID: 0, NPos: 2, NNeg: 7},
		{TargetID: 1, ContextID: 1, NPos: 4, NNeg: 3},
	}
	d := buildData(t, 2, rows)
	const sd = 1.5
	naive := func(x []float64) float64 {
		rho, alpha := x[:2], x[2:]
		var f float64
		for _, r := range rows {
			s := sigmoid(rho[r.TargetID] * alpha[r.ContextID])
			f += r.NPos*math.Log(s) + r.NNeg*math.Log(1-s)
		}
		for _, v := range x {
			f -= v * v / (2 * sd * sd)
		}
		return -f
	}
	p, _, err := MAP(context.Background(), d, MAPConfig{Dim: 1, PriorSD: sd, Seed: 11, GradTol: 1e-7})
	if err != nil {
		t.Fatal(err)
	}
	// The optimum is determined up to the sign flip (rho, alpha) -> -(rho,
	// alpha); start Nelder-Mead near the MAP's sign.
	x0 := []float64{0.5 * p.Rho[0], 0.5 * p.Rho[1], 0.5 * p.Alpha[0], 0.5 * p.Alpha[1]}
	res, err := optimize.Minimize(optimize.Problem{Func: naive}, x0,
		&optimize.Settings{Converger: &optimize.FunctionConverge{Absolute: 1e-15, Iterations: 200}}, &optimize.NelderMead{})
	if err != nil {
		t.Fatal(err)
	}
	got := []float64{p.Rho[0], p.Rho[1], p.Alpha[0], p.Alpha[1]}
	for k := range got {
		if math.Abs(got[k]-res.X[k]) > 1e-5 {
			t.Errorf("coordinate %d: MAP %v, Nelder-Mead %v", k, got[k], res.X[k])
		}
	}
	if naive(got) > res.F+1e-10 {
		t.Errorf("MAP objective %v worse than Nelder-Mead's %v", naive(got), res.F)
	}
}

func TestMAPReportsNonConvergence(t *testing.T) {
	d, _ := simulate(t, 10, 2, 500, 4)
	p, res, err := MAP(context.Background(), d, MAPConfig{Dim: 2, MaxIter: 2, GradTol: 1e-12})
	if !errors.Is(err, ErrNotConverged) || p == nil || res.Converged || res.GradNorm <= 1e-12 {
		t.Fatalf("err %v, params %v, result %+v", err, p != nil, res)
	}
}

func TestMAPCancelled(t *testing.T) {
	d, _ := simulate(t, 10, 2, 500, 4)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, _, err := MAP(ctx, d, MAPConfig{Dim: 2}); !errors.Is(err, context.Canceled) {
		t.Fatalf("err %v, want context.Canceled", err)
	}
}

func TestMAPKeepsTheBestStart(t *testing.T) {
	// Zipf pairs at V = 50, D = 5: some starts of seed 1 end at a local
	// optimum about 2 nats below the best.
	d := simulateMixing(t, 50, 5, 20000, true, 42)
	cfg := MAPConfig{Dim: 5, Seed: 1, Starts: 8, Threads: 2}
	p, res, err := MAP(context.Background(), d, cfg)
	if err != nil {
		t.Fatal(err)
	}
	// Each start alone, through the same code path.
	pl := startPool(context.Background(), 2, nil)
	defer pl.stop()
	o := newMAPOptimiser(d, cfg.withDefaults())
	best, lo, hi := -1, math.Inf(1), math.Inf(-1)
	var bestP *Params
	for k := range cfg.Starts {
		q, r, err := o.run(context.Background(), pl, k)
		if err != nil {
			t.Fatal(err)
		}
		if r.LogPosterior != res.StartLogPosteriors[k] {
			t.Errorf("start %d: log posterior %v alone, %v reported", k, r.LogPosterior, res.StartLogPosteriors[k])
		}
		if best < 0 || r.LogPosterior > hi {
			best, bestP = k, q
		}
		lo, hi = math.Min(lo, r.LogPosterior), math.Max(hi, r.LogPosterior)
	}
	// The tolerance puts every start within about 1e-3 nats of its
	// optimum; starts farther apart than 0.5 nats found different optima.
	if hi-lo < 0.5 {
		t.Fatalf("every start found the same optimum (log posteriors %v): the data no longer test the choice", res.StartLogPosteriors)
	}
	if res.Start != best || res.LogPosterior != hi {
		t.Errorf("kept start %d (log posterior %v), want %d (%v)", res.Start, res.LogPosterior, best, hi)
	}
	for k := range p.Rho {
		if p.Rho[k] != bestP.Rho[k] || p.Alpha[k] != bestP.Alpha[k] {
			t.Fatalf("MAP differs from start %d's optimum at coordinate %d", best, k)
		}
	}
	if got := LogPosterior(d, p, 1); math.Abs(got-hi) > 1e-9*math.Abs(hi) {
		t.Errorf("log posterior of the MAP %v, reported %v", got, hi)
	}
	// One start is start 0.
	cfg.Starts = 1
	if _, one, err := MAP(context.Background(), d, cfg); err != nil || one.LogPosterior != res.StartLogPosteriors[0] || len(one.StartLogPosteriors) != 1 {
		t.Errorf("one start: %v, log posterior %v, want start 0's %v", err, one.LogPosterior, res.StartLogPosteriors[0])
	}
}
