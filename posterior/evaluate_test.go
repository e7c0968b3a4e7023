package posterior

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/pwe-project/pwe/formats"
)

// handCase is V = 2, D = 1 with true probabilities [[3/4, 1/2], [1/4, 1/2]]
// (logits ln 3, 0, -ln 3, 0) and two draws: the truth itself, and rho = 0
// (every probability 1/2). Held-out counts: (0, 0) with 3 positives and 1
// negative, (1, 1) with 1 and 1.
func handCase(t *testing.T) (truth, flat *Params, test *Data) {
	ln3 := math.Log(3)
	truth = &Params{V: 2, D: 1, Rho: []float64{ln3, -ln3}, Alpha: []float64{1, 0}}
	flat = &Params{V: 2, D: 1, Rho: []float64{0, 0}, Alpha: []float64{1, 0}}
	test = buildData(t, 2, []formats.CountRow{{TargetID: 0, ContextID: 0, NPos: 3, NNeg: 1}, {TargetID: 1, ContextID: 1, NPos: 1, NNeg: 1}})
	return truth, flat, test
}

func TestProbRMSEHand(t *testing.T) {
	truth, flat, _ := handCase(t)
	// Differences 1/4, 0, -1/4, 0: mean square 1/32.
	if got, want := ProbRMSE(truth, flat), math.Sqrt(1.0/32); math.Abs(got-want) > 1e-15 {
		t.Errorf("ProbRMSE = %v, want %v", got, want)
	}
	if got := ProbRMSE(truth, truth); got != 0 {
		t.Errorf("ProbRMSE(truth, truth) = %v", got)
	}
}

func TestHeldOutLogLikHand(t *testing.T) {
	truth, flat, test := handCase(t)
	want := (3*math.Log(0.75) + math.Log(0.25) + 2*math.Log(0.5)) / 6
	if got := HeldOutLogLik(test, truth); math.Abs(got-want) > 1e-15 {
		t.Errorf("truth: %v, want %v", got, want)
	}
	if got, want := HeldOutLogLik(test, flat), math.Log(0.5); math.Abs(got-want) > 1e-15 {
		t.Errorf("flat: %v, want %v", got, want)
	}
}

func metricValue(t *testing.T, ms []Metric, name, est string) Metric {
	t.Helper()
	for _, m := range ms {
		if m.Name == name && m.Estimator == est {
			return m
		}
	}
	t.Fatalf("no metric %s/%s in %v", name, est, ms)
	return Metric{}
}

func TestEvaluatorHand(t *testing.T) {
	truth, flat, test := handCase(t)
	// Chains in either order, draws in either order: the same figures to
	// the bit.
	var results [][]Metric
	for _, order := range [][2]int{{0, 1}, {1, 0}} {
		e := NewEvaluator(2, 1, truth, test)
		draws := []*Params{truth, flat}
		for _, c := range order {
			if err := e.Draw(c, 0, draws[c], DrawStats{}); err != nil {
				t.Fatal(err)
			}
		}
		results = append(results, e.Metrics(truth))
	}
	if !slices.Equal(results[0], results[1]) {
		t.Errorf("chain order changes the figures:\n%v\n%v", results[0], results[1])
	}
	ms := results[0]
	if len(ms) != 7 {
		t.Errorf("%d metrics, want 7: %v", len(ms), ms)
	}
	s := math.Sqrt(3) / (1 + math.Sqrt(3)) // sigmoid(ln 3 / 2), the mean vectors' p_00
	for _, c := range []struct {
		name, est string
		want, n   float64
		draws     int
	}{
		{MetricRMSE, EstimatorMAP, 0, 4, 0},
		// Mean probabilities 5/8, 1/2, 3/8, 1/2: differences 1/8, 0, 1/8, 0.
		{MetricRMSE, EstimatorMeanProb, math.Sqrt(2.0 / 64 / 4), 4, 2},
		// Mean vectors rho = (ln 3/2, -ln 3/2): probabilities s, 1/2, 1-s, 1/2.
		{MetricRMSE, EstimatorMeanVectors, (0.75 - s) / math.Sqrt2, 4, 2},
		// Two draws: the interval is [min, max], and every truth is a draw.
		{MetricCoverage90, EstimatorInterval, 1, 4, 2},
		{MetricHeldOut, EstimatorMAP, (3*math.Log(0.75) + math.Log(0.25) + 2*math.Log(0.5)) / 6, 6, 0},
		{MetricHeldOut, EstimatorMeanVectors, (3*math.Log(s) + math.Log(1-s) + 2*math.Log(0.5)) / 6, 6, 2},
		{MetricHeldOut, EstimatorMeanProb, (3*math.Log(0.625) + math.Log(0.375) + 2*math.Log(0.5)) / 6, 6, 2},
	} {
		m := metricValue(t, ms, c.name, c.est)
		if math.Abs(m.Value-c.want) > 1e-15 || m.N != c.n || m.Draws != c.draws {
			t.Errorf("%s/%s = %v (n %v, draws %d), want %v (n %v, draws %d)", c.name, c.est, m.Value, m.N, m.Draws, c.want, c.n, c.draws)
		}
	}
}

