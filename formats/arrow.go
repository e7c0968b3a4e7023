package formats

import (
	"bufio"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"hash"
	"io"
	"strconv"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/ipc"
	"github.com/apache/arrow-go/v18/arrow/memory"
)

// StreamBatchRows bounds the rows per record batch of an Arrow IPC stream,
// and with it the memory a writer or reader holds: 64k counts rows are
// 1.5 MiB.
const StreamBatchRows = 1 << 16

// keyRows, on the trailer batch that ends a pwe stream, holds the number of
// rows written. A complete stream ends with the end-of-stream marker
// (which a failing writer never sends); the count is a second check.
const keyRows = "pwe.rows"

// ErrTruncated is returned when an Arrow stream ends before its writer
// finished it.
var ErrTruncated = errors.New("formats: stream truncated")

// StreamError reports a problem at a position of an Arrow IPC stream:
// Batch counts record batches from 1 (0 means the schema message), Row is
// the index of the first row of that batch.
type StreamError struct {
	Name  string
	Batch int
	Row   int64
	Err   error
}

func (e *StreamError) Error() string {
	if e.Batch == 0 {
		return fmt.Sprintf("%s: %v", e.Name, e.Err)
	}
	return fmt.Sprintf("%s: batch %d (from row %d): %v", e.Name, e.Batch, e.Row, e.Err)
}

func (e *StreamError) Unwrap() error { return e.Err }

// arrowColumn is one column of a row type as Arrow sees it.
type arrowColumn struct {
	name     string
	typ      arrow.DataType
	nullable bool
}

// rowCodec maps rows of type T to Arrow columns and back; the columns and
// types mirror T's Parquet schema.
type rowCodec[T any] struct {
	schema  string // pwe.schema
	columns []arrowColumn
	// encoder returns a fresh encoder of batches.
	encoder func() encoder[T]
	// decode fills dst from rows from, from+1, ... of cols (in column
	// order, nulls already ruled out where not allowed).
	decode func(cols []arrow.Array, from int, dst []T)
}

var countsCodec = rowCodec[CountRow]{
	schema: SchemaCounts,
	columns: []arrowColumn{
		{"target_id", arrow.PrimitiveTypes.Int32, false},
		{"context_id", arrow.PrimitiveTypes.Int32, false},
		{"n_pos", arrow.PrimitiveTypes.Float64, false},
		{"n_neg", arrow.PrimitiveTypes.Float64, false},
	},
	encoder: func() encoder[CountRow] { return &countsEncoder{} },
	decode: func(cols []arrow.Array, from int, dst []CountRow) {
		t := cols[0].(*array.Int32).Int32Values()[from:]
		c := cols[1].(*array.Int32).Int32Values()[from:]
		p := cols[2].(*array.Float64).Float64Values()[from:]
		n := cols[3].(*array.Float64).Float64Values()[from:]
		for i := range dst {
			dst[i] = CountRow{TargetID: t[i], ContextID: c[i], NPos: p[i], NNeg: n[i]}
		}
	},
}

var vocabColumns = []arrowColumn{
	{"token_id", arrow.PrimitiveTypes.Int32, false},
	{"token", arrow.BinaryTypes.String, false},
	{"count", arrow.PrimitiveTypes.Int64, false},
	{"external_id", arrow.PrimitiveTypes.Int64, true},
}

func appendVocab(b []array.Builder, rows []VocabRow) {
	id, tok := b[0].(*array.Int32Builder), b[1].(*array.StringBuilder)
	cnt, ext := b[2].(*array.Int64Builder), b[3].(*array.Int64Builder)
	for _, r := range rows {
		id.Append(r.TokenID)
		tok.Append(r.Token)
		cnt.Append(r.Count)
		if r.ExternalID != nil {
			ext.Append(*r.ExternalID)
		} else {
			ext.AppendNull()
		}
	}
}

