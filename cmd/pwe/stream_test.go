package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/pwe-project/pwe/formats"
)

// withStdin runs f with os.Stdin reading data through a pipe, as from an
// upstream process.
func withStdin(t *testing.T, data string, f func()) {
	t.Helper()
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	go func() {
		w.WriteString(data)
		w.Close()
	}()
	saved := os.Stdin
	os.Stdin = r
	defer func() {
		os.Stdin = saved
		r.Close()
	}()
	f()
}

// TestStreamPipe runs `pwe count ... -o - | pwe fit --counts - ...` and the
// file route, and compares the fits.
func TestStreamPipe(t *testing.T) {
	t.Setenv("SOURCE_DATE_EPOCH", "0")
	dir := t.TempDir()
	corpus := "../../testdata/kjv-150.txt"
	vocab, counts := filepath.Join(dir, "v.parquet"), filepath.Join(dir, "c.parquet")
	if _, stderr, code := runPwe("tokenize", corpus, "-o", vocab, "--max-vocab", "40"); code != exitOK {
		t.Fatalf("tokenize: %s", stderr)
	}
	if _, stderr, code := runPwe("count", corpus, "--vocab", vocab, "-o", counts, "--window", "2"); code != exitOK {
		t.Fatalf("count: %s", stderr)
	}
	stream, stderr, code := runPwe("count", corpus, "--vocab", vocab, "-o", "-", "--window", "2")
	if code != exitOK || !strings.HasPrefix(stream, "\xff\xff\xff\xff") {
		t.Fatalf("count -o -: exit %d, %d bytes on stdout: %s", code, len(stream), stderr)
	}
	fit := []string{"fit", "--vocab", vocab, "--dim", "2", "--warmup", "5", "--draws", "10", "--chains", "2", "--anchors", "first"}
	if _, stderr, code := runPwe(append(fit, "--counts", counts, "-o", filepath.Join(dir, "file"))...); code != exitOK {
		t.Fatalf("fit from the file: %s", stderr)
	}
	withStdin(t, stream, func() {
		if _, stderr, code := runPwe(append(fit, "--counts", "-", "-o", filepath.Join(dir, "pipe"))...); code != exitOK {
			t.Fatalf("fit from the pipe: %s", stderr)
		}
	})
	read := func(route string) (mp []formats.VectorRow, draws []formats.DrawRow) {
		t.Helper()
		mp, _, err := formats.ReadAll[formats.VectorRow](filepath.Join(dir, route, "map.parquet"), formats.SchemaMap)
		if err != nil {
			t.Fatal(err)
		}
		draws, _, err = formats.ReadAll[formats.DrawRow](filepath.Join(dir, route, "draws.parquet"), formats.SchemaDraws)
		if err != nil {
			t.Fatal(err)
		}
		return mp, draws
	}
	m1, d1 := read("file")
	m2, d2 := read("pipe")
	if len(m1) != 80 || fmt.Sprint(m1) != fmt.Sprint(m2) {
		t.Errorf("map.parquet differs between the file and the pipe (%d and %d rows)", len(m1), len(m2))
	}
	if len(d1) != 2*10*80 || fmt.Sprint(d1) != fmt.Sprint(d2) {
		t.Errorf("draws.parquet differs between the file and the pipe (%d and %d rows)", len(d1), len(d2))
	}

	// pwe inspect - reads the stream.
	withStdin(t, stream, func() {
		out, stderr, code := runPwe("inspect", "-", "--rows", "2")
		if code != exitOK || !strings.Contains(out, "pwe.schema: pwe.counts/1") || !strings.Contains(out, "rows (target_id, context_id, n_pos, n_neg):") {
			t.Errorf("inspect -: exit %d\n%s%s", code, out, stderr)
		}
	})
	// A truncated stream: exit 1, stdin named.
	withStdin(t, stream[:len(stream)/2], func() {
		_, stderr, code := runPwe(append(fit, "--counts", "-", "-o", filepath.Join(dir, "cut"))...)
		if code != exitRuntime || !strings.Contains(stderr, "stdin: batch") {
			t.Errorf("truncated stream: exit %d, %s", code, stderr)
		}
	})
}

func TestTwoStdinsRefused(t *testing.T) {
	for _, args := range [][]string{
		{"fit", "--counts", "-", "--vocab", "-", "-o", "d"},
		{"count", "-", "--vocab", "-", "-o", "c.parquet"},
	} {
		_, stderr, code := runPwe(args...)
		if code != exitUsage || !strings.Contains(stderr, "both read standard input") {
			t.Errorf("pwe %v: exit %d, %s", args, code, stderr)
		}
	}
}
