package input

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/parquet-go/parquet-go"
)

type pqMeta struct {
	Title string `parquet:"title"`
}

type pqRow struct {
	ID    int64    `parquet:"id"`
	Text  *string  `parquet:"text,optional"`
	Dict  string   `parquet:"dict,dict"`
	Blob  []byte   `parquet:"blob"`
	Score float64  `parquet:"score"`
	Tags  []string `parquet:"tags,list"`
	Meta  pqMeta   `parquet:"meta"`
}

// pqText gives row i its text; every 7th row is null.
func pqText(i int) *string {
	if i%7 == 3 {
		return nil
	}
	s := fmt.Sprintf("row %d %s", i, strings.Repeat("w", i%23))
	return &s
}

func writeParquet(t testing.TB, path string, n int, opts ...parquet.WriterOption) {
	t.Helper()
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	w := parquet.NewGenericWriter[pqRow](f, opts...)
	rows := make([]pqRow, n)
	for i := range rows {
		rows[i] = pqRow{
			ID: int64(i), Text: pqText(i), Dict: fmt.Sprintf("d%d", i%5), Blob: []byte{byte(i), 0xff},
			Score: float64(i), Tags: []string{"a"}, Meta: pqMeta{Title: fmt.Sprintf("title %d", i)},
		}
	}
	if _, err := w.Write(rows); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
}

func TestParquet(t *testing.T) {
	dir := t.TempDir()
	const n = 5000
	path := filepath.Join(dir, "docs.parquet")
	// Small row groups and pages, so reading crosses many of both.
	writeParquet(t, path, n, parquet.MaxRowsPerRowGroup(1200), parquet.PageBufferSize(2048))
	pf := openParquetForTest(t, path)
	if len(pf.RowGroups()) < 4 {
		t.Fatalf("test file has %d row groups, want several", len(pf.RowGroups()))
	}

	docs, r := readAll([]string{path}, Options{TextColumn: "text"})
	if err := r.Err(); err != nil {
		t.Fatal(err)
	}
	var want []doc
	nulls := int64(0)
	for i := range n {
		if s := pqText(i); s != nil {
			want = append(want, doc{*s, path, int64(i + 1)})
		} else {
			nulls++
		}
	}
	equalDocs(t, docs, want)
	if r.Skipped() != nulls {
		t.Errorf("skipped %d, want %d null rows", r.Skipped(), nulls)
	}
	fp, err := FingerprintFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if got := r.Fingerprints(); len(got) != 1 || got[0] != fp {
		t.Errorf("fingerprints %+v, want [%+v]", got, fp)
	}

	t.Run("dictionary and nested columns", func(t *testing.T) {
		for column, text := range map[string]func(int) string{
			"dict":       func(i int) string { return fmt.Sprintf("d%d", i%5) },
			"meta.title": func(i int) string { return fmt.Sprintf("title %d", i) },
			"blob":       func(i int) string { return string([]byte{byte(i), 0xff}) },
		} {
			var want []doc
			for i := range n {
				want = append(want, doc{text(i), path, int64(i + 1)})
			}
			equalDocs(t, mustReadAll(t, []string{path}, Options{TextColumn: column}), want)
		}
	})

	t.Run("batches", func(t *testing.T) {
		r := NewReader([]string{path, path}, Options{TextColumn: "text"})
		var b Batch
		var got []doc
		for r.NextBatch(&b, 3000) {
			for i, d := range b.Docs {
				got = append(got, doc{string(d), b.Paths[i], b.Lines[i]})
			}
		}
		if err := r.Err(); err != nil {
			t.Fatal(err)
		}
		equalDocs(t, got, append(append([]doc(nil), want...), want...))
	})
}

func openParquetForTest(t *testing.T, path string) *parquet.File {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	info, err := f.Stat()
	if err != nil {
		t.Fatal(err)
	}
	pf, err := parquet.OpenFile(f, info.Size())
	if err != nil {
		t.Fatal(err)
	}
	return pf
}

