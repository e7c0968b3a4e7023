package stages

import (
	"bytes"
	"context"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/pwe-project/pwe/formats"
	"github.com/pwe-project/pwe/posterior"
)

// evalFixture simulates a small data set, splits it and fits the training
// part, returning the simulation's directory and the fit's.
func evalFixture(t *testing.T, layout string) (sim, fit string) {
	t.Helper()
	dir := t.TempDir()
	sim = filepath.Join(dir, "sim")
	simulateFixture(t, sim, SimulateConfig{VocabSize: 12, Dim: 2, Observations: 3000, Seed: 2})
	ctx := context.Background()
	if _, err := Split(ctx, SplitConfig{Counts: filepath.Join(sim, CountsFile), TestFraction: 0.25, Seed: 1, Output: sim}); err != nil {
		t.Fatal(err)
	}
	fit = filepath.Join(dir, "fit")
	w := 20
	_, err := Fit(ctx, FitConfig{Counts: filepath.Join(sim, TrainFile), Vocab: filepath.Join(sim, VocabFile), Output: fit,
		Dim: 2, Chains: 2, Warmup: &w, Draws: 30, Seed: 3, Threads: 1, DrawsLayout: layout, Memory: 1 << 20})
	if err != nil {
		t.Fatal(err)
	}
	return sim, fit
}

