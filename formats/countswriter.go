package formats

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"sync"

	"github.com/klauspost/compress/zstd"
	"github.com/parquet-go/parquet-go/deprecated"
	"github.com/parquet-go/parquet-go/encoding/bytestreamsplit"
	"github.com/parquet-go/parquet-go/encoding/delta"
	"github.com/parquet-go/parquet-go/encoding/rle"
	"github.com/parquet-go/parquet-go/encoding/thrift"
	"github.com/parquet-go/parquet-go/format"

	"github.com/pwe-project/pwe/internal/atomicfile"
)

// counts.parquet is pwe's largest output (tens of millions of rows), and its
// four columns have a fixed type, so it is written column by column here
// rather than through parquet-go's row writer: the rows are transposed into
// column pages, the sorted ids are delta-encoded, and the counts are
// dictionary-encoded through a direct-mapped table for the small whole
// numbers they mostly are. Pages are encoded and compressed on a goroutine of
// their own, so that writing overlaps the merge that produces the rows.
//
// The layout is plain Parquet: version 1 data pages of required columns
// (no levels), zstd-compressed; one dictionary page per dictionary-encoded
// column chunk; chunk statistics (min, max, null count) with type-defined
// column order. A dictionary is capped at countsMaxDict entries per row
// group; later pages of that chunk are written PLAIN, as other writers fall
// back.

const (
	// countsPageRows is the number of rows in a data page: pages of 64 Ki
	// values compress well and keep the pages in flight small (1.5 MB each).
	countsPageRows = 1 << 16
	// countsPagesInFlight bounds the pages queued for the encoder.
	countsPagesInFlight = 3
	// countsSmallDict is the size of the direct-mapped dictionary index for
	// whole-number counts.
	countsSmallDict = 1 << 12
	// countsMaxDict bounds a column chunk's dictionary.
	countsMaxDict = 1 << 16
)

// countsPage holds up to countsPageRows rows as columns.
type countsPage struct {
	target, context []int32
	npos, nneg      []float64
}

func newCountsPage() *countsPage {
	return &countsPage{
		target: make([]int32, 0, countsPageRows), context: make([]int32, 0, countsPageRows),
		npos: make([]float64, 0, countsPageRows), nneg: make([]float64, 0, countsPageRows),
	}
}

func (p *countsPage) reset() {
	p.target, p.context, p.npos, p.nneg = p.target[:0], p.context[:0], p.npos[:0], p.nneg[:0]
}

// CountsWriter writes counts.parquet.
type CountsWriter struct {
	file  *atomicfile.File
	kv    [][2]string
	cur   *countsPage
	enc   *countsPageEncoder
	pages chan *countsPage
	free  chan *countsPage
	done  chan struct{}
	ended bool

	mu     sync.Mutex
	encErr error
}

// CreateCounts starts writing counts.parquet. manyValues chooses the
// encoding for counts that are not mostly small whole numbers:
// byte-stream-split instead of a dictionary.
func CreateCounts(path string, meta Meta, manyValues bool) (*CountsWriter, error) {
	meta.Schema = SchemaCounts
	kv, err := meta.pairs()
	if err != nil {
		return nil, err
	}
	zw, err := zstd.NewWriter(nil, zstd.WithEncoderLevel(zstd.SpeedFastest), zstd.WithEncoderConcurrency(1),
		zstd.WithZeroFrames(true), zstd.WithEncoderCRC(false))
	if err != nil {
		return nil, fmt.Errorf("formats: zstd encoder: %w", err)
	}
	f, err := atomicfile.Create(path)
	if err != nil {
		return nil, err
	}
	w := &CountsWriter{
		file: f, kv: kv, cur: newCountsPage(),
		enc:   newCountsEncoder(f, zw, manyValues),
		pages: make(chan *countsPage, countsPagesInFlight),
		free:  make(chan *countsPage, countsPagesInFlight+1),
		done:  make(chan struct{}),
	}
	go w.encode()
	return w, nil
}

