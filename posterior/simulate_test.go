package posterior

import (
	"errors"
	"math"
	"slices"
	"testing"

	"gonum.org/v1/gonum/stat/distuv"

	"github.com/pwe-project/pwe/formats"
)

func mustSimulate(t testing.TB, cfg SimConfig) (*Params, []formats.CountRow) {
	t.Helper()
	truth, rows, err := Simulate(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return truth, rows
}

func TestSimulateDeterministicAndWellFormed(t *testing.T) {
	for _, law := range []PairLaw{PairsUniform, PairsZipf} {
		cfg := SimConfig{V: 30, D: 3, N: 20000, Pairs: law, Seed: 7}
		truth, rows := mustSimulate(t, cfg)
		truth2, rows2 := mustSimulate(t, cfg)
		if !slices.Equal(rows, rows2) || !slices.Equal(truth.Rho, truth2.Rho) || !slices.Equal(truth.Alpha, truth2.Alpha) {
			t.Fatalf("%v: two runs with seed 7 differ", law)
		}
		cfg.Seed = 8
		if _, rows3 := mustSimulate(t, cfg); slices.Equal(rows, rows3) {
			t.Errorf("%v: seeds 7 and 8 give the same counts", law)
		}
		var total float64
		for k, r := range rows {
			var prev *formats.CountRow
			if k > 0 {
				prev = &rows[k-1]
			}
			if err := formats.CheckCountRow(r, prev, cfg.V); err != nil {
				t.Fatalf("%v: row %d: %v", law, k, err)
			}
			if r.NPos != math.Trunc(r.NPos) || r.NNeg != math.Trunc(r.NNeg) || r.NPos+r.NNeg == 0 {
				t.Fatalf("%v: row %d: counts %v, %v are not whole numbers with a positive sum", law, k, r.NPos, r.NNeg)
			}
			if law == PairsUniform && r.TargetID == r.ContextID {
				t.Fatalf("uniform law drew the pair (%d, %d) of a token with itself", r.TargetID, r.ContextID)
			}
			total += r.NPos + r.NNeg
		}
		if total != float64(cfg.N) {
			t.Errorf("%v: %v observations, want %d", law, total, cfg.N)
		}
	}
}

// Data sets of one seed share their true vectors whatever the pair law
// and size, so an experiment compares like with like.
func TestSimulateSharesTruth(t *testing.T) {
	a, _ := mustSimulate(t, SimConfig{V: 10, D: 2, N: 5, Seed: 3})
	b, _ := mustSimulate(t, SimConfig{V: 10, D: 2, N: 500, Pairs: PairsZipf, Seed: 3})
	if !slices.Equal(a.Rho, b.Rho) || !slices.Equal(a.Alpha, b.Alpha) {
		t.Error("same seed, different truth")
	}
}

// The true coordinates are Normal(0, SNR^2 / D): their sample variance is
// within 4 standard errors (sqrt(2 / n) relative) of SNR^2 / D and their
// mean within 4 standard errors of 0.
func TestSimulateTruthLaw(t *testing.T) {
	const v, dim, snr = 400, 5, 1.7
	truth, _ := mustSimulate(t, SimConfig{V: v, D: dim, N: 1, SNR: snr, Seed: 11})
	x := slices.Concat(truth.Rho, truth.Alpha)
	n := float64(len(x))
	var sum, ss float64
	for _, y := range x {
		sum += y
		ss += y * y
	}
	want := snr * snr / dim
	if z := sum / n / math.Sqrt(want/n); math.Abs(z) > 4 {
		t.Errorf("coordinate mean %v, z = %.2f", sum/n, z)
	}
	if z := (ss/n/want - 1) / math.Sqrt(2/n); math.Abs(z) > 4 {
		t.Errorf("coordinate variance %v, want %v (z = %.2f)", ss/n, want, z)
	}
}

// The pair laws pass a chi-square goodness-of-fit test at level 1e-4: the
// target and context marginals of the Zipf-Mandelbrot law (computed here
// from its definition) and the uniform law over the V (V - 1) off-diagonal
// cells.
func TestSimulatePairLaws(t *testing.T) {
	const v, n = 8, 200000
	critical := func(df int) float64 { return distuv.ChiSquared{K: float64(df)}.Quantile(1 - 1e-4) }
	chi2 := func(obs, exp []float64) float64 {
		var s float64
		for k := range obs {
			s += (obs[k] - exp[k]) * (obs[k] - exp[k]) / exp[k]
		}
		return s
	}

	_, rows := mustSimulate(t, SimConfig{V: v, D: 2, N: n, Pairs: PairsZipf, ZipfA: 1.3, ZipfB: 0.5, Seed: 5})
	tgt, ctx, exp := make([]float64, v), make([]float64, v), make([]float64, v)
	for _, r := range rows {
		tgt[r.TargetID] += r.NPos + r.NNeg
		ctx[r.ContextID] += r.NPos + r.NNeg
	}
	var z float64
	for k := range v {
		exp[k] = math.Pow(float64(k+1)+0.5, -1.3)
		z += exp[k]
	}
	for k := range exp {
		exp[k] *= n / z
	}
	for name, obs := range map[string][]float64{"target": tgt, "context": ctx} {
		if s := chi2(obs, exp); s > critical(v-1) {
			t.Errorf("zipf %s marginal: chi-square %.1f above %.1f\nobserved %v\nexpected %v", name, s, critical(v-1), obs, exp)
		}
	}

	_, rows = mustSimulate(t, SimConfig{V: v, D: 2, N: n, Seed: 6})
	cells := make([]float64, v*v)
	for _, r := range rows {
		cells[int(r.TargetID)*v+int(r.ContextID)] = r.NPos + r.NNeg
	}
	var obs, uni []float64
	for i := range v {
		for j := range v {
			if i != j {
				obs = append(obs, cells[i*v+j])
				uni = append(uni, float64(n)/float64(v*(v-1)))
			}
		}
	}
	if s := chi2(obs, uni); s > critical(len(obs)-1) {
		t.Errorf("uniform pairs: chi-square %.1f above %.1f", s, critical(len(obs)-1))
	}
}

// The labels are Bernoulli(sigmoid(rho_i . alpha_j)): the positives' total
// deviation from its mean, over its binomial standard deviation, is a
// z-score.
func TestSimulateLabels(t *testing.T) {
	for _, snr := range []float64{0.5, 2} {
		truth, rows := mustSimulate(t, SimConfig{V: 20, D: 4, N: 100000, SNR: snr, Seed: 9})
		var dev, variance float64
		for _, r := range rows {
			p := 1 / (1 + math.Exp(-truth.Logit(int(r.TargetID), int(r.ContextID))))
			n := r.NPos + r.NNeg
			dev += r.NPos - n*p
			variance += n * p * (1 - p)
		}
		if z := dev / math.Sqrt(variance); math.Abs(z) > 4 {
			t.Errorf("snr %v: positives deviate from their expectation by z = %.2f", snr, z)
		}
	}
}

// The map used for large vocabularies aggregates as the dense arrays do.
func TestPairAggregatorSparseMatchesDense(t *testing.T) {
	const v = 13
	dense := newPairAggregator(v, 0)
	sparse := &pairAggregator{v: v, sparse: map[uint64]*[2]float64{}}
	for k := range 500 {
		i, j, pos := (k*7)%v, (k*k+3)%v, k%3 == 0
		dense.add(i, j, pos)
		sparse.add(i, j, pos)
	}
	if d, s := dense.rows(), sparse.rows(); !slices.Equal(d, s) || len(d) == 0 {
		t.Errorf("dense rows %v\nsparse rows %v", d, s)
	}
}

func TestSimulateCountsChecksTruth(t *testing.T) {
	truth := NewParams(5, 2)
	if _, err := SimulateCounts(truth, SimConfig{V: 5, D: 3, N: 10}); err == nil {
		t.Error("truth with D = 2 accepted for a D = 3 config")
	}
}

func TestSimConfigValidate(t *testing.T) {
	for _, cfg := range []SimConfig{
		{V: 1, D: 2, N: 10},
		{V: 5, D: 0, N: 10},
		{V: 5, D: 2, N: 0},
		{V: 5, D: 2, N: 10, Pairs: 7},
		{V: 5, D: 2, N: 10, ZipfA: -1},
		{V: 5, D: 2, N: 10, ZipfA: 1, ZipfB: -1},
		{V: 5, D: 2, N: 10, SNR: math.Inf(1)},
		{V: 5, D: 2, N: 10, SNR: -1},
	} {
		if _, _, err := Simulate(cfg); err == nil {
			t.Errorf("%+v accepted", cfg)
		}
	}
	if _, err := ParsePairLaw("zipfian"); err == nil {
		t.Error(`pair law "zipfian" accepted`)
	}
	for _, l := range []PairLaw{PairsUniform, PairsZipf} {
		if got, err := ParsePairLaw(l.String()); err != nil || got != l {
			t.Errorf("ParsePairLaw(%q) = %v, %v", l, got, err)
		}
	}
}

func TestNewDataRejectsUnsorted(t *testing.T) {
	_, err := NewData(3, []formats.CountRow{{TargetID: 1, ContextID: 0, NPos: 1}, {TargetID: 0, ContextID: 2, NPos: 1}})
	if err == nil || errors.Is(err, ErrNoPairs) {
		t.Errorf("unsorted rows: %v", err)
	}
}

func BenchmarkSimulate(b *testing.B) {
	for _, law := range []PairLaw{PairsUniform, PairsZipf} {
		b.Run(law.String(), func(b *testing.B) {
			cfg := SimConfig{V: 100, D: 10, N: 1_000_000, Pairs: law, Seed: 1}
			for b.Loop() {
				if _, _, err := Simulate(cfg); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(cfg.N)*float64(b.N)/b.Elapsed().Seconds(), "obs/s")
		})
	}
}
