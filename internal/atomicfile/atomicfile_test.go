package atomicfile

import (
	"os"
	"path/filepath"
	"testing"
)

func TestCommitPublishesAndAbortLeavesPrevious(t *testing.T) {
	dir, path := previousOutput(t)

	f := started(t, path, "half")
	f.Abort()
	assertContent(t, path, "previous")
	assertOnlyFile(t, dir)

	f = started(t, path, "new")
	if err := f.Commit(); err != nil {
		t.Fatal(err)
	}
	f.Abort() // no-op after Commit
	assertContent(t, path, "new")
	assertOnlyFile(t, dir)
	if err := f.Commit(); err == nil {
		t.Error("second Commit succeeded")
	}
}

func TestCreateMakesMissingDirectories(t *testing.T) {
	path := filepath.Join(t.TempDir(), "new", "dir", "x")
	f, err := Create(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := f.Commit(); err != nil {
		t.Fatal(err)
	}
	assertContent(t, path, "")
}

func TestCreateBlockedByFile(t *testing.T) {
	dir := t.TempDir()
	blocker := filepath.Join(dir, "file")
	if err := os.WriteFile(blocker, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := Create(filepath.Join(blocker, "x")); err == nil {
		t.Fatal("Create below a regular file succeeded")
	}
}

func assertContent(t *testing.T, path, want string) {
	t.Helper()
	got, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if string(got) != want {
		t.Errorf("%s holds %q, want %q", path, got, want)
	}
}

func assertOnlyFile(t *testing.T, dir string) {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(entries) != 1 {
		var names []string
		for _, e := range entries {
			names = append(names, e.Name())
		}
		t.Errorf("directory holds %v, want only the output", names)
	}
}

// previousOutput returns a directory holding an output from an earlier
// run, "previous", and its path.
func previousOutput(t *testing.T) (dir, path string) {
	dir = t.TempDir()
	path = filepath.Join(dir, "out.parquet")
	if err := os.WriteFile(path, []byte("previous"), 0o644); err != nil {
		t.Fatal(err)
	}
	return dir, path
}

// started creates path's output and writes content to it.
func started(t *testing.T, path, content string) *File {
	t.Helper()
	f, err := Create(path)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteString(content); err != nil {
		t.Fatal(err)
	}
	return f
}

// TestFinishThenCommitOrAbort: a finished file is closed and not yet
// published; Commit publishes it, Abort discards it.
func TestFinishThenCommitOrAbort(t *testing.T) {
	dir, path := previousOutput(t)
	f := started(t, path, "dropped")
	if err := f.Finish(); err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteString("more"); err == nil {
		t.Error("write after Finish succeeded")
	}
	if err := f.Finish(); err == nil {
		t.Error("second Finish succeeded")
	}
	assertContent(t, path, "previous")
	f.Abort()
	assertContent(t, path, "previous")
	assertOnlyFile(t, dir)

	f = started(t, path, "new")
	if err := f.Finish(); err != nil {
		t.Fatal(err)
	}
	if err := f.Commit(); err != nil {
		t.Fatal(err)
	}
	assertContent(t, path, "new")
	assertOnlyFile(t, dir)
}

// TestWriteBehind: writes past writeBehind bytes start their writeback in
// steps of at least writeBehind, and the file still reads back whole.
func TestWriteBehind(t *testing.T) {
	path := filepath.Join(t.TempDir(), "big.bin")
	f, err := Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Abort()
	piece := make([]byte, 1<<20)
	var want []byte
	for i := range 20 {
		for j := range piece {
			piece[j] = byte(i + j)
		}
		if _, err := f.Write(piece); err != nil {
			t.Fatal(err)
		}
		want = append(want, piece...)
		if whole := int64(len(want)) / writeBehind * writeBehind; f.started != whole {
			t.Fatalf("after %d bytes, writeback started for %d, want %d", len(want), f.started, whole)
		}
	}
	if err := f.Commit(); err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile(path)
	if err != nil || string(got) != string(want) {
		t.Fatalf("read back %d bytes (%v), wrote %d", len(got), err, len(want))
	}
}