// encode runs on its own goroutine: it encodes the queued pages and returns
// them for reuse. After an error it only drains the queue.
func (w *CountsWriter) encode() {
	defer close(w.done)
	var err error
	for p := range w.pages {
		if err == nil {
			if err = w.enc.page(p); err != nil {
				w.mu.Lock()
				w.encErr = err
				w.mu.Unlock()
			}
		}
		p.reset()
		w.free <- p
	}
}

func (w *CountsWriter) failed() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.encErr
}

// Write appends rows, which must continue the sorted order.
func (w *CountsWriter) Write(rows []CountRow) error {
	if w.ended {
		return fmt.Errorf("writing %s: write after Close or Abort", w.file.Name())
	}
	for len(rows) > 0 {
		p := w.cur
		n := min(len(rows), countsPageRows-len(p.target))
		k := len(p.target)
		p.target, p.context = p.target[:k+n], p.context[:k+n]
		p.npos, p.nneg = p.npos[:k+n], p.nneg[:k+n]
		for i, r := range rows[:n] {
			p.target[k+i], p.context[k+i], p.npos[k+i], p.nneg[k+i] = r.TargetID, r.ContextID, r.NPos, r.NNeg
		}
		rows = rows[n:]
		if len(p.target) == countsPageRows {
			if err := w.send(); err != nil {
				return err
			}
		}
	}
	return nil
}

// send queues the current page and takes a free one.
func (w *CountsWriter) send() error {
	if err := w.failed(); err != nil {
		return fmt.Errorf("writing %s: %w", w.file.Name(), err)
	}
	w.pages <- w.cur
	select {
	case w.cur = <-w.free:
	default:
		w.cur = newCountsPage()
	}
	return nil
}

// SetStats records the stage summary (pwe.stats), known only at the end.
func (w *CountsWriter) SetStats(stats any) error {
	v, err := metaJSON(KeyStats, stats)
	if err != nil {
		return err
	}
	for i, p := range w.kv {
		if p[0] == KeyStats {
			w.kv[i][1] = v
			return nil
		}
	}
	w.kv = append(w.kv, [2]string{KeyStats, v})
	return nil
}

// stop ends the encoder goroutine and waits for it.
func (w *CountsWriter) stop() {
	if !w.ended {
		w.ended = true
		close(w.pages)
		<-w.done
	}
}

// Close finishes the file and publishes it under its final name.
func (w *CountsWriter) Close() error {
	if w.ended {
		return fmt.Errorf("writing %s: Close after Close or Abort", w.file.Name())
	}
	if len(w.cur.target) > 0 {
		if err := w.send(); err != nil {
			w.stop()
			w.file.Abort()
			return err
		}
	}
	w.stop()
	err := w.failed()
	if err == nil {
		err = w.enc.finish(w.kv)
	}
	if err != nil {
		w.file.Abort()
		return fmt.Errorf("writing %s: %w", w.file.Name(), err)
	}
	return w.file.Commit()
}

// Abort discards the file; it does nothing after Close.
func (w *CountsWriter) Abort() {
	w.stop()
	w.file.Abort()
}

// countsPageEncoder turns pages into column chunks and the file's footer. It is
// used by one goroutine at a time.
type countsPageEncoder struct {
	out      *bufio.Writer
	off      int64
	zw       *zstd.Encoder
	split    bool
	cols     [4]countsChunk
	rgRows   int64
	numRows  int64
	groups   []format.RowGroup
	raw, enc []byte
	idx      []int32
}

// countsChunk is one column of the row group being built: its data pages,
// already encoded and compressed, wait here for the dictionary page, which
// must come first in the file.
type countsChunk struct {
	codec         format.CompressionCodec
	pages         []byte
	uncompressed  int64
	values        int64
	dict          countsDict
	fallback      bool // the dictionary is full: the remaining pages are PLAIN
	minI, maxI    int32
	minF, maxF    float64
	nan           bool
	encodingsSeen [format.ByteStreamSplit + 1]bool
}

