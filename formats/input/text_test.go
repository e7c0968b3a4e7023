package input

import (
	"bytes"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unsafe"
)

func TestTextLines(t *testing.T) {
	dir := t.TempDir()
	content := "\xef\xbb\xbffirst\r\n\n  \t\nsecond line\r\nthird\rinner\n\xff\xfe bad utf8\nlast without newline"
	want := func(path string) []doc {
		return []doc{
			{"first", path, 1},
			{"second line", path, 4},
			{"third\rinner", path, 5},
			{"\xff\xfe bad utf8", path, 6},
			{"last without newline", path, 7},
		}
	}
	files := map[string][]byte{
		"a.txt":     []byte(content),
		"a.txt.gz":  gzipBytes(t, []byte(content)),
		"a.txt.zst": zstdBytes(t, []byte(content)),
	}
	for name, data := range files {
		t.Run(name, func(t *testing.T) {
			path := writeFile(t, dir, name, data)
			equalDocs(t, mustReadAll(t, []string{path}, Options{}), want(path))
		})
	}
	t.Run("bzip2", func(t *testing.T) {
		path := writeFile(t, dir, "a.txt.bz2", bzip2Bytes(t, []byte(content)))
		equalDocs(t, mustReadAll(t, []string{path}, Options{}), want(path))
	})
	t.Run("stdin", func(t *testing.T) {
		withStdin(t, zstdBytes(t, []byte(content)))
		equalDocs(t, mustReadAll(t, []string{"-"}, Options{DocSep: DocSepLine}), want("-"))
	})
}

func TestTextParagraphs(t *testing.T) {
	dir := t.TempDir()
	content := "\r\n\n  \nOne\r\ntwo  \r\n\r\n\r\n\t\r\nthree\nfour\nfive\n\n\nsix\n \n\n"
	path := writeFile(t, dir, "p.txt", []byte(content))
	want := []doc{
		{"One\ntwo  ", path, 4},
		{"three\nfour\nfive", path, 9},
		{"six", path, 14},
	}
	equalDocs(t, mustReadAll(t, []string{path}, Options{DocSep: DocSepBlank}), want)

	// The last paragraph need not end with a newline.
	path2 := writeFile(t, dir, "q.txt", []byte("a\nb\n\nc\nd"))
	equalDocs(t, mustReadAll(t, []string{path2}, Options{DocSep: DocSepBlank}),
		[]doc{{"a\nb", path2, 1}, {"c\nd", path2, 4}})

	// The committed bzip2 file: CRLF paragraphs.
	bz := filepath.Join("testdata", "austen.txt.bz2")
	equalDocs(t, mustReadAll(t, []string{bz}, Options{DocSep: DocSepBlank}), []doc{
		{"It is a truth universally acknowledged,\nthat a single man in possession of a good fortune,", bz, 1},
		{"must be in want of a wife.", bz, 4},
	})
}

// TestTextWholeInput: with --doc-sep file each input is one document, its
// non-blank lines joined with '\n' and its line the first of them; an
// input of blank lines is none, and one past the limit is an error at its
// first line that says why.
func TestTextWholeInput(t *testing.T) {
	dir := t.TempDir()
	a := writeFile(t, dir, "a.txt", []byte("\r\n  \nOne\r\ntwo  \r\n\r\n\t\r\nthree\n"))
	blank := writeFile(t, dir, "blank.txt", []byte("\n \n\t\n"))
	b := writeFile(t, dir, "b.txt.gz", gzipBytes(t, []byte("x\n\ny")))
	opt := Options{DocSep: DocSepFile}
	equalDocs(t, mustReadAll(t, []string{a, blank, b}, opt), []doc{
		{"One\ntwo  \nthree", a, 3},
		{"x\ny", b, 1},
	})
	batched, r := readBatches([]string{a, blank, b}, opt, 4)
	if err := r.Err(); err != nil {
		t.Fatal(err)
	}
	equalDocs(t, batched, []doc{{"One\ntwo  \nthree", a, 3}, {"x\ny", b, 1}})

	_, r = readAll([]string{a}, Options{DocSep: DocSepFile, MaxLineBytes: 10})
	wantParseError(t, r.Err(), a, 3, ErrLineTooLong)
	if !strings.Contains(r.Err().Error(), "document (the whole input, with --doc-sep file) longer than 10 bytes") {
		t.Errorf("error %q does not say why", r.Err())
	}
}

