package main

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/pwe-project/pwe/internal/runlock"
)

// TestFitInterruptResume builds pwe, interrupts `pwe fit` with SIGINT once
// it has checkpointed, and checks that the exit code is non-zero, that the
// outputs of an earlier fit in the directory are untouched, and that
// --resume (with another thread count) writes the bytes of an
// uninterrupted fit.
func TestFitInterruptResume(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary and runs four fits")
	}
	dir := t.TempDir()
	bin := buildPwe(t, dir)
	pwe := func(args ...string) *exec.Cmd {
		cmd := exec.Command(bin, args...)
		cmd.Env = append(os.Environ(), "SOURCE_DATE_EPOCH=1700000000")
		return cmd
	}
	mustRun := func(args ...string) {
		t.Helper()
		if out, err := pwe(args...).CombinedOutput(); err != nil {
			t.Fatalf("pwe %v: %v\n%s", args, err, out)
		}
	}
	vocab, counts := filepath.Join(dir, "v.parquet"), filepath.Join(dir, "c.parquet")
	mustRun("tokenize", "../../testdata/kjv-150.txt", "-o", vocab, "--max-vocab", "50")
	mustRun("count", "../../testdata/kjv-150.txt", "--vocab", vocab, "-o", counts, "--window", "2")
	fit := func(out string, extra ...string) []string {
		return append([]string{"fit", "--counts", counts, "--vocab", vocab, "-o", out, "--dim", "3", "--chains", "2",
			"--warmup", "20", "--draws", "600", "--seed", "3"}, extra...)
	}
	ref, out := filepath.Join(dir, "ref"), filepath.Join(dir, "out")
	mustRun(fit(ref, "--threads", "1")...)

	// An earlier fit in the output directory, which the interrupted one
	// must leave alone.
	mustRun("fit", "--counts", counts, "--vocab", vocab, "-o", out, "--dim", "3", "--chains", "2", "--warmup", "5", "--draws", "5")
	outputs := []string{"draws.parquet", "summary.parquet", "sample_stats.parquet", "map.parquet"}
	before := map[string][]byte{}
	for _, name := range outputs {
		before[name] = read(t, filepath.Join(out, name))
	}

	cmd := pwe(fit(out, "--threads", "2", "--checkpoint-every", "2")...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	ckpt := filepath.Join(out, "checkpoint")
	deadline := time.Now().Add(2 * time.Minute)
	for {
		_, err0 := os.Stat(filepath.Join(ckpt, "chain-0000.ckpt"))
		_, err1 := os.Stat(filepath.Join(ckpt, "chain-0001.ckpt"))
		if err0 == nil && err1 == nil {
			break
		}
		select {
		case err := <-done:
			t.Fatalf("pwe fit ended (%v) before it checkpointed: %s", err, stderr.String())
		case <-time.After(5 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			cmd.Process.Kill()
			t.Fatal("no checkpoint after two minutes")
		}
	}
	if err := cmd.Process.Signal(syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	err := <-done
	var exit *exec.ExitError
	if !errors.As(err, &exit) || exit.ExitCode() != exitRuntime {
		t.Fatalf("interrupted fit: %v, want exit code %d; stderr:\n%s", err, exitRuntime, stderr.String())
	}
	if want := "fit: interrupted; the chains' state is saved in " + ckpt + ": run the same command with --resume to continue\n"; !strings.Contains(stderr.String(), want) || strings.Count(stderr.String(), "interrupted") != 1 {
		t.Errorf("the interrupted fit does not say once where its state is and how to resume (%q):\n%s", want, stderr.String())
	}
	for _, name := range outputs {
		if !bytes.Equal(before[name], read(t, filepath.Join(out, name))) {
			t.Errorf("the interrupted fit changed %s", name)
		}
	}

	mustRun(fit(out, "--threads", "1", "--resume")...)
	for _, name := range []string{"draws.parquet", "summary.parquet", "map.parquet"} {
		if !bytes.Equal(read(t, filepath.Join(ref, name)), read(t, filepath.Join(out, name))) {
			t.Errorf("%s after --resume differs from the uninterrupted fit", name)
		}
	}
	if _, err := os.Stat(ckpt); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("checkpoint left after the resumed fit finished: %v", err)
	}
	spills, _ := filepath.Glob(filepath.Join(out, ".pwe-*"))
	// The lock's file stays, with the note of its last holder.
	spills = slices.DeleteFunc(spills, func(p string) bool { return filepath.Base(p) == runlock.File })
	if len(spills) > 0 {
		t.Errorf("spill files left: %v", spills)
	}
}

func read(t *testing.T, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// buildPwe builds the pwe binary into dir, for tests that must signal a
// process of its own, and returns its path.
func buildPwe(t *testing.T, dir string) string {
	t.Helper()
	bin := filepath.Join(dir, "pwe")
	if out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	return bin
}