var vocabCodec = rowCodec[VocabRow]{
	schema:  SchemaVocab,
	columns: vocabColumns,
	encoder: func() encoder[VocabRow] { return newBuilderEncoder(vocabColumns, appendVocab) },
	decode: func(cols []arrow.Array, from int, dst []VocabRow) {
		id := cols[0].(*array.Int32)
		tok := cols[1].(*array.String)
		cnt := cols[2].(*array.Int64)
		ext := cols[3].(*array.Int64)
		for i := range dst {
			k := from + i
			// Values alias the batch's buffers; the rows outlive it.
			dst[i] = VocabRow{TokenID: id.Value(k), Token: strings.Clone(tok.Value(k)), Count: cnt.Value(k)}
			if ext.IsValid(k) {
				v := ext.Value(k)
				dst[i].ExternalID = &v
			}
		}
	},
}

// encoder gathers rows into the columns of one record batch.
type encoder[T any] interface {
	add(rows []T)
	// arrays returns the pending rows as columns and starts a new batch;
	// the arrays may share memory with the next batch, so they must be
	// written before add is called again.
	arrays() []arrow.Array
}

// countsEncoder keeps the columns in plain slices reused from batch to
// batch and hands them to Arrow without copying.
type countsEncoder struct {
	CountColumns
}

func (e *countsEncoder) add(rows []CountRow) { e.AppendRows(rows) }

func (e *countsEncoder) arrays() []arrow.Array {
	n := e.Len()
	cols := []arrow.Array{
		fixedWidth(arrow.PrimitiveTypes.Int32, n, arrow.Int32Traits.CastToBytes(e.Target)),
		fixedWidth(arrow.PrimitiveTypes.Int32, n, arrow.Int32Traits.CastToBytes(e.Context)),
		fixedWidth(arrow.PrimitiveTypes.Float64, n, arrow.Float64Traits.CastToBytes(e.NPos)),
		fixedWidth(arrow.PrimitiveTypes.Float64, n, arrow.Float64Traits.CastToBytes(e.NNeg)),
	}
	e.Reset()
	return cols
}

func fixedWidth(t arrow.DataType, n int, values []byte) arrow.Array {
	data := array.NewData(t, n, []*memory.Buffer{nil, memory.NewBufferBytes(values)}, nil, 0, 0)
	defer data.Release()
	return array.MakeFromData(data)
}

// builderEncoder encodes through Arrow's builders, for the small files
// with strings and nulls.
type builderEncoder[T any] struct {
	builders []array.Builder
	append   func(b []array.Builder, rows []T)
}

func newBuilderEncoder[T any](columns []arrowColumn, appendRows func([]array.Builder, []T)) *builderEncoder[T] {
	e := &builderEncoder[T]{append: appendRows}
	for _, col := range columns {
		e.builders = append(e.builders, array.NewBuilder(memory.DefaultAllocator, col.typ))
	}
	return e
}

func (e *builderEncoder[T]) add(rows []T) { e.append(e.builders, rows) }

func (e *builderEncoder[T]) arrays() []arrow.Array {
	cols := make([]arrow.Array, len(e.builders))
	for i, b := range e.builders {
		cols[i] = b.NewArray()
	}
	return cols
}

func (c *rowCodec[T]) arrowSchema(md arrow.Metadata) *arrow.Schema {
	fields := make([]arrow.Field, len(c.columns))
	for i, col := range c.columns {
		fields[i] = arrow.Field{Name: col.name, Type: col.typ, Nullable: col.nullable}
	}
	return arrow.NewSchema(fields, &md)
}

// StreamWriter writes rows of type T as an Arrow IPC stream, a record batch
// of at most StreamBatchRows rows at a time. The schema carries the pwe
// metadata; Close adds an empty trailer batch carrying the stats and the
// row count, then the end-of-stream marker.
type StreamWriter[T any] struct {
	out     *bufio.Writer
	w       *ipc.Writer
	schema  *arrow.Schema
	enc     encoder[T]
	pending int
	rows    int64
	stats   string
	done    bool
}

// CreateCountsStream starts an Arrow stream of counts rows on w.
func CreateCountsStream(w io.Writer, meta Meta) (CountsStreamWriter, error) {
	sw, err := createStream(w, meta, &countsCodec)
	return CountsStreamWriter{sw}, err
}

// CountsStreamWriter is a StreamWriter of counts rows that also takes rows
// held as columns.
type CountsStreamWriter struct {
	*StreamWriter[CountRow]
}

