package input

import (
	"archive/tar"
	"archive/zip"
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"io/fs"
	"maps"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// tarDir writes the files under root into a tar archive, in the order of a
// directory walk, with their directories, a symbolic link and a hard link
// (which the reader skips) and the hidden files (which it skips too).
func tarDir(t testing.TB, root string) []byte {
	t.Helper()
	var b bytes.Buffer
	tw := tar.NewWriter(&b)
	eachInTree(t, root, func(name string, p string, d fs.DirEntry) error {
		info, err := d.Info()
		if err != nil {
			return err
		}
		hdr, err := tar.FileInfoHeader(info, "")
		if err != nil {
			return err
		}
		hdr.Name = name
		if d.IsDir() {
			hdr.Name += "/"
		}
		if err := tw.WriteHeader(hdr); err != nil {
			return err
		}
		if d.Type().IsRegular() {
			data, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			_, err = tw.Write(data)
			return err
		}
		return nil
	})
	for _, hdr := range []*tar.Header{
		{Name: "link.txt", Typeflag: tar.TypeSymlink, Linkname: "a.txt"},
		{Name: "hard.txt", Typeflag: tar.TypeLink, Linkname: "a.txt"},
	} {
		if err := tw.WriteHeader(hdr); err != nil {
			t.Fatal(err)
		}
	}
	if err := tw.Close(); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// eachInTree calls fn for each file and directory below root, in the order
// of a directory walk, with its slash-separated name from root.
func eachInTree(t testing.TB, root string, fn func(name, path string, d fs.DirEntry) error) {
	t.Helper()
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(root, p)
		if err != nil || rel == "." {
			return err
		}
		return fn(filepath.ToSlash(rel), p, d)
	})
	if err != nil {
		t.Fatal(err)
	}
}