func TestReaderSeveralInputs(t *testing.T) {
	dir := t.TempDir()
	a := writeFile(t, dir, "a.txt", []byte("a1\na2\n"))
	empty := writeFile(t, dir, "empty.txt", nil)
	b := writeFile(t, dir, "b.gz", gzipBytes(t, []byte("b1\n")))
	withStdin(t, []byte("s1\ns2"))
	r := NewReader([]string{a, empty, "-", b}, Options{})
	var got []doc
	for r.Next() {
		d := r.Doc()
		got = append(got, doc{string(d.Text), d.Path, d.Line})
		if d.Path == b {
			// Only inputs read to the end have a fingerprint.
			if n := len(r.Fingerprints()); n != 3 {
				t.Errorf("%d fingerprints while reading the fourth input, want 3", n)
			}
		}
	}
	if err := r.Err(); err != nil {
		t.Fatal(err)
	}
	equalDocs(t, got, []doc{{"a1", a, 1}, {"a2", a, 2}, {"s1", "-", 1}, {"s2", "-", 2}, {"b1", b, 1}})
	fps := r.Fingerprints()
	wantPaths := []string{a, empty, "-", b}
	wantSizes := []int64{6, 0, 5, int64(len(gzipBytes(t, []byte("b1\n"))))}
	if len(fps) != len(wantPaths) {
		t.Fatalf("%d fingerprints, want %d", len(fps), len(wantPaths))
	}
	for i, fp := range fps {
		if fp.Path != wantPaths[i] || fp.Size != wantSizes[i] {
			t.Errorf("fingerprint %d = %+v, want path %s size %d", i, fp, wantPaths[i], wantSizes[i])
		}
	}
	if err := r.Close(); err != nil {
		t.Fatal(err)
	}
	if r.Next() {
		t.Error("Next after Close returned true")
	}
}

