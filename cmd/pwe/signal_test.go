package main

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestInterruptTwice builds pwe and interrupts a tokenize that waits on
// standard input, which nothing closes: the first SIGINT cannot stop it
// while it waits, the second stops it at once, with the exit code of an
// interrupted run and nothing left in the output directory, the
// temporary files of the outputs it had begun included.
func TestInterruptTwice(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary")
	}
	dir := t.TempDir()
	bin := buildPwe(t, dir)
	out := filepath.Join(dir, "out")
	if err := os.Mkdir(out, 0o755); err != nil {
		t.Fatal(err)
	}
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	cmd := exec.Command(bin, "tokenize", "-", "-o", filepath.Join(out, "v.parquet"), "--tokens", filepath.Join(out, "t.bin"))
	var stderr bytes.Buffer
	cmd.Stdin, cmd.Stderr = r, &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	r.Close()
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	if _, err := w.WriteString("the words of a document\n"); err != nil {
		t.Fatal(err)
	}
	// The token stream's temporary file shows that tokenize has begun.
	deadline := time.Now().Add(time.Minute)
	for {
		names, _ := filepath.Glob(filepath.Join(out, ".t.bin.tmp-*"))
		if len(names) > 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("no temporary token stream after a minute: %s", stderr.String())
		}
		time.Sleep(10 * time.Millisecond)
	}
	if err := cmd.Process.Signal(syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-done:
		t.Fatalf("pwe ended (%v) at the first interrupt while it waited to read: %s", err, stderr.String())
	case <-time.After(300 * time.Millisecond):
	}
	if err := cmd.Process.Signal(syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-done:
		var exit *exec.ExitError
		if !errors.As(err, &exit) || exit.ExitCode() != exitRuntime {
			t.Errorf("exit %v, want code %d", err, exitRuntime)
		}
	case <-time.After(10 * time.Second):
		cmd.Process.Kill()
		t.Fatalf("pwe still runs 10 s after the second interrupt: %s", stderr.String())
	}
	if !strings.Contains(stderr.String(), "interrupted twice") {
		t.Errorf("stderr %q does not say it was interrupted", stderr.String())
	}
	left, _ := os.ReadDir(out)
	for _, e := range left {
		t.Errorf("left in the output directory: %s", e.Name())
	}
}
