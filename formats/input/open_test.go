package input

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/pwe-project/pwe/internal/sample"
)

// austenBz2Text is the content of testdata/austen.txt.bz2.
const austenBz2Text = "It is a truth universally acknowledged,\r\nthat a single man in possession of a good fortune,\r\n\r\nmust be in want of a wife.\r\n"

func sampleText() []byte {
	var b bytes.Buffer
	for i := range 2000 {
		b.WriteString("line ")
		b.WriteString(strings.Repeat("x", i%37))
		b.WriteString(" é\n")
	}
	return b.Bytes()
}

func TestOpenDecompresses(t *testing.T) {
	text := sampleText()
	dir := t.TempDir()
	cases := []struct {
		name  string
		data  func(t *testing.T) []byte
		codec string
	}{
		{"plain.txt", func(*testing.T) []byte { return text }, ""},
		{"a.gz", func(t *testing.T) []byte { return gzipBytes(t, text) }, "gzip"},
		{"a.zst", func(t *testing.T) []byte { return zstdBytes(t, text) }, "zstd"},
		{"a.bz2", func(t *testing.T) []byte { return bzip2Bytes(t, text) }, "bzip2"},
		{"a.xz", func(t *testing.T) []byte { return xzBytes(t, text) }, "xz"},
		{"xz-noext", func(t *testing.T) []byte { return xzBytes(t, text) }, "xz"},
		// Mislabelled or unlabelled files are recognised by their magic bytes.
		{"zstd-named.gz", func(t *testing.T) []byte { return zstdBytes(t, text) }, "zstd"},
		{"gzip-named.txt", func(t *testing.T) []byte { return gzipBytes(t, text) }, "gzip"},
		{"bzip2-noext", func(t *testing.T) []byte { return bzip2Bytes(t, text) }, "bzip2"},
		{"gzip-named.bz2", func(t *testing.T) []byte { return gzipBytes(t, text) }, "gzip"},
		// Concatenated gzip members and zstd frames form one stream.
		{"multi.gz", func(t *testing.T) []byte {
			return append(gzipBytes(t, text[:1000]), gzipBytes(t, text[1000:])...)
		}, "gzip"},
		// Zeros after the last member, as tape or tar blocking leaves
		// them, end the file, as gzip -d takes them.
		{"padded.gz", func(t *testing.T) []byte {
			return append(append(gzipBytes(t, text[:1000]), gzipBytes(t, text[1000:])...), make([]byte, 512)...)
		}, "gzip"},
		{"multi.zst", func(t *testing.T) []byte {
			return append(zstdBytes(t, text[:1000]), zstdBytes(t, text[1000:])...)
		}, "zstd"},
		// xz streams too, with the stream padding (zeros, four at a
		// time) xz allows between them.
		{"multi.xz", func(t *testing.T) []byte {
			padded := append(xzBytes(t, text[:1000]), 0, 0, 0, 0, 0, 0, 0, 0)
			return append(padded, xzBytes(t, text[1000:])...)
		}, "xz"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			raw := c.data(t)
			path := writeFile(t, dir, c.name, raw)
			f, err := Open(path)
			if err != nil {
				t.Fatal(err)
			}
			if f.Compression() != c.codec {
				t.Errorf("compression %q, want %q", f.Compression(), c.codec)
			}
			got, err := readFileAll(t, f)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(got, text) {
				t.Fatalf("decoded %d bytes, want %d bytes of the original", len(got), len(text))
			}
			sum := sha256.Sum256(raw)
			want := Fingerprint{Path: path, Size: int64(len(raw)), SHA256: hex.EncodeToString(sum[:])}
			if fp := f.Fingerprint(); fp != want {
				t.Errorf("fingerprint %+v, want %+v", fp, want)
			}
			if fp, err := FingerprintFile(path); err != nil || fp != want {
				t.Errorf("FingerprintFile = %+v, %v; want %+v", fp, err, want)
			}
			ctx, cancel := context.WithCancel(context.Background())
			cancel()
			if fp, err := FingerprintFileContext(ctx, path); !errors.Is(err, context.Canceled) {
				t.Errorf("FingerprintFileContext with a cancelled context = %+v, %v; want context.Canceled", fp, err)
			}
		})
	}
}