func TestTextErrors(t *testing.T) {
	dir := t.TempDir()
	var lines bytes.Buffer
	const nlines = 30000 // several zstd blocks, so a cut leaves whole blocks before it
	for i := range nlines {
		lines.WriteString(strings.Repeat("w", i%50+1))
		lines.WriteByte('\n')
	}
	gz := gzipBytes(t, lines.Bytes())
	zst := zstdBytes(t, lines.Bytes())

	// A truncated stream fails at the line the data stops in, after
	// delivering every complete line before it.
	for name, data := range map[string][]byte{"cut.gz": gz[:len(gz)*2/3], "cut.zst": zst[:len(zst)*2/3]} {
		t.Run(name, func(t *testing.T) {
			path := writeFile(t, dir, name, data)
			docs, r := readAll([]string{path}, Options{})
			n := int64(len(docs))
			if n == 0 || n >= nlines {
				t.Fatalf("read %d lines before the error", n)
			}
			for i, d := range docs {
				if want := strings.Repeat("w", i%50+1); d.Text != want {
					t.Fatalf("line %d = %q, want %q", i+1, d.Text, want)
				}
			}
			wantParseError(t, r.Err(), path, n+1, ErrCorrupt)
		})
	}

	t.Run("long line", func(t *testing.T) {
		content := "short\n" + strings.Repeat("y", 100) + "\nok\n" + strings.Repeat("z", 5000) + "\n"
		path := writeFile(t, dir, "long.txt", []byte(content))
		// Exactly at the limit is fine, also with a CRLF ending.
		docs, r := readAll([]string{path}, Options{MaxLineBytes: 100})
		wantParseError(t, r.Err(), path, 4, ErrLineTooLong)
		if len(docs) != 3 {
			t.Errorf("read %d lines before the error, want 3", len(docs))
		}
		_, r = readAll([]string{path}, Options{MaxLineBytes: 99})
		wantParseError(t, r.Err(), path, 2, ErrLineTooLong)
		crlf := writeFile(t, dir, "crlf.txt", []byte(strings.Repeat("y", 100)+"\r\n"))
		equalDocs(t, mustReadAll(t, []string{crlf}, Options{MaxLineBytes: 100}), []doc{{strings.Repeat("y", 100), crlf, 1}})
		// Longer than the scanner's buffer can ever grow.
		huge := writeFile(t, dir, "huge.txt", []byte("a\nb\n"+strings.Repeat("h", 3<<20)))
		_, r = readAll([]string{huge}, Options{MaxLineBytes: 1 << 20})
		wantParseError(t, r.Err(), huge, 3, ErrLineTooLong)
		// Lines longer than the first buffer, which grows to take them,
		// then one past the limit.
		long := strings.Repeat("g", 5<<19)
		grown := writeFile(t, dir, "grown.txt", []byte("a\n"+long+"\r\nb\n"+strings.Repeat("x", 3<<20)+"\r\n"+strings.Repeat("w", 3<<20+1)+"\n"))
		docs, r = readAll([]string{grown}, Options{MaxLineBytes: 3 << 20})
		wantParseError(t, r.Err(), grown, 5, ErrLineTooLong)
		equalDocs(t, docs, []doc{{"a", grown, 1}, {long, grown, 2}, {"b", grown, 3}, {strings.Repeat("x", 3<<20), grown, 4}})
	})

	t.Run("long paragraph", func(t *testing.T) {
		path := writeFile(t, dir, "para.txt", []byte("a\n\nb\nccc\nddd\n\ne\n"))
		_, r := readAll([]string{path}, Options{DocSep: DocSepBlank, MaxLineBytes: 6})
		wantParseError(t, r.Err(), path, 3, ErrLineTooLong)
	})

	t.Run("missing file", func(t *testing.T) {
		a := writeFile(t, dir, "ok.txt", []byte("x\n"))
		missing := filepath.Join(dir, "nope.txt")
		docs, r := readAll([]string{a, missing}, Options{})
		if len(docs) != 1 {
			t.Errorf("got %d documents before the error, want 1", len(docs))
		}
		wantParseError(t, r.Err(), missing, 0, os.ErrNotExist)
	})

	// Binary files found beside a corpus, pwe's own outputs among them,
	// are refused as text and JSON Lines, after the documents before them.
	t.Run("binary files", func(t *testing.T) {
		a := writeFile(t, dir, "ok.jsonl", []byte(`{"text": "x"}`+"\n"))
		utf16 := func(s string, bigEndian bool) string {
			var b []byte
			for _, c := range []byte(s) {
				if bigEndian {
					b = append(b, 0, c)
				} else {
					b = append(b, c, 0)
				}
			}
			return string(b)
		}
		// Each file's head, and what the message says it is.
		for name, c := range map[string]struct{ head, says string }{
			"vocab.parquet": {"PAR1\x15", "Parquet"}, "tokens.bin": {"PWETOKS1", "token stream"},
			"counts.arrow": {"\xff\xff\xff\xff\x10\x01", "Arrow"}, "data.arrow": {"ARROW1\x00\x00", "Arrow"},
			"texts.7z": {"7z\xbc\xaf\x27\x1c\x00\x04", "7-Zip"}, "texts.lz4": {"\x04\x22\x4d\x18\x64\x40", "LZ4"},
			"paper.pdf": {"%PDF-1.7\n%", "PDF"},
			"le.txt":    {"\xff\xfe" + utf16("UTF-16 text\n", false), "UTF-16 text (pwe reads UTF-8"},
			"be.txt":    {"\xfe\xff" + utf16("UTF-16 text\n", true), "UTF-16 text (pwe reads UTF-8"},
			"nobom.txt": {utf16("UTF-16 text\n", false), "NUL byte at offset 1:"},
			"image.png": {"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR", "NUL byte at offset 8:"},
			"photo.jpg": {"\xff\xd8\xff\xe0\x00\x10JFIF", "NUL byte at offset 4:"},
			"program":   {"\x7fELF\x02\x01\x01\x00", "NUL byte at offset 7:"},
		} {
			path := writeFile(t, dir, name, []byte(c.head+"\x00\x01 binary\n"))
			for _, o := range []Options{{}, {TextField: "text"}} {
				docs, r := readAll([]string{a, path}, o)
				if len(docs) != 1 {
					t.Errorf("%s: got %d documents before the error, want 1", name, len(docs))
				}
				wantParseError(t, r.Err(), path, 0, ErrNotText)
				if !strings.Contains(fmt.Sprint(r.Err()), c.says) {
					t.Errorf("%s: %v does not say %q", name, r.Err(), c.says)
				}
			}
			// Compressed, and inside an archive.
			gz := writeFile(t, dir, name+".gz", gzipBytes(t, []byte(c.head+"\x00 binary\n")))
			_, r := readAll([]string{gz}, Options{})
			wantParseError(t, r.Err(), gz, 0, ErrNotText)
			tree := filepath.Join(dir, "tree-"+name)
			writeFile(t, tree, "a.txt", []byte("text\n"))
			writeFile(t, tree, "b/"+name, []byte(c.head+"\x00 binary\n"))
			tr := writeFile(t, dir, name+".tar", tarDir(t, tree))
			docs, r := readAll([]string{tr}, Options{})
			if len(docs) != 1 {
				t.Errorf("%s in an archive: got %d documents before the error, want 1", name, len(docs))
			}
			wantParseError(t, r.Err(), tr+"/b/"+name, 0, ErrNotText)
		}
		// Text that starts with the letters is text, and so is text with
		// a NUL byte past the head that is judged.
		late := strings.Repeat("words ", 100) + "\x00 nul\n"
		for _, text := range []string{"PAR1s of golf", "ARROW10 points right", late} {
			par := writeFile(t, dir, "par.txt", []byte(text+"\n"))
			equalDocs(t, mustReadAll(t, []string{par}, Options{}), []doc{{strings.TrimSuffix(text, "\n"), par, 1}})
		}
	})

	t.Run("invalid options", func(t *testing.T) {
		_, r := readAll(nil, Options{DocSep: "para"})
		if r.Err() == nil || !strings.Contains(r.Err().Error(), "para") {
			t.Errorf("got %v, want an error naming the bad DocSep", r.Err())
		}
	})
}