func newCountsEncoder(f *atomicfile.File, zw *zstd.Encoder, split bool) *countsPageEncoder {
	e := &countsPageEncoder{out: bufio.NewWriterSize(f, 1<<20), zw: zw, split: split}
	// The magic goes to the buffer, whose errors surface at the first
	// flush.
	n, _ := e.out.WriteString("PAR1")
	e.off = int64(n)
	e.startRowGroup()
	return e
}

func (e *countsPageEncoder) startRowGroup() {
	for i := range e.cols {
		c := &e.cols[i]
		*c = countsChunk{pages: c.pages[:0], dict: c.dict, codec: countsColumns[i].codec,
			minI: math.MaxInt32, maxI: math.MinInt32, minF: math.Inf(1), maxF: math.Inf(-1)}
		c.dict.reset()
	}
	e.rgRows = 0
}

// page encodes one page of every column and writes out the row group when
// it is full.
func (e *countsPageEncoder) page(p *countsPage) error {
	for i, col := range [...][]int32{p.target, p.context} {
		c := &e.cols[i]
		lo, hi := c.minI, c.maxI
		for _, x := range col {
			if x < lo {
				lo = x
			}
			if x > hi {
				hi = x
			}
		}
		c.minI, c.maxI = lo, hi
		e.raw, _ = new(delta.BinaryPackedEncoding).EncodeInt32(e.raw[:0], col)
		if err := e.dataPage(c, len(col), format.DeltaBinaryPacked); err != nil {
			return err
		}
	}
	for i, col := range [...][]float64{p.npos, p.nneg} {
		c := &e.cols[2+i]
		lo, hi, nan := c.minF, c.maxF, false
		for _, x := range col {
			if x < lo {
				lo = x
			}
			if x > hi {
				hi = x
			}
			if x != x {
				nan = true
			}
		}
		c.minF, c.maxF, c.nan = lo, hi, c.nan || nan
		var enc format.Encoding
		switch {
		case e.split:
			e.raw, _ = new(bytestreamsplit.Encoding).EncodeDouble(e.raw[:0], col)
			enc = format.ByteStreamSplit
		case !c.fallback && c.dict.lookup(col, &e.idx):
			e.raw, _ = new(rle.DictionaryEncoding).EncodeInt32(e.raw[:0], e.idx)
			enc = format.RLEDictionary
		default:
			e.raw = appendPlainDoubles(e.raw[:0], col)
			enc = format.Plain
			c.fallback = true
		}
		if err := e.dataPage(c, len(col), enc); err != nil {
			return err
		}
	}
	e.rgRows += int64(len(p.target))
	if e.rgRows >= RowGroupRows {
		return e.flushRowGroup()
	}
	return nil
}

func appendPlainDoubles(dst []byte, src []float64) []byte {
	for _, x := range src {
		dst = binary.LittleEndian.AppendUint64(dst, math.Float64bits(x))
	}
	return dst
}

// compress returns e.raw compressed with codec.
func (e *countsPageEncoder) compress(codec format.CompressionCodec) []byte {
	if codec == format.Uncompressed {
		return e.raw
	}
	e.enc = e.zw.EncodeAll(e.raw, e.enc[:0])
	return e.enc
}

// dataPage compresses e.raw as a data page of n values and appends it to
// the chunk.
func (e *countsPageEncoder) dataPage(c *countsChunk, n int, enc format.Encoding) error {
	body := e.compress(c.codec)
	h := format.PageHeader{
		Type:                 format.DataPage,
		UncompressedPageSize: int32(len(e.raw)),
		CompressedPageSize:   int32(len(body)),
		DataPageHeader: thrift.New(format.DataPageHeader{
			NumValues: int32(n), Encoding: enc,
			DefinitionLevelEncoding: format.RLE, RepetitionLevelEncoding: format.RLE,
		}),
	}
	hb, err := thrift.Marshal(new(thrift.CompactProtocol), &h)
	if err != nil {
		return err
	}
	c.pages = append(append(c.pages, hb...), body...)
	c.uncompressed += int64(len(hb) + len(e.raw))
	c.values += int64(n)
	c.encodingsSeen[enc] = true
	return nil
}

