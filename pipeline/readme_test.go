package pipeline

import (
	"os"
	"path/filepath"
	"regexp"
	"testing"
)

// TestREADMEConfigLoads keeps README's annotated configuration file true:
// it must load with unknown keys refused, and every key must land in the
// setting it claims to set.
func TestREADMEConfigLoads(t *testing.T) {
	readme, err := os.ReadFile("../README.md")
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile("(?s)<!-- config-test -->\\s*```yaml\\n(.*?)```\\s*<!-- /config-test -->").FindSubmatch(readme)
	if m == nil {
		t.Fatal("README.md lacks the configuration example between config-test markers")
	}
	path := filepath.Join(t.TempDir(), "run.yaml")
	if err := os.WriteFile(path, m[1], 0o644); err != nil {
		t.Fatal(err)
	}
	cfg, err := Load(path)
	if err != nil {
		t.Fatalf("README's configuration does not load: %v", err)
	}
	checks := []struct {
		name      string
		got, want any
	}{
		{"seed", cfg.Seed, uint64(1)},
		{"memory", cfg.Memory, Bytes(1 << 30)},
		{"input.doc_sep", cfg.Input.DocSep, "blank"},
		{"input.paths", len(cfg.Input.Paths), 2},
		{"tokenize.max_vocab", cfg.Tokenize.MaxVocab, 50000},
		{"tokenize.min_count", cfg.Tokenize.MinCount, int64(5)},
		{"tokenize.tokenizer.stopwords_file (relative to the file)", cfg.Tokenize.Tokenizer.StopwordsFile, filepath.Join(filepath.Dir(path), "stop.txt")},
		{"count.window", cfg.Count.Window, 5},
		{"count.weighting", cfg.Count.Weighting, "uniform"},
		{"count.neg_power", *cfg.Count.NegPower, 0.75},
		{"fit.dim", cfg.Fit.Dim, 20},
		{"fit.anchors", cfg.Fit.Anchors, "volume"},
		{"fit.group_moves", *cfg.Fit.GroupMoves, 20},
		{"fit.map_starts", cfg.Fit.MAPStarts, 4},
		{"fit.draws", cfg.Fit.Draws, 3000},
		{"summarize.top", cfg.Summarize.Top, 10},
		{"summarize.neighbours", len(cfg.Summarize.Neighbours), 2},
		{"report", cfg.Report != "", true},
	}
	for _, c := range checks {
		if c.got != c.want {
			t.Errorf("README's %s loads as %v, want %v", c.name, c.got, c.want)
		}
	}
}
