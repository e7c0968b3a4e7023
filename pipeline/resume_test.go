package pipeline

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/pwe-project/pwe/stages"
)

// TestRunResumesInterruptedFit interrupts the fit stage of pwe run after
// some sweeps and runs the same configuration again: the fit continues from
// the checkpoint it left in the staging directory, and its draws and
// summary are the bytes of an uninterrupted run.
func TestRunResumesInterruptedFit(t *testing.T) {
	t.Setenv("SOURCE_DATE_EPOCH", "1700000000")
	const chains, warmup, draws = 2, 20, 20
	// Both runs use the same directory: the outputs record their inputs'
	// paths.
	dir := t.TempDir()
	cfg := loadConfig(t, dir, config)
	cfg.Fit.CheckpointEvery = 1
	if _, err := Run(context.Background(), cfg, Options{}); err != nil {
		t.Fatal(err)
	}
	want := map[string][]byte{}
	for _, name := range []string{stages.DrawsFile, stages.SummaryFile, stages.MapFile} {
		b, err := os.ReadFile(filepath.Join(cfg.Output, FitDir, name))
		if err != nil {
			t.Fatal(err)
		}
		want[name] = b
	}
	if err := os.RemoveAll(cfg.Output); err != nil {
		t.Fatal(err)
	}

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var sweeps atomic.Int64
	const stopAfter = 15
	cfg.Fit.OnSweep = func(int, int) {
		if sweeps.Add(1) == stopAfter {
			cancel()
		}
	}
	rep, err := Run(ctx, cfg, Options{})
	var interrupted *stages.InterruptedError
	if !errors.As(err, &interrupted) || !errors.Is(err, context.Canceled) {
		t.Fatalf("interrupted run: %v, want a *stages.InterruptedError", err)
	}
	if !slices.Equal(rep.Ran, []string{"tokenize", "count"}) {
		t.Fatalf("interrupted run ran %v to completion, want tokenize and count", rep.Ran)
	}
	staged := filepath.Join(cfg.Output, StagingDir, "fit", stages.CheckpointDir)
	if interrupted.Checkpoint != staged || !stages.HasCheckpoint(filepath.Dir(staged)) {
		t.Fatalf("checkpoint in %q (exists: %v), want %q", interrupted.Checkpoint, stages.HasCheckpoint(filepath.Dir(staged)), staged)
	}
	// pwe run resumes without fit's --resume, and the message says so.
	if want := "interrupted; the chains' state is saved in " + staged + ": run the same pwe run again to continue (--force starts over)"; interrupted.Error() != want {
		t.Errorf("interrupted run's message %q, want %q", interrupted.Error(), want)
	}
	for _, name := range []string{stages.MapFile, stages.DrawsFile, stages.SummaryFile} {
		if _, err := os.Stat(filepath.Join(cfg.Output, FitDir, name)); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("the interrupted fit published %s (%v)", name, err)
		}
	}
	interruptedSweeps := sweeps.Load()

	sweeps.Store(0)
	cfg.Fit.OnSweep = func(int, int) { sweeps.Add(1) }
	var log bytes.Buffer
	rep, err = Run(context.Background(), cfg, Options{Reporter: NewReporter(&log, ReporterConfig{Progress: ProgressNever})})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(rep.Ran, []string{"fit"}) || !slices.Equal(rep.Skipped, []string{"tokenize", "count"}) {
		t.Fatalf("second run ran %v, skipped %v; want only the fit run", rep.Ran, rep.Skipped)
	}
	if !strings.Contains(log.String(), "fit: resuming the interrupted fit") {
		t.Errorf("the log does not say the fit resumed:\n%s", log.String())
	}
	// Every chain saved its last completed sweep, so the resumed run does
	// only the rest (chains may have raced a little past the cancel).
	total := int64(chains * (warmup + draws))
	if got := sweeps.Load(); got+interruptedSweeps < total || got > total-stopAfter {
		t.Errorf("resumed fit ran %d sweeps after %d; want the %d left of %d", got, interruptedSweeps, total-interruptedSweeps, total)
	}
	if _, err := os.Stat(filepath.Join(cfg.Output, StagingDir)); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the staging directory outlived the finished run (%v)", err)
	}
	for name, b := range want {
		got, err := os.ReadFile(filepath.Join(cfg.Output, FitDir, name))
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, b) {
			t.Errorf("%s of the resumed run differs from the uninterrupted run's", name)
		}
	}
	assertManifestMatchesFiles(t, cfg.Output)
}