// countsColumns describes the columns. The delta-encoded context ids are
// left uncompressed: zstd shrinks them by 2 % (they are bit-packed deltas
// of sorted ids, close to random bits) at a third of its cost for the
// whole file.
var countsColumns = [4]struct {
	name  string
	typ   format.Type
	codec format.CompressionCodec
}{
	{"target_id", format.Int32, format.Zstd},
	{"context_id", format.Int32, format.Uncompressed},
	{"n_pos", format.Double, format.Zstd},
	{"n_neg", format.Double, format.Zstd},
}

// flushRowGroup writes the row group's column chunks to the file.
func (e *countsPageEncoder) flushRowGroup() error {
	if e.rgRows == 0 {
		return nil
	}
	rg := format.RowGroup{NumRows: e.rgRows, FileOffset: e.off, Ordinal: int16(len(e.groups))}
	for i := range e.cols {
		c := &e.cols[i]
		start := e.off
		md := format.ColumnMetaData{
			Type:         countsColumns[i].typ,
			PathInSchema: thrift.Slice[string]{countsColumns[i].name},
			Codec:        c.codec,
			NumValues:    c.values,
			Statistics:   c.statistics(countsColumns[i].typ),
		}
		var uncompressed int64
		if c.dict.len() > 0 {
			e.raw = appendPlainDoubles(e.raw[:0], c.dict.values)
			body := e.compress(c.codec)
			h := format.PageHeader{
				Type:                 format.DictionaryPage,
				UncompressedPageSize: int32(len(e.raw)),
				CompressedPageSize:   int32(len(body)),
				DictionaryPageHeader: thrift.New(format.DictionaryPageHeader{
					NumValues: int32(c.dict.len()), Encoding: format.Plain,
				}),
			}
			hb, err := thrift.Marshal(new(thrift.CompactProtocol), &h)
			if err != nil {
				return err
			}
			md.DictionaryPageOffset = e.off
			if err := e.write(hb, body); err != nil {
				return err
			}
			uncompressed += int64(len(hb) + len(e.raw))
			c.encodingsSeen[format.Plain] = true
		}
		md.DataPageOffset = e.off
		if err := e.write(c.pages); err != nil {
			return err
		}
		for enc, seen := range c.encodingsSeen {
			if seen {
				md.Encoding = append(md.Encoding, format.Encoding(enc))
			}
		}
		md.TotalUncompressedSize = uncompressed + c.uncompressed
		md.TotalCompressedSize = e.off - start
		rg.TotalByteSize += md.TotalUncompressedSize
		rg.TotalCompressedSize += md.TotalCompressedSize
		rg.Columns = append(rg.Columns, format.ColumnChunk{FileOffset: start, MetaData: md})
	}
	e.groups = append(e.groups, rg)
	e.numRows += e.rgRows
	e.startRowGroup()
	return nil
}

func (c *countsChunk) statistics(t format.Type) format.Statistics {
	var lo, hi []byte
	switch {
	case c.values == 0:
		return format.Statistics{}
	case t == format.Int32:
		lo = binary.LittleEndian.AppendUint32(nil, uint32(c.minI))
		hi = binary.LittleEndian.AppendUint32(nil, uint32(c.maxI))
	case c.nan:
		// NaN has no place in the order; leave min and max out.
		return format.Statistics{}
	default:
		// A zero minimum is written as -0 and a zero maximum as +0, as the
		// specification asks of floating-point statistics.
		minF, maxF := c.minF, c.maxF
		if minF == 0 {
			minF = math.Copysign(0, -1)
		}
		if maxF == 0 {
			maxF = 0
		}
		lo = binary.LittleEndian.AppendUint64(nil, math.Float64bits(minF))
		hi = binary.LittleEndian.AppendUint64(nil, math.Float64bits(maxF))
	}
	return format.Statistics{MinValue: lo, MaxValue: hi, Min: lo, Max: hi}
}

func (e *countsPageEncoder) write(bs ...[]byte) error {
	for _, b := range bs {
		n, err := e.out.Write(b)
		e.off += int64(n)
		if err != nil {
			return err
		}
	}
	return nil
}

