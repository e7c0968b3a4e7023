// Package atomicfile writes a file under a temporary name and renames it to
// its final name only when it is complete, so a failed or killed run never
// leaves a half-written output where a finished one is expected.
package atomicfile

import (
	"errors"
	"fmt"
	"io/fs"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"

	"github.com/pwe-project/pwe/internal/cleanup"
)

// File is an output being written. Write to it, then call Commit to publish
// it under its final name, or Abort to discard it. Abort after Commit is a
// no-op, so `defer f.Abort()` is the usual pattern.
type File struct {
	*os.File
	final    string
	finished bool // Finish has closed the file
	done     bool
	// written counts the bytes Write has written, the first started of
	// which have been handed to the system's writeback.
	written, started int64
}

// writeBehind is how many written bytes Write lets accumulate before it
// starts their writeback, so that the sync before the rename finds most of
// a large file on disk already: counts.parquet's took 14 ms on bench-raw.
const writeBehind = 8 << 20

// Write writes b to the file and, every writeBehind bytes, starts the
// writeback of what it has written, without waiting for it (on Linux; a
// no-op elsewhere).
func (f *File) Write(b []byte) (int, error) {
	n, err := f.File.Write(b)
	f.written += int64(n)
	if f.written-f.started >= writeBehind {
		startWriteback(f.File, f.started, f.written-f.started)
		f.started = f.written
	}
	return n, err
}

// Create starts writing path. The temporary file lives in the same directory
// (a rename across file systems would not be atomic), which is created if
// missing, and is named
// ".<base>.tmp-<random>" so that globs on the final names skip it.
func Create(path string) (*File, error) {
	if err := NotDir(path); err != nil {
		return nil, err
	}
	dir, base := filepath.Split(path)
	if dir == "" {
		dir = "."
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("creating %s: %w", path, err)
	}
	f, err := createTemp(dir, "."+base+".tmp-")
	if err != nil {
		return nil, fmt.Errorf("creating %s: %w", path, err)
	}
	cleanup.Add(f.Name())
	return &File{File: f, final: path}, nil
}

// NotDir returns an error if path names an existing directory, which the
// file could not replace: a stage checks its outputs so before it reads
// its inputs, rather than fail at the rename after them.
func NotDir(path string) error {
	if info, err := os.Stat(path); err == nil && info.IsDir() {
		return fmt.Errorf("%s is a directory, not a file to write", path)
	}
	return nil
}

// createTemp creates a new file in dir named prefix and a random number. Its
// permissions are those of any file the user creates, 0666 less the umask:
// os.CreateTemp's 0600 would leave the outputs unreadable to the others who
// share them (a team's DuckDB, a scheduler's account).
func createTemp(dir, prefix string) (*os.File, error) {
	for range 1000 {
		name := filepath.Join(dir, prefix+strconv.FormatUint(uint64(rand.Uint32()), 10))
		f, err := os.OpenFile(name, os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o666)
		if !errors.Is(err, fs.ErrExist) {
			return f, err
		}
	}
	return nil, &fs.PathError{Op: "createtemp", Path: filepath.Join(dir, prefix+"*"), Err: fs.ErrExist}
}

// Name returns the final name of the file.
func (f *File) Name() string { return f.final }

// Finish flushes the file to stable storage and closes it, so that Commit
// has only to rename it: a caller can finish one output while it writes
// another, and still publish them in order. After a failed Finish the file
// is discarded.
func (f *File) Finish() error {
	if f.done || f.finished {
		return errors.New("atomicfile: finish of a finished file")
	}
	f.finished = true
	err := f.File.Sync()
	if cerr := f.File.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		f.done = true
		os.Remove(f.File.Name())
		cleanup.Forget(f.File.Name())
		return fmt.Errorf("writing %s: %w", f.final, err)
	}
	return nil
}

// Commit flushes the file to stable storage, unless Finish has, and renames
// it to its final name.
func (f *File) Commit() error {
	if f.done {
		return errors.New("atomicfile: commit of a finished file")
	}
	if !f.finished {
		if err := f.Finish(); err != nil {
			return err
		}
	}
	f.done = true
	tmp := f.File.Name()
	defer cleanup.Forget(tmp)
	if err := os.Rename(tmp, f.final); err != nil {
		os.Remove(tmp)
		return fmt.Errorf("writing %s: %w", f.final, err)
	}
	return nil
}

// Abort discards the temporary file. It does nothing after Commit.
func (f *File) Abort() {
	if f.done {
		return
	}
	f.done = true
	if !f.finished {
		f.File.Close()
	}
	os.Remove(f.File.Name())
	cleanup.Forget(f.File.Name())
}