// zipDir writes the files under root into a zip archive, in the order of a
// directory walk, deflated, with their directories and the hidden files.
func zipDir(t testing.TB, root string) []byte {
	t.Helper()
	var b bytes.Buffer
	zw := zip.NewWriter(&b)
	eachInTree(t, root, func(name string, p string, d fs.DirEntry) error {
		if d.IsDir() {
			_, err := zw.Create(name + "/")
			return err
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		w, err := zw.Create(name)
		if err != nil {
			return err
		}
		_, err = w.Write(data)
		return err
	})
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// storedZip is a zip archive of files, in name order, stored without
// compression.
func storedZip(t testing.TB, files map[string][]byte) []byte {
	t.Helper()
	var b bytes.Buffer
	zw := zip.NewWriter(&b)
	for _, name := range slices.Sorted(maps.Keys(files)) {
		w, err := zw.CreateHeader(&zip.FileHeader{Name: name, Method: zip.Store})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := w.Write(files[name]); err != nil {
			t.Fatal(err)
		}
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// storedGzip is data in a gzip member without compression: ten bytes of
// header and one stored block's five, for data under 64 KiB.
func storedGzip(t testing.TB, data []byte) []byte {
	t.Helper()
	var b bytes.Buffer
	w, err := gzip.NewWriterLevel(&b, gzip.NoCompression)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := w.Write(data); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if out := b.Bytes(); !bytes.Equal(out[15:15+len(data)], data) {
		t.Fatal("the stored gzip member does not hold the data at byte 15")
	}
	return b.Bytes()
}

// readBatches drains a Reader with NextBatch.
func readBatches(paths []string, opt Options, maxBytes int) ([]doc, *Reader) {
	r := NewReader(paths, opt)
	var docs []doc
	var b Batch
	for r.NextBatch(&b, maxBytes) {
		for i, d := range b.Docs {
			docs = append(docs, doc{string(d), b.Paths[i], b.Lines[i]})
		}
	}
	return docs, r
}

// TestArchive reads tar archives, plain and compressed, against the same
// files read from a directory: the same documents, lines and records
// skipped, named by the member's path after the archive's.
func TestArchive(t *testing.T) {
	dir := t.TempDir()
	tree := filepath.Join(dir, "tree")
	text := sampleText()
	files := map[string][]byte{
		"a.txt":             []byte("alpha beta\n\ngamma\r\nlast line without end"),
		"b/c.jsonl":         []byte(`{"text": "one"}` + "\n" + `{"text": null}` + "\n" + `{"text": "two"}` + "\n"),
		"b/d/e.txt":         text,
		"b/d/f.txt.gz":      gzipBytes(t, []byte("inside gzip\n")),
		"b/g.txt.zst":       zstdBytes(t, []byte("inside zstd\n\nand more\n")),
		"empty.txt":         nil,
		".hidden.txt":       []byte("never read\n"),
		"b/.cache/h.txt":    []byte("never read either\n"),
		"z/last.txt":        []byte("the end\n"),
		"b/d/long-name.txt": []byte(strings.Repeat("long ", 30) + "\n"),
	}
	for name, data := range files {
		writeFile(t, tree, name, data)
	}
	// A name longer than the 100 bytes of a plain tar header.
	deep := filepath.Join("b", strings.Repeat("x", 60), strings.Repeat("y", 60)+".txt")
	writeFile(t, tree, deep, []byte("deep file\n"))
	archive := tarDir(t, tree)
	paths, err := Expand([]string{tree})
	if err != nil {
		t.Fatal(err)
	}

	archives := map[string][]byte{
		"a.tar": archive, "a.tar.gz": gzipBytes(t, archive), "a.tgz": gzipBytes(t, archive), "a.tar.zst": zstdBytes(t, archive),
		// Zeros after the end, as tar pads to its record size: they are
		// read for the fingerprint.
		"padded.tar": append(bytes.Clone(archive), make([]byte, 100<<10)...),
		"a.zip":      zipDir(t, tree),
		// A zip archive is known by its magic bytes too.
		"zip-named.dat": zipDir(t, tree),
	}
	if zipCmd, err := exec.LookPath("zip"); err == nil {
		// Info-ZIP's zip, an implementation of its own, in walk order.
		out := filepath.Join(dir, "cmd.zip")
		var names []string
		for _, p := range paths {
			rel, _ := filepath.Rel(tree, p)
			names = append(names, rel)
		}
		cmd := exec.Command(zipCmd, append([]string{"-q", "-9", out}, names...)...)
		cmd.Dir = tree
		if err := cmd.Run(); err != nil {
			t.Fatal(err)
		}
		data, err := os.ReadFile(out)
		if err != nil {
			t.Fatal(err)
		}
		archives["cmd.zip"] = data
	}
	if _, err := exec.LookPath("xz"); err == nil {
		archives["a.tar.xz"] = xzBytes(t, archive)
	}
	if _, err := exec.LookPath("bzip2"); err == nil {
		archives["a.tbz2"] = bzip2Bytes(t, archive)
	}
	for _, opt := range []Options{{}, {DocSep: DocSepBlank}, {DocSep: DocSepFile}} {
		// The reference: the unpacked files, the JSON Lines file read as
		// JSON Lines when the others are read as text would fail, so both
		// are read as text.
		want := mustReadAll(t, paths, opt)
		for name, data := range archives {
			path := writeFile(t, dir, name, data)
			rename := func(docs []doc) []doc {
				out := make([]doc, len(docs))
				for i, d := range docs {
					rel, err := filepath.Rel(tree, d.Path)
					if err != nil {
						t.Fatal(err)
					}
					out[i] = doc{d.Text, path + "/" + filepath.ToSlash(rel), d.Line}
				}
				return out
			}
			got := mustReadAll(t, []string{path}, opt)
			equalDocs(t, got, rename(want))
			batched, r := readBatches([]string{path}, opt, 64)
			if err := r.Err(); err != nil {
				t.Fatalf("%s in batches: %v", name, err)
			}
			equalDocs(t, batched, rename(want))
			sum := sha256.Sum256(data)
			wantFP := Fingerprint{Path: path, Size: int64(len(data)), SHA256: hex.EncodeToString(sum[:])}
			if fps := r.Fingerprints(); len(fps) != 1 || fps[0] != wantFP {
				t.Errorf("%s: fingerprints %+v, want %+v", name, fps, wantFP)
			}
		}
	}

	// JSON Lines members: the records skipped are counted as in the file.
	jsonl := filepath.Join(dir, "j.tar")
	jtree := filepath.Join(dir, "jtree")
	writeFile(t, jtree, "c.jsonl", files["b/c.jsonl"])
	writeFile(t, jtree, "d.jsonl", []byte(`{"text": "three"}`+"\n"+`{"other": 1}`+"\n"))
	if err := os.WriteFile(jsonl, tarDir(t, jtree), 0o644); err != nil {
		t.Fatal(err)
	}
	docs, r := readAll([]string{jsonl}, Options{TextField: "text"})
	if err := r.Err(); err != nil {
		t.Fatal(err)
	}
	equalDocs(t, docs, []doc{{"one", jsonl + "/c.jsonl", 1}, {"two", jsonl + "/c.jsonl", 3}, {"three", jsonl + "/d.jsonl", 1}})
	if n := r.Skipped(); n != 2 {
		t.Errorf("skipped %d records, want 2", n)
	}
}

// TestArchiveErrors: a damaged archive, or a member that is not text, is
// an error naming the archive or the member, after the documents before
// it.
func TestArchiveErrors(t *testing.T) {
	dir := t.TempDir()
	tree := filepath.Join(dir, "tree")
	writeFile(t, tree, "a.txt", []byte("first file\n"))
	writeFile(t, tree, "b.txt", bytes.Repeat([]byte("some words on a line\n"), 200))
	good := tarDir(t, tree)
	goodZip := zipDir(t, tree)
	// A letter of b.txt, stored without compression, changed: the
	// member's checksum fails at its end, after its 200 lines.
	corruptZip := storedZip(t, map[string][]byte{"a.txt": []byte("first file\n"), "b.txt": bytes.Repeat([]byte("some words on a line\n"), 200)})
	at := bytes.Index(corruptZip, []byte("some words")) + 1000
	corruptZip[at] ^= 0x01
	writeFile(t, tree, "c.parquet", []byte("PAR1\x15\x00 not text"))
	binary := tarDir(t, tree)
	emptyTree := filepath.Join(dir, "empty")
	writeFile(t, emptyTree, ".only-hidden.txt", []byte("x\n"))
	gz := gzipBytes(t, good)
	// A header whose checksum no longer matches.
	badHeader := bytes.Clone(good)
	badHeader[0] ^= 0x20

	// b.txt's data starts after two headers and a.txt's block; cut 1000
	// bytes into it, the archive ends inside its 48th line, and a damaged
	// compression is found inside a member too.
	const lineLen = int64(len("some words on a line\n"))
	cut := 3*512 + 1000
	cases := []struct {
		name   string
		data   []byte
		docs   int    // documents read before the error
		where  string // the path the error names, after dir
		line   int64
		target error
	}{
		{"truncated.tar.gz", gz[:len(gz)-12], 201, "truncated.tar.gz", 0, ErrCorrupt},
		// Stored (uncompressed) deflate: the tar's bytes follow the gzip
		// header and the block's, so the cut falls inside b.txt.
		{"stored.tar.gz", storedGzip(t, good)[:10+5+cut], int(1 + 1000/lineLen), "stored.tar.gz/b.txt", 1000/lineLen + 1, ErrCorrupt},
		{"truncated.tar", good[:cut], int(1 + 1000/lineLen), "truncated.tar/b.txt", 1000/lineLen + 1, ErrBadArchive},
		{"truncated-header.tar", good[:1500], 1, "truncated-header.tar", 0, ErrBadArchive},
		{"bad-header.tar", badHeader, 0, "bad-header.tar", 0, ErrBadArchive},
		{"binary.tar", binary, 201, "binary.tar/c.parquet", 0, ErrNotText},
		{"empty.tar", tarDir(t, emptyTree), 0, "empty.tar", 0, ErrEmptyArchive},
		{"text.tar.gz", []byte("not gzip\n"), 0, "text.tar.gz", 0, ErrWrongMagic},
		{"truncated.zip", goodZip[:len(goodZip)-30], 0, "truncated.zip", 0, ErrBadArchive},
		{"corrupt.zip", corruptZip, 201, "corrupt.zip/b.txt", 201, ErrBadArchive},
		{"binary.zip", zipDir(t, tree), 201, "binary.zip/c.parquet", 0, ErrNotText},
		{"empty.zip", zipDir(t, emptyTree), 0, "empty.zip", 0, ErrEmptyArchive},
		{"text.zip", []byte("not a zip\n"), 0, "text.zip", 0, ErrBadArchive},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			path := writeFile(t, dir, c.name, c.data)
			docs, r := readAll([]string{path}, Options{})
			if len(docs) != c.docs {
				t.Errorf("%d documents before the error, want %d", len(docs), c.docs)
			}
			if r.Err() == nil {
				t.Fatal("no error")
			}
			wantParseError(t, r.Err(), filepath.Join(dir, c.where), c.line, c.target)
		})
	}

	// Parquet files cannot be read from an archive: the first member
	// that is not CSV says so.
	path := writeFile(t, dir, "p.tar", good)
	_, r := readAll([]string{path}, Options{TextColumn: "text"})
	if err := r.Err(); err == nil || !strings.Contains(err.Error(), "unpack it") {
		t.Errorf("Parquet from an archive: %v", err)
	}
	wantParseError(t, r.Err(), path+"/a.txt", 0, nil)
	// A zip archive on standard input is copied to a file; a damaged one
	// is an error naming standard input.
	withStdin(t, goodZip[:len(goodZip)-30])
	_, r = readAll([]string{"-"}, Options{})
	wantParseError(t, r.Err(), "-", 0, ErrBadArchive)
}

// TestArchiveByContent: a tar archive is known by its header too,
// whatever its name, compressed or not, and on standard input, and so is
// a zip archive, which is copied to a temporary file where it is not a
// file of its own; one inside another archive is refused.
func TestArchiveByContent(t *testing.T) {
	tmp := t.TempDir()
	t.Setenv("TMPDIR", tmp)
	dir := t.TempDir()
	tree := filepath.Join(dir, "tree")
	writeFile(t, tree, "a.txt", []byte("first file\n\nsecond paragraph\n"))
	writeFile(t, tree, "sub/b.txt.gz", gzipBytes(t, []byte("inside gzip\n")))
	writeFile(t, tree, "sub/c.txt", bytes.Repeat([]byte("some words on a line\n"), 300))
	archive := tarDir(t, tree)
	named := writeFile(t, dir, "named.tar", archive)
	want := mustReadAll(t, []string{named}, Options{})
	if len(want) != 303 {
		t.Fatalf("%d documents from the named archive, want 303", len(want))
	}
	as := func(path string) []doc {
		out := slices.Clone(want)
		for i := range out {
			out[i].Path = path + strings.TrimPrefix(out[i].Path, named)
		}
		return out
	}
	zipped := zipDir(t, tree)
	inputs := map[string][]byte{
		"corpus.dat": archive, "corpus.gz": gzipBytes(t, archive), "corpus.zst": zstdBytes(t, archive),
		"zip.gz": gzipBytes(t, zipped), "zip.dat": zipped,
	}
	if _, err := exec.LookPath("xz"); err == nil {
		inputs["corpus.xz"] = xzBytes(t, archive)
	}
	for name, data := range inputs {
		path := writeFile(t, dir, name, data)
		equalDocs(t, mustReadAll(t, []string{path}, Options{}), as(path))
		withStdin(t, data)
		docs, r := readAll([]string{"-"}, Options{})
		if err := r.Err(); err != nil {
			t.Fatalf("%s on stdin: %v", name, err)
		}
		equalDocs(t, docs, as("-"))
		sum := sha256.Sum256(data)
		wantFP := Fingerprint{Path: "-", Size: int64(len(data)), SHA256: hex.EncodeToString(sum[:])}
		if fps := r.Fingerprints(); len(fps) != 1 || fps[0] != wantFP {
			t.Errorf("%s on stdin: fingerprints %+v, want %+v", name, fps, wantFP)
		}
	}
	// The zip archives' copies were unlinked.
	if left, err := os.ReadDir(tmp); err != nil || len(left) != 0 {
		t.Errorf("left in the temporary directory: %v %v", left, err)
	}
	// Options.TempDir is where they go.
	nowhere := filepath.Join(tmp, "no", "such", "dir")
	withStdin(t, zipped)
	_, r := readAll([]string{"-"}, Options{TempDir: nowhere})
	wantParseError(t, r.Err(), "-", 0, fs.ErrNotExist)
	if !strings.Contains(r.Err().Error(), nowhere) {
		t.Errorf("the error does not name the temporary directory: %v", r.Err())
	}

	// A header with one byte changed fails its checksum: the file is no
	// tar archive, unless its name says so, but its NUL bytes say it is
	// not text either.
	bad := bytes.Clone(archive)
	bad[0] ^= 0x20
	if isTarHead(bad) || !isTarHead(archive) {
		t.Errorf("isTarHead: %v for a damaged header, %v for a good one", isTarHead(bad), isTarHead(archive))
	}
	path := writeFile(t, dir, "damaged.dat", bad)
	_, r = readAll([]string{path}, Options{})
	wantParseError(t, r.Err(), path, 0, ErrNotText)

	// Nested archives and a compressed zip archive.
	outer := filepath.Join(dir, "outer")
	writeFile(t, outer, "a.txt", []byte("before\n"))
	writeFile(t, outer, "inner.tar.gz", gzipBytes(t, archive))
	path = writeFile(t, dir, "outer.tar", tarDir(t, outer))
	docs, r := readAll([]string{path}, Options{})
	if len(docs) != 1 {
		t.Errorf("%d documents before the nested archive, want 1", len(docs))
	}
	wantParseError(t, r.Err(), path+"/inner.tar.gz", 0, ErrNotText)
	outer2 := filepath.Join(dir, "outer2")
	writeFile(t, outer2, "inner.zip", zipped)
	path = writeFile(t, dir, "outer2.tar", tarDir(t, outer2))
	_, r = readAll([]string{path}, Options{})
	wantParseError(t, r.Err(), path+"/inner.zip", 0, ErrNotText)
	if !strings.Contains(r.Err().Error(), "zip archive inside") {
		t.Errorf("a zip archive in a tar archive: %v", r.Err())
	}
}

// TestIsTarHead: every header format archive/tar writes is known, and
// nothing shorter than a header or without its magic.
func TestIsTarHead(t *testing.T) {
	for _, format := range []tar.Format{tar.FormatUSTAR, tar.FormatPAX, tar.FormatGNU} {
		var b bytes.Buffer
		tw := tar.NewWriter(&b)
		hdr := &tar.Header{Name: "x.txt", Mode: 0o644, Size: 3, Format: format}
		if format == tar.FormatPAX {
			hdr.PAXRecords = map[string]string{"comment": "a PAX record"}
		}
		if err := tw.WriteHeader(hdr); err != nil {
			t.Fatal(err)
		}
		if _, err := tw.Write([]byte("abc")); err != nil {
			t.Fatal(err)
		}
		if err := tw.Close(); err != nil {
			t.Fatal(err)
		}
		data := b.Bytes()
		if !isTarHead(data) {
			t.Errorf("%v: not known as tar: % x", format, data[256:264])
		}
		if isTarHead(data[:511]) {
			t.Errorf("%v: 511 bytes known as tar", format)
		}
		for _, at := range []int{100, 148, 257, 511} {
			d := bytes.Clone(data)
			d[at]++
			if isTarHead(d) {
				t.Errorf("%v: byte %d changed, still known as tar", format, at)
			}
		}
	}
	text := bytes.Repeat([]byte("ustar "), 200)
	if isTarHead(text) {
		t.Error("text known as tar")
	}
}

// FuzzArchive reads arbitrary bytes as a tar or zip archive: it never panics, and
// an error is a *ParseError naming the archive or one of its members.
func FuzzArchive(f *testing.F) {
	dir := f.TempDir()
	tree := filepath.Join(dir, "tree")
	writeFile(f, tree, "a.txt", []byte("first file\nsecond line\n"))
	writeFile(f, tree, "b/c.txt", []byte("more\n\nwords\n"))
	good := tarDir(f, tree)
	f.Add(good)
	f.Add(good[:700])
	f.Add(gzipBytes(f, good))
	f.Add([]byte{})
	f.Add(zipDir(f, tree))
	f.Fuzz(func(t *testing.T, data []byte) {
		// x.tar is read as zip when it begins as one.
		path := filepath.Join(t.TempDir(), "x.tar")
		if err := os.WriteFile(path, data, 0o644); err != nil {
			t.Fatal(err)
		}
		for _, opt := range []Options{{}, {DocSep: DocSepBlank}, {TextField: "text"}} {
			docs, r := readBatches([]string{path}, opt, 1<<10)
			for _, d := range docs {
				if !strings.HasPrefix(d.Path, path+"/") {
					t.Fatalf("document at %s, not in the archive", d.Path)
				}
			}
			if err := r.Err(); err != nil {
				var pe *ParseError
				if !errors.As(err, &pe) || pe.Path != path && !strings.HasPrefix(pe.Path, path+"/") {
					t.Fatalf("error %v (%T) does not name the archive", err, err)
				}
			}
		}
		// On standard input, an archive is known by its content alone:
		// its documents are named inside "-", and so are its errors.
		withStdin(t, data)
		docs, r := readBatches([]string{"-"}, Options{}, 1<<10)
		inside := len(docs) > 0 && strings.HasPrefix(docs[0].Path, "-/")
		for _, d := range docs {
			if strings.HasPrefix(d.Path, "-/") != inside || !inside && d.Path != "-" {
				t.Fatalf("document at %s after one at %s", d.Path, docs[0].Path)
			}
		}
		if err := r.Err(); err != nil {
			var pe *ParseError
			if !errors.As(err, &pe) || pe.Path != "-" && !strings.HasPrefix(pe.Path, "-/") {
				t.Fatalf("stdin: error %v (%T) does not name it", err, err)
			}
		}
	})
}

// TestReadAhead compares readAhead's reads with the file's own at random
// offsets and lengths: within the window, across it, past the end, and
// larger than half of it.
func TestReadAhead(t *testing.T) {
	data := make([]byte, 3*readAheadSize+12345)
	for i := range data {
		data[i] = byte(i*7 + i>>9)
	}
	path := writeFile(t, t.TempDir(), "f.bin", data)
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	ra := &readAhead{f: f}
	rng := rand.New(rand.NewPCG(1, 2))
	for i := range 3000 {
		off := rng.Int64N(int64(len(data)) + 100)
		if i%3 == 0 && i > 0 {
			off = min(off, int64(len(data))) // sequential-ish runs are common
		}
		n := rng.IntN(5000)
		if i%50 == 0 {
			n = readAheadSize/2 + rng.IntN(readAheadSize)
		}
		want, got := make([]byte, n), make([]byte, n)
		wn, werr := f.ReadAt(want, off)
		gn, gerr := ra.ReadAt(got, off)
		if gn != wn || !bytes.Equal(got[:gn], want[:wn]) || (werr == nil) != (gerr == nil) {
			t.Fatalf("ReadAt(%d bytes, %d) = %d, %v; the file gives %d, %v", n, off, gn, gerr, wn, werr)
		}
	}
}
