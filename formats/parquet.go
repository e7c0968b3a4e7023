package formats

import (
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"sync"

	kzstd "github.com/klauspost/compress/zstd"
	"github.com/parquet-go/parquet-go"
	"github.com/parquet-go/parquet-go/compress/zstd"

	"github.com/pwe-project/pwe/internal/atomicfile"
	"github.com/pwe-project/pwe/internal/pqfooter"
)

// RowGroupRows bounds the rows per row group, and with it the memory a
// writer holds before flushing and the unit in which readers stream.
const RowGroupRows = 1 << 20

// zstdFastest compresses pwe's Parquet pages at zstd's fastest level, which
// trades a few percent of file size for twice the writing speed of its
// default level: pwe's outputs are written once per run and are mostly small
// integers that compress well at any level.
var zstdFastest zstdCodec

// zstdCodec is parquet-go's zstd codec with a window of 1 MiB rather than 8.
// Each page is compressed alone, and pages hold at most a few hundred KiB,
// so the larger window found no more matches (the bytes are the same); but
// each encoder allocated about twice the window as history for its first
// page of more than 128 KiB, and cleared it. In tokenize's profile on
// bench-raw, the clearing took 1.2 % of the samples, of the 2.9 % that
// writing vocab.parquet took; BenchmarkWriteVocab allocates 3.0 MB a
// vocabulary against 10.3.
type zstdCodec struct {
	zstd.Codec // String, CompressionCodec and Decode
	encoders   sync.Pool
}

func (c *zstdCodec) Encode(dst, src []byte) ([]byte, error) {
	e, _ := c.encoders.Get().(*kzstd.Encoder)
	if e == nil {
		var err error
		e, err = kzstd.NewWriter(nil, kzstd.WithEncoderLevel(kzstd.SpeedFastest), kzstd.WithEncoderConcurrency(1),
			kzstd.WithWindowSize(1<<20), kzstd.WithLowerEncoderMem(true), kzstd.WithZeroFrames(true), kzstd.WithEncoderCRC(false))
		if err != nil {
			return nil, err
		}
	}
	defer c.encoders.Put(e)
	return e.EncodeAll(src, dst[:0]), nil
}

// ErrNotPwe is returned for a Parquet file whose pwe.schema is missing or
// names another schema.
var ErrNotPwe = errors.New("formats: not the expected pwe file")

// ErrDamaged is returned for a Parquet file that parquet-go could not
// decode without panicking.
var ErrDamaged = errors.New("damaged Parquet file")

// recoverDamaged, deferred around calls into parquet-go, turns a panic into
// *err naming the file and, if row >= 0, the row. parquet-go
// trusts a file's footer and page headers and indexes by them unchecked; a
// flipped byte in a data page can make it index past a dictionary. For pwe
// that is bad input to report, not a crash.
func recoverDamaged(err *error, path string, row int64) {
	if v := recover(); v != nil {
		if row >= 0 {
			path = fmt.Sprintf("%s: row %d", path, row)
		}
		*err = fmt.Errorf("%s: %w: %v", path, ErrDamaged, v)
	}
}

// openParquetFile opens f, the file at path of size bytes, for parquet-go
// once its trailer has passed pqfooter.Check; errors name path.
func openParquetFile(f *os.File, path string, size int64, opts ...parquet.FileOption) (*parquet.File, error) {
	if err := pqfooter.Check(f, size); err != nil {
		return nil, fmt.Errorf("%s: not a readable Parquet file: %w", path, err)
	}
	pf, err := parquet.OpenFile(f, size, opts...)
	if err != nil {
		return nil, fmt.Errorf("%s: not a readable Parquet file: %w", path, err)
	}
	return pf, nil
}

// Writer writes rows of type T to a Parquet file under a temporary name; Close
// renames it to its final name. Abort (safe to defer) discards it.
type Writer[T any] struct {
	file     *atomicfile.File
	pw       *parquet.GenericWriter[T]
	finished bool
}

// Create starts writing a Parquet file of rows T at path with the given
// metadata.
func Create[T any](path string, meta Meta) (*Writer[T], error) {
	kv, err := meta.pairs()
	if err != nil {
		return nil, err
	}
	f, err := atomicfile.Create(path)
	if err != nil {
		return nil, err
	}
	opts := []parquet.WriterOption{
		parquet.Compression(&zstdFastest),
		parquet.MaxRowsPerRowGroup(RowGroupRows),
		parquet.CreatedBy("pwe", kvValue(kv, KeyVersion), ""),
	}
	for _, p := range kv {
		opts = append(opts, parquet.KeyValueMetadata(p[0], p[1]))
	}
	return &Writer[T]{file: f, pw: parquet.NewGenericWriter[T](f, opts...)}, nil
}

func kvValue(kv [][2]string, key string) string {
	for _, p := range kv {
		if p[0] == key {
			return p[1]
		}
	}
	return ""
}

// Write appends rows.
func (w *Writer[T]) Write(rows []T) error {
	if _, err := w.pw.Write(rows); err != nil {
		return fmt.Errorf("writing %s: %w", w.file.Name(), err)
	}
	return nil
}

// SetStats records the stage summary (pwe.stats), known only at the end.
func (w *Writer[T]) SetStats(stats any) error {
	v, err := metaJSON(KeyStats, stats)
	if err != nil {
		return err
	}
	w.pw.SetKeyValueMetadata(KeyStats, v)
	return nil
}