// WriteColumns appends the rows of cols, as Write does.
func (w CountsStreamWriter) WriteColumns(cols *CountColumns) error {
	enc := w.enc.(*countsEncoder)
	return w.fill(cols.Len(), func(i, j int) { enc.appendColumns(cols, i, j) })
}

// TakeColumns is WriteColumns, after which cols is empty, as
// [CountsWriter.TakeColumns] leaves it.
func (w CountsStreamWriter) TakeColumns(cols *CountColumns) error {
	err := w.WriteColumns(cols)
	cols.Reset()
	return err
}

// CreateVocabStream starts an Arrow stream of vocabulary rows on w.
func CreateVocabStream(w io.Writer, meta Meta) (*StreamWriter[VocabRow], error) {
	return createStream(w, meta, &vocabCodec)
}

func createStream[T any](w io.Writer, meta Meta, codec *rowCodec[T]) (*StreamWriter[T], error) {
	meta.Schema = codec.schema
	kv, err := meta.pairs()
	if err != nil {
		return nil, err
	}
	keys, vals := make([]string, len(kv)), make([]string, len(kv))
	for i, p := range kv {
		keys[i], vals[i] = p[0], p[1]
	}
	sw := &StreamWriter[T]{out: bufio.NewWriterSize(w, 1<<20), enc: codec.encoder()}
	sw.schema = codec.arrowSchema(arrow.NewMetadata(keys, vals))
	sw.w = ipc.NewWriter(sw.out, ipc.WithSchema(sw.schema))
	return sw, nil
}

// Write appends rows, sending a record batch whenever StreamBatchRows are
// pending.
func (w *StreamWriter[T]) Write(rows []T) error {
	return w.fill(len(rows), func(i, j int) { w.enc.add(rows[i:j]) })
}

// fill adds n rows to the pending batch, sending each batch as it fills:
// add encodes rows [i, j) of the caller's.
func (w *StreamWriter[T]) fill(n int, add func(i, j int)) error {
	if w.done {
		return errors.New("formats: write to a closed stream")
	}
	for i := 0; i < n; {
		k := min(n-i, StreamBatchRows-w.pending)
		add(i, i+k)
		w.pending += k
		i += k
		if w.pending == StreamBatchRows {
			if err := w.flush(arrow.Metadata{}); err != nil {
				return err
			}
		}
	}
	return nil
}

// flush sends the pending rows (possibly none) as one batch.
func (w *StreamWriter[T]) flush(md arrow.Metadata) error {
	cols := w.enc.arrays()
	for _, c := range cols {
		defer c.Release()
	}
	rec := array.NewRecordBatchWithMetadata(w.schema, cols, int64(w.pending), md)
	defer rec.Release()
	w.rows += int64(w.pending)
	w.pending = 0
	if err := w.w.Write(rec); err != nil {
		return fmt.Errorf("formats: writing Arrow stream: %w", err)
	}
	return nil
}

// SetStats records the stage summary (pwe.stats); a stream carries it on
// its trailer batch, as it is known only at the end.
func (w *StreamWriter[T]) SetStats(stats any) error {
	v, err := metaJSON(KeyStats, stats)
	if err != nil {
		return err
	}
	w.stats = v
	return nil
}

// Close sends the pending rows, the trailer and the end-of-stream marker.
func (w *StreamWriter[T]) Close() error {
	if w.done {
		return errors.New("formats: stream closed twice")
	}
	if w.pending > 0 {
		if err := w.flush(arrow.Metadata{}); err != nil {
			w.Abort()
			return err
		}
	}
	keys, vals := []string{keyRows}, []string{strconv.FormatInt(w.rows, 10)}
	if w.stats != "" {
		keys, vals = append(keys, KeyStats), append(vals, w.stats)
	}
	err := w.flush(arrow.NewMetadata(keys, vals))
	w.Abort()
	if err != nil {
		return err
	}
	if err := w.w.Close(); err != nil {
		return fmt.Errorf("formats: writing Arrow stream: %w", err)
	}
	if err := w.out.Flush(); err != nil {
		return fmt.Errorf("formats: writing Arrow stream: %w", err)
	}
	return nil
}