// With S = 20 draws of the logit 1, 2, ..., 20 the interval runs from the
// 1st to the 19th smallest draw, [1, 19].
func TestEvaluatorCoverageBoundaries(t *testing.T) {
	for _, c := range []struct {
		truth   float64
		covered bool
	}{{0.5, false}, {1, true}, {10.5, true}, {19, true}, {19.5, false}, {20, false}} {
		truth := &Params{V: 1, D: 1, Rho: []float64{c.truth}, Alpha: []float64{1}}
		e := NewEvaluator(1, 1, truth, nil)
		for k := range 20 {
			p := &Params{V: 1, D: 1, Rho: []float64{float64(k + 1)}, Alpha: []float64{1}}
			if err := e.Draw(k%3, k/3, p, DrawStats{}); err != nil {
				t.Fatal(err)
			}
		}
		want := 0.0
		if c.covered {
			want = 1
		}
		if got := metricValue(t, e.Metrics(nil), MetricCoverage90, EstimatorInterval).Value; got != want {
			t.Errorf("truth %v: coverage %v, want %v", c.truth, got, want)
		}
	}
}

// On random draws in several chains the Evaluator agrees with a naive
// computation that keeps every draw, sorts each pair's draws for the
// interval and averages in one pass.
func TestEvaluatorMatchesNaive(t *testing.T) {
	const v, dim, chains, perChain = 5, 2, 3, 41
	r := rand.New(rand.NewPCG(1, 2))
	truth, m := gaussianParams(r, v, dim, 1), gaussianParams(r, v, dim, 1)
	var rows []formats.CountRow
	for i := range v {
		for j := range v {
			if r.IntN(3) > 0 {
				rows = append(rows, formats.CountRow{TargetID: int32(i), ContextID: int32(j), NPos: float64(r.IntN(5)), NNeg: float64(r.IntN(5)) + 0.5})
			}
		}
	}
	test := buildData(t, v, rows)
	e := NewEvaluator(v, dim, truth, test)
	var all []*Params
	for k := range chains * perChain {
		p := gaussianParams(r, v, dim, 1)
		p.Rho[0] += truth.Rho[0]
		all = append(all, p)
		if err := e.Draw(k%chains, k/chains, p, DrawStats{}); err != nil {
			t.Fatal(err)
		}
	}
	ms := e.Metrics(m)

	sig := func(x float64) float64 { return 1 / (1 + math.Exp(-x)) }
	s := float64(len(all))
	meanVec := NewParams(v, dim)
	for _, p := range all {
		for k := range p.Rho {
			meanVec.Rho[k] += p.Rho[k] / s
			meanVec.Alpha[k] += p.Alpha[k] / s
		}
	}
	rmse := func(prob func(i, j int) float64) float64 {
		var ss float64
		for i := range v {
			for j := range v {
				d := prob(i, j) - sig(truth.Logit(i, j))
				ss += d * d
			}
		}
		return math.Sqrt(ss / (v * v))
	}
	meanProb := func(i, j int) float64 {
		var sum float64
		for _, p := range all {
			sum += sig(p.Logit(i, j))
		}
		return sum / s
	}
	hits := 0
	lo, hi := int(math.Ceil(0.05*s))-1, int(math.Ceil(0.95*s))-1 // 0-based order statistics
	for i := range v {
		for j := range v {
			var x []float64
			for _, p := range all {
				x = append(x, p.Logit(i, j))
			}
			slices.Sort(x)
			if tr := truth.Logit(i, j); x[lo] <= tr && tr <= x[hi] {
				hits++
			}
		}
	}
	heldOut := func(prob func(i, j int) float64) float64 {
		var ll, n float64
		for _, row := range rows {
			p := prob(int(row.TargetID), int(row.ContextID))
			ll += row.NPos*math.Log(p) + row.NNeg*math.Log(1-p)
			n += row.NPos + row.NNeg
		}
		return ll / n
	}
	plug := func(p *Params) func(i, j int) float64 {
		return func(i, j int) float64 { return sig(p.Logit(i, j)) }
	}
	for _, c := range []struct {
		name, est string
		want      float64
	}{
		{MetricRMSE, EstimatorMAP, rmse(plug(m))},
		{MetricRMSE, EstimatorMeanProb, rmse(meanProb)},
		{MetricRMSE, EstimatorMeanVectors, rmse(plug(meanVec))},
		{MetricCoverage90, EstimatorInterval, float64(hits) / (v * v)},
		{MetricHeldOut, EstimatorMAP, heldOut(plug(m))},
		{MetricHeldOut, EstimatorMeanVectors, heldOut(plug(meanVec))},
		{MetricHeldOut, EstimatorMeanProb, heldOut(meanProb)},
	} {
		if got := metricValue(t, ms, c.name, c.est).Value; math.Abs(got-c.want) > 1e-12 {
			t.Errorf("%s/%s = %v, naive %v", c.name, c.est, got, c.want)
		}
	}
	if cov := metricValue(t, ms, MetricCoverage90, EstimatorInterval).Value; cov == 0 || cov == 1 {
		t.Errorf("coverage %v: the case does not exercise the interval", cov)
	}
}

