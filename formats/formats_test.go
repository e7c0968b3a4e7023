package formats

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/parquet-go/parquet-go"
)

func TestVocabRoundTrip(t *testing.T) {
	t.Setenv("SOURCE_DATE_EPOCH", "86400")
	p := filepath.Join(t.TempDir(), "vocab.parquet")
	ext := int64(42)
	rows := []VocabRow{{0, "the", 10, nil}, {1, "Straße", 3, &ext}, {2, "日本", 1, nil}}
	cfg := map[string]any{"max_vocab": 3, "seed": 9}
	if err := WriteVocab(p, rows, Meta{Config: cfg, Inputs: []string{"a.txt"}}); err != nil {
		t.Fatal(err)
	}
	got, meta, err := ReadVocab(p)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != len(rows) {
		t.Fatalf("read %d rows, wrote %d", len(got), len(rows))
	}
	for i := range rows {
		a, b := rows[i], got[i]
		if !sameVocabRow(a, b) {
			t.Errorf("row %d: read %+v, wrote %+v", i, b, a)
		}
	}
	if meta.Schema != SchemaVocab || meta.CreatedAt != "1970-01-02T00:00:00Z" {
		t.Errorf("metadata schema %q created_at %q", meta.Schema, meta.CreatedAt)
	}
	var back map[string]any
	if err := json.Unmarshal(meta.Config.(json.RawMessage), &back); err != nil || back["seed"] != 9.0 {
		t.Errorf("config round trip: %v %v", back, err)
	}
}

// sameVocabRow reports whether two rows are equal, their external ids
// compared by value.
func sameVocabRow(a, b VocabRow) bool {
	return a.TokenID == b.TokenID && a.Token == b.Token && a.Count == b.Count && (a.ExternalID == nil) == (b.ExternalID == nil) &&
		(a.ExternalID == nil || *a.ExternalID == *b.ExternalID)
}

func TestReadVocabRejects(t *testing.T) {
	dir := t.TempDir()
	cases := []struct {
		name string
		rows []VocabRow
		want string
	}{
		{"ids out of order", []VocabRow{{0, "a", 2, nil}, {2, "b", 1, nil}}, "row 1: token_id 2"},
		{"duplicate token", []VocabRow{{0, "a", 2, nil}, {1, "a", 1, nil}}, "repeats row 0"},
		{"negative count", []VocabRow{{0, "a", -1, nil}}, "negative count"},
		{"empty token", []VocabRow{{0, "", 1, nil}}, "empty"},
		{"empty vocabulary", nil, "empty vocabulary"},
	}
	for _, c := range cases {
		p := filepath.Join(dir, strings.ReplaceAll(c.name, " ", "_")+".parquet")
		if err := WriteVocab(p, c.rows, Meta{}); err != nil {
			t.Fatal(err)
		}
		_, _, err := ReadVocab(p)
		if err == nil || !strings.Contains(err.Error(), c.want) || !strings.Contains(err.Error(), p) {
			t.Errorf("%s: error %v, want one naming the file and %q", c.name, err, c.want)
		}
	}
}

// TestCheckVocabRepeats checks checkVocab's search for repeated tokens on
// vocabularies of a few thousand tokens, many sharing hash-table slots,
// against a map: no error without a repeat, and with repeats, the first
// row that repeats an earlier one, named with that row.
func TestCheckVocabRepeats(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	for trial := range 200 {
		n := 1 + rng.IntN(3000)
		rows := make([]VocabRow, n)
		for i := range rows {
			// Short random tokens over four letters: repeats are common
			// unless the trial removes them.
			b := make([]byte, 1+rng.IntN(8))
			for k := range b {
				b[k] = "abcd"[rng.IntN(4)]
			}
			rows[i] = VocabRow{TokenID: int32(i), Token: string(b), Count: 1}
		}
		if trial%2 == 0 {
			// Make the tokens distinct, then perhaps repeat one.
			for i := range rows {
				rows[i].Token = fmt.Sprintf("%s%d", rows[i].Token, i)
			}
			if trial%4 == 0 && n > 1 {
				i := rng.IntN(n - 1)
				j := i + 1 + rng.IntN(n-1-i)
				rows[j].Token = rows[i].Token
			}
		}
		want := ""
		first := map[string]int{}
		for i, r := range rows {
			if j, ok := first[r.Token]; ok {
				want = fmt.Sprintf("v: row %d: token %q repeats row %d", i, r.Token, j)
				break
			}
			first[r.Token] = i
		}
		err := checkVocab("v", rows)
		switch {
		case want == "" && err != nil:
			t.Fatalf("trial %d: %d distinct tokens: %v", trial, n, err)
		case want != "" && (err == nil || err.Error() != want):
			t.Fatalf("trial %d: error %v, want %s", trial, err, want)
		}
	}
}