// Abort stops writing without the trailer or the end-of-stream marker, so
// the reader at the other end reports a truncated stream rather than take
// a partial one for complete. It does nothing after Close.
func (w *StreamWriter[T]) Abort() {
	if w.done {
		return
	}
	w.done = true
	w.enc = nil
}

// StreamReader reads rows of type T from an Arrow IPC stream after
// checking its pwe.schema and columns, and hashes the bytes it consumes so
// that the stream can be fingerprinted like a file.
type StreamReader[T any] struct {
	name  string
	codec *rowCodec[T]
	src   *streamSource
	rd    *ipc.Reader
	meta  Meta
	index []int // stream column of each codec column

	rec     arrow.RecordBatch
	cols    []arrow.Array
	off     int   // next row of rec
	batch   int   // batches read
	start   int64 // first row of the current batch
	row     int64 // rows returned
	trailer bool
	err     error
}

// OpenCountsStream reads counts rows from an Arrow stream; name ("stdin")
// appears in error messages.
func OpenCountsStream(r io.Reader, name string) (*StreamReader[CountRow], error) {
	return openStream(r, name, &countsCodec)
}

// OpenVocabStream reads vocabulary rows from an Arrow stream.
func OpenVocabStream(r io.Reader, name string) (*StreamReader[VocabRow], error) {
	return openStream(r, name, &vocabCodec)
}

func openStream[T any](r io.Reader, name string, codec *rowCodec[T]) (*StreamReader[T], error) {
	src := &streamSource{r: r, h: sha256.New()}
	// The messages are checked before arrow-go reads them (arrow_check.go);
	// ipc.NewReader does not even apply arrow-go's own limits on a
	// message's size (v18.8.0): a damaged length made it allocate 51 GB.
	mr := newMessages(src)
	rd, err := ipc.NewReaderFromMessageReader(mr) // releases mr on error
	if err != nil {
		if src.n == 0 {
			err = errors.New("empty input")
		}
		return nil, &StreamError{Name: name, Err: fmt.Errorf("%w: not an Arrow IPC stream: %w", ErrNotPwe, err)}
	}
	mr.setSchema(rd.Schema())
	sr := &StreamReader[T]{name: name, codec: codec, src: src, rd: rd}
	md := rd.Schema().Metadata()
	sr.meta = metaFromLookup(func(k string) (string, bool) {
		if i := md.FindKey(k); i >= 0 {
			return md.Values()[i], true
		}
		return "", false
	})
	if sr.meta.Schema != codec.schema {
		rd.Release()
		got := strconv.Quote(sr.meta.Schema)
		if sr.meta.Schema == "" {
			got = "none"
		}
		return nil, &StreamError{Name: name, Err: fmt.Errorf("%w: want pwe.schema %q, stream has %s", ErrNotPwe, codec.schema, got)}
	}
	if sr.index, err = matchColumns(rd.Schema(), codec.columns); err != nil {
		rd.Release()
		return nil, &StreamError{Name: name, Err: err}
	}
	sr.cols = make([]arrow.Array, len(codec.columns))
	return sr, nil
}

// matchColumns finds every wanted column by name in have and checks its
// type; extra columns are ignored, as for Parquet files.
func matchColumns(have *arrow.Schema, want []arrowColumn) ([]int, error) {
	index := make([]int, len(want))
	for i, col := range want {
		idx := have.FieldIndices(col.name)
		if len(idx) == 0 {
			names := make([]string, have.NumFields())
			for j, f := range have.Fields() {
				names[j] = f.Name
			}
			return nil, fmt.Errorf("%w: missing column %q (stream has %s)", ErrNotPwe, col.name, strings.Join(names, ", "))
		}
		if f := have.Field(idx[0]); !arrow.TypeEqual(f.Type, col.typ) {
			return nil, fmt.Errorf("%w: column %q is %s, want %s", ErrNotPwe, col.name, f.Type, col.typ)
		}
		index[i] = idx[0]
	}
	return index, nil
}

// metaFromLookup reads the pwe keys through lookup, which finds a key in a
// Parquet file's or an Arrow schema's metadata.
func metaFromLookup(lookup func(string) (string, bool)) Meta {
	m := Meta{}
	m.Schema, _ = lookup(KeySchema)
	m.Version, _ = lookup(KeyVersion)
	m.CreatedAt, _ = lookup(KeyCreatedAt)
	for _, f := range []struct {
		key string
		dst *any
	}{{KeyConfig, &m.Config}, {KeyInputs, &m.Inputs}, {KeyStats, &m.Stats}} {
		if v, ok := lookup(f.key); ok {
			*f.dst = json.RawMessage(v)
		}
	}
	return m
}

