package posterior

import (
	"context"
	"errors"
	"fmt"
	"math"
	"os"
	"strconv"
	"strings"
	"testing"
)

// The reference paper's simulation study, run on demand:
//
//	PWE_EXPERIMENT=1 go test -run TestExperiment -v -timeout 3h ./posterior/
//
// For V = 100 tokens, D in {5, 10}, N in {1e3, 1e4, 1e5, 1e6} observations
// and pairs uniform or Zipf, it simulates 10 data sets (true vectors with
// Normal(0, 1/D) coordinates, SimConfig's defaults), finds the MAP, picks
// the anchors with the default rule and their values with AnchorState and
// runs the Gibbs sampler, then
// measures the draws with an Evaluator: coverage of the 90% intervals and
// RMSE of the V^2 co-occurrence probabilities against the truth, and
// log-likelihood per observation on held-out data (PWE_EXPERIMENT_HELDOUT
// observations drawn from the same truth and pair law, default 1e5).
//
// The prior standard deviation is the truth's, 1/sqrt(D), so that the
// intervals are calibrated by construction and coverage tests the sampler
// (PWE_EXPERIMENT_PRIOR=1 uses pwe fit's default prior instead).
// PWE_EXPERIMENT_DATASETS, _DIMS, _N (comma-separated, 1e4 accepted),
// _LAWS, _CHAINS, _WARMUP and _DRAWS shrink or grow the grid;
// PWE_EXPERIMENT_ANCHOR_VALUES lists where the anchors are fixed (draw,
// map, auto; default auto, AnchorState's default), each fitted to the same
// data sets and MAPs;
// PWE_EXPERIMENT_OUT=FILE appends the Markdown rows to FILE as they are
// made.

// experimentCell is the averages of one (law, D, N) over its data sets.
type experimentCell struct {
	law      PairLaw
	dim, n   int
	values   AnchorValues
	coverage []float64
	ratio    []float64            // AnchorStateResult.ScaleRatio
	drawn    int                  // data sets anchored at a draw
	rmse     map[string][]float64 // by estimator
	heldOut  map[string][]float64
	warnings int
	cpu      float64
}

func TestExperiment(t *testing.T) {
	if os.Getenv("PWE_EXPERIMENT") == "" {
		t.Skip("set PWE_EXPERIMENT=1 to run the simulation study (see the comment above TestExperiment)")
	}
	const v = 100
	datasets := envInt(t, "PWE_EXPERIMENT_DATASETS", 10)
	dims := envInts(t, "PWE_EXPERIMENT_DIMS", []int{5, 10})
	ns := envInts(t, "PWE_EXPERIMENT_N", []int{1e3, 1e4, 1e5, 1e6})
	chains := envInt(t, "PWE_EXPERIMENT_CHAINS", 2)
	warmup := envInt(t, "PWE_EXPERIMENT_WARMUP", 300)
	draws := envInt(t, "PWE_EXPERIMENT_DRAWS", 500)
	heldN := envInt(t, "PWE_EXPERIMENT_HELDOUT", 1e5)
	var laws []PairLaw
	for _, s := range strings.Split(envString("PWE_EXPERIMENT_LAWS", "uniform,zipf"), ",") {
		l, err := ParsePairLaw(s)
		if err != nil {
			t.Fatal(err)
		}
		laws = append(laws, l)
	}
	var values []AnchorValues
	for _, s := range strings.Split(envString("PWE_EXPERIMENT_ANCHOR_VALUES", "auto"), ",") {
		v, err := ParseAnchorValues(s)
		if err != nil {
			t.Fatal(err)
		}
		values = append(values, v)
	}
	matched := os.Getenv("PWE_EXPERIMENT_PRIOR") != "1"
	out := experimentOutput(t)

	prior := "1/sqrt(D), the truth's"
	if !matched {
		prior = "1"
	}
	out(fmt.Sprintf("\nV = %d, %d data sets per cell, %d chains x %d draws after %d warmup sweeps, anchors by the default rule, prior sd %s, %d held-out observations, threads 2.\n",
		v, datasets, chains, draws, warmup, prior, heldN))
	out("| pairs | D | N | anchor values | MAP / draw scale (drawn) | coverage 90% (se) | RMSE MAP | RMSE post. mean | RMSE mean vectors | sqrt(N) x RMSE post. mean | held-out MAP | held-out mean vectors | held-out predictive | predictive - MAP (se) | CPU s |")
	out("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|")
	var cells []*experimentCell
	for _, law := range laws {
		for _, dim := range dims {
			for _, n := range ns {
				cs := make([]*experimentCell, len(values))
				for k, val := range values {
					cs[k] = &experimentCell{law: law, dim: dim, n: n, values: val, rmse: map[string][]float64{}, heldOut: map[string][]float64{}}
				}
				for ds := range datasets {
					experimentRun(t, cs, v, uint64(ds+1), chains, warmup, draws, heldN, matched)
				}
				for _, c := range cs {
					cells = append(cells, c)
					out(c.row())
				}
			}
		}
	}
	out("\nLog-log slope of the posterior mean's RMSE against N (the paper: about -1/2), over every N and over the two largest:\n")
	out("| pairs | D | anchor values | slope, all N | slope, two largest N |")
	out("|---|---|---|---|---|")
	for _, law := range laws {
		for _, dim := range dims {
			for _, val := range values {
				var xs, ys []float64
				for _, c := range cells {
					if c.law == law && c.dim == dim && c.values == val {
						xs = append(xs, math.Log(float64(c.n)))
						ys = append(ys, math.Log(meanOf(c.rmse[EstimatorMeanProb])))
					}
				}
				if len(xs) > 1 {
					k := len(xs) - 2
					out(fmt.Sprintf("| %v | %d | %v | %.3f | %.3f |", law, dim, val, olsSlope(xs, ys), olsSlope(xs[k:], ys[k:])))
				}
			}
		}
	}
}