func TestOptionsValidate(t *testing.T) {
	valid := []Options{
		{},
		{DocSep: DocSepBlank},
		{TextField: "text"},
		{Format: JSONL, TextField: "text"},
		{TextColumn: "body"},
		{Format: Parquet, TextColumn: "body", MaxLineBytes: 10},
	}
	for _, o := range valid {
		if err := o.Validate(); err != nil {
			t.Errorf("%+v: %v", o, err)
		}
	}
	// The errors name the settings as the command line does.
	invalid := []struct {
		o    Options
		want string
	}{
		{Options{DocSep: "paragraph"}, `--doc-sep "paragraph"`},
		{Options{TextField: "a", TextColumn: "b"}, "--text-field (JSON Lines) and --text-column (Parquet)"},
		{Options{Format: JSONL}, "needs --text-field"},
		{Options{Format: Parquet}, "needs --text-column"},
		{Options{Format: Parquet, TextField: "x"}, "needs --text-column"},
		{Options{Format: Parquet, TextField: "x", TextColumn: "c"}, "exclude each other"},
		{Options{Format: JSONL, TextField: "x", TextColumn: "y"}, "exclude each other"},
		{Options{Format: Text + 7}, "unknown"},
		{Options{TextField: "text", DocSep: DocSepBlank}, "--doc-sep blank applies only to text"},
		{Options{TextField: "text", DocSep: DocSepFile}, "--doc-sep file applies only to text"},
		{Options{MaxLineBytes: -1}, "MaxLineBytes"},
	}
	for _, c := range invalid {
		if err := c.o.Validate(); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%+v: error %v, want one saying %q", c.o, err, c.want)
		}
	}
	if o := (Options{TextColumn: "c"}).withDefaults(); o.Format != Parquet {
		t.Errorf("TextColumn alone gives %v, want parquet", o.Format)
	}
	for _, f := range []Format{Text, JSONL, Parquet, CSV, TSV} {
		if g, err := ParseFormat(f.String()); err != nil || g != f {
			t.Errorf("ParseFormat(%q) = %v, %v", f.String(), g, err)
		}
	}
	if _, err := ParseFormat("xml"); err == nil {
		t.Error("ParseFormat(xml) succeeded")
	}
}

