package stages

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"math"
	"path/filepath"
	"testing"

	"github.com/pwe-project/pwe/formats"
	"github.com/pwe-project/pwe/posterior"
)

// TestFitLaplace runs method laplace in both modes through the unchanged
// outputs: draws.parquet with the anchors' context vectors at their MAP
// values, sample_stats with finite log densities and NaN group_accept,
// summaries of independent draws (R-hat near 1), and the approximation
// recorded in pwe.stats.
func TestFitLaplace(t *testing.T) {
	dir := t.TempDir()
	const v = 60
	vocab, counts := countFixture(t, dir, v)
	for _, mode := range []string{"dense", "per-token"} {
		cfg := smallFit(vocab, counts, filepath.Join(dir, mode))
		cfg.Method, cfg.Laplace = "laplace", mode
		st, err := Fit(context.Background(), cfg)
		if err != nil {
			t.Fatal(err)
		}
		dim, chains, n := cfg.Dim, cfg.Chains, cfg.Draws
		if st.Laplace == nil || st.Laplace.Mode != mode || st.Laplace.Free != (2*v-dim)*dim || st.Draws != n {
			t.Fatalf("%s: stats %+v, laplace %+v", mode, st, st.Laplace)
		}
		mp, _, err := formats.ReadAll[formats.VectorRow](filepath.Join(cfg.Output, MapFile), formats.SchemaMap)
		if err != nil {
			t.Fatal(err)
		}
		anchorAlpha := map[int32][]float32{}
		for _, r := range mp {
			if r.Anchor {
				anchorAlpha[r.TokenID] = r.Vector
			}
		}
		draws, _, err := formats.ReadAll[formats.DrawRow](filepath.Join(cfg.Output, DrawsFile), formats.SchemaDraws)
		if err != nil {
			t.Fatal(err)
		}
		if len(draws) != chains*n*2*v {
			t.Fatalf("%s: draws.parquet has %d rows, want %d", mode, len(draws), chains*n*2*v)
		}
		// rho_0 in draws 0 and 1 of each chain: independent draws differ.
		first := map[int16][2][]float32{}
		for _, r := range draws {
			if a, ok := anchorAlpha[r.TokenID]; ok && r.Param == formats.ParamAlpha {
				if !equalFloat32(a, r.Vector) {
					t.Fatalf("%s: anchor %d's context vector changed in chain %d draw %d", mode, r.TokenID, r.Chain, r.Draw)
				}
			} else if r.Draw < 2 && r.Param == formats.ParamRho && r.TokenID == 0 {
				f := first[r.Chain]
				f[r.Draw] = r.Vector
				first[r.Chain] = f
			}
		}
		if len(first) != chains {
			t.Fatalf("%s: rho_0 found in %d chains, want %d", mode, len(first), chains)
		}
		for c, f := range first {
			if f[0] == nil || f[1] == nil || equalFloat32(f[0], f[1]) {
				t.Fatalf("%s: chain %d: rho_0 in draws 0 and 1 is %v and %v, want two different draws", mode, c, f[0], f[1])
			}
		}
		ss, _, err := formats.ReadAll[formats.SampleStatsRow](filepath.Join(cfg.Output, SampleStatsFile), formats.SchemaSampleStats)
		if err != nil {
			t.Fatal(err)
		}
		if len(ss) != chains*n {
			t.Fatalf("%s: sample_stats has %d rows, want %d", mode, len(ss), chains*n)
		}
		for _, r := range ss {
			if !(r.LogLik < 0) || !(r.LogPosterior < r.LogLik) || !math.IsNaN(r.GroupAccept) || !(r.Seconds >= 0) {
				t.Fatalf("%s: sample_stats row %+v", mode, r)
			}
		}
		// Independent draws: split R-hat of n draws per chain is 1 within
		// a few 1/sqrt(n); 1.1 is far outside that yet catches chains
		// centred apart.
		if st.MaxRhat > 1.1 || st.MaxRhat < 0.9 {
			t.Errorf("%s: max R-hat %.3f of independent draws", mode, st.MaxRhat)
		}
		sum, meta, err := formats.ReadAll[formats.SummaryRow](filepath.Join(cfg.Output, SummaryFile), formats.SchemaSummary)
		if err != nil {
			t.Fatal(err)
		}
		if len(sum) != (2*v-dim)*dim {
			t.Fatalf("%s: summary has %d rows, want %d", mode, len(sum), (2*v-dim)*dim)
		}
		var recorded struct {
			Laplace *LaplaceStats `json:"laplace"`
		}
		raw, _ := meta.Stats.(json.RawMessage)
		if err := json.NewDecoder(bytes.NewReader(raw)).Decode(&recorded); err != nil || recorded.Laplace == nil || recorded.Laplace.Mode != mode {
			t.Fatalf("%s: pwe.stats %s does not record the approximation (%v)", mode, raw, err)
		}
		assertNoSpill(t, cfg.Output)
	}
}

func TestFitLaplaceValidates(t *testing.T) {
	cfg := FitConfig{Counts: "c", Vocab: "v", Output: "o", Method: "laplace", Laplace: "sparse"}
	if err := cfg.Validate(); err == nil {
		t.Fatal("laplace mode sparse accepted")
	}
	cfg.Laplace = "per-token"
	if err := cfg.Validate(); err != nil {
		t.Fatal(err)
	}
	cfg.Method = "laplce"
	if err := cfg.Validate(); err == nil {
		t.Fatal("method laplce accepted")
	}
}

func TestFitLaplaceRefusesLargeDense(t *testing.T) {
	dir := t.TempDir()
	vocab, counts := countFixture(t, dir, 300)
	cfg := smallFit(vocab, counts, filepath.Join(dir, "fit"))
	cfg.Method, cfg.Laplace, cfg.Dim = "laplace", "dense", 20 // (600 - 20) 20 = 11600 free coordinates
	_, err := Fit(context.Background(), cfg)
	if !errors.Is(err, posterior.ErrLaplaceTooLarge) {
		t.Fatalf("error %v, want ErrLaplaceTooLarge", err)
	}
	assertNoSpill(t, cfg.Output)
}
