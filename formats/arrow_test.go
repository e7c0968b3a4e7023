package formats

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/ipc"
	"github.com/apache/arrow-go/v18/arrow/memory"
	flatbuffers "github.com/google/flatbuffers/go"
)

// randomCounts returns n sorted unique rows with awkward values: zeros,
// fractions, huge and tiny magnitudes.
func randomCounts(n int, seed uint64) []CountRow {
	r := rand.New(rand.NewPCG(seed, 1))
	rows := make([]CountRow, n)
	var t, c int32
	for i := range rows {
		if r.IntN(50) == 0 {
			t++
			c = 0
		}
		c += 1 + int32(r.IntN(3))
		vals := []float64{0, 1, 7, 0.25, 1.0 / 3, 1e300, 5e-324, float64(r.Uint64())}
		rows[i] = CountRow{TargetID: t, ContextID: c, NPos: vals[r.IntN(len(vals))], NNeg: vals[r.IntN(len(vals))]}
	}
	return rows
}

func writeCountsStream(t *testing.T, rows []CountRow, meta Meta, stats any, chunk int) []byte {
	t.Helper()
	var buf bytes.Buffer
	w, err := CreateCountsStream(&buf, meta)
	if err != nil {
		t.Fatal(err)
	}
	for len(rows) > 0 {
		n := min(chunk, len(rows))
		if err := w.Write(rows[:n]); err != nil {
			t.Fatal(err)
		}
		rows = rows[n:]
	}
	if stats != nil {
		if err := w.SetStats(stats); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// readCounts reads a whole counts stream with an odd buffer size, so that
// reads straddle batch boundaries.
func readCounts(data []byte) ([]CountRow, *StreamReader[CountRow], error) {
	r, err := OpenCountsStream(bytes.NewReader(data), "stdin")
	if err != nil {
		return nil, nil, err
	}
	defer r.Close()
	var rows []CountRow
	buf := make([]CountRow, 1000)
	for {
		n, err := r.Read(buf)
		rows = append(rows, buf[:n]...)
		if err == io.EOF {
			return rows, r, nil
		}
		if err != nil {
			return rows, r, err
		}
	}
}

func TestCountsStreamRoundTrip(t *testing.T) {
	t.Setenv("SOURCE_DATE_EPOCH", "86400")
	for _, n := range []int{0, 1, StreamBatchRows, 2*StreamBatchRows + 17} {
		rows := randomCounts(n, uint64(n))
		stats := map[string]int{"unique_pairs": n}
		data := writeCountsStream(t, rows, Meta{Config: map[string]int{"window": 5}, Inputs: []string{"a.txt"}}, stats, 5000)
		got, r, err := readCounts(data)
		if err != nil {
			t.Fatalf("%d rows: %v", n, err)
		}
		if len(got) != n {
			t.Fatalf("read %d rows, wrote %d", len(got), n)
		}
		for i := range rows {
			if math.Float64bits(got[i].NPos) != math.Float64bits(rows[i].NPos) || got[i] != rows[i] {
				t.Fatalf("row %d: read %+v, wrote %+v", i, got[i], rows[i])
			}
		}
		m := r.Meta()
		if m.Schema != SchemaCounts || m.CreatedAt != "1970-01-02T00:00:00Z" || m.Version == "" {
			t.Errorf("schema %q created_at %q version %q", m.Schema, m.CreatedAt, m.Version)
		}
		if string(m.Config.(json.RawMessage)) != `{"window":5}` || string(m.Inputs.(json.RawMessage)) != `["a.txt"]` {
			t.Errorf("config %s inputs %s", m.Config, m.Inputs)
		}
		var back map[string]int
		if err := json.Unmarshal(m.Stats.(json.RawMessage), &back); err != nil || back["unique_pairs"] != n {
			t.Errorf("stats %s: %v", m.Stats, err)
		}
		// Batches: full ones, the rest, then the trailer.
		if want := (n+StreamBatchRows-1)/StreamBatchRows + 1; r.batch != want {
			t.Errorf("%d rows in %d batches, want %d", n, r.batch, want)
		}
		if r.Size() != int64(len(data)) {
			t.Errorf("size %d, stream has %d bytes", r.Size(), len(data))
		}
	}
}

func TestVocabStreamRoundTrip(t *testing.T) {
	ext := int64(-7)
	rows := []VocabRow{{0, "the", 10, nil}, {1, "Straße", 3, &ext}, {2, "日本", 1, nil}}
	var buf bytes.Buffer
	w, err := CreateVocabStream(&buf, Meta{Config: map[string]int{"max_vocab": 3}})
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Write(rows); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	got, meta, sum, err := ReadVocabStream(bytes.NewReader(buf.Bytes()), "stdin")
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
	if meta.Schema != SchemaVocab || string(meta.Config.(json.RawMessage)) != `{"max_vocab":3}` {
		t.Errorf("metadata %+v", meta)
	}
	if sum.Size != int64(buf.Len()) || len(sum.SHA256) != 64 {
		t.Errorf("sum %+v for %d bytes", sum, buf.Len())
	}

	// The checks of ReadVocab apply to streams too.
	buf.Reset()
	w, _ = CreateVocabStream(&buf, Meta{})
	w.Write([]VocabRow{{0, "a", 1, nil}, {1, "a", 1, nil}})
	w.Close()
	if _, _, _, err := ReadVocabStream(&buf, "stdin"); err == nil || !strings.Contains(err.Error(), "stdin: row 1: token \"a\" repeats row 0") {
		t.Errorf("duplicate token: %v", err)
	}
}

func TestStreamTruncated(t *testing.T) {
	rows := randomCounts(StreamBatchRows+100, 3)
	data := writeCountsStream(t, rows, Meta{}, nil, len(rows))
	// Every cut, at message boundaries and inside messages, must fail; a
	// sample of cut points keeps the test fast.
	r := rand.New(rand.NewPCG(4, 4))
	cuts := []int{0, 1, 4, 8, len(data) - 8, len(data) - 1}
	for range 200 {
		cuts = append(cuts, r.IntN(len(data)))
	}
	for _, cut := range cuts {
		got, _, err := readCounts(data[:cut])
		if err == nil {
			t.Fatalf("cut at %d of %d bytes: read %d rows without error", cut, len(data), len(got))
		}
		if !strings.HasPrefix(err.Error(), "stdin: ") {
			t.Errorf("cut at %d: error %q does not name stdin", cut, err)
		}
	}
	// A cut between the batches names the batch and row where it stopped.
	_, _, err := readCounts(data[:boundaryAfterFirstBatch(t, data)])
	var se *StreamError
	if !errors.As(err, &se) || !errors.Is(err, ErrTruncated) || se.Batch != 2 || se.Row != StreamBatchRows {
		t.Errorf("cut after batch 1: %v", err)
	}
	want := "stdin: batch 2 (from row 65536): formats: stream truncated: it ends after 65536 rows without the end-of-stream marker"
	if err == nil || !strings.HasPrefix(err.Error(), want) {
		t.Errorf("error %q, want prefix %q", err, want)
	}
}

// boundaryAfterFirstBatch finds the byte offset just after the first record
// batch message by feeding the stream through a message reader.
func boundaryAfterFirstBatch(t *testing.T, data []byte) int {
	src := &streamSource{r: bytes.NewReader(data), h: nopHasher{}}
	mr := ipc.NewMessageReader(src)
	defer mr.Release()
	for range 2 { // schema, first batch
		if _, err := mr.Message(); err != nil {
			t.Fatal(err)
		}
	}
	return int(src.n)
}

func TestStreamAborted(t *testing.T) {
	var buf bytes.Buffer
	w, err := CreateCountsStream(&buf, Meta{})
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Write(randomCounts(StreamBatchRows+5, 1)); err != nil {
		t.Fatal(err)
	}
	w.Abort()
	w.out.Flush() // what a dying writer's buffer might still hold
	got, _, err := readCounts(buf.Bytes())
	if !errors.Is(err, ErrTruncated) || len(got) != StreamBatchRows {
		t.Errorf("aborted stream: %d rows, %v", len(got), err)
	}
}

// externalStream writes an Arrow stream the way another tool would: any
// schema, no trailer, with the end-of-stream marker.
func externalStream(t *testing.T, fields []arrow.Field, md map[string]string, fill func(b *array.RecordBuilder)) []byte {
	t.Helper()
	m := arrow.MetadataFrom(md)
	schema := arrow.NewSchema(fields, &m)
	b := array.NewRecordBuilder(memory.DefaultAllocator, schema)
	defer b.Release()
	fill(b)
	rec := b.NewRecordBatch()
	defer rec.Release()
	return recordStream(t, rec)
}

// recordStream writes rec as a stream with arrow-go's writer, with opts.
func recordStream(t *testing.T, rec arrow.RecordBatch, opts ...ipc.Option) []byte {
	t.Helper()
	var buf bytes.Buffer
	w := ipc.NewWriter(&buf, append([]ipc.Option{ipc.WithSchema(rec.Schema())}, opts...)...)
	if err := w.Write(rec); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func countsFields(last arrow.DataType) []arrow.Field {
	return []arrow.Field{
		{Name: "extra", Type: arrow.BinaryTypes.String},
		{Name: "context_id", Type: arrow.PrimitiveTypes.Int32},
		{Name: "target_id", Type: arrow.PrimitiveTypes.Int32},
		{Name: "n_pos", Type: arrow.PrimitiveTypes.Float64},
		{Name: "n_neg", Type: last},
	}
}

func TestExternalStream(t *testing.T) {
	// Columns in another order, an extra column, no trailer: accepted.
	data := externalStream(t, countsFields(arrow.PrimitiveTypes.Float64), map[string]string{KeySchema: SchemaCounts}, func(b *array.RecordBuilder) {
		b.Field(0).(*array.StringBuilder).AppendValues([]string{"x", "y"}, nil)
		b.Field(1).(*array.Int32Builder).AppendValues([]int32{4, 5}, nil)
		b.Field(2).(*array.Int32Builder).AppendValues([]int32{1, 2}, nil)
		b.Field(3).(*array.Float64Builder).AppendValues([]float64{1.5, 0}, nil)
		b.Field(4).(*array.Float64Builder).AppendValues([]float64{0, 3}, nil)
	})
	got, _, err := readCounts(data)
	want := []CountRow{{1, 4, 1.5, 0}, {2, 5, 0, 3}}
	if err != nil || len(got) != 2 || got[0] != want[0] || got[1] != want[1] {
		t.Errorf("read %+v, %v; want %+v", got, err, want)
	}
	// Without the end-of-stream marker it is truncated.
	if _, _, err := readCounts(data[:len(data)-8]); !errors.Is(err, ErrTruncated) {
		t.Errorf("no marker: %v", err)
	}
	// Bytes after the marker are an error, not silently ignored.
	if _, _, err := readCounts(append(append([]byte(nil), data...), 'x')); err == nil || !strings.Contains(err.Error(), "1 bytes after the end") {
		t.Errorf("trailing byte: %v", err)
	}
}

func TestStreamRejects(t *testing.T) {
	counts := map[string]string{KeySchema: SchemaCounts}
	fillCounts := func(nulls []bool) func(b *array.RecordBuilder) {
		return func(b *array.RecordBuilder) {
			b.Field(0).(*array.StringBuilder).AppendValues([]string{"x", "y"}, nil)
			b.Field(1).(*array.Int32Builder).AppendValues([]int32{4, 5}, nil)
			b.Field(2).(*array.Int32Builder).AppendValues([]int32{1, 2}, nil)
			b.Field(3).(*array.Float64Builder).AppendValues([]float64{1.5, 0}, nil)
			if f, ok := b.Field(4).(*array.Float64Builder); ok {
				f.AppendValues([]float64{0, 3}, nulls)
			} else {
				b.Field(4).(*array.Float32Builder).AppendValues([]float32{0, 3}, nil)
			}
		}
	}
	vocab := writeVocabStream(t, []VocabRow{{0, "a", 1, nil}})
	cases := []struct {
		name string
		data []byte
		want string
	}{
		{"empty", nil, "stdin: formats: not the expected pwe file: not an Arrow IPC stream: empty input"},
		{"text", []byte("the quick brown fox\n"), "stdin: formats: not the expected pwe file: not an Arrow IPC stream"},
		{"vocab for counts", vocab, `stdin: formats: not the expected pwe file: want pwe.schema "pwe.counts/1", stream has "pwe.vocab/1"`},
		{"no pwe.schema", externalStream(t, countsFields(arrow.PrimitiveTypes.Float64), nil, fillCounts(nil)), "stream has none"},
		{"missing column", externalStream(t, countsFields(arrow.PrimitiveTypes.Float64)[:4], counts, func(b *array.RecordBuilder) {
			b.Field(0).(*array.StringBuilder).AppendValues([]string{"x"}, nil)
			b.Field(1).(*array.Int32Builder).AppendValues([]int32{4}, nil)
			b.Field(2).(*array.Int32Builder).AppendValues([]int32{1}, nil)
			b.Field(3).(*array.Float64Builder).AppendValues([]float64{1.5}, nil)
		}), `stdin: formats: not the expected pwe file: missing column "n_neg" (stream has extra, context_id, target_id, n_pos)`},
		{"wrong type", externalStream(t, countsFields(arrow.PrimitiveTypes.Float32), counts, fillCounts(nil)), `column "n_neg" is float32, want float64`},
		{"null", externalStream(t, countsFields(arrow.PrimitiveTypes.Float64), counts, fillCounts([]bool{true, false})), `stdin: batch 1 (from row 0): row 1: null in column "n_neg"`},
	}
	for _, c := range cases {
		_, _, err := readCounts(c.data)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: error %v, want %q", c.name, err, c.want)
		}
	}
}

// TestDumpStreamDamaged: pwe inspect - of a vocabulary stream with any one
// byte damaged gives an error naming the stream, or a dump, and neither
// panics nor allocates what a damaged count says (which would end the
// test's process): the checks of the streams count and fit read apply.
func TestDumpStreamDamaged(t *testing.T) {
	var buf bytes.Buffer
	w, err := CreateVocabStream(&buf, Meta{Config: map[string]int{"max_vocab": 3}})
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Write([]VocabRow{{0, "the", 10, nil}, {1, "cat", 3, nil}, {2, "sat", 1, nil}}); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	data := buf.Bytes()
	for i := range data {
		for _, v := range []byte{0x7f, 0xff, 0} {
			bad := bytes.Clone(data)
			bad[i] = v
			err := DumpStream(io.Discard, bytes.NewReader(bad), "v.arrow", DumpOptions{Rows: -1})
			var se *StreamError
			if err != nil && (!errors.As(err, &se) || se.Name != "v.arrow" || strings.Contains(err.Error(), "a value could not be read")) {
				t.Fatalf("byte %d set to %#x: %v, want a StreamError found by the checks", i, v, err)
			}
		}
	}
}

func TestDumpStream(t *testing.T) {
	t.Setenv("SOURCE_DATE_EPOCH", "0")
	data := writeCountsStream(t, []CountRow{{0, 1, 2, 0.5}, {0, 3, 0, 4}, {2, 2, 1, 1}}, Meta{Config: map[string]int{"window": 2}}, map[string]int{"unique_pairs": 2}, 2)
	var b bytes.Buffer
	if err := DumpStream(&b, bytes.NewReader(data), "stdin", DumpOptions{Rows: 2, Stable: true}); err != nil {
		t.Fatal(err)
	}
	want := `rows: 3
arrow stream schema:
  target_id: int32
  context_id: int32
  n_pos: float64
  n_neg: float64
metadata:
  pwe.config: {
    "window": 2
  }
  pwe.rows: 3
  pwe.schema: pwe.counts/1
  pwe.stats: {
    "unique_pairs": 2
  }
rows (target_id, context_id, n_pos, n_neg):
  0 | 1 | 2 | 0.5
  0 | 3 | 0 | 4
`
	if b.String() != want {
		t.Errorf("dump:\n%s\nwant:\n%s", b.String(), want)
	}
	if err := DumpStream(io.Discard, bytes.NewReader(data[:len(data)-8]), "stdin", DumpOptions{}); !errors.Is(err, ErrTruncated) {
		t.Errorf("truncated: %v", err)
	}
}

func writeVocabStream(t *testing.T, rows []VocabRow) []byte {
	var buf bytes.Buffer
	w, err := CreateVocabStream(&buf, Meta{})
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Write(rows); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// FuzzCountsStream feeds arbitrary bytes to the stream reader: it must
// return rows or an error naming the stream, never panic.
func FuzzCountsStream(f *testing.F) {
	var buf bytes.Buffer
	w, _ := CreateCountsStream(&buf, Meta{})
	w.Write(randomCounts(50, 9))
	w.Close()
	f.Add(buf.Bytes())
	f.Add(buf.Bytes()[:len(buf.Bytes())/2])
	f.Add([]byte("not arrow"))
	f.Fuzz(func(t *testing.T, data []byte) {
		_, _, err := readCounts(data)
		if err != nil && !strings.HasPrefix(err.Error(), "stdin: ") {
			t.Errorf("error %q does not name the stream", err)
		}
	})
}

// FuzzVocabStream feeds arbitrary bytes to the vocabulary stream reader: it
// must return a vocabulary that passes its checks or an error naming the
// stream, never panic.
func FuzzVocabStream(f *testing.F) {
	var buf bytes.Buffer
	w, _ := CreateVocabStream(&buf, Meta{})
	ext := int64(3)
	w.Write([]VocabRow{{0, "the", 10, nil}, {1, "straße", 3, &ext}, {2, "日本", 1, nil}})
	w.Close()
	f.Add(buf.Bytes())
	f.Add(buf.Bytes()[:len(buf.Bytes())*2/3])
	f.Add([]byte("not arrow"))
	f.Fuzz(func(t *testing.T, data []byte) {
		rows, _, _, err := ReadVocabStream(bytes.NewReader(data), "stdin")
		if err != nil {
			if !strings.HasPrefix(err.Error(), "stdin: ") {
				t.Errorf("error %q does not name the stream", err)
			}
			return
		}
		if err := checkVocab("stdin", rows); err != nil {
			t.Errorf("ReadVocabStream returned a vocabulary that fails its checks: %v", err)
		}
	})
}

// benchCounts resembles real counts: sorted pairs, small whole numbers.
func benchCounts(n int) []CountRow {
	r := rand.New(rand.NewPCG(1, 2))
	rows := make([]CountRow, n)
	var t, c int32
	for i := range rows {
		if r.IntN(300) == 0 {
			t++
			c = 0
		}
		c += 1 + int32(r.IntN(20))
		rows[i] = CountRow{TargetID: t, ContextID: c, NPos: float64(r.IntN(4)), NNeg: float64(r.IntN(3))}
	}
	return rows
}

// cpuSeconds is the process's user + system CPU time, which measures the
// work on a shared machine better than the wall clock.
func cpuSeconds() float64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano()).Seconds()
}

// BenchmarkCountsIO writes and reads 4 M counts rows as an Arrow stream and
// as counts.parquet, reporting CPU nanoseconds per row.
func BenchmarkCountsIO(b *testing.B) {
	rows := benchCounts(4 << 20)
	path := filepath.Join(b.TempDir(), "counts.parquet")
	var stream bytes.Buffer
	w, _ := CreateCountsStream(&stream, Meta{})
	w.Write(rows)
	w.Close()
	cases := []struct {
		name string
		run  func() error
	}{
		{"stream/write", func() error {
			w, _ := CreateCountsStream(io.Discard, Meta{})
			if err := w.Write(rows); err != nil {
				return err
			}
			return w.Close()
		}},
		{"stream/read", func() error {
			_, _, err := readCounts(stream.Bytes())
			return err
		}},
		{"parquet/write", func() error {
			w, err := CreateCounts(path, Meta{}, false)
			if err != nil {
				return err
			}
			if err := w.Write(rows); err != nil {
				return err
			}
			return w.Close()
		}},
		{"parquet/read", func() error {
			got, _, err := ReadAll[CountRow](path, SchemaCounts)
			if err == nil && len(got) != len(rows) {
				err = fmt.Errorf("read %d rows", len(got))
			}
			return err
		}},
	}
	for _, c := range cases {
		b.Run(c.name, func(b *testing.B) {
			cpu := cpuSeconds()
			for b.Loop() {
				if err := c.run(); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric((cpuSeconds()-cpu)*1e9/float64(b.N)/float64(len(rows)), "cpu-ns/row")
			b.ReportMetric(0, "ns/op")
		})
	}
}

// TestSchemaMessageCounts sets counts in a stream's schema message, and
// the length of its first record batch, found with the flatbuffers
// library, to values that arrow-go would allocate gigabytes for: the
// reader must refuse them with an error naming the stream, and read the
// stream unchanged.
func TestSchemaMessageCounts(t *testing.T) {
	var buf bytes.Buffer
	w, err := CreateCountsStream(&buf, Meta{})
	if err != nil {
		t.Fatal(err)
	}
	w.Write(randomCounts(10, 1))
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	data := buf.Bytes()
	if _, _, err := readCounts(data); err != nil {
		t.Fatalf("the stream as written: %v", err)
	}
	// The message: continuation, length, flatbuffer Message{header: Schema}.
	const at = 8
	msg := data[at:]
	root := flatbuffers.GetUOffsetT(msg)
	m := &flatbuffers.Table{Bytes: msg, Pos: root}
	var schema flatbuffers.Table
	o := flatbuffers.UOffsetT(m.Offset(8)) // Message.header
	if o == 0 || m.GetByte(m.Pos+flatbuffers.UOffsetT(m.Offset(6))) != 1 {
		t.Fatal("the first message is not a schema")
	}
	m.Union(&schema, o)
	// vectorLen returns the position of the length of the table's vector
	// at the vtable offset.
	vectorLen := func(tab *flatbuffers.Table, vt flatbuffers.VOffsetT) int {
		o := flatbuffers.UOffsetT(tab.Offset(vt))
		if o == 0 {
			t.Fatalf("no vector at vtable offset %d", vt)
		}
		return int(tab.Vector(o)) - 4
	}
	fields := vectorLen(&schema, 6)
	if n := binary.LittleEndian.Uint32(msg[fields:]); n != 4 {
		t.Fatalf("schema has %d fields, want the 4 of counts", n)
	}
	for _, tc := range []struct {
		name string
		pos  int
	}{{"fields", fields}, {"metadata pairs", vectorLen(&schema, 8)}} {
		bad := bytes.Clone(data)
		binary.LittleEndian.PutUint32(bad[at+tc.pos:], 1<<30)
		_, _, err := readCounts(bad)
		if err == nil || !strings.HasPrefix(err.Error(), "stdin: ") || !strings.Contains(err.Error(), "1073741824 "+tc.name) {
			t.Errorf("%s: error %v", tc.name, err)
		}
	}
	// The next message, the first record batch: a body of 64 GiB, where
	// arrow-go's ipc.NewReader applies no limit of its own.
	next := at + int(binary.LittleEndian.Uint32(data[4:]))
	batch := data[next+8:]
	b := &flatbuffers.Table{Bytes: batch, Pos: flatbuffers.GetUOffsetT(batch)}
	bl := b.Offset(10) // Message.bodyLength
	if binary.LittleEndian.Uint32(data[next:]) != 0xffffffff || bl == 0 {
		t.Fatal("no record batch with a body after the schema")
	}
	bad := bytes.Clone(data)
	binary.LittleEndian.PutUint64(bad[next+8+int(b.Pos)+int(bl):], 1<<36)
	if _, _, err := readCounts(bad); err == nil || !strings.HasPrefix(err.Error(), "stdin: ") || !strings.Contains(err.Error(), "body length 68719476736 exceeds the limit") {
		t.Errorf("body of 64 GiB: error %v", err)
	}
}

// TestStreamCompressedSizes reads LZ4- and zstd-compressed streams, as other
// writers send, and then the zstd one with the size that its first
// compressed buffer says it takes decompressed set to a terabyte, which
// arrow-go would allocate before decompressing: an error naming the
// stream, not a fatal out-of-memory.
func TestStreamCompressedSizes(t *testing.T) {
	fields := countsFields(arrow.PrimitiveTypes.Float64)[1:]
	md := arrow.MetadataFrom(map[string]string{KeySchema: SchemaCounts})
	schema := arrow.NewSchema(fields, &md)
	want := randomCounts(1000, 4)
	b := array.NewRecordBuilder(memory.DefaultAllocator, schema)
	for _, r := range want {
		b.Field(0).(*array.Int32Builder).Append(r.ContextID)
		b.Field(1).(*array.Int32Builder).Append(r.TargetID)
		b.Field(2).(*array.Float64Builder).Append(r.NPos)
		b.Field(3).(*array.Float64Builder).Append(r.NNeg)
	}
	rec := b.NewRecordBatch()
	for _, lz4 := range []bool{true, false} {
		opt := ipc.WithZstd()
		if lz4 {
			opt = ipc.WithLZ4()
		}
		data := recordStream(t, rec, opt)
		got, _, err := readCounts(data)
		if err != nil || len(got) != len(want) || got[999] != want[999] {
			t.Fatalf("compressed stream (LZ4 %v): %d rows, %v", lz4, len(got), err)
		}
		if !lz4 {
			damageCompressedSize(t, data)
		}
	}
}

// damageCompressedSize sets the size that the first buffer of the
// stream's first record batch says it takes decompressed to a terabyte.
func damageCompressedSize(t *testing.T, data []byte) {
	// The record batch follows the schema message; its buffers vector
	// gives each buffer's place in the body that follows the message.
	next := 8 + int(binary.LittleEndian.Uint32(data[4:]))
	metaLen := int(binary.LittleEndian.Uint32(data[next+4:]))
	msg := data[next+8:]
	m := &flatbuffers.Table{Bytes: msg, Pos: flatbuffers.GetUOffsetT(msg)}
	if m.GetByte(m.Pos+flatbuffers.UOffsetT(m.Offset(6))) != 3 {
		t.Fatal("the second message is not a record batch")
	}
	var batch flatbuffers.Table
	m.Union(&batch, flatbuffers.UOffsetT(m.Offset(8)))
	o := flatbuffers.UOffsetT(batch.Offset(8)) // RecordBatch.buffers
	if o == 0 || batch.Offset(10) == 0 {
		t.Fatal("the record batch has no buffers or is not compressed")
	}
	vec, n := batch.Vector(o), batch.VectorLen(o)
	body := next + 8 + metaLen
	for i := range n {
		off := binary.LittleEndian.Uint64(msg[int(vec)+16*i:])
		if binary.LittleEndian.Uint64(msg[int(vec)+16*i+8:]) == 0 {
			continue
		}
		bad := bytes.Clone(data)
		binary.LittleEndian.PutUint64(bad[body+int(off):], 1<<40)
		_, _, err := readCounts(bad)
		if err == nil || !strings.HasPrefix(err.Error(), "stdin: ") || !strings.Contains(err.Error(), "more than 1073741824 bytes decompressed") {
			t.Errorf("a buffer of a terabyte: error %v", err)
		}
		return
	}
	t.Fatal("no buffer holds data")
}

// TestStreamStringOffsets writes vocabulary streams whose token column has
// offsets that a damaged or hostile writer could send: each must be an
// error naming the batch and the column, not a panic in the decoder.
func TestStreamStringOffsets(t *testing.T) {
	fields := []arrow.Field{
		{Name: "token_id", Type: arrow.PrimitiveTypes.Int32},
		{Name: "token", Type: arrow.BinaryTypes.String},
		{Name: "count", Type: arrow.PrimitiveTypes.Int64},
		{Name: "external_id", Type: arrow.PrimitiveTypes.Int64, Nullable: true},
	}
	md := arrow.MetadataFrom(map[string]string{KeySchema: SchemaVocab})
	schema := arrow.NewSchema(fields, &md)
	stream := func(offsets []int32, values string) []byte {
		n := len(offsets) - 1
		ids := make([]int32, n)
		counts := make([]int64, n)
		for i := range ids {
			ids[i], counts[i] = int32(i), int64(n-i)
		}
		mem := memory.DefaultAllocator
		b := array.NewInt32Builder(mem)
		b.AppendValues(ids, nil)
		idCol := b.NewArray()
		c := array.NewInt64Builder(mem)
		c.AppendValues(counts, nil)
		countCol := c.NewArray()
		c.AppendNulls(n)
		extCol := c.NewArray()
		tokData := array.NewData(arrow.BinaryTypes.String, n, []*memory.Buffer{nil,
			memory.NewBufferBytes(arrow.Int32Traits.CastToBytes(offsets)),
			memory.NewBufferBytes([]byte(values))}, nil, 0, 0)
		tokCol := array.MakeFromData(tokData)
		return recordStream(t, array.NewRecordBatch(schema, []arrow.Array{idCol, tokCol, countCol, extCol}, int64(n)))
	}
	// The well-formed stream reads, so that the damaged ones below fail
	// for their offsets alone.
	rows, _, _, err := ReadVocabStream(bytes.NewReader(stream([]int32{0, 1, 3, 6}, "abbccc")), "v.arrow")
	if err != nil || len(rows) != 3 || rows[0].Token != "a" || rows[1].Token != "bb" || rows[2].Token != "ccc" {
		t.Fatalf("well-formed stream: %+v, %v", rows, err)
	}
	for _, c := range []struct {
		name    string
		offsets []int32
		want    string
	}{
		{"past the data, then back", []int32{0, 1 << 28, 3, 6}, "string 0 runs from byte 0 to 268435456 of 6"},
		{"backwards", []int32{0, 4, 2, 6}, "string 1 runs from byte 4 to 2 of 6"},
	} {
		_, _, _, err := ReadVocabStream(bytes.NewReader(stream(c.offsets, "abbccc")), "v.arrow")
		if err == nil || !strings.Contains(err.Error(), c.want) ||
			!strings.HasPrefix(err.Error(), `v.arrow: batch 1 (from row 0): malformed column "token"`) {
			t.Errorf("%s: error %v, want %q", c.name, err, c.want)
		}
	}
}