func TestEvaluatorWithoutDraws(t *testing.T) {
	truth, flat, test := handCase(t)
	e := NewEvaluator(2, 1, truth, test)
	ms := e.Metrics(flat)
	if len(ms) != 2 || ms[0].Estimator != EstimatorMAP || ms[1].Estimator != EstimatorMAP {
		t.Errorf("without draws: %v, want the two MAP figures", ms)
	}
	if err := e.Draw(0, 0, NewParams(3, 1), DrawStats{}); err == nil {
		t.Error("draw of the wrong size accepted")
	}
}

// TestLogits checks the matrix product of Draw against a dot product per
// pair, across the shapes where gonum's Dgemm changes path: serial or in
// parallel 64 x 64 blocks (the latter summing D in chunks of 64), panels
// cut short at V. Both round a sum of D products, in different orders,
// so each is within gamma(D) times the sum of the products' magnitudes of
// the exact value, and they are within twice that of each other.
func TestLogits(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	for _, v := range []int{1, 5, 63, 64, 65, 130, 200} {
		for _, dim := range []int{1, 2, 3, 17, 64, 65, 130} {
			p := gaussianParams(r, v, dim, 1)
			panel := make([]float64, min(v, logitPanelRows)*v)
			for lo := 0; lo < v; lo += logitPanelRows {
				hi := min(lo+logitPanelRows, v)
				got := logits(panel, p, lo, hi)
				if len(got) != (hi-lo)*v {
					t.Fatalf("V %d D %d rows %d..%d: %d logits, want %d", v, dim, lo, hi, len(got), (hi-lo)*v)
				}
				for i := lo; i < hi; i++ {
					for j := range v {
						var want, mag float64
						for k := range dim {
							x := p.Rho[i*dim+k] * p.Alpha[j*dim+k]
							want += x
							mag += math.Abs(x)
						}
						if x, tol := got[(i-lo)*v+j], 2*gamma(dim)*mag; math.Abs(x-want) > tol {
							t.Fatalf("V %d D %d logit (%d, %d) = %.17g, loop %.17g (tolerance %.3g)", v, dim, i, j, x, want, tol)
						}
					}
				}
			}
		}
	}
}

// A single draw equal to the truth has every true logit as its interval,
// so it covers all of them only if the Evaluator forms the true logits and
// the draw's to the same bits. At V = 100, D = 70 one 100 x 100 product
// would sum D in two chunks and a 64-row panel in one.
func TestEvaluatorDrawEqualToTruth(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	for _, c := range []struct{ v, dim int }{{100, 70}, {200, 70}, {70, 3}} {
		truth := gaussianParams(r, c.v, c.dim, 1)
		e := NewEvaluator(c.v, c.dim, truth, nil)
		if err := e.Draw(0, 0, truth.Clone(), DrawStats{}); err != nil {
			t.Fatal(err)
		}
		if got := metricValue(t, e.Metrics(nil), MetricCoverage90, EstimatorInterval).Value; got != 1 {
			t.Errorf("V %d D %d: coverage %v, want 1", c.v, c.dim, got)
		}
	}
}
