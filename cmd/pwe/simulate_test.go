package main

import (
	"path/filepath"
	"strings"
	"testing"
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
		{[]string{"simulate", "--vocab-size", "1", "--dim", "2", "--observations", "10", "-o", sim}, "vocabulary size 1"},
		{[]string{"split", filepath.Join(sim, "counts.parquet"), "--test-fraction", "1", "-o", sim}, "test fraction 1"},
		{[]string{"evaluate", fit}, "nothing to evaluate against"},
	} {
		if _, stderr, code := runPwe(c.args...); code != exitUsage || !strings.Contains(stderr, c.msg) {
			t.Errorf("pwe %v: exit %d, %q; want usage error mentioning %q", c.args, code, stderr, c.msg)
		}
	}
}
