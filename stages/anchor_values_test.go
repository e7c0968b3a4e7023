package stages

import (
	"bytes"
	"context"
	"path/filepath"
	"testing"
)

// TestFitResumeAnchorValues interrupts fits anchored at a draw and at the
// MAP and resumes them with another thread count: the outputs, the
// statistics in their metadata included, are those of the uninterrupted
// fit, so the resumed fit anchors where the interrupted one did.
func TestFitResumeAnchorValues(t *testing.T) {
	t.Setenv("SOURCE_DATE_EPOCH", "0")
	dir := t.TempDir()
	vocab, counts := countFixture(t, dir, 60)
	for _, values := range []string{"draw", "map"} {
		ref := smallFit(vocab, counts, filepath.Join(dir, values, "ref"))
		ref.Draws, ref.Threads, ref.AnchorValues, ref.AnchorSweeps = 20, 1, values, 13
		st, err := Fit(context.Background(), ref)
		if err != nil {
			t.Fatal(err)
		}
		if st.AnchorValues != values || (values == "draw") != (st.AnchorSweeps == 13) {
			t.Fatalf("%s: anchored at %q after %d sweeps", values, st.AnchorValues, st.AnchorSweeps)
		}
		cfg := ref
		cfg.Output, cfg.CheckpointEvery = filepath.Join(dir, values, "fit"), 7
		interruptedFit(t, cfg, 35)
		cfg.Resume, cfg.Threads = true, 2
		if _, err := Fit(context.Background(), cfg); err != nil {
			t.Fatal(err)
		}
		for _, name := range []string{DrawsFile, SummaryFile, MapFile} {
			if !bytes.Equal(readFile(t, filepath.Join(ref.Output, name)), readFile(t, filepath.Join(cfg.Output, name))) {
				t.Errorf("%s: %s of the resumed fit differs from the uninterrupted one", values, name)
			}
		}
	}
	a, b := filepath.Join(dir, "draw", "ref", DrawsFile), filepath.Join(dir, "map", "ref", DrawsFile)
	if bytes.Equal(readFile(t, a), readFile(t, b)) {
		t.Error("anchor values draw and map gave the same draws")
	}
}