func TestOpenChecksSchemaAndColumns(t *testing.T) {
	dir := t.TempDir()
	counts := filepath.Join(dir, "counts.parquet")
	w, err := Create[CountRow](counts, Meta{Schema: SchemaCounts})
	if err != nil {
		t.Fatal(err)
	}
	w.Write([]CountRow{{0, 1, 2, 3}})
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if _, _, err := ReadAll[VocabRow](counts, SchemaVocab); !errors.Is(err, ErrNotPwe) {
		t.Errorf("reading counts as vocab: %v, want ErrNotPwe", err)
	}
	// Right schema name, wrong columns: a counts file that lacks n_neg.
	type short struct {
		TargetID  int32   `parquet:"target_id"`
		ContextID int32   `parquet:"context_id"`
		NPos      float64 `parquet:"n_pos"`
	}
	bad := filepath.Join(dir, "short.parquet")
	ws, _ := Create[short](bad, Meta{Schema: SchemaCounts})
	ws.Write([]short{{0, 1, 2}})
	ws.Close()
	_, _, err = ReadAll[CountRow](bad, SchemaCounts)
	if !errors.Is(err, ErrNotPwe) || !strings.Contains(err.Error(), `"n_neg"`) {
		t.Errorf("missing column: %v", err)
	}
	// A file that is not Parquet at all.
	junk := filepath.Join(dir, "junk.parquet")
	os.WriteFile(junk, []byte("not parquet"), 0o644)
	if _, err := Open[CountRow](junk, SchemaCounts); err == nil || !strings.Contains(err.Error(), "not a readable Parquet file") {
		t.Errorf("junk file: %v", err)
	}
}

func TestWriterAbortLeavesNothing(t *testing.T) {
	dir := t.TempDir()
	w, err := Create[CountRow](filepath.Join(dir, "c.parquet"), Meta{Schema: SchemaCounts})
	if err != nil {
		t.Fatal(err)
	}
	w.Write([]CountRow{{0, 0, 1, 1}})
	w.Abort()
	if entries, _ := os.ReadDir(dir); len(entries) != 0 {
		t.Errorf("abort left %d files", len(entries))
	}
}

// TestWriterFinish: a finished file is complete but unpublished until
// Close; Abort still discards it.
func TestWriterFinish(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "vocab.parquet")
	rows := []VocabRow{{0, "a", 2, nil}, {1, "b", 1, nil}}
	for _, publish := range []bool{false, true} {
		w, err := CreateVocab(path, Meta{})
		if err != nil {
			t.Fatal(err)
		}
		if err := w.Write(rows); err != nil {
			t.Fatal(err)
		}
		if err := w.Finish(); err != nil {
			t.Fatal(err)
		}
		if _, err := os.Stat(path); !errors.Is(err, os.ErrNotExist) {
			t.Fatalf("a finished file is published before Close: %v", err)
		}
		if !publish {
			w.Abort()
			if entries, _ := os.ReadDir(dir); len(entries) != 0 {
				t.Fatalf("abort after finish left %d files", len(entries))
			}
			continue
		}
		if err := w.Close(); err != nil {
			t.Fatal(err)
		}
		got, _, err := ReadVocab(path)
		if err != nil || len(got) != 2 || got[1].Token != "b" {
			t.Errorf("read back %+v, %v", got, err)
		}
	}
}

func TestCheckCountRow(t *testing.T) {
	prev := &CountRow{1, 5, 1, 0}
	cases := []struct {
		row  CountRow
		prev *CountRow
		want string
	}{
		{CountRow{1, 6, 1, 0}, prev, ""},
		{CountRow{2, 0, 0, 1}, prev, ""},
		{CountRow{1, 5, 1, 0}, prev, "sorted"},
		{CountRow{0, 9, 1, 0}, prev, "sorted"},
		{CountRow{10, 0, 1, 0}, nil, "target_id 10 outside"},
		{CountRow{0, -1, 1, 0}, nil, "context_id -1 outside"},
		{CountRow{0, 0, math.NaN(), 0}, nil, "n_pos NaN"},
		{CountRow{0, 0, 1, math.Inf(1)}, nil, "n_neg +Inf"},
		{CountRow{0, 0, -1, 0}, nil, "n_pos -1"},
	}
	for _, c := range cases {
		err := CheckCountRow(c.row, c.prev, 10)
		switch {
		case c.want == "" && err != nil:
			t.Errorf("%+v: unexpected error %v", c.row, err)
		case c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want)):
			t.Errorf("%+v: error %v, want %q", c.row, err, c.want)
		}
	}
}

func TestDumpStable(t *testing.T) {
	p := filepath.Join(t.TempDir(), "v.parquet")
	if err := WriteVocab(p, []VocabRow{{0, "a", 1, nil}}, Meta{Inputs: []map[string]any{{"path": "/some/dir/corpus.txt", "size": 3}}}); err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	if err := Dump(&b, p, DumpOptions{Rows: -1, Stable: true}); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	for _, absent := range []string{KeyCreatedAt, KeyVersion, "/some/dir"} {
		if strings.Contains(out, absent) {
			t.Errorf("stable dump holds %q:\n%s", absent, out)
		}
	}
	for _, present := range []string{`"corpus.txt"`, `0 | "a" | 1 | null`, "pwe.vocab/1"} {
		if !strings.Contains(out, present) {
			t.Errorf("dump lacks %q:\n%s", present, out)
		}
	}
}