func TestParquetErrors(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "docs.parquet")
	writeParquet(t, path, 10)

	t.Run("missing column", func(t *testing.T) {
		_, r := readAll([]string{path}, Options{TextColumn: "body"})
		wantParseError(t, r.Err(), path, 0, ErrNoColumn)
		for _, c := range []string{`"body"`, "id", "text", "dict", "score", "meta.title"} {
			if !strings.Contains(r.Err().Error(), c) {
				t.Errorf("message %q does not mention %s", r.Err(), c)
			}
		}
	})
	for _, column := range []string{"score", "id", "tags.list.element", "meta"} {
		t.Run("type "+column, func(t *testing.T) {
			_, r := readAll([]string{path}, Options{TextColumn: column})
			target := ErrColumnType
			if column == "meta" { // a group, not a column
				target = ErrNoColumn
			}
			wantParseError(t, r.Err(), path, 0, target)
		})
	}
	t.Run("not parquet", func(t *testing.T) {
		text := writeFile(t, dir, "text.parquet", []byte("just some text, long enough to have a footer\n"))
		_, r := readAll([]string{text}, Options{TextColumn: "text"})
		wantParseError(t, r.Err(), text, 0, ErrNotParquet)
		tiny := writeFile(t, dir, "tiny.parquet", []byte("PAR"))
		_, r = readAll([]string{tiny}, Options{TextColumn: "text"})
		wantParseError(t, r.Err(), tiny, 0, ErrNotParquet)
	})
	t.Run("truncated", func(t *testing.T) {
		data, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		cut := writeFile(t, dir, "cut.parquet", data[:len(data)-20])
		_, r := readAll([]string{cut}, Options{TextColumn: "text"})
		wantParseError(t, r.Err(), cut, 0, ErrNotParquet)
	})
	t.Run("stdin", func(t *testing.T) {
		_, r := readAll([]string{"-"}, Options{TextColumn: "text"})
		wantParseError(t, r.Err(), "-", 0, ErrParquetStream)
	})
	t.Run("missing file", func(t *testing.T) {
		missing := filepath.Join(dir, "none.parquet")
		_, r := readAll([]string{missing}, Options{TextColumn: "text"})
		wantParseError(t, r.Err(), missing, 0, os.ErrNotExist)
	})
}

// Damage anywhere in a file must end in an error naming the file (or, where
// the damage hits only data bytes, in altered text), never in a panic.
func TestParquetDamaged(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "docs.parquet")
	writeParquet(t, path, 300, parquet.MaxRowsPerRowGroup(100), parquet.PageBufferSize(512))
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	damaged := filepath.Join(dir, "damaged.parquet")
	errs := 0
	for pos := 4; pos < len(data)-8; pos += max(1, len(data)/200) {
		bad := append([]byte(nil), data...)
		bad[pos] ^= 0xa5
		bad[pos+1] ^= 0x3c
		if err := os.WriteFile(damaged, bad, 0o644); err != nil {
			t.Fatal(err)
		}
		_, r := readAll([]string{damaged}, Options{TextColumn: "text"})
		if err := r.Err(); err != nil {
			errs++
			var pe *ParseError
			if !errors.As(err, &pe) || pe.Path != damaged {
				t.Fatalf("damage at byte %d: error %v does not name the file", pos, err)
			}
		}
	}
	if errs == 0 {
		t.Error("no damage was detected at all")
	}
	t.Logf("%d damaged files reported", errs)
}

// FuzzParquetReader feeds arbitrary bytes to the Parquet reader as a file:
// it must return documents or an error naming the file, in bounded time and
// memory (a damaged trailer once cost gigabytes before the error).
func FuzzParquetReader(f *testing.F) {
	dir := f.TempDir()
	path := filepath.Join(dir, "docs.parquet")
	writeParquet(f, path, 40, parquet.MaxRowsPerRowGroup(16), parquet.PageBufferSize(256))
	data, err := os.ReadFile(path)
	if err != nil {
		f.Fatal(err)
	}
	f.Add(data)
	f.Add(data[:len(data)/2])
	for _, at := range []int{4, len(data) / 3, len(data) / 2, len(data) - 40, len(data) - 12} {
		bad := bytes.Clone(data)
		bad[at] ^= 0xff
		bad[at+1] ^= 0x5a
		f.Add(bad)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		p := writeFile(t, t.TempDir(), "in.parquet", data)
		_, r := readAll([]string{p}, Options{TextColumn: "text"})
		defer r.Close()
		if err := r.Err(); err != nil {
			var pe *ParseError
			if !errors.As(err, &pe) || pe.Path != p {
				t.Errorf("error %v does not name the file", err)
			}
		}
	})
}
