package main

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/pwe-project/pwe/internal/runlock"
)

// TestSimulateSplitFitEvaluate runs the evaluation workflow of the README
// through the command line and checks the printed table.
func TestSimulateSplitFitEvaluate(t *testing.T) {
	dir := t.TempDir()
	sim, fit := filepath.Join(dir, "sim"), filepath.Join(dir, "fit")
	steps := [][]string{
		{"simulate", "--vocab-size", "10", "--dim", "2", "--observations", "2e3", "--zipf", "--seed", "3", "-o", sim},
		{"split", filepath.Join(sim, "counts.parquet"), "--test-fraction", "0.2", "-o", sim},
		{"fit", "--counts", filepath.Join(sim, "train.parquet"), "--vocab", filepath.Join(sim, "vocab.parquet"), "--dim", "2",
			"--chains", "2", "--warmup", "20", "--draws", "20", "--threads", "1", "-o", fit},
		{"evaluate", fit, "--truth", filepath.Join(sim, "truth.parquet"), "--heldout", filepath.Join(sim, "test.parquet")},
	}
	var stdout string
	for _, args := range steps {
		var stderr string
		var code int
		stdout, stderr, code = runPwe(args...)
		if code != exitOK {
			t.Fatalf("pwe %v: exit %d\n%s", args, code, stderr)
		}
	}
	lines := strings.Split(strings.TrimSpace(stdout), "\n")
	if len(lines) != 8 || !strings.HasPrefix(lines[0], "metric") {
		t.Fatalf("evaluate printed %d lines, want a header and 7 figures:\n%s", len(lines), stdout)
	}
	for _, want := range []string{"rmse_prob  map", "coverage_90  interval_90", "heldout_loglik  posterior_mean ", " 40 "} {
		if !strings.Contains(strings.Join(strings.Fields(stdout), "  "), strings.TrimSpace(want)) {
			t.Errorf("evaluate output lacks %q:\n%s", want, stdout)
		}
	}
	for _, c := range []struct {
		args []string
		msg  string
	}{
		{[]string{"simulate", "--vocab-size", "10", "--dim", "2", "--observations", "1.5", "-o", sim}, "not a whole number"},
		{[]string{"simulate", "--vocab-size", "10", "--dim", "2", "--observations", "1e19", "-o", sim}, "1e19 is more than 2.306e+18"},
		{[]string{"simulate", "--vocab-size", "1", "--dim", "2", "--observations", "10", "-o", sim}, "vocabulary size 1"},
		{[]string{"split", filepath.Join(sim, "counts.parquet"), "--test-fraction", "1", "-o", sim}, "test fraction 1"},
		{[]string{"evaluate", fit}, "nothing to evaluate against"},
	} {
		if _, stderr, code := runPwe(c.args...); code != exitUsage || !strings.Contains(stderr, c.msg) {
			t.Errorf("pwe %v: exit %d, %q; want usage error mentioning %q", c.args, code, stderr, c.msg)
		}
	}
	outputLocked(t, sim, fit)
}

// outputLocked: while another process holds their lock (this one, on
// another descriptor), the commands that write into a directory refuse
// the simulation's and the fit's, with status 1, and change nothing there.
func outputLocked(t *testing.T, sim, fit string) {
	if _, err := os.Stat(filepath.Join(fit, runlock.File)); err != nil {
		t.Errorf("the fit did not lock its directory: %v", err)
	}
	ratings := filepath.Join(t.TempDir(), "ratings.csv")
	if err := os.WriteFile(ratings, []byte("userId,movieId,rating,timestamp\n1,1,4.0,0\n1,2,4.0,0\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, dir := range []string{sim, fit} {
		lock, err := runlock.Acquire(dir)
		if err != nil {
			t.Fatal(err)
		}
		before := listing(t, dir)
		for _, args := range [][]string{
			{"simulate", "--vocab-size", "10", "--dim", "2", "--observations", "2e3", "-o", dir},
			{"split", filepath.Join(sim, "counts.parquet"), "--test-fraction", "0.2", "-o", dir},
			{"fit", "--counts", filepath.Join(sim, "train.parquet"), "--vocab", filepath.Join(sim, "vocab.parquet"), "--dim", "2",
				"--chains", "2", "--warmup", "20", "--draws", "20", "--threads", "1", "-o", dir},
			{"summarize", fit, "--neighbours", "w0001", "-o", dir},
			{"movielens", ratings, "-o", dir},
		} {
			_, stderr, code := runPwe(args...)
			if want := dir + " is in use by another pwe process (pwe.test "; code != exitRuntime || !strings.Contains(stderr, want) {
				t.Errorf("pwe %v into a locked directory: exit %d, %q; want status 1 and %q", args, code, stderr, want)
			}
		}
		if after := listing(t, dir); !slices.Equal(before, after) {
			t.Errorf("refused commands changed %s:\n%v\nthen\n%v", dir, before, after)
		}
		lock.Release()
	}
	if _, stderr, code := runPwe("summarize", fit, "--neighbours", "w0001"); code != exitOK {
		t.Errorf("summarize after the lock's release: exit %d\n%s", code, stderr)
	}
	// A command that fails before writing leaves no directory it made.
	made := filepath.Join(filepath.Dir(fit), "made")
	if _, _, code := runPwe("summarize", fit, "--neighbours", "no-such-token", "-o", made); code != exitRuntime {
		t.Errorf("summarize of an unknown token: exit %d, want 1", code)
	}
	if _, err := os.Stat(made); !os.IsNotExist(err) {
		t.Errorf("the failed summarize left its output directory (%v)", err)
	}

	// A directory inside one that another process holds, as a pwe run
	// holds its output while it writes its fit/ there, is that process's
	// too: commands into it are refused, and leave nothing.
	run := filepath.Join(t.TempDir(), "run")
	if err := os.Mkdir(run, 0o755); err != nil {
		t.Fatal(err)
	}
	lock, err := runlock.Acquire(run)
	if err != nil {
		t.Fatal(err)
	}
	defer lock.Release()
	inside := filepath.Join(run, "fit")
	_, stderr, code := runPwe("fit", "--counts", filepath.Join(sim, "train.parquet"), "--vocab", filepath.Join(sim, "vocab.parquet"), "--dim", "2",
		"--chains", "2", "--warmup", "20", "--draws", "20", "--threads", "1", "-o", inside)
	if want := run + " is in use by another pwe process"; code != exitRuntime || !strings.Contains(stderr, want) {
		t.Errorf("fit into a directory inside a locked one: exit %d, %q; want status 1 and %q", code, stderr, want)
	}
	if _, err := os.Stat(inside); !os.IsNotExist(err) {
		t.Errorf("the refused fit left %s (%v)", inside, err)
	}
}

// listing describes a directory's files by name, size and modification
// time.
func listing(t *testing.T, dir string) []string {
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, e := range entries {
		info, err := e.Info()
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, fmt.Sprintf("%s %d %d", e.Name(), info.Size(), info.ModTime().UnixNano()))
	}
	return out
}