func TestBatches(t *testing.T) {
	dir := t.TempDir()
	var a, b bytes.Buffer
	for i := range 3000 {
		a.WriteString(strings.Repeat("a", i%300))
		a.WriteByte('\n')
	}
	for i := range 500 {
		b.WriteString(strings.Repeat("b", i%7+1))
		b.WriteString("\n")
	}
	pa := writeFile(t, dir, "a.txt", a.Bytes())
	pb := writeFile(t, dir, "b.zst", zstdBytes(t, b.Bytes()))
	paths := []string{pa, pb}
	want := mustReadAll(t, paths, Options{})

	for _, maxBytes := range []int{1, 100, 1000, 1 << 20} {
		r := NewReader(paths, Options{})
		var got []doc
		var batch Batch
		next := int64(0)
		for r.NextBatch(&batch, maxBytes) {
			if batch.Len() == 0 {
				t.Fatal("empty batch")
			}
			if batch.Seq != next {
				t.Fatalf("batch Seq %d, want %d", batch.Seq, next)
			}
			next += int64(batch.Len())
			size := 0
			for i, d := range batch.Docs {
				size += len(d)
				got = append(got, doc{string(d), batch.Paths[i], batch.Lines[i]})
			}
			if batch.Len() > 1 && size > maxBytes {
				t.Fatalf("batch of %d documents holds %d bytes, limit %d", batch.Len(), size, maxBytes)
			}
			// One contiguous buffer: each text starts where the last ended.
			for i := 1; i < batch.Len(); i++ {
				prev, cur := batch.Docs[i-1], batch.Docs[i]
				if cap(prev) != len(prev) {
					t.Fatal("a batch text can be appended to over its neighbour")
				}
				end := uintptr(unsafe.Pointer(unsafe.SliceData(prev))) + uintptr(len(prev))
				if len(prev) > 0 && len(cur) > 0 && end != uintptr(unsafe.Pointer(unsafe.SliceData(cur))) {
					t.Fatal("batch texts are not contiguous")
				}
			}
			batch = Batch{} // hand the batch away; the next one must not share its memory
		}
		if err := r.Err(); err != nil {
			t.Fatal(err)
		}
		equalDocs(t, got, want)
		if next != int64(len(want)) {
			t.Errorf("maxBytes %d: ordinals end at %d, want %d", maxBytes, next, len(want))
		}
	}

	// Reusing one Batch gives the same documents too.
	r := NewReader(paths, Options{})
	var batch Batch
	var got []doc
	for r.NextBatch(&batch, 4096) {
		for i, d := range batch.Docs {
			got = append(got, doc{string(d), batch.Paths[i], batch.Lines[i]})
		}
	}
	equalDocs(t, got, want)
}

// A batch handed to another goroutine keeps its text while the reader moves on.
func TestBatchOwnsText(t *testing.T) {
	path := writeFile(t, t.TempDir(), "a.txt", []byte("alpha\nbeta\ngamma\ndelta\n"))
	r := NewReader([]string{path}, Options{})
	var first, second Batch
	if !r.NextBatch(&first, 10) || !r.NextBatch(&second, 10) {
		t.Fatal(r.Err())
	}
	if got := string(bytes.Join(first.Docs, []byte("|"))); got != "alpha|beta" {
		t.Errorf("first batch %q after reading the second, want alpha|beta", got)
	}
	if got := string(bytes.Join(second.Docs, []byte("|"))); got != "gamma|delta" {
		t.Errorf("second batch %q, want gamma|delta", got)
	}
	if second.Seq != 2 {
		t.Errorf("second Seq %d, want 2", second.Seq)
	}
}

// naiveText is the reference for the text reader: split, strip CR and BOM,
// drop blank lines, join paragraphs, and find where the line limit fails.
func naiveText(data []byte, mode textMode, maxLine int) (docs []doc, errLine int64) {
	lines := strings.Split(string(data), "\n")
	if len(lines) > 0 && lines[len(lines)-1] == "" {
		lines = lines[:len(lines)-1]
	}
	var para []string
	var start int64
	for i, l := range lines {
		n := int64(i + 1)
		l = strings.TrimSuffix(l, "\r")
		if len(l) > maxLine {
			return docs, n
		}
		if n == 1 {
			l = strings.TrimPrefix(l, "\xef\xbb\xbf")
		}
		blank := strings.Trim(l, " \t\r\f\v") == ""
		if mode == byLine {
			if !blank {
				docs = append(docs, doc{l, "-", n})
			}
			continue
		}
		if blank {
			if para != nil && mode == byParagraph {
				docs = append(docs, doc{strings.Join(para, "\n"), "-", start})
				para = nil
			}
			continue
		}
		if para == nil {
			start = n
		}
		para = append(para, l)
		if len(strings.Join(para, "\n")) > maxLine {
			return docs, start
		}
	}
	if para != nil {
		docs = append(docs, doc{strings.Join(para, "\n"), "-", start})
	}
	return docs, 0
}