// experimentRun simulates one data set, finds its MAP and, for each cell
// (one per way of fixing the anchors), fits and measures it into the cell.
func experimentRun(t *testing.T, cs []*experimentCell, v int, seed uint64, chains, warmup, draws, heldN int, matched bool) {
	t.Helper()
	c0 := cs[0]
	cfg := SimConfig{V: v, D: c0.dim, N: c0.n, Pairs: c0.law, Seed: seed}
	truth, rows, err := Simulate(cfg)
	if err != nil {
		t.Fatal(err)
	}
	d := buildData(t, v, rows)
	held := cfg
	held.N, held.Seed = heldN, seed+1<<32
	heldRows, err := SimulateCounts(truth, held)
	if err != nil {
		t.Fatal(err)
	}
	test := buildData(t, v, heldRows)
	priorSD := 1.0
	if matched {
		priorSD = 1 / math.Sqrt(float64(c0.dim))
	}
	ctx := context.Background()
	cpu0 := cpuSeconds()
	m, _, err := MAP(ctx, d, MAPConfig{Dim: c0.dim, PriorSD: priorSD, Seed: seed, Threads: 2})
	mapCPU := cpuSeconds() - cpu0
	notConverged := errors.Is(err, ErrNotConverged)
	if err != nil && !notConverged {
		t.Fatalf("%v D=%d N=%d seed %d: MAP: %v", c0.law, c0.dim, c0.n, seed, err)
	}
	for _, c := range cs {
		cpu0 := cpuSeconds()
		if notConverged {
			c.warnings++
		}
		as, err := AnchorState(ctx, d, m, AnchorStateConfig{Values: c.values, PriorSD: priorSD, Threads: 2, Seed: seed})
		if err != nil {
			t.Fatalf("%v D=%d N=%d seed %d: anchors at %v: %v", c.law, c.dim, c.n, seed, c.values, err)
		}
		c.ratio = append(c.ratio, as.ScaleRatio)
		if as.Drawn {
			c.drawn++
		}
		ev := NewEvaluator(v, c.dim, truth, test)
		_, err = Gibbs(ctx, d, as.State, GibbsConfig{
			Chains: chains, Warmup: warmup, Draws: draws, PriorSD: priorSD, Threads: 2, Seed: seed,
			Anchors: AnchorRule{Kind: AnchorIDs, IDs: as.Anchors},
		}, ev)
		if err != nil {
			t.Fatalf("%v D=%d N=%d seed %d: Gibbs: %v", c.law, c.dim, c.n, seed, err)
		}
		for _, x := range ev.Metrics(m) {
			switch x.Name {
			case MetricCoverage90:
				c.coverage = append(c.coverage, x.Value)
			case MetricRMSE:
				c.rmse[x.Estimator] = append(c.rmse[x.Estimator], x.Value)
			case MetricHeldOut:
				c.heldOut[x.Estimator] = append(c.heldOut[x.Estimator], x.Value)
			}
		}
		c.cpu += mapCPU + cpuSeconds() - cpu0
	}
}