// Finish completes the file and flushes it to stable storage without
// publishing it; Close then publishes it, Abort discards it.
func (w *Writer[T]) Finish() error {
	w.finished = true
	if err := w.pw.Close(); err != nil {
		w.file.Abort()
		return fmt.Errorf("writing %s: %w", w.file.Name(), err)
	}
	return w.file.Finish()
}

// Close finishes the file, unless Finish has, and publishes it under its
// final name.
func (w *Writer[T]) Close() error {
	if !w.finished {
		if err := w.Finish(); err != nil {
			return err
		}
	}
	return w.file.Commit()
}

// Abort discards the file; it does nothing after Close.
func (w *Writer[T]) Abort() { w.file.Abort() }

// WriteAll writes a whole file of rows at once, for small files.
func WriteAll[T any](path string, rows []T, meta Meta) error {
	w, err := Create[T](path, meta)
	if err != nil {
		return err
	}
	defer w.Abort()
	if err := w.Write(rows); err != nil {
		return err
	}
	return w.Close()
}

// Reader streams rows of type T from a pwe Parquet file after checking its
// schema name and columns.
type Reader[T any] struct {
	path string
	f    *os.File
	pf   *parquet.File
	r    *parquet.GenericReader[T]
	meta Meta
	row  int64
}

// Open opens the pwe file at path, which must carry pwe.schema equal to
// schema (name and major version, e.g. "pwe.counts/1") and every column of T
// with a matching type.
func Open[T any](path, schema string) (*Reader[T], error) {
	r, err := openChecked[T](path, schema)
	if err != nil {
		return nil, err
	}
	r.r = parquet.NewGenericReader[T](r.pf)
	return r, nil
}

// openChecked opens the file as Open does, without the row reader, for a
// caller that reads the columns itself.
func openChecked[T any](path, schema string) (r *Reader[T], err error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer func() {
		if err != nil {
			f.Close()
		}
	}()
	defer recoverDamaged(&err, path, -1)
	st, err := f.Stat()
	if err != nil {
		return nil, err
	}
	pf, err := openParquetFile(f, path, st.Size())
	if err != nil {
		return nil, err
	}
	r = &Reader[T]{path: path, f: f, pf: pf, meta: readMeta(pf)}
	if r.meta.Schema != schema {
		got := r.meta.Schema
		if got == "" {
			got = "none"
		}
		return nil, fmt.Errorf("%s: %w: want pwe.schema %q, file has %s", path, ErrNotPwe, schema, got)
	}
	if err := checkColumns(pf.Schema(), parquet.SchemaOf(new(T))); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return r, nil
}

// readMeta reads the pwe keys of a Parquet file's key-value metadata.
func readMeta(pf *parquet.File) Meta { return metaFromLookup(pf.Lookup) }

// checkColumns reports the first column of want that have lacks or holds
// with another physical type.
func checkColumns(have, want *parquet.Schema) error {
	for _, path := range want.Columns() {
		wl, _ := want.Lookup(path...)
		hl, ok := have.Lookup(path...)
		name := strings.Join(path, ".")
		if !ok {
			return fmt.Errorf("%w: missing column %q (file has %s)", ErrNotPwe, name, strings.Join(columnNames(have), ", "))
		}
		if hk, wk := hl.Node.Type().Kind(), wl.Node.Type().Kind(); hk != wk {
			return fmt.Errorf("%w: column %q is %s, want %s", ErrNotPwe, name, hk, wk)
		}
	}
	return nil
}

func columnNames(s *parquet.Schema) []string {
	var names []string
	for _, c := range s.Columns() {
		names = append(names, strings.Join(c, "."))
	}
	return names
}

// Meta returns the file's metadata; Config, Inputs and Stats hold
// json.RawMessage.
func (r *Reader[T]) Meta() Meta { return r.meta }

// NumRows returns the number of rows in the file.
func (r *Reader[T]) NumRows() int64 { return r.pf.NumRows() }

// Path returns the file's path.
func (r *Reader[T]) Path() string { return r.path }

// Row returns the 0-based index of the next row Read will return, for error
// messages.
func (r *Reader[T]) Row() int64 { return r.row }

// Read fills buf with the next rows and returns how many; it returns io.EOF
// (with n = 0) at the end.
func (r *Reader[T]) Read(buf []T) (n int, err error) {
	defer recoverDamaged(&err, r.path, r.row)
	n, err = r.r.Read(buf)
	r.row += int64(n)
	if want := r.pf.NumRows(); r.row > want || err == io.EOF && r.row < want {
		// The footer's count and the pages' disagree: a damaged file, which
		// must not pass for a shorter one.
		return 0, fmt.Errorf("%s: row %d: %w: the footer says %d rows", r.path, r.row, ErrDamaged, want)
	}
	if err == io.EOF {
		if n > 0 {
			return n, nil
		}
		return 0, io.EOF
	}
	if err != nil {
		return n, fmt.Errorf("%s: row %d: %w", r.path, r.row, err)
	}
	return n, nil
}

// Close releases the file.
func (r *Reader[T]) Close() error {
	if r.r != nil {
		r.r.Close()
	}
	return r.f.Close()
}

// ReadAll reads every row of a pwe file; for small files such as the
// vocabulary.
func ReadAll[T any](path, schema string) ([]T, Meta, error) {
	r, err := Open[T](path, schema)
	if err != nil {
		return nil, Meta{}, err
	}
	defer r.Close()
	rows := make([]T, 0, r.NumRows())
	buf := make([]T, 4096)
	for {
		n, err := r.Read(buf)
		rows = append(rows, buf[:n]...)
		if err == io.EOF {
			return rows, r.meta, nil
		}
		if err != nil {
			return nil, Meta{}, err
		}
	}
}