func FuzzTextReader(f *testing.F) {
	f.Add([]byte("a\nb\r\n\n\nc d\n"), uint8(byLine))
	f.Add([]byte("\xef\xbb\xbfa\r\n \r\nb\nc\n\n"), uint8(byParagraph))
	f.Add([]byte(strings.Repeat("x", 70)+"\n\n"+strings.Repeat("y", 30)+"\n"+strings.Repeat("z", 30)), uint8(byParagraph))
	f.Add([]byte("\r\r\n\x00\xff\n\t\n"), uint8(byLine))
	f.Add([]byte("a\n\n b\r\n\t\nc"), uint8(byInput))
	f.Add([]byte(strings.Repeat("x", 30)+"\n\n"+strings.Repeat("y", 30)+"\n"), uint8(byInput))
	f.Fuzz(func(t *testing.T, data []byte, m uint8) {
		if notReadAsText(data) {
			return
		}
		const maxLine = 64
		withStdin(t, data)
		mode := textMode(m % 3)
		opt := Options{MaxLineBytes: maxLine, DocSep: [...]string{DocSepLine, DocSepBlank, DocSepFile}[mode]}
		got, r := readAll([]string{"-"}, opt)
		want, errLine := naiveText(data, mode, maxLine)
		if errLine > 0 {
			var pe *ParseError
			if !errors.As(r.Err(), &pe) || pe.Line != errLine || !errors.Is(r.Err(), ErrLineTooLong) {
				t.Fatalf("error %v, want line too long at line %d", r.Err(), errLine)
			}
		} else if r.Err() != nil {
			t.Fatal(r.Err())
		}
		equalDocs(t, got, want)
	})
}

// TestNextBatchMatchesNext reads random text files, with blank lines, CRLF
// endings, a byte-order mark, a last line without a newline, an empty file
// and, last, a line over the limit, through NextBatch at several batch
// sizes, and checks that the batches hold exactly the documents Next gives,
// with their ordinals, and end with the same error.
func TestNextBatchMatchesNext(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	dir := t.TempDir()
	words := []string{"a", "bb", "ccc", "dddd", " ", "\t", "é", "\xef\xbb\xbf"}
	var paths []string
	for i := range 6 {
		var b strings.Builder
		if i == 1 {
			b.WriteString("\xef\xbb\xbf")
		}
		for range r.IntN(200) {
			for range r.IntN(6) {
				b.WriteString(words[r.IntN(len(words))])
			}
			b.WriteString([]string{"\n", "\r\n", "\n\n"}[r.IntN(3)])
		}
		if i == 2 {
			b.WriteString("no newline at the end")
		}
		if i == 3 {
			b.Reset()
		}
		if i == 5 {
			b.WriteString(strings.Repeat("x", 50) + "\nafter\n")
		}
		paths = append(paths, writeFile(t, dir, fmt.Sprintf("f%d.txt", i), []byte(b.String())))
	}
	opt := Options{MaxLineBytes: 40}
	want, wr := readAll(paths, opt)
	if !errors.Is(wr.Err(), ErrLineTooLong) || len(want) < 100 {
		t.Fatalf("Next read %d documents, then %v; want many, then a line too long", len(want), wr.Err())
	}
	for _, maxBytes := range []int{1, 7, 64, 1 << 20} {
		br := NewReader(paths, opt)
		var got []doc
		var b Batch
		for br.NextBatch(&b, maxBytes) {
			if b.Seq != int64(len(got)) {
				t.Fatalf("maxBytes %d: batch Seq %d after %d documents", maxBytes, b.Seq, len(got))
			}
			size := 0
			for i, d := range b.Docs {
				got = append(got, doc{string(d), b.Paths[i], b.Lines[i]})
				size += len(d)
			}
			if len(b.Docs) > 1 && size > maxBytes {
				t.Fatalf("maxBytes %d: a batch of %d documents holds %d bytes", maxBytes, len(b.Docs), size)
			}
		}
		equalDocs(t, got, want)
		if br.Err() == nil || br.Err().Error() != wr.Err().Error() {
			t.Errorf("maxBytes %d: NextBatch ends with %v, Next with %v", maxBytes, br.Err(), wr.Err())
		}
		br.Close()
	}
}
