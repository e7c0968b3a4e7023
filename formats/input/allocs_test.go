package input

import (
	"bytes"
	"fmt"
	"path/filepath"
	"testing"
)

// Reading allocates per input (buffers, decoders), never per document:
// doubling the number of lines must not add allocations.
func TestReaderAllocsPerDocument(t *testing.T) {
	dir := t.TempDir()
	text := func(n int) []byte {
		var b bytes.Buffer
		for i := range n {
			fmt.Fprintf(&b, "line %d with some words\r\n", i)
			if i%5 == 4 {
				b.WriteString("\n")
			}
		}
		return b.Bytes()
	}
	jsonl := func(n int) []byte {
		var b bytes.Buffer
		for i := range n {
			fmt.Fprintf(&b, `{"id": %d, "text": "line\t%d \"quoted\" \u00e9", "tags": [1, {"a": null}]}`+"\n", i, i)
			if i%9 == 0 {
				b.WriteString(`{"id": null}` + "\n")
			}
		}
		return b.Bytes()
	}
	const small, large = 20000, 40000
	cases := []struct {
		name  string
		data  func(n int) []byte
		ext   string
		opt   Options
		batch bool
	}{
		{"lines", text, ".txt", Options{}, false},
		{"paragraphs", text, ".txt", Options{DocSep: DocSepBlank}, false},
		{"gzip", func(n int) []byte { return gzipBytes(t, text(n)) }, ".gz", Options{}, false},
		{"jsonl", jsonl, ".jsonl", Options{TextField: "text"}, false},
		{"batches", text, ".txt", Options{}, true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			allocs := func(n int) float64 {
				path := writeFile(t, dir, fmt.Sprintf("%s-%d%s", c.name, n, c.ext), c.data(n))
				var b Batch
				return testing.AllocsPerRun(5, func() {
					r := NewReader([]string{path}, c.opt)
					docs := 0
					if c.batch {
						for r.NextBatch(&b, 1<<16) {
							docs += b.Len()
						}
					} else {
						for r.Next() {
							docs++
						}
					}
					if r.Err() != nil || docs == 0 {
						t.Fatalf("%d documents, error %v", docs, r.Err())
					}
					r.Close()
				})
			}
			// Allocating per document would add 20000 here; the slack
			// absorbs the odd allocation by goroutines that earlier tests
			// left winding down, which MemStats counts too.
			a, b := allocs(small), allocs(large)
			if b-a > (large-small)/1000 {
				t.Errorf("%v allocations for %d lines, %v for %d: reading allocates per document", a, small, b, large)
			}
		})
	}
	t.Run("parquet", func(t *testing.T) {
		allocs := func(n int) float64 {
			path := filepath.Join(dir, fmt.Sprintf("p%d.parquet", n))
			writeParquet(t, path, n)
			return testing.AllocsPerRun(5, func() {
				r := NewReader([]string{path}, Options{TextColumn: "text"})
				for r.Next() {
				}
				if r.Err() != nil {
					t.Fatal(r.Err())
				}
				r.Close()
			})
		}
		// Pages are decoded one at a time, so allocations grow with the
		// number of pages, not of rows.
		a, b := allocs(small), allocs(large)
		t.Logf("parquet: %v allocations for %d rows, %v for %d", a, small, b, large)
		if b-a > (large-small)/100 {
			t.Errorf("%v allocations for %d rows, %v for %d: more than one per 100 rows", a, small, b, large)
		}
	})
}