// row formats the cell; standard errors are over the data sets, which are
// independent (pairs within one are not).
func (c *experimentCell) row() string {
	diff := make([]float64, len(c.coverage))
	for k := range diff {
		diff[k] = c.heldOut[EstimatorMeanProb][k] - c.heldOut[EstimatorMAP][k]
	}
	warn := ""
	if c.warnings > 0 {
		warn = fmt.Sprintf(" (%d MAPs not converged)", c.warnings)
	}
	pm := meanOf(c.rmse[EstimatorMeanProb])
	ratio := "-"
	if r := meanOf(c.ratio); !math.IsNaN(r) {
		ratio = fmt.Sprintf("%.2f (%d/%d)", r, c.drawn, len(c.ratio))
	}
	return fmt.Sprintf("| %v | %d | %.0e | %v | %s | %.1f%% (%.1f) | %.4f | %.4f | %.4f | %.2f | %.5f | %.5f | %.5f | %+.5f (%.5f) | %.0f%s |",
		c.law, c.dim, float64(c.n), c.values, ratio, 100*meanOf(c.coverage), 100*stdErrOf(c.coverage),
		meanOf(c.rmse[EstimatorMAP]), pm, meanOf(c.rmse[EstimatorMeanVectors]), pm*math.Sqrt(float64(c.n)),
		meanOf(c.heldOut[EstimatorMAP]), meanOf(c.heldOut[EstimatorMeanVectors]), meanOf(c.heldOut[EstimatorMeanProb]),
		meanOf(diff), stdErrOf(diff), c.cpu, warn)
}

func meanOf(x []float64) float64 {
	var s float64
	for _, y := range x {
		s += y
	}
	return s / float64(len(x))
}

func stdErrOf(x []float64) float64 {
	if len(x) < 2 {
		return math.NaN()
	}
	m := meanOf(x)
	var ss float64
	for _, y := range x {
		ss += (y - m) * (y - m)
	}
	return math.Sqrt(ss / float64(len(x)-1) / float64(len(x)))
}

// olsSlope returns the least-squares slope of ys on xs.
func olsSlope(xs, ys []float64) float64 {
	mx, my := meanOf(xs), meanOf(ys)
	var sxy, sxx float64
	for k := range xs {
		sxy += (xs[k] - mx) * (ys[k] - my)
		sxx += (xs[k] - mx) * (xs[k] - mx)
	}
	return sxy / sxx
}

func envString(name, def string) string {
	if s := os.Getenv(name); s != "" {
		return s
	}
	return def
}

// envInts parses a comma-separated list of whole numbers (1e4 accepted).
func envInts(t *testing.T, name string, def []int) []int {
	s := os.Getenv(name)
	if s == "" {
		return def
	}
	var out []int
	for _, f := range strings.Split(s, ",") {
		x, err := strconv.ParseFloat(strings.TrimSpace(f), 64)
		if err != nil || x != math.Trunc(x) || x < 1 {
			t.Fatalf("%s: %q is not a positive whole number", name, f)
		}
		out = append(out, int(x))
	}
	return out
}

// experimentOutput returns a function that logs a line and appends it to
// PWE_EXPERIMENT_OUT when set.
func experimentOutput(t *testing.T) func(string) {
	path := os.Getenv("PWE_EXPERIMENT_OUT")
	return func(line string) {
		t.Log(line)
		if path == "" {
			return
		}
		f, err := os.OpenFile(path, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
		if err != nil {
			t.Fatal(err)
		}
		fmt.Fprintln(f, line)
		if err := f.Close(); err != nil {
			t.Fatal(err)
		}
	}
}
