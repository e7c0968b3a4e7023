package stages

import (
	"context"
	"errors"
	"math"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/pwe-project/pwe/formats"
	"github.com/pwe-project/pwe/posterior"
)

func simulateFixture(t *testing.T, dir string, cfg SimulateConfig) SimulateConfig {
	t.Helper()
	cfg.Output = dir
	if _, err := Simulate(context.Background(), cfg); err != nil {
		t.Fatal(err)
	}
	return cfg
}

// The stage writes what posterior.Simulate draws: the same counts, the
// truth rounded to float32, and a vocabulary counting each token's
// observations.
func TestSimulateStage(t *testing.T) {
	dir := t.TempDir()
	cfg := simulateFixture(t, dir, SimulateConfig{VocabSize: 15, Dim: 3, Observations: 4000, Pairs: "zipf", SNR: 1.5, Seed: 4})
	truth, want, err := posterior.Simulate(posterior.SimConfig{V: 15, D: 3, N: 4000, Pairs: posterior.PairsZipf, SNR: 1.5, Seed: 4})
	if err != nil {
		t.Fatal(err)
	}
	rows, _, err := formats.ReadAll[formats.CountRow](filepath.Join(dir, CountsFile), formats.SchemaCounts)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(rows, want) {
		t.Errorf("counts.parquet differs from posterior.Simulate's rows")
	}
	vocab, _, err := formats.ReadVocab(filepath.Join(dir, VocabFile))
	if err != nil {
		t.Fatal(err)
	}
	occurs := make([]int64, cfg.VocabSize)
	for _, r := range rows {
		occurs[r.TargetID] += int64(r.NPos + r.NNeg)
		occurs[r.ContextID] += int64(r.NPos + r.NNeg)
	}
	var total int64
	for i, r := range vocab {
		if want := syntheticTokens(15)[i]; r.Token != want || r.Count != occurs[i] {
			t.Errorf("vocab row %d: %q count %d, want %q count %d", i, r.Token, r.Count, want, occurs[i])
		}
		total += r.Count
	}
	if vocab[3].Token != "w0003" || total != 2*4000 {
		t.Errorf("token 3 is %q, counts add to %d (want w0003, 8000)", vocab[3].Token, total)
	}
	got, tokens, _, err := readVectors(filepath.Join(dir, TruthFile))
	if err != nil {
		t.Fatal(err)
	}
	for k := range truth.Rho {
		if got.Rho[k] != float64(float32(truth.Rho[k])) || got.Alpha[k] != float64(float32(truth.Alpha[k])) {
			t.Fatalf("truth coordinate %d: %v, %v, want %v, %v", k, got.Rho[k], got.Alpha[k], truth.Rho[k], truth.Alpha[k])
		}
	}
	if tokens[14] != "w0014" {
		t.Errorf("truth token 14 is %q", tokens[14])
	}
	vr, _, err := formats.ReadAll[formats.VectorRow](filepath.Join(dir, TruthFile), formats.SchemaMap)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range vr {
		if r.Anchor {
			t.Fatalf("truth marks %s %d as an anchor", r.Param, r.TokenID)
		}
	}
}

func TestSyntheticTokensSort(t *testing.T) {
	for _, c := range []struct {
		v           int
		first, last string
	}{{2, "w0000", "w0001"}, {10_000, "w0000", "w9999"}, {123_457, "w000000", "w123456"}} {
		tok := syntheticTokens(c.v)
		if !slices.IsSorted(tok) || tok[0] != c.first || tok[c.v-1] != c.last {
			t.Errorf("V=%d: tokens %q ... %q, want %q ... %q in id order", c.v, tok[0], tok[c.v-1], c.first, c.last)
		}
	}
}

func TestSimulateConfigValidate(t *testing.T) {
	for _, cfg := range []SimulateConfig{
		{VocabSize: 10, Dim: 2, Observations: 10},
		{VocabSize: 10, Dim: 2, Observations: 10, Output: "x", Pairs: "zipfian"},
		{VocabSize: 1, Dim: 2, Observations: 10, Output: "x"},
		{VocabSize: 10, Dim: 2, Observations: 0, Output: "x"},
	} {
		if err := cfg.Validate(); err == nil {
			t.Errorf("%+v accepted", cfg)
		}
	}
}

// TestSimulateInterrupted: a simulation of 2^31-1 observations (the most
// a 32-bit int holds), which would take minutes, stops soon after its
// context is cancelled, and writes nothing.
func TestSimulateInterrupted(t *testing.T) {
	out := filepath.Join(t.TempDir(), "sim")
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(50*time.Millisecond, cancel)
	began := time.Now()
	_, err := Simulate(ctx, SimulateConfig{VocabSize: 20, Dim: 2, Observations: math.MaxInt32, Seed: 1, Output: out})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("error %v, want context.Canceled", err)
	}
	if took := time.Since(began); took > 20*time.Second {
		t.Errorf("stopped %v after the cancel", took)
	}
	if names, _ := filepath.Glob(filepath.Join(out, "*.parquet")); len(names) > 0 {
		t.Errorf("wrote %v", names)
	}
}
