package formats

import (
	"fmt"
	"io"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/ipc"
)

// DumpStream is Dump for an Arrow IPC stream (any schema): the schema, the
// metadata of the schema and of the trailer (pwe.stats, pwe.rows), and the
// first rows. It reads the stream to its end, so that the row count and
// the trailer are known.
func DumpStream(w io.Writer, r io.Reader, name string, opt DumpOptions) (err error) {
	src := &streamSource{r: r, h: nopHasher{}}
	// Each message is checked before arrow-go reads it, as for the streams
	// count and fit read (arrow_check.go): a damaged count made arrow-go
	// allocate 187 GB here.
	mr := newMessages(src)
	rd, err := ipc.NewReaderFromMessageReader(mr) // releases mr on error
	if err != nil {
		return &StreamError{Name: name, Err: fmt.Errorf("not an Arrow IPC stream: %w", err)}
	}
	defer rd.Release()
	schema := rd.Schema()
	mr.setSchema(schema)
	batch := 0
	var total int64
	defer func() {
		// A column of a type that validColumn does not check through, a
		// nested one, may still hold offsets that make arrow-go's ValueStr
		// index out of range: any schema is dumped here.
		if p := recover(); p != nil {
			err = &StreamError{Name: name, Batch: batch, Row: total, Err: fmt.Errorf("malformed Arrow stream: a value could not be read (%v)", p)}
		}
	}()
	var rows []string
	meta := map[string]string{}
	addMeta := func(md arrow.Metadata) {
		for i, k := range md.Keys() {
			meta[k] = md.Values()[i]
		}
	}
	addMeta(schema.Metadata())
	for rd.Next() {
		batch++
		rec := rd.RecordBatch()
		if m, ok := rec.(arrow.RecordBatchWithMetadata); ok {
			addMeta(m.Metadata())
		}
		for c, col := range rec.Columns() {
			if err := validColumn(col); err != nil {
				return &StreamError{Name: name, Batch: batch, Row: total, Err: fmt.Errorf("malformed column %q: %w", schema.Field(c).Name, err)}
			}
		}
		for i := 0; i < int(rec.NumRows()) && (opt.Rows < 0 || len(rows) < opt.Rows); i++ {
			vals := make([]string, rec.NumCols())
			for c, col := range rec.Columns() {
				vals[c] = col.ValueStr(i)
			}
			rows = append(rows, strings.Join(vals, " | "))
		}
		total += rec.NumRows()
	}
	if err := rd.Err(); err != nil {
		return &StreamError{Name: name, Batch: batch + 1, Row: total, Err: fmt.Errorf("malformed Arrow stream: %w", err)}
	}
	if !src.endsWithEOS() {
		return &StreamError{Name: name, Batch: batch + 1, Row: total, Err: fmt.Errorf("%w: no end-of-stream marker after %d rows", ErrTruncated, total)}
	}
	fmt.Fprintf(w, "rows: %d\narrow stream schema:\n", total)
	for _, f := range schema.Fields() {
		fmt.Fprintf(w, "  %s: %s\n", f.Name, f.Type)
	}
	writeMeta(w, meta, opt)
	if opt.Rows == 0 {
		return nil
	}
	names := make([]string, schema.NumFields())
	for i, f := range schema.Fields() {
		names[i] = f.Name
	}
	fmt.Fprintf(w, "rows (%s):\n", strings.Join(names, ", "))
	for _, r := range rows {
		fmt.Fprintf(w, "  %s\n", r)
	}
	return nil
}

// nopHasher stands in for the hash of a streamSource when nothing is
// fingerprinted.
type nopHasher struct{}

func (nopHasher) Write(p []byte) (int, error) { return len(p), nil }
func (nopHasher) Sum(b []byte) []byte         { return b }
func (nopHasher) Reset()                      {}
func (nopHasher) Size() int                   { return 0 }
func (nopHasher) BlockSize() int              { return 1 }
