package formats

import (
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// fuzzFile writes data where the fuzz target reads it, as a reader of a
// damaged file on disk would.
func fuzzFile(t *testing.T, data []byte) string {
	p := filepath.Join(t.TempDir(), "in.parquet")
	if err := os.WriteFile(p, data, 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// writeCountsFile writes rows to a counts file in a temporary directory
// and returns its path.
func writeCountsFile(t testing.TB, rows []CountRow) string {
	return writeCountsFileWith(t, rows, Meta{}, false)
}

// writeCountsFileWith is writeCountsFile with CreateCounts's meta and
// manyValues.
func writeCountsFileWith(t testing.TB, rows []CountRow, meta Meta, manyValues bool) string {
	p := filepath.Join(t.TempDir(), "counts.parquet")
	w, err := CreateCounts(p, meta, manyValues)
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Write(rows); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return p
}

// parquetSeeds adds a valid file, its damaged copies and its halves.
func parquetSeeds(f *testing.F, path string) {
	data, err := os.ReadFile(path)
	if err != nil {
		f.Fatal(err)
	}
	f.Add(data)
	f.Add(data[:len(data)/2])
	f.Add(data[len(data)/2:])
	for _, at := range []int{4, len(data) / 3, len(data) / 2, len(data) - 40, len(data) - 12} {
		bad := append([]byte(nil), data...)
		bad[at] ^= 0xff
		bad[at+1] ^= 0x5a
		f.Add(bad)
	}
	f.Add([]byte("PAR1PAR1"))
}

// FuzzReadVocab feeds arbitrary bytes to the vocabulary reader: it must
// return a vocabulary that passes its checks or an error naming the file,
// never panic.
func FuzzReadVocab(f *testing.F) {
	p := filepath.Join(f.TempDir(), "vocab.parquet")
	ext := int64(7)
	rows := []VocabRow{{0, "the", 10, nil}, {1, "straße", 3, &ext}, {2, "日本", 1, nil}}
	if err := WriteVocab(p, rows, Meta{Config: map[string]any{"seed": 1}}); err != nil {
		f.Fatal(err)
	}
	parquetSeeds(f, p)
	f.Fuzz(func(t *testing.T, data []byte) {
		p := fuzzFile(t, data)
		rows, _, err := ReadVocab(p)
		if err != nil {
			if !strings.HasPrefix(err.Error(), p) {
				t.Errorf("error %q does not name the file", err)
			}
			return
		}
		if err := checkVocab(p, rows); err != nil {
			t.Errorf("ReadVocab returned a vocabulary that fails its checks: %v", err)
		}
	})
}

// FuzzReadCounts feeds arbitrary bytes to the counts reader: it must
// return as many rows as the file says it holds or an error naming the
// file, never panic.
func FuzzReadCounts(f *testing.F) {
	parquetSeeds(f, writeCountsFile(f, randomCounts(200, 3)))
	f.Fuzz(func(t *testing.T, data []byte) {
		p := fuzzFile(t, data)
		r, err := Open[CountRow](p, SchemaCounts)
		if err != nil {
			if !strings.HasPrefix(err.Error(), p) {
				t.Errorf("error %q does not name the file", err)
			}
			return
		}
		defer r.Close()
		buf := make([]CountRow, 64)
		var n int64
		for {
			k, err := r.Read(buf)
			n += int64(k)
			if errors.Is(err, io.EOF) {
				break
			}
			if err != nil {
				if !strings.HasPrefix(err.Error(), p) {
					t.Errorf("error %q does not name the file", err)
				}
				return
			}
		}
		if n != r.NumRows() {
			t.Errorf("read %d rows of %d without an error", n, r.NumRows())
		}
	})
}

// FuzzOpenDraws feeds arbitrary bytes to the draws reader: every draw it
// returns has the first draw's shape, and an error names the file.
func FuzzOpenDraws(f *testing.F) {
	p := filepath.Join(f.TempDir(), "draws.parquet")
	spec := drawsSpec{ids: []int32{1, 2, 4}, dim: 3, chains: 2, draws: 2}
	writeSmallGroups(f, p, SchemaDraws, spec.rows(), 4, 64)
	parquetSeeds(f, p)
	f.Fuzz(func(t *testing.T, data []byte) {
		p := fuzzFile(t, data)
		r, err := OpenDraws(p)
		if err == nil {
			defer r.Close()
			want := 2 * len(r.TokenIDs()) * r.Dim()
			for r.Next() {
				if len(r.Values()) != want {
					t.Fatalf("a draw of %d values, want %d", len(r.Values()), want)
				}
			}
			err = r.Err()
		}
		if err != nil && !strings.HasPrefix(err.Error(), p) {
			t.Errorf("error %q does not name the file", err)
		}
	})
}

// FuzzDump feeds arbitrary bytes to pwe inspect's reader: it must print
// the file or return an error naming it.
func FuzzDump(f *testing.F) {
	p := filepath.Join(f.TempDir(), "vocab.parquet")
	if err := WriteVocab(p, []VocabRow{{0, "a", 2, nil}, {1, "b", 1, nil}}, Meta{}); err != nil {
		f.Fatal(err)
	}
	parquetSeeds(f, p)
	f.Fuzz(func(t *testing.T, data []byte) {
		p := fuzzFile(t, data)
		err := Dump(io.Discard, p, DumpOptions{Rows: -1})
		if err != nil && !strings.HasPrefix(err.Error(), p) {
			t.Errorf("error %q does not name the file", err)
		}
	})
}

// TestDamagedCounts flips bytes all through a counts file: every read must
// end in the rows or in an error naming the file, never a panic (parquet-go
// indexes past a dictionary on some of these), and some damage must be
// noticed.
func TestDamagedCounts(t *testing.T) {
	data, err := os.ReadFile(writeCountsFile(t, randomCounts(3000, 5)))
	if err != nil {
		t.Fatal(err)
	}
	damaged := filepath.Join(t.TempDir(), "damaged.parquet")
	errs := 0
	for at := 4; at < len(data)-8; at += max(1, len(data)/300) {
		bad := append([]byte(nil), data...)
		bad[at] ^= 0xa5
		bad[at+1] ^= 0x3c
		if err := os.WriteFile(damaged, bad, 0o644); err != nil {
			t.Fatal(err)
		}
		_, _, err := ReadAll[CountRow](damaged, SchemaCounts)
		if err != nil {
			errs++
			if !strings.HasPrefix(err.Error(), damaged+": ") {
				t.Fatalf("damage at byte %d: error %q does not name the file", at, err)
			}
		}
	}
	if errs == 0 {
		t.Error("no damage was noticed")
	}
	t.Logf("%d damaged files reported", errs)
}