// Meta returns the stream's metadata; Config, Inputs and Stats hold
// json.RawMessage. Stats arrive with the trailer, so they are set only
// once Read has returned io.EOF.
func (r *StreamReader[T]) Meta() Meta { return r.meta }

// Path returns the name the stream was opened with.
func (r *StreamReader[T]) Path() string { return r.name }

// Row returns the 0-based index of the next row Read will return.
func (r *StreamReader[T]) Row() int64 { return r.row }

// Size returns the number of stream bytes consumed; after io.EOF, the
// whole stream's.
func (r *StreamReader[T]) Size() int64 { return r.src.n }

// SHA256 returns the hex SHA-256 of the bytes consumed; after io.EOF, of
// the whole stream.
func (r *StreamReader[T]) SHA256() string { return hex.EncodeToString(r.src.h.Sum(nil)) }

func (r *StreamReader[T]) fail(err error) error {
	r.err = &StreamError{Name: r.name, Batch: r.batch, Row: r.start, Err: err}
	return r.err
}

// Read fills buf with the next rows and returns how many; it returns
// io.EOF (with n = 0) at the end of a complete stream, and an error that
// names the batch and row for a truncated or malformed one.
func (r *StreamReader[T]) Read(buf []T) (int, error) {
	if r.err != nil {
		return 0, r.err
	}
	for r.rec == nil || r.off == int(r.rec.NumRows()) {
		if err := r.next(); err != nil {
			return 0, err
		}
	}
	n := min(len(buf), int(r.rec.NumRows())-r.off)
	r.codec.decode(r.cols, r.off, buf[:n])
	r.off += n
	r.row += int64(n)
	return n, nil
}

// next moves to the next record batch, or reports the end of the stream.
func (r *StreamReader[T]) next() error {
	if r.rec != nil {
		r.start += r.rec.NumRows()
		r.rec.Release()
		r.rec = nil
	}
	rec, err := r.rd.Read()
	if err == io.EOF {
		return r.end()
	}
	r.batch++
	if errors.Is(err, io.ErrUnexpectedEOF) {
		return r.fail(fmt.Errorf("%w: it ends inside a message: %w", ErrTruncated, err))
	}
	if err != nil {
		return r.fail(fmt.Errorf("malformed Arrow stream: %w", err))
	}
	if r.trailer {
		rec.Release()
		return r.fail(errors.New("record batch after the trailer"))
	}
	rec.Retain()
	r.rec, r.off = rec, 0
	for i, k := range r.index {
		col := rec.Column(k)
		if err := validColumn(col); err != nil {
			return r.fail(fmt.Errorf("malformed column %q: %w", r.codec.columns[i].name, err))
		}
		if !r.codec.columns[i].nullable && col.NullN() > 0 {
			j := 0
			for col.IsValid(j) {
				j++
			}
			return r.fail(fmt.Errorf("row %d: null in column %q", r.start+int64(j), r.codec.columns[i].name))
		}
		r.cols[i] = col
	}
	if md, ok := rec.(arrow.RecordBatchWithMetadata); ok {
		meta := md.Metadata()
		if i := meta.FindKey(keyRows); i >= 0 {
			return r.readTrailer(meta, meta.Values()[i])
		}
	}
	return nil
}

// validColumn checks what Arrow's reader trusts in a batch it reads:
// buffer lengths, and for strings that every offset lies inside the
// data, in order, so that the decoder cannot index past a buffer.
// array.ValidateFull is not used: in arrow-go v18.8.0 it slices the
// data before checking an offset against it, and panics on the damage
// it is meant to find.
func validColumn(col arrow.Array) error {
	if err := array.Validate(col); err != nil {
		return err
	}
	s, ok := col.(*array.String)
	if !ok || s.Len() == 0 {
		return nil
	}
	size := int64(0)
	if data := s.Data().Buffers()[2]; data != nil {
		size = int64(data.Len())
	}
	offs := s.ValueOffsets()
	prev := int64(offs[0])
	if prev < 0 || prev > size {
		return fmt.Errorf("string 0 starts at byte %d of %d", prev, size)
	}
	for j, o := range offs[1:] {
		if int64(o) < prev || int64(o) > size {
			return fmt.Errorf("string %d runs from byte %d to %d of %d", j, prev, o, size)
		}
		prev = int64(o)
	}
	return nil
}