// The stage's figures are the Evaluator's on the files: the MAP's are
// recomputed from map.parquet with ProbRMSE and HeldOutLogLik, the mean
// probabilities' RMSE from the rows of draws.parquet; the long layout
// gives the same figures, and evaluation.parquet holds them.
func TestEvaluateStage(t *testing.T) {
	sim, fit := evalFixture(t, "vector")
	ctx := context.Background()
	cfg := EvaluateConfig{Fit: fit, Truth: filepath.Join(sim, TruthFile), HeldOut: filepath.Join(sim, TestFile)}
	ms, err := Evaluate(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	if len(ms) != 7 {
		t.Fatalf("%d metrics, want 7: %v", len(ms), ms)
	}
	truth, _, _, err := readVectors(cfg.Truth)
	if err != nil {
		t.Fatal(err)
	}
	m, _, _, err := readVectors(filepath.Join(fit, MapFile))
	if err != nil {
		t.Fatal(err)
	}
	test, err := loadCounts(cfg.HeldOut, 12)
	if err != nil {
		t.Fatal(err)
	}
	draws, _, err := formats.ReadAll[formats.DrawRow](filepath.Join(fit, DrawsFile), formats.SchemaDraws)
	if err != nil {
		t.Fatal(err)
	}
	// Mean probabilities, naively: rows of one draw are rho 0..11 then
	// alpha 0..11.
	const v = 12
	mean := make([]float64, v*v)
	s := len(draws) / (2 * v)
	for k := 0; k < len(draws); k += 2 * v {
		for i := range v {
			for j := range v {
				a, b := draws[k+i].Vector, draws[k+v+j].Vector
				mean[i*v+j] += 1 / (1 + math.Exp(-float64(a[0])*float64(b[0])-float64(a[1])*float64(b[1]))) / float64(s)
			}
		}
	}
	var ss float64
	for q, p := range mean {
		d := p - 1/(1+math.Exp(-truth.Logit(q/v, q%v)))
		ss += d * d
	}
	want := map[[2]string]float64{
		{posterior.MetricRMSE, posterior.EstimatorMAP}:      posterior.ProbRMSE(truth, m),
		{posterior.MetricHeldOut, posterior.EstimatorMAP}:   posterior.HeldOutLogLik(test, m),
		{posterior.MetricRMSE, posterior.EstimatorMeanProb}: math.Sqrt(ss / (v * v)),
	}
	for _, x := range ms {
		if w, ok := want[[2]string{x.Name, x.Estimator}]; ok && math.Abs(x.Value-w) > 1e-9 {
			t.Errorf("%s/%s = %v, want %v", x.Name, x.Estimator, x.Value, w)
		}
		if x.Estimator != posterior.EstimatorMAP && x.Draws != s {
			t.Errorf("%s/%s from %d draws, want %d", x.Name, x.Estimator, x.Draws, s)
		}
	}
	rows, meta, err := formats.ReadAll[formats.EvaluationRow](filepath.Join(fit, EvaluationFile), formats.SchemaEvaluation)
	if err != nil {
		t.Fatal(err)
	}
	for k, r := range rows {
		if x := ms[k]; r.Metric != x.Name || r.Estimator != x.Estimator || r.Value != x.Value || r.N != x.N || r.Draws != int64(x.Draws) {
			t.Errorf("evaluation.parquet row %d: %+v, want %+v", k, r, x)
		}
	}
	if len(rows) != len(ms) || meta.Inputs == nil {
		t.Errorf("evaluation.parquet: %d rows, inputs %v", len(rows), meta.Inputs)
	}

	_, fitLong := evalFixture(t, "long")
	cfg.Fit, cfg.Output = fitLong, ""
	msLong, err := Evaluate(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(ms, msLong) {
		t.Errorf("long layout:\n%v\nvector layout:\n%v", msLong, ms)
	}
}

func TestEvaluateRejects(t *testing.T) {
	sim, fit := evalFixture(t, "vector")
	ctx := context.Background()
	if _, err := Evaluate(ctx, EvaluateConfig{Fit: fit}); err == nil {
		t.Error("evaluation against nothing accepted")
	}
	truth := filepath.Join(sim, TruthFile)
	_, err := Evaluate(ctx, EvaluateConfig{Fit: fit, Truth: truth, Output: truth})
	if err == nil || !strings.Contains(err.Error(), "is the input "+truth) {
		t.Errorf("output over the truth: %v", err)
	}
	other := filepath.Join(t.TempDir(), "other")
	simulateFixture(t, other, SimulateConfig{VocabSize: 13, Dim: 2, Observations: 10, Seed: 2})
	_, err = Evaluate(ctx, EvaluateConfig{Fit: fit, Truth: filepath.Join(other, TruthFile)})
	if err == nil || !strings.Contains(err.Error(), "V=13") {
		t.Errorf("truth of another size: %v", err)
	}

	// Nor over the draws it reads, nor to standard output: the table goes
	// there.
	drawsBefore, _ := os.ReadFile(filepath.Join(fit, DrawsFile))
	_, err = Evaluate(ctx, EvaluateConfig{Fit: fit, Truth: truth, Output: filepath.Join(fit, DrawsFile)})
	if drawsAfter, _ := os.ReadFile(filepath.Join(fit, DrawsFile)); err == nil || !bytes.Equal(drawsBefore, drawsAfter) {
		t.Errorf("output over the draws: %v", err)
	}
	if err := (EvaluateConfig{Fit: fit, Truth: truth, Output: StdioPath}).Validate(); err == nil {
		t.Error("-o - accepted")
	}

	// A truth with a coordinate that is not a number.
	p, tokens, anchors, err := readVectors(truth)
	if err != nil {
		t.Fatal(err)
	}
	p.Context(4)[1] = math.NaN()
	bad := filepath.Join(t.TempDir(), "truth.parquet")
	if err := writeVectors(bad, formats.Meta{Schema: formats.SchemaMap}, p, tokens, anchors); err != nil {
		t.Fatal(err)
	}
	_, err = Evaluate(ctx, EvaluateConfig{Fit: fit, Truth: bad})
	if err == nil || !strings.Contains(err.Error(), bad+": row ") || !strings.Contains(err.Error(), "NaN") {
		t.Errorf("a NaN in the truth: %v", err)
	}

	// Draws of some tokens only cannot give the V x V figures.
	list := filepath.Join(t.TempDir(), "keep.txt")
	if err := os.WriteFile(list, []byte("w0001\nw0003\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	part := filepath.Join(t.TempDir(), "part")
	w := 5
	if _, err := Fit(ctx, FitConfig{Counts: filepath.Join(sim, TrainFile), Vocab: filepath.Join(sim, VocabFile), Output: part,
		Dim: 2, Chains: 1, Warmup: &w, Draws: 5, Threads: 1, SaveDraws: list, Memory: 1 << 20}); err != nil {
		t.Fatal(err)
	}
	_, err = Evaluate(ctx, EvaluateConfig{Fit: part, Truth: filepath.Join(sim, TruthFile)})
	if err == nil || !strings.Contains(err.Error(), "--save-draws all") {
		t.Errorf("draws of 2 tokens: %v", err)
	}

	// Without draws.parquet only the MAP is measured.
	if err := os.Remove(filepath.Join(fit, DrawsFile)); err != nil {
		t.Fatal(err)
	}
	ms, err := Evaluate(ctx, EvaluateConfig{Fit: fit, Truth: filepath.Join(sim, TruthFile)})
	if err != nil || len(ms) != 1 || ms[0].Estimator != posterior.EstimatorMAP {
		t.Errorf("MAP only: %v, %v", ms, err)
	}
}
