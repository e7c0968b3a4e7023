package input

import (
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/parquet-go/parquet-go"
)

// bigText is about 1.5 MiB of lines, more than the 64 KiB read buffer, so
// that reading it takes many raw reads.
func bigText() []byte {
	var b strings.Builder
	for i := range 60000 {
		b.WriteString("words of line ")
		b.WriteString(strings.Repeat("y", i%19))
		b.WriteByte('\n')
	}
	return []byte(b.String())
}

func fileSize(t *testing.T, path string) int64 {
	t.Helper()
	info, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	return info.Size()
}

// TestReaderOnRead checks that the raw bytes reported add up to the sizes
// of the files as stored, compressed or not, and arrive as the reading
// goes rather than at the end.
func TestReaderOnRead(t *testing.T) {
	dir := t.TempDir()
	text := bigText()
	paths := []string{
		writeFile(t, dir, "a.txt", text),
		writeFile(t, dir, "b.txt.gz", gzipBytes(t, text)),
		writeFile(t, dir, "c.txt.zst", zstdBytes(t, text)),
		"testdata/austen.txt.bz2",
	}
	if _, err := exec.LookPath("bzip2"); err == nil {
		// Blocks of 100 kB, read ahead and decoded on other goroutines
		// where there are two or more cores.
		paths = append(paths, writeFile(t, dir, "d.txt.bz2", bzip2Level(t, text, 1)))
	}
	var want int64
	for _, p := range paths {
		want += fileSize(t, p)
	}
	r := NewReader(paths, Options{})
	// The reports come from the goroutine that reads the raw bytes,
	// which for a compressed file may not be the reader's.
	var got atomic.Int64
	r.OnRead(func(n int64) {
		if n <= 0 {
			t.Errorf("OnRead(%d): want a positive count", n)
		}
		got.Add(n)
	})
	if !r.Next() {
		t.Fatal(r.Err())
	}
	if first := fileSize(t, paths[0]); got.Load() <= 0 || got.Load() >= first {
		t.Errorf("after the first document %d bytes reported; want some but fewer than the first file's %d", got.Load(), first)
	}
	for r.Next() {
	}
	if err := r.Err(); err != nil {
		t.Fatal(err)
	}
	if got.Load() != want {
		t.Errorf("OnRead reported %d bytes in all, want the files' %d", got.Load(), want)
	}
}

// TestReaderOnReadParquet checks a Parquet input, which parquet-go reads
// out of order (footer first, only one column): the report never passes
// the file's size and reaches it at the end.
func TestReaderOnReadParquet(t *testing.T) {
	path := filepath.Join(t.TempDir(), "t.parquet")
	writeParquet(t, path, 20000, parquet.MaxRowsPerRowGroup(2000), parquet.PageBufferSize(4096))
	size := fileSize(t, path)
	r := NewReader([]string{path}, Options{TextColumn: "text"})
	var got int64
	r.OnRead(func(n int64) {
		got += n
		if got > size {
			t.Fatalf("reported %d bytes of a %d-byte file", got, size)
		}
	})
	docs := 0
	for r.Next() {
		if docs++; docs == 1 && got >= size {
			t.Errorf("the first row already reported the whole file (%d bytes)", got)
		}
	}
	if err := r.Err(); err != nil {
		t.Fatal(err)
	}
	if got != size {
		t.Errorf("reported %d bytes, want the file's %d", got, size)
	}
}

// TestReaderOnReadStdin checks that standard input, of no known size,
// reports what was read.
func TestReaderOnReadStdin(t *testing.T) {
	text := bigText()
	withStdin(t, gzipBytes(t, text))
	r := NewReader([]string{"-"}, Options{})
	var got int64
	r.OnRead(func(n int64) { got += n })
	for r.Next() {
	}
	if err := r.Err(); err != nil {
		t.Fatal(err)
	}
	if want := int64(len(gzipBytes(t, text))); got != want {
		t.Errorf("reported %d bytes of stdin, want %d", got, want)
	}
}

// TestFileOnReadAfterPeek checks that the bytes Open read to recognise the
// compression are reported when the hook is set.
func TestFileOnReadAfterPeek(t *testing.T) {
	path := writeFile(t, t.TempDir(), "x.zst", zstdBytes(t, bigText()))
	f, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var got int64
	f.OnRead(func(n int64) { got += n })
	if got == 0 {
		t.Error("the bytes peeked by Open were not reported")
	}
	if _, err := readFileAll(t, f); err != nil {
		t.Fatal(err)
	}
	if want := fileSize(t, path); got != want {
		t.Errorf("reported %d bytes, want the file's %d", got, want)
	}
}

// TestReaderOnReadArchives checks the archives: a tar archive's bytes are
// reported as its stream is read, a zip archive's as its members are, and
// a zip archive on standard input's as it is copied to a file; each sums
// to the input's size, and a zip archive's first member does not report
// the whole file.
func TestReaderOnReadArchives(t *testing.T) {
	dir := t.TempDir()
	tree := filepath.Join(dir, "tree")
	// Random words, which gzip and deflate leave large: more than the
	// read buffers.
	rng := rand.New(rand.NewPCG(1, 2))
	for i := range 4 {
		var b strings.Builder
		for b.Len() < 300<<10 {
			fmt.Fprintf(&b, "w%x ", rng.Uint32())
			if rng.IntN(10) == 0 {
				b.WriteByte('\n')
			}
		}
		writeFile(t, tree, fmt.Sprintf("part%d.txt", i), []byte(b.String()))
	}
	tgz := writeFile(t, dir, "a.tar.gz", gzipBytes(t, tarDir(t, tree)))
	zipped := zipDir(t, tree)
	zp := writeFile(t, dir, "a.zip", zipped)
	for _, c := range []struct {
		path string
		size int64
	}{{tgz, fileSize(t, tgz)}, {zp, fileSize(t, zp)}, {"-", int64(len(zipped))}} {
		withStdin(t, zipped)
		r := NewReader([]string{c.path}, Options{})
		var got int64
		r.OnRead(func(n int64) {
			if n <= 0 {
				t.Errorf("%s: OnRead(%d)", c.path, n)
			}
			got += n
		})
		if !r.Next() {
			t.Fatal(r.Err())
		}
		if c.path != "-" && got >= c.size {
			t.Errorf("%s: the first document reported %d bytes of %d", c.path, got, c.size)
		}
		for r.Next() {
		}
		if err := r.Err(); err != nil {
			t.Fatal(err)
		}
		if got != c.size {
			t.Errorf("%s: reported %d bytes, want %d", c.path, got, c.size)
		}
	}
}