func (r *StreamReader[T]) readTrailer(md arrow.Metadata, rows string) error {
	r.trailer = true
	if r.rec.NumRows() != 0 {
		return r.fail(errors.New("the trailer batch holds rows"))
	}
	if n, err := strconv.ParseInt(rows, 10, 64); err != nil || n != r.start {
		return r.fail(fmt.Errorf("%w: the writer sent %s rows, the stream holds %d", ErrTruncated, rows, r.start))
	}
	if i := md.FindKey(KeyStats); i >= 0 {
		r.meta.Stats = json.RawMessage(md.Values()[i])
	}
	return nil
}

// end checks that the stream was finished by its writer and reads what
// follows the end-of-stream marker, so that the fingerprint covers every
// byte of the input.
func (r *StreamReader[T]) end() error {
	if err := r.rd.Err(); err != nil {
		return r.fail(fmt.Errorf("malformed Arrow stream: %w", err))
	}
	if !r.src.endsWithEOS() {
		r.batch++
		return r.fail(fmt.Errorf("%w: it ends after %d rows without the end-of-stream marker (did the writing process fail?)", ErrTruncated, r.start))
	}
	extra, err := io.Copy(io.Discard, r.src)
	if err != nil {
		return r.fail(err)
	}
	if extra > 0 {
		return r.fail(fmt.Errorf("%d bytes after the end of the Arrow stream", extra))
	}
	r.err = io.EOF
	return io.EOF
}

// Close releases the reader; it does not close the underlying reader.
func (r *StreamReader[T]) Close() error {
	if r.rec != nil {
		r.rec.Release()
		r.rec = nil
	}
	if r.rd != nil {
		r.rd.Release()
		r.rd = nil
	}
	return nil
}

// ReadVocabStream reads a vocabulary from an Arrow stream with the checks
// of ReadVocab, and returns the stream's size and SHA-256.
func ReadVocabStream(in io.Reader, name string) ([]VocabRow, Meta, StreamSum, error) {
	r, err := OpenVocabStream(in, name)
	if err != nil {
		return nil, Meta{}, StreamSum{}, err
	}
	defer r.Close()
	var rows []VocabRow
	buf := make([]VocabRow, 4096)
	for {
		n, err := r.Read(buf)
		rows = append(rows, buf[:n]...)
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, Meta{}, StreamSum{}, err
		}
	}
	if err := checkVocab(name, rows); err != nil {
		return nil, r.meta, StreamSum{}, err
	}
	return rows, r.meta, StreamSum{Size: r.Size(), SHA256: r.SHA256()}, nil
}

// StreamSum identifies the bytes of a whole stream.
type StreamSum struct {
	Size   int64
	SHA256 string
}

// eosMarker is the Arrow IPC end-of-stream marker: the continuation token
// and a zero length.
var eosMarker = [8]byte{0xff, 0xff, 0xff, 0xff, 0, 0, 0, 0}

// streamSource counts and hashes what the IPC reader consumes and keeps
// the last eight bytes, so that the end-of-stream marker can be told from
// input that merely stopped between two messages (which the IPC reader
// does not distinguish).
type streamSource struct {
	r    io.Reader
	h    hash.Hash
	n    int64
	tail [8]byte
}

func (s *streamSource) Read(p []byte) (int, error) {
	n, err := s.r.Read(p)
	s.h.Write(p[:n])
	s.n += int64(n)
	if n >= len(s.tail) {
		copy(s.tail[:], p[n-len(s.tail):n])
	} else if n > 0 {
		copy(s.tail[:], s.tail[n:])
		copy(s.tail[len(s.tail)-n:], p[:n])
	}
	return n, err
}

func (s *streamSource) endsWithEOS() bool { return s.n >= 8 && s.tail == eosMarker }