// TestOpenRecyclesBuffers: a closed plain file's read buffer serves the
// next file, which reads its own bytes and none of the last one's; a
// closed file reads no more; and opening many small files allocates far
// less than a buffer each.
func TestOpenRecyclesBuffers(t *testing.T) {
	dir := t.TempDir()
	long, short := filepath.Join(dir, "long.txt"), filepath.Join(dir, "short.txt")
	if err := os.WriteFile(long, bytes.Repeat([]byte("a long line of text\n"), 10000), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(short, []byte("b\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	readAll := func(path string) []byte {
		f, err := Open(path)
		if err != nil {
			t.Fatal(err)
		}
		got, err := io.ReadAll(f)
		if err != nil {
			t.Fatal(err)
		}
		if err := f.Close(); err != nil {
			t.Fatal(err)
		}
		if _, err := f.Read(make([]byte, 1)); !errors.Is(err, os.ErrClosed) || !strings.Contains(err.Error(), path) {
			t.Fatalf("read after close: %v; want an error naming %s, closed", err, path)
		}
		return got
	}
	for range 3 {
		if got := readAll(long); len(got) != 200000 {
			t.Fatalf("read %d bytes of %s, want 200000", len(got), long)
		}
		if got := readAll(short); string(got) != "b\n" {
			t.Fatalf("read %q from %s after %s, want %q", got, short, long, "b\n")
		}
	}
	// Half a buffer a file: the race detector's sync.Pool drops a quarter
	// of what it is given.
	const files = 100
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	for range files {
		readAll(short)
	}
	runtime.ReadMemStats(&after)
	if perFile := (after.TotalAlloc - before.TotalAlloc) / files; perFile > 32<<10 {
		t.Errorf("opening, reading and closing a 2-byte file allocated %d bytes; its 64 KiB read buffer is not reused", perFile)
	}
}

// TestSummarize: up to MaxListedInputs fingerprints are kept as they are;
// more become one whose sha256 is that of their lines, recomputed here, and
// their log holds no more than that many.
func TestSummarize(t *testing.T) {
	fps := make([]Fingerprint, MaxListedInputs+1)
	var lines strings.Builder
	var size int64
	for i := range fps {
		sum := sha256.Sum256([]byte{byte(i), byte(i >> 8)})
		fps[i] = Fingerprint{Path: filepath.Join("corpus", strings.Repeat("x", i%7)+".txt"), Size: int64(i * 3), SHA256: hex.EncodeToString(sum[:])}
		lines.WriteString(fps[i].Path + "\t" + strconv.FormatInt(fps[i].Size, 10) + "\t" + fps[i].SHA256 + "\n")
		size += fps[i].Size
	}
	if got := Summarize(fps[:MaxListedInputs]); len(got) != MaxListedInputs || got[0] != fps[0] || got[MaxListedInputs-1] != fps[MaxListedInputs-1] {
		t.Fatalf("%d fingerprints summarised to %d", MaxListedInputs, len(got))
	}
	sum := sha256.Sum256([]byte(lines.String()))
	want := Fingerprint{
		Path:   fmt.Sprintf("%d files, %s to %s", len(fps), fps[0].Path, fps[len(fps)-1].Path),
		Size:   size,
		SHA256: hex.EncodeToString(sum[:]),
	}
	if got := Summarize(fps); len(got) != 1 || got[0] != want {
		t.Fatalf("%d fingerprints summarised to %+v, want %+v", len(fps), got, want)
	}
	// A Reader's log of the files it read keeps no more than it lists.
	var l fingerprintLog
	for range 3 {
		for _, fp := range fps {
			l.add(fp)
		}
	}
	if len(l.listed) != MaxListedInputs || l.n != 3*len(fps) {
		t.Errorf("the log of %d files holds %d of them", l.n, len(l.listed))
	}
}

func TestOpenCommittedBzip2(t *testing.T) {
	f, err := Open(filepath.Join("testdata", "austen.txt.bz2"))
	if err != nil {
		t.Fatal(err)
	}
	got, err := readFileAll(t, f)
	if err != nil {
		t.Fatal(err)
	}
	if string(got) != austenBz2Text {
		t.Fatalf("got %q, want %q", got, austenBz2Text)
	}
}

// TestOpenCommittedXz reads testdata/austen.txt.xz, written by XZ Utils,
// alone and as two streams in a row.
func TestOpenCommittedXz(t *testing.T) {
	raw, err := os.ReadFile(filepath.Join("testdata", "austen.txt.xz"))
	if err != nil {
		t.Fatal(err)
	}
	for name, data := range map[string][]byte{"one.xz": raw, "two.xz": append(bytes.Clone(raw), raw...)} {
		path := writeFile(t, t.TempDir(), name, data)
		f, err := Open(path)
		if err != nil {
			t.Fatal(err)
		}
		got, err := readFileAll(t, f)
		want := strings.Repeat(austenBz2Text, len(data)/len(raw))
		if err != nil || string(got) != want {
			t.Fatalf("%s: got %q, %v; want %q", name, got, err, want)
		}
	}
}

func TestOpenStdin(t *testing.T) {
	raw := gzipBytes(t, []byte("from stdin\n"))
	withStdin(t, raw)
	f, err := Open("-")
	if err != nil {
		t.Fatal(err)
	}
	got, err := readFileAll(t, f)
	if err != nil || string(got) != "from stdin\n" {
		t.Fatalf("got %q, %v", got, err)
	}
	if fp := f.Fingerprint(); fp.Path != "-" || fp.Size != int64(len(raw)) {
		t.Errorf("fingerprint %+v, want path - and size %d", fp, len(raw))
	}
}

func TestOpenErrors(t *testing.T) {
	text := sampleText()
	dir := t.TempDir()
	gz := gzipBytes(t, text)
	zst := zstdBytes(t, text)
	bz2, err := os.ReadFile(filepath.Join("testdata", "austen.txt.bz2"))
	if err != nil {
		t.Fatal(err)
	}
	xzRaw, err := os.ReadFile(filepath.Join("testdata", "austen.txt.xz"))
	if err != nil {
		t.Fatal(err)
	}
	// A flipped byte inside the LZMA2 data: the decoder or the block's
	// check finds it.
	corruptXz := bytes.Clone(xzRaw)
	corruptXz[len(corruptXz)/2] ^= 0x5a
	corruptBz2 := bytes.Clone(bz2)
	for i := 20; i < len(corruptBz2)-10; i++ {
		corruptBz2[i] ^= 0x5a
	}
	cases := []struct {
		name   string
		data   []byte
		target error
		atOpen bool // the error comes from Open, not from reading
	}{
		{"truncated.gz", gz[:len(gz)/2], ErrCorrupt, false},
		{"truncated-trailer.gz", gz[:len(gz)-3], ErrCorrupt, false},
		{"truncated-header.gz", gz[:5], ErrCorrupt, true},
		{"trailing-garbage.gz", append(slices.Clone(gz), "not gzip"...), ErrCorrupt, false},
		{"zeros-then-garbage.gz", append(append(slices.Clone(gz), make([]byte, 16)...), 'x'), ErrCorrupt, false},
		{"truncated.zst", zst[:len(zst)/2], ErrCorrupt, false},
		{"truncated.bz2", bz2[:len(bz2)/2], ErrCorrupt, false},
		{"corrupt.bz2", corruptBz2, ErrCorrupt, false},
		{"short.bz2", bz2[:6], ErrCorrupt, false},
		{"truncated.xz", xzRaw[:len(xzRaw)/2], ErrCorrupt, false},
		{"truncated-footer.xz", xzRaw[:len(xzRaw)-4], ErrCorrupt, false},
		{"truncated-header.xz", xzRaw[:8], ErrCorrupt, true},
		{"corrupt.xz", corruptXz, ErrCorrupt, false},
		{"text.xz", []byte("hello world\n"), ErrWrongMagic, true},
		{"text.gz", []byte("hello world\n"), ErrWrongMagic, true},
		{"text.zst", []byte("hello world\n"), ErrWrongMagic, true},
		{"text.bz2", []byte("hello world\n"), ErrWrongMagic, true},
		{"empty.gz", nil, ErrWrongMagic, true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			path := writeFile(t, dir, c.name, c.data)
			f, err := Open(path)
			if c.atOpen {
				if err == nil {
					f.Close()
					t.Fatal("Open succeeded")
				}
				wantParseError(t, err, path, 0, c.target)
				return
			}
			if err != nil {
				t.Fatalf("Open: %v", err)
			}
			_, err = readFileAll(t, f)
			if err == nil {
				t.Fatal("reading succeeded")
			}
			wantParseError(t, err, path, 0, c.target)
			if !strings.Contains(err.Error(), f.Compression()) {
				t.Errorf("message %q does not name the compression", err)
			}
		})
	}
	t.Run("missing", func(t *testing.T) {
		path := filepath.Join(dir, "missing.txt")
		_, err := Open(path)
		wantParseError(t, err, path, 0, fs.ErrNotExist)
		if strings.Count(err.Error(), path) != 1 {
			t.Errorf("message %q should name the path once", err)
		}
	})
}

// A text file that merely starts with "BZh" is not bzip2.
func TestOpenTextStartingLikeBzip2(t *testing.T) {
	path := writeFile(t, t.TempDir(), "bz.txt", []byte("BZh9 is not a stream\n"))
	f, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	got, err := readFileAll(t, f)
	if err != nil || string(got) != "BZh9 is not a stream\n" {
		t.Fatalf("got %q, %v", got, err)
	}
}

func FuzzDecompress(f *testing.F) {
	text := []byte("one\ntwo\r\n\nthree")
	gz := gzipBytes(f, text)
	zst := zstdBytes(f, text)
	bz2, err := os.ReadFile(filepath.Join("testdata", "austen.txt.bz2"))
	if err != nil {
		f.Fatal(err)
	}
	xzRaw, err := os.ReadFile(filepath.Join("testdata", "austen.txt.xz"))
	if err != nil {
		f.Fatal(err)
	}
	names := []string{"x", "x.gz", "x.zst", "x.bz2", "x.xz"}
	for _, seed := range [][]byte{text, gz, zst, bz2, xzRaw, gz[:len(gz)-5], zst[:len(zst)-3], bz2[:len(bz2)-9], xzRaw[:len(xzRaw)-7], nil} {
		for name := range byte(len(names)) {
			f.Add(seed, name)
		}
	}
	f.Fuzz(func(t *testing.T, data []byte, name byte) {
		path := names[int(name)%len(names)]
		file, err := newFile(path, bytes.NewReader(data), nil)
		if err != nil {
			var pe *ParseError
			if !errors.As(err, &pe) || pe.Path != path {
				t.Fatalf("error %v is not a *ParseError naming %s", err, path)
			}
			return
		}
		defer file.Close()
		// A small input can expand enormously; the bound keeps the fuzzer fast.
		out, err := io.ReadAll(io.LimitReader(file, 1<<22))
		if err != nil {
			var pe *ParseError
			if !errors.As(err, &pe) || pe.Path != path {
				t.Fatalf("error %v is not a *ParseError naming %s", err, path)
			}
			return
		}
		if file.Compression() == "" && !bytes.Equal(out, data) {
			t.Fatalf("plain data changed: %q -> %q", data, out)
		}
		if len(out) < 1<<22 {
			sum := sha256.Sum256(data)
			if fp := file.Fingerprint(); fp.Size != int64(len(data)) || fp.SHA256 != hex.EncodeToString(sum[:]) {
				t.Fatalf("fingerprint %+v does not describe the %d input bytes", fp, len(data))
			}
		}
	})
}

// TestEmbeddedSample reads the embedded corpus through Expand and Open.
func TestEmbeddedSample(t *testing.T) {
	paths, err := Expand([]string{sample.Name})
	if err != nil || len(paths) != 1 || paths[0] != sample.Name {
		t.Fatalf("Expand(%q) = %v, %v", sample.Name, paths, err)
	}
	f, err := Open(sample.Name)
	if err != nil {
		t.Fatal(err)
	}
	text, err := io.ReadAll(f)
	if err != nil {
		t.Fatal(err)
	}
	f.Close()
	if !bytes.HasPrefix(text, []byte("SENSE AND SENSIBILITY")) || bytes.Count(text, []byte("\n")) != 3000 {
		t.Errorf("embedded corpus starts %q and has %d lines, want Sense and Sensibility's first 3000", text[:min(40, len(text))], bytes.Count(text, []byte("\n")))
	}
	if fp := f.Fingerprint(); fp.Size != int64(len(sample.AustenZst)) {
		t.Errorf("fingerprint size %d, want %d", fp.Size, len(sample.AustenZst))
	}
}