// finish writes the last row group and the footer.
func (e *countsPageEncoder) finish(kv [][2]string) error {
	if err := e.flushRowGroup(); err != nil {
		return err
	}
	schema := thrift.Slice[format.SchemaElement]{{Name: "CountRow", NumChildren: thrift.New(int32(4))}}
	orders := make(thrift.Slice[format.ColumnOrder], 0, len(countsColumns))
	for _, col := range countsColumns {
		el := format.SchemaElement{
			Type: thrift.New(col.typ), RepetitionType: thrift.New(format.Required), Name: col.name,
		}
		if col.typ == format.Int32 {
			el.LogicalType = format.LogicalType{Value: &format.IntType{BitWidth: 32, IsSigned: true}}
			el.ConvertedType = thrift.New(deprecated.Int32)
		}
		schema = append(schema, el)
		orders = append(orders, format.ColumnOrder{Value: &format.TypeDefinedOrder{}})
	}
	md := format.FileMetaData{
		Version: 1, Schema: schema, NumRows: e.numRows, RowGroups: e.groups,
		CreatedBy: "pwe version " + kvValue(kv, KeyVersion), ColumnOrders: orders,
	}
	for _, p := range kv {
		md.KeyValueMetadata = append(md.KeyValueMetadata, format.KeyValue{Key: p[0], Value: p[1]})
	}
	b, err := thrift.Marshal(new(thrift.CompactProtocol), &md)
	if err != nil {
		return err
	}
	if err := e.write(b, binary.LittleEndian.AppendUint32(nil, uint32(len(b))), []byte("PAR1")); err != nil {
		return err
	}
	return e.out.Flush()
}

var errDictFull = errors.New("dictionary full")

// countsDict is a column chunk's dictionary of float64 values.
type countsDict struct {
	values []float64
	// small[k] is 1 + the index of the whole number k, or 0.
	small []int32
	// other maps the bits of any other value to its index.
	other map[uint64]int32
}

func (d *countsDict) len() int { return len(d.values) }

func (d *countsDict) reset() {
	d.values = d.values[:0]
	clear(d.small)
	clear(d.other)
}

// lookup sets *idx to the dictionary indices of vals, adding new values,
// and reports false, leaving the dictionary as it was, when they would not
// fit.
func (d *countsDict) lookup(vals []float64, idx *[]int32) bool {
	if d.small == nil {
		d.small = make([]int32, countsSmallDict)
		d.other = make(map[uint64]int32)
	}
	n0 := len(d.values)
	out := (*idx)[:0]
	err := error(nil)
	for _, v := range vals {
		var j int32
		if k, ok := smallKey(v); ok {
			if j = d.small[k] - 1; j < 0 {
				if j, err = d.add(v); err != nil {
					break
				}
				d.small[k] = j + 1
			}
		} else {
			b := math.Float64bits(v)
			var ok bool
			if j, ok = d.other[b]; !ok {
				if j, err = d.add(v); err != nil {
					break
				}
				d.other[b] = j
			}
		}
		out = append(out, j)
	}
	*idx = out
	if err != nil {
		d.truncate(n0)
		return false
	}
	return true
}

// smallKey returns v's slot in the direct-mapped table of whole numbers
// below countsSmallDict (-0 excluded: its bits differ from 0's), which
// lookup and truncate must agree on.
func smallKey(v float64) (int, bool) {
	k := int(v)
	return k, k >= 0 && k < countsSmallDict && math.Float64bits(float64(k)) == math.Float64bits(v)
}

func (d *countsDict) add(v float64) (int32, error) {
	if len(d.values) >= countsMaxDict {
		return 0, errDictFull
	}
	d.values = append(d.values, v)
	return int32(len(d.values) - 1), nil
}

// truncate drops the values added after the first n.
func (d *countsDict) truncate(n int) {
	for _, v := range d.values[n:] {
		if k, ok := smallKey(v); ok {
			d.small[k] = 0
		} else {
			delete(d.other, math.Float64bits(v))
		}
	}
	d.values = d.values[:n]
}