// TestCountsEncodings writes the same rows with both encodings of
// CreateCounts and reads them back.
func TestCountsEncodings(t *testing.T) {
	rows := make([]CountRow, 5000)
	for i := range rows {
		rows[i] = CountRow{int32(i / 50), int32(i % 50), float64(i % 7), math.Sqrt(float64(i))}
	}
	for _, many := range []bool{false, true} {
		p := filepath.Join(t.TempDir(), "c.parquet")
		w, err := CreateCounts(p, Meta{}, many)
		if err != nil {
			t.Fatal(err)
		}
		if err := w.Write(rows[:1234]); err != nil {
			t.Fatal(err)
		}
		if err := w.Write(rows[1234:]); err != nil {
			t.Fatal(err)
		}
		if err := w.Close(); err != nil {
			t.Fatal(err)
		}
		got, meta, err := ReadAll[CountRow](p, SchemaCounts)
		if err != nil {
			t.Fatal(err)
		}
		if meta.Schema != SchemaCounts || len(got) != len(rows) {
			t.Fatalf("manyValues %v: schema %q, %d rows", many, meta.Schema, len(got))
		}
		for i := range rows {
			if got[i] != rows[i] {
				t.Fatalf("manyValues %v: row %d read %+v, wrote %+v", many, i, got[i], rows[i])
			}
		}
	}
}

// TestReadVocabColumns checks the column reader against parquet-go's row
// reader on random rows, some with external ids: as WriteVocab writes
// them, and in several row groups of small pages, plain (which the reader
// takes a page at a time) and dictionary-encoded (value by value).
func TestReadVocabColumns(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	rows := make([]VocabRow, 5000)
	for i := range rows {
		rows[i] = VocabRow{TokenID: int32(i), Token: fmt.Sprintf("%x·%d", r.Uint64()>>r.IntN(64), i), Count: r.Int64N(1 << 40)}
		if r.IntN(2) == 0 {
			ext := r.Int64() - math.MaxInt64/2
			rows[i].ExternalID = &ext
		}
	}
	type dictRow struct {
		TokenID    int32  `parquet:"token_id,dict"`
		Token      string `parquet:"token,dict"`
		Count      int64  `parquet:"count,dict"`
		ExternalID *int64 `parquet:"external_id,optional,dict"`
	}
	dir := t.TempDir()
	whole, plain, dict := filepath.Join(dir, "whole.parquet"), filepath.Join(dir, "plain.parquet"), filepath.Join(dir, "dict.parquet")
	if err := WriteVocab(whole, rows, Meta{}); err != nil {
		t.Fatal(err)
	}
	writeVocabPages[VocabRow](t, plain, rows)
	dictRows := make([]dictRow, len(rows))
	for i, row := range rows {
		dictRows[i] = dictRow(row)
	}
	writeVocabPages(t, dict, dictRows)
	for _, p := range []string{whole, plain, dict} {
		want, _, err := ReadAll[VocabRow](p, SchemaVocab)
		if err != nil {
			t.Fatal(err)
		}
		got, _, err := ReadVocab(p)
		if err != nil {
			t.Fatal(err)
		}
		if len(got) != len(rows) || len(want) != len(rows) {
			t.Fatalf("%s: %d rows read, %d by the row reader, %d written", p, len(got), len(want), len(rows))
		}
		for i := range rows {
			a, b := want[i], got[i]
			if !sameVocabRow(a, b) || b.Token != rows[i].Token {
				t.Fatalf("%s row %d: read %+v, the row reader %+v", p, i, b, a)
			}
		}
	}
}

// writeVocabPages writes rows as a vocabulary in row groups of 1500 rows
// and pages of about 4 KiB.
func writeVocabPages[T any](t *testing.T, path string, rows []T) {
	t.Helper()
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	w := parquet.NewGenericWriter[T](f, parquet.KeyValueMetadata(KeySchema, SchemaVocab),
		parquet.PageBufferSize(4096), parquet.MaxRowsPerRowGroup(1500))
	for _, row := range rows {
		if _, err := w.Write([]T{row}); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
}

// TestReadVocabNull: a null in a required vocabulary column is an error
// naming the file, the row and the column.
func TestReadVocabNull(t *testing.T) {
	type nullable struct {
		TokenID    int32  `parquet:"token_id"`
		Token      string `parquet:"token"`
		Count      *int64 `parquet:"count,optional"`
		ExternalID *int64 `parquet:"external_id,optional"`
	}
	one := int64(1)
	p := filepath.Join(t.TempDir(), "null.parquet")
	if err := WriteAll(p, []nullable{{0, "a", &one, nil}, {1, "b", &one, nil}, {2, "c", nil, nil}}, Meta{Schema: SchemaVocab}); err != nil {
		t.Fatal(err)
	}
	_, _, err := ReadVocab(p)
	if err == nil || !strings.Contains(err.Error(), p) || !strings.Contains(err.Error(), `row 2: "count" is null`) {
		t.Errorf("error %v, want one naming %s, row 2 and the count", err, p)
	}
}
