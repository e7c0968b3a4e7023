package input

import (
	"bytes"
	stdgzip "compress/gzip"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/klauspost/compress/zstd"
)

// gzipBytes compresses with the standard library, so the reader
// (klauspost/compress) is checked against an independent writer.
func gzipBytes(t testing.TB, data []byte) []byte {
	t.Helper()
	var b bytes.Buffer
	w := stdgzip.NewWriter(&b)
	if _, err := w.Write(data); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

func zstdBytes(t testing.TB, data []byte) []byte {
	t.Helper()
	w, err := zstd.NewWriter(nil)
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	return w.EncodeAll(data, nil)
}

// bzip2Bytes runs the bzip2 command at its default block size (900k); Go
// has no bzip2 writer. Tests that need arbitrary bzip2 content skip without
// it; testdata/austen.txt.bz2 covers bzip2 everywhere.
func bzip2Bytes(t testing.TB, data []byte) []byte {
	t.Helper()
	return bzip2Level(t, data, 9)
}

// bzip2Level runs the bzip2 command at a block size of level*100k.
func bzip2Level(t testing.TB, data []byte, level int) []byte {
	t.Helper()
	path, err := exec.LookPath("bzip2")
	if err != nil {
		t.Skip("bzip2 command not found")
	}
	cmd := exec.Command(path, "-c", fmt.Sprintf("-%d", level))
	cmd.Stdin = bytes.NewReader(data)
	out, err := cmd.Output()
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// xzBytes runs the xz command (XZ Utils), an implementation independent of
// the reader's; tests that need it skip without it, and
// testdata/austen.txt.xz covers xz everywhere.
func xzBytes(t testing.TB, data []byte) []byte {
	t.Helper()
	path, err := exec.LookPath("xz")
	if err != nil {
		t.Skip("xz command not found")
	}
	cmd := exec.Command(path, "-c", "-6")
	cmd.Stdin = bytes.NewReader(data)
	out, err := cmd.Output()
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func writeFile(t testing.TB, dir, name string, data []byte) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, data, 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// withStdin makes "-" read data for the rest of the test.
func withStdin(t testing.TB, data []byte) {
	t.Helper()
	old := stdin
	stdin = bytes.NewReader(data)
	t.Cleanup(func() { stdin = old })
}

type doc struct {
	Text string
	Path string
	Line int64
}

// readAll drains a Reader with Next.
func readAll(paths []string, opt Options) ([]doc, *Reader) {
	r := NewReader(paths, opt)
	var docs []doc
	for r.Next() {
		d := r.Doc()
		docs = append(docs, doc{string(d.Text), d.Path, d.Line})
	}
	return docs, r
}

func mustReadAll(t *testing.T, paths []string, opt Options) []doc {
	t.Helper()
	docs, r := readAll(paths, opt)
	if err := r.Err(); err != nil {
		t.Fatalf("reading %v: %v", paths, err)
	}
	if err := r.Close(); err != nil {
		t.Fatal(err)
	}
	return docs
}

func equalDocs(t *testing.T, got, want []doc) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("got %d documents, want %d\ngot:  %+v\nwant: %+v", len(got), len(want), got, want)
	}
	for i := range got {
		if got[i] != want[i] {
			t.Errorf("document %d: got %+v, want %+v", i, got[i], want[i])
		}
	}
}

// wantParseError checks that err is a *ParseError at path and line wrapping
// target (if not nil), and that its message shows "path:line:".
func wantParseError(t *testing.T, err error, path string, line int64, target error) *ParseError {
	t.Helper()
	t.Logf("error: %v", err)
	var pe *ParseError
	if !errors.As(err, &pe) {
		t.Fatalf("got error %v (%T), want *ParseError", err, err)
	}
	if pe.Path != path || pe.Line != line {
		t.Errorf("error at %s:%d, want %s:%d (%v)", pe.Path, pe.Line, path, line, err)
	}
	if target != nil && !errors.Is(err, target) {
		t.Errorf("error %v does not wrap %v", err, target)
	}
	prefix := path + ":"
	if line > 0 {
		prefix = path + ":" + strconv.FormatInt(line, 10) + ":"
	}
	if msg := err.Error(); len(msg) < len(prefix) || msg[:len(prefix)] != prefix {
		t.Errorf("message %q does not begin with %q", msg, prefix)
	}
	return pe
}

func readFileAll(t *testing.T, f *File) ([]byte, error) {
	t.Helper()
	defer f.Close()
	return io.ReadAll(f)
}

// notReadAsText reports whether data, on standard input, is decompressed
// (FuzzDecompress's business) or refused as a binary file before any line
// is read, which the fuzzers' references of text, JSONL and CSV do not
// model.
func notReadAsText(data []byte) bool {
	return codecFromMagic(data, "") != codecNone || binaryKind(data[:min(len(data), headLen)]) != "" || isWARCHead(data)
}
