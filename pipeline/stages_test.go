package pipeline

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/pwe-project/pwe/stages"
)

// TestRunWarnsOfInvalidText runs tokenize and count on a corpus with a
// byte of invalid UTF-8: tokenize warns of it before its summary, as pwe
// tokenize does, and count, which reads the token stream, does not repeat
// the warning.
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
		warning := stage + ": warning: replaced 1 bytes of invalid UTF-8"
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
