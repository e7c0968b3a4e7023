package pipeline

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/pwe-project/pwe/formats/input"
	"github.com/pwe-project/pwe/stages"
)

// TestRunWarnsOfInvalidText runs tokenize and count on a corpus with a
// byte of invalid UTF-8: tokenize warns of it, naming its line, before its
// summary, as pwe tokenize does, and count, which reads the token stream,
// does not repeat the warning.
func TestRunWarnsOfInvalidText(t *testing.T) {
	dir := t.TempDir()
	corpus := filepath.Join(dir, "corpus.txt")
	if err := os.WriteFile(corpus, []byte("the cat sat on the mat\nthe dog ate the caf\xff\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	cfg := Config{Output: filepath.Join(dir, "out"), Seed: 1, SkipFit: true, Input: &stages.TextInput{Paths: []string{corpus}}}
	var log bytes.Buffer
	if _, err := Run(context.Background(), cfg, Options{Reporter: NewReporter(&log, ReporterConfig{Progress: ProgressNever})}); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(log.String(), "\n")
	for _, stage := range []string{"tokenize", "count"} {
		warning := stage + ": warning: replaced 1 bytes of invalid UTF-8, the first in " + corpus + ":2"
		at := slices.Index(lines, warning)
		summary := slices.IndexFunc(lines, func(l string) bool {
			return strings.HasPrefix(l, stage+": ") && strings.Contains(l, "; done in ")
		})
		switch {
		case summary < 0:
			t.Errorf("%s: no summary in\n%s", stage, log.String())
		case stage == "count" && at >= 0:
			t.Errorf("count repeats tokenize's %q in\n%s", warning, log.String())
		case stage == "tokenize" && (at < 0 || summary < at):
			t.Errorf("tokenize: no %q before the summary in\n%s", warning, log.String())
		}
	}
}

// TestRunCorpusHoldsOutput runs tokenize and count on a corpus directory
// that holds the run's output directory: the second run must not read the
// first run's outputs as text (it failed on counts.parquet, a Parquet file
// where text was expected) but find every stage up to date; naming the
// output directory itself as the corpus is an error.
func TestRunCorpusHoldsOutput(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "corpus.txt"), []byte("the cat sat on the mat\nthe dog ate the cat\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "out")
	cfg := Config{Output: out, Seed: 1, SkipFit: true, Input: &stages.TextInput{Paths: []string{dir}}}
	ctx := context.Background()
	if _, err := Run(ctx, cfg, Options{}); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(out, CountsFile)); err != nil {
		t.Fatal(err)
	}
	rep, err := Run(ctx, cfg, Options{})
	if err != nil || len(rep.Ran) != 0 {
		t.Fatalf("second run: ran %v, %v; want nothing to do", rep.Ran, err)
	}
	// The same directory by another name (a relative path through "..").
	cfg.Input.Paths = []string{filepath.Join(out, "..")}
	if _, err := Run(ctx, cfg, Options{}); err != nil {
		t.Fatalf("through ..: %v", err)
	}
	cfg.Input.Paths = []string{out}
	if _, err := Run(ctx, cfg, Options{}); !errors.Is(err, input.ErrSkippedDir) || !strings.Contains(err.Error(), out) {
		t.Errorf("output directory as the corpus: %v", err)
	}
}
