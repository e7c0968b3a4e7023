package formats

import (
	"bufio"
	"encoding/binary"
	"fmt"
	"math"
	"math/bits"
	"slices"
	"sync"
	"sync/atomic"

	"github.com/klauspost/compress/zstd"
	"github.com/parquet-go/parquet-go/deprecated"
	"github.com/parquet-go/parquet-go/encoding/bytestreamsplit"
	"github.com/parquet-go/parquet-go/encoding/delta"
	"github.com/parquet-go/parquet-go/encoding/thrift"
	"github.com/parquet-go/parquet-go/format"

	"github.com/pwe-project/pwe/internal/atomicfile"
	"github.com/pwe-project/pwe/internal/pages"
)

// counts.parquet is pwe's largest output (tens of millions of rows), and its
// four columns have a fixed type, so it is written column by column here
// rather than through parquet-go's row writer: the rows are transposed into
// column pages, the sorted ids are delta-encoded, and the counts are
// dictionary-encoded through a direct-mapped table for the small whole
// numbers they mostly are. Each column is encoded and compressed on a
// goroutine of its own and the row groups are written on another, so that
// writing overlaps the merge that produces the rows and does not hold back
// a merge running on several cores.
//
// The layout is plain Parquet: version 1 data pages of required columns
// (no levels), zstd-compressed (as Huffman-coded literals alone, or stored
// in raw blocks, where countsColumns says so); one dictionary page per
// dictionary-encoded column chunk; chunk statistics (min, max, null count)
// with type-defined column order. A dictionary is capped at countsMaxDict entries per row
// group; later pages of that chunk are written PLAIN, as other writers fall
// back.

const (
	// CountsPageRows is the number of rows in a data page of
	// counts.parquet: pages of 64 Ki values compress well and keep the
	// pages in flight small (1.5 MB each). Columns of exactly this many
	// rows given to [CountsWriter.TakeColumns] at a page boundary are not
	// copied.
	CountsPageRows = 1 << 16
	// countsPagesInFlight bounds the pages queued for the encoder.
	countsPagesInFlight = 3
	// countsSmallDict is the size of the direct-mapped dictionary index for
	// whole-number counts.
	countsSmallDict = 1 << 12
	// countsMaxDict bounds a column chunk's dictionary.
	countsMaxDict = 1 << 16
	// countsMinLoan and countsMaxLoans bound the segments of lent rows
	// (see [CountsWriter.LendColumns]).
	countsMinLoan  = 1 << 12
	countsMaxLoans = 6
)

// countsPage holds up to CountsPageRows rows: as columns of its own, or,
// once rows lent by [CountsWriter.LendColumns] join it, as a list of
// segments of its own columns and of the lent ones, in row order.
type countsPage struct {
	CountColumns // the rows written into the page
	segs         []countsSegment
	rows         int // the page's rows, where segs is not empty
	loans        int // segments of lent rows in segs
	// pending counts the column encoders that have yet to read the page.
	pending atomic.Int32
}

// countsSegment is rows [i, j) of cols, which loan lent the page, or
// which are the page's own where loan is nil.
type countsSegment struct {
	cols *CountColumns
	i, j int
	loan *countsLoan
}

// countsLoan is one call of LendColumns: release is called once the last
// page holding its rows has been encoded, or dropped.
type countsLoan struct {
	refs    atomic.Int32
	release func()
}

func (l *countsLoan) drop() {
	if l.refs.Add(-1) == 0 {
		l.release()
	}
}

// newCountsPage returns an empty page; its columns are made when rows are
// first written into it.
func newCountsPage() *countsPage { return &countsPage{} }

// len returns the number of rows of the page.
func (p *countsPage) len() int {
	if len(p.segs) > 0 {
		return p.rows
	}
	return p.Len()
}

// own returns the page's own columns, made with room for a page when
// first needed.
func (p *countsPage) own() *CountColumns {
	if p.Target == nil {
		p.CountColumns = MakeCountColumns(CountsPageRows)
	}
	return &p.CountColumns
}

// addSegment records a segment, where the page has lent rows, and extends
// the last segment where the new one continues it.
func (p *countsPage) addSegment(s countsSegment) {
	if s.i == s.j || s.loan == nil && len(p.segs) == 0 {
		return
	}
	if s.loan != nil && len(p.segs) == 0 && p.Len() > 0 {
		p.segs = append(p.segs, countsSegment{cols: &p.CountColumns, j: p.Len()})
		p.rows = p.Len()
	}
	if n := len(p.segs); n > 0 && s.loan == nil && p.segs[n-1].loan == nil {
		p.segs[n-1].j = s.j
	} else {
		p.segs = append(p.segs, s)
	}
	p.rows += s.j - s.i
	if s.loan != nil {
		p.loans++
		s.loan.refs.Add(1)
	}
}

// reset empties the page and ends its loans.
func (p *countsPage) reset() {
	for _, s := range p.segs {
		if s.loan != nil {
			s.loan.drop()
		}
	}
	clear(p.segs)
	p.segs, p.rows, p.loans = p.segs[:0], 0, 0
	p.Reset()
}

// pageParts returns a column of the page's rows, as col picks it from
// columns, as the slices of its segments (one where it has no lent rows),
// in the scratch slice.
func pageParts[T int32 | float64](p *countsPage, col func(*CountColumns) []T, scratch *[][]T) [][]T {
	out := (*scratch)[:0]
	if len(p.segs) == 0 {
		out = append(out, col(&p.CountColumns))
	}
	for _, s := range p.segs {
		out = append(out, col(s.cols)[s.i:s.j])
	}
	*scratch = out
	return out
}

// joinParts returns the parts as one slice: the only one, or all of them
// gathered in buf.
func joinParts[T int32 | float64](parts [][]T, buf *[]T) []T {
	if len(parts) == 1 {
		return parts[0]
	}
	out := (*buf)[:0]
	for _, p := range parts {
		out = append(out, p...)
	}
	*buf = out
	return out
}

func targetColumn(c *CountColumns) []int32  { return c.Target }
func contextColumn(c *CountColumns) []int32 { return c.Context }
func nPosColumn(c *CountColumns) []float64  { return c.NPos }
func nNegColumn(c *CountColumns) []float64  { return c.NNeg }

// CountsWriter writes counts.parquet.
type CountsWriter struct {
	file  *atomicfile.File
	kv    [][2]string
	cur   *countsPage
	cols  [4]*countsColumnEncoder
	asm   *countsAssembler
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
	zw, err := zstd.NewWriter(nil, zstd.WithEncoderLevel(zstd.SpeedFastest), zstd.WithEncoderConcurrency(len(countsColumns)),
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
		asm:  newCountsAssembler(f),
		free: make(chan *countsPage, countsPagesInFlight+3),
		done: make(chan struct{}),
	}
	for i := range w.cols {
		w.cols[i] = newCountsColumnEncoder(i, zw, manyValues)
		go w.encodeColumn(w.cols[i])
	}
	go w.assemble()
	return w, nil
}

// encodeColumn runs on a goroutine of its own for each column: it encodes
// that column of the queued pages, in order, and hands each finished column
// chunk to the assembler. The columns do not depend on each other, so the
// four encoders run in parallel, and the bytes do not depend on how they
// are scheduled. After an error the encoder only drains its queue.
func (w *CountsWriter) encodeColumn(c *countsColumnEncoder) {
	var err error
	for p := range c.in {
		if err == nil && w.failed() == nil {
			if err = c.page(p); err != nil {
				w.fail(err)
			}
		}
		if p.pending.Add(-1) == 0 {
			p.reset()
			select {
			case w.free <- p:
			default:
			}
		}
	}
	if err == nil && w.failed() == nil {
		if err = c.endChunk(); err != nil {
			w.fail(err)
		}
	}
	close(c.out)
}

// assemble runs on its own goroutine: it writes the row groups, each from
// one chunk of every column, and returns the chunks for reuse. After an
// error, or when a column ends early because another failed, it only
// drains the chunks.
func (w *CountsWriter) assemble() {
	defer close(w.done)
	for {
		var group [len(countsColumns)]*countsChunk
		ended := false
		for i, c := range w.cols {
			ch, ok := <-c.out
			if !ok {
				ended = true
				break
			}
			group[i] = ch
		}
		if ended {
			for i, c := range w.cols {
				if group[i] != nil {
					c.spare <- group[i]
				}
				for ch := range c.out {
					c.spare <- ch
				}
			}
			return
		}
		if w.failed() == nil {
			if err := w.asm.rowGroup(group); err != nil {
				w.fail(err)
			}
		}
		for i, c := range w.cols {
			c.spare <- group[i]
		}
	}
}

func (w *CountsWriter) fail(err error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.encErr == nil {
		w.encErr = err
	}
}

func (w *CountsWriter) failed() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.encErr
}

// Write appends rows, which must continue the sorted order.
func (w *CountsWriter) Write(rows []CountRow) error {
	return w.fill(len(rows), func(p *countsPage, i, j int) { p.own().AppendRows(rows[i:j]) })
}

// WriteColumns appends the rows of cols, which must continue the sorted
// order; it is Write for rows already held as columns, which it copies
// column by column.
func (w *CountsWriter) WriteColumns(cols *CountColumns) error {
	return w.fill(cols.Len(), func(p *countsPage, i, j int) { p.own().appendColumns(cols, i, j) })
}

// TakeColumns is WriteColumns for columns whose rows the caller no longer
// needs. When cols holds exactly one page of rows and the current page is
// empty, the page takes cols' memory instead of a copy of its rows, and
// cols gets the page's memory in exchange: room for CountsPageRows rows.
// Either way, cols is empty on return.
func (w *CountsWriter) TakeColumns(cols *CountColumns) error {
	if p := w.cur; !w.ended && p.len() == 0 && cols.Len() == CountsPageRows {
		p.CountColumns, *cols = *cols, p.CountColumns
		if cols.Target == nil { // the page had no columns of its own yet
			*cols = MakeCountColumns(CountsPageRows)
		}
		cols.Reset()
		return w.send()
	}
	err := w.WriteColumns(cols)
	cols.Reset()
	return err
}

// LendColumns is WriteColumns without the copy: the writer's encoders
// read the rows of cols where they are, after LendColumns returns, and
// the writer calls release once none will read them again, on any
// goroutine; until then the caller must leave cols as they are. release
// is called exactly once, whatever happens, by the time Close or Abort
// returns. Rows that would make a short segment of a page (fewer than
// countsMinLoan), or a page of more than countsMaxLoans segments, are
// copied instead, so that the writer holds few batches at a time.
//
// Copied into the pages, the rows of a merge on several workers are
// written once more and read back on their way to the encoders: on
// bench-raw, count on two threads spent about a tenth of its CPU time in
// that copy.
func (w *CountsWriter) LendColumns(cols *CountColumns, release func()) error {
	loan := &countsLoan{release: release}
	loan.refs.Store(1) // held until every page has its segment
	defer loan.drop()
	return w.fill(cols.Len(), func(p *countsPage, i, j int) {
		if j-i < countsMinLoan || p.loans >= countsMaxLoans {
			p.own().appendColumns(cols, i, j)
			return
		}
		p.addSegment(countsSegment{cols: cols, i: i, j: j, loan: loan})
	})
}

// fill adds n rows to the pages, sending each page as it fills: add
// writes rows [i, j) of the caller's into page p, as rows of its own or
// as a segment.
func (w *CountsWriter) fill(n int, add func(p *countsPage, i, j int)) error {
	if w.ended {
		return fmt.Errorf("writing %s: write after Close or Abort", w.file.Name())
	}
	for i := 0; i < n; {
		p := w.cur
		k := min(n-i, CountsPageRows-p.len())
		at := p.Len()
		add(p, i, i+k)
		p.addSegment(countsSegment{cols: &p.CountColumns, i: at, j: p.Len()})
		i += k
		if p.len() == CountsPageRows {
			if err := w.send(); err != nil {
				return err
			}
		}
	}
	return nil
}

// send queues the current page for every column encoder and takes a free
// one.
func (w *CountsWriter) send() error {
	if err := w.failed(); err != nil {
		return fmt.Errorf("writing %s: %w", w.file.Name(), err)
	}
	p := w.cur
	p.pending.Store(int32(len(w.cols)))
	for _, c := range w.cols {
		c.in <- p
	}
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

// stop ends the encoder goroutines and waits for them.
func (w *CountsWriter) stop() {
	if !w.ended {
		w.ended = true
		for _, c := range w.cols {
			close(c.in)
		}
		<-w.done
		// The goroutines are done: every chunk is back with its encoder,
		// and the current page is the last one to hold loans.
		for _, c := range w.cols {
			c.freeChunks()
		}
		w.cur.reset()
	}
}

// Close finishes the file and publishes it under its final name.
func (w *CountsWriter) Close() error {
	if w.ended {
		return fmt.Errorf("writing %s: Close after Close or Abort", w.file.Name())
	}
	if w.cur.len() > 0 {
		if err := w.send(); err != nil {
			w.stop()
			w.file.Abort()
			return err
		}
	}
	w.stop()
	err := w.failed()
	if err == nil {
		err = w.asm.finish(w.kv)
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

// countsAssembler writes the row groups' column chunks and the file's
// footer. It is used by one goroutine at a time.
type countsAssembler struct {
	out     *bufio.Writer
	off     int64
	numRows int64
	groups  []format.RowGroup
}

func newCountsAssembler(f *atomicfile.File) *countsAssembler {
	a := &countsAssembler{out: bufio.NewWriterSize(f, 1<<20)}
	// The magic goes to the buffer, whose errors surface at the first
	// flush.
	n, _ := a.out.WriteString("PAR1")
	a.off = int64(n)
	return a
}

// countsColumnEncoder turns one column of the pages into column chunks. It
// is used by one goroutine at a time.
type countsColumnEncoder struct {
	col      int
	zw       *zstd.Encoder
	split    bool
	in       chan *countsPage
	out      chan *countsChunk // finished chunks, to the assembler
	spare    chan *countsChunk // chunks the assembler has written
	chunk    *countsChunk      // the chunk being built, or nil
	lit      literalFrames
	raw, enc []byte
	idx      []int32
	idxBits  int // bit width of idx's largest index
	// A page's column in parts, and gathered where the encoding needs
	// it whole.
	intParts   [][]int32
	floatParts [][]float64
	ints       []int32
	floats     []float64
}

// countsChunksPerColumn is the number of chunks each column cycles through:
// one being built while the assembler writes the other.
const countsChunksPerColumn = 2

func newCountsColumnEncoder(col int, zw *zstd.Encoder, split bool) *countsColumnEncoder {
	c := &countsColumnEncoder{
		col: col, zw: zw, split: split,
		in:    make(chan *countsPage, countsPagesInFlight),
		out:   make(chan *countsChunk, 1),
		spare: make(chan *countsChunk, countsChunksPerColumn),
	}
	for range countsChunksPerColumn {
		c.spare <- &countsChunk{}
	}
	return c
}

// countsChunk is one column of a row group: its data pages, already encoded
// and compressed, wait here for the dictionary page, which must come first
// in the file.
type countsChunk struct {
	codec         format.CompressionCodec
	rows          int64
	pages         pages.Buffer // the data pages, in memory of their own (freed by stop)
	uncompressed  int64
	values        int64
	dict          countsDict
	dictPage      []byte // header and body of the dictionary page, if any
	dictRaw       int64  // its uncompressed size, header included
	fallback      bool   // the dictionary is full: the remaining pages are PLAIN
	minI, maxI    int32
	minF, maxF    float64
	nan           bool
	encodingsSeen [format.ByteStreamSplit + 1]bool
}

// freeChunks returns the memory of the encoder's chunks' pages, once the
// encoder and the assembler are done.
func (e *countsColumnEncoder) freeChunks() {
	if e.chunk != nil {
		e.chunk.pages.Free()
	}
	for {
		select {
		case c := <-e.spare:
			c.pages.Free()
		default:
			return
		}
	}
}

// startChunk takes a chunk written earlier, or waits for the assembler to
// return one.
func (e *countsColumnEncoder) startChunk() {
	c := <-e.spare
	c.pages.Reset()
	*c = countsChunk{pages: c.pages, dict: c.dict, dictPage: c.dictPage[:0], codec: countsColumns[e.col].codec,
		minI: math.MaxInt32, maxI: math.MinInt32, minF: math.Inf(1), maxF: math.Inf(-1)}
	c.dict.reset()
	e.chunk = c
}

// page encodes the encoder's column of one page and hands the chunk on when
// the row group is full.
func (e *countsColumnEncoder) page(p *countsPage) error {
	if e.chunk == nil {
		e.startChunk()
	}
	c := e.chunk
	var err error
	switch e.col {
	case 0:
		err = e.intPage(c, joinParts(pageParts(p, targetColumn, &e.intParts), &e.ints))
	case 1:
		err = e.intPage(c, joinParts(pageParts(p, contextColumn, &e.intParts), &e.ints))
	case 2:
		err = e.floatPage(c, pageParts(p, nPosColumn, &e.floatParts))
	default:
		err = e.floatPage(c, pageParts(p, nNegColumn, &e.floatParts))
	}
	if err != nil {
		return err
	}
	c.rows += int64(p.len())
	if c.rows >= RowGroupRows {
		return e.endChunk()
	}
	return nil
}

func (e *countsColumnEncoder) intPage(c *countsChunk, col []int32) error {
	c.minI, c.maxI = int32Range(col, c.minI, c.maxI)
	e.raw, _ = new(delta.BinaryPackedEncoding).EncodeInt32(e.raw[:0], col)
	return e.dataPage(c, len(col), format.DeltaBinaryPacked)
}

// floatPage encodes a page of doubles, given as the parts it is made of.
// The dictionary's lookup reads the parts where they are; the other
// encodings take them gathered.
func (e *countsColumnEncoder) floatPage(c *countsChunk, parts [][]float64) error {
	if !e.split && !c.fallback && c.dict.lookup(parts, &e.idx, &e.idxBits) {
		// The dictionary's values give the statistics when the chunk ends.
		// The page is what rle.DictionaryEncoding writes: the bit width,
		// then the indices (appendHybrid); lookup found the width on its
		// way, and indexWidth aligns it for the Huffman coding.
		w := indexWidth(e.idxBits)
		e.raw = appendHybrid(append(e.raw[:0], byte(w)), e.idx, w)
		return e.dataPage(c, len(e.idx), format.RLEDictionary)
	}
	col := joinParts(parts, &e.floats)
	var enc format.Encoding
	if e.split {
		e.raw, _ = new(bytestreamsplit.Encoding).EncodeDouble(e.raw[:0], col)
		enc = format.ByteStreamSplit
	} else {
		e.raw = appendPlainDoubles(e.raw[:0], col)
		enc = format.Plain
		c.fallback = true
	}
	c.minF, c.maxF, c.nan = foldRange(col, c.minF, c.maxF, c.nan)
	return e.dataPage(c, len(col), enc)
}

// endChunk encodes the dictionary page of the chunk being built, if it has
// a dictionary, and hands the chunk to the assembler.
func (e *countsColumnEncoder) endChunk() error {
	c := e.chunk
	if c == nil || c.rows == 0 {
		return nil
	}
	if c.dict.len() > 0 {
		// The values of the chunk's dictionary-encoded pages are exactly
		// the dictionary's, so those pages need no scan of their own.
		c.minF, c.maxF, c.nan = foldRange(c.dict.values, c.minF, c.maxF, c.nan)
		e.raw = appendPlainDoubles(e.raw[:0], c.dict.values)
		body := e.compress(c.codec, codeMatches)
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
		c.dictPage = append(append(c.dictPage, hb...), body...)
		c.dictRaw = int64(len(hb) + len(e.raw))
		c.encodingsSeen[format.Plain] = true
	}
	e.chunk = nil
	e.out <- c
	return nil
}

// indexWidth returns the bit width in which a data page stores dictionary
// indices of at most bits bits: 8 for 5 to 7 bits, bits otherwise. The
// page's bytes are then Huffman-coded (literalFrames), and a code for
// bytes finds an index that has a byte to itself, where an index of 5 to 7
// bits is cut across bytes differently from one value to the next, and
// its statistics are smeared. On bench-raw (--max-vocab 65536, window 5),
// n_pos took 10.85 MB instead of 11.86 and n_neg 10.08 instead of 11.40:
// counts.parquet 50.30 MB instead of 52.64, for 0.2 % more instructions
// (cachegrind). Widening 3 or 4 bits made n_neg larger: four bits are
// aligned already, two indices to a byte.
func indexWidth(bits int) int {
	if bits >= 5 && bits < 8 {
		return 8
	}
	return bits
}

func appendPlainDoubles(dst []byte, src []float64) []byte {
	for _, x := range src {
		dst = binary.LittleEndian.AppendUint64(dst, math.Float64bits(x))
	}
	return dst
}

// compress returns e.raw compressed with codec, in zstd frames as coding
// says.
func (e *countsColumnEncoder) compress(codec format.CompressionCodec, coding pageCoding) []byte {
	switch {
	case codec == format.Uncompressed:
		return e.raw
	case coding == codeLiterals || coding == codeStored:
		e.enc = e.lit.appendFrame(e.enc[:0], e.raw, coding == codeLiterals)
	default:
		e.enc = e.zw.EncodeAll(e.raw, e.enc[:0])
	}
	return e.enc
}

// dataPage compresses e.raw as a data page of n values and appends it to
// the chunk.
func (e *countsColumnEncoder) dataPage(c *countsChunk, n int, enc format.Encoding) error {
	// Pages of plain or byte-stream-split doubles keep zstd's matches.
	coding := countsColumns[e.col].coding
	if enc != format.RLEDictionary && enc != format.DeltaBinaryPacked {
		coding = codeMatches
	}
	body := e.compress(c.codec, coding)
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
	c.growPages(len(hb)+len(body), n)
	c.pages.Append(hb, body)
	c.uncompressed += int64(len(hb) + len(e.raw))
	c.values += int64(n)
	c.encodingsSeen[enc] = true
	return nil
}

// growPages makes room in the chunk's pages for a page of size bytes and n
// rows: for the rest of the row group at the size per row of the pages so
// far, and an eighth more, and at least twice the room there was. A
// chunk's buffer is reused for the column's later chunks, and those of
// bench-raw's counts take more room the further into the file they are:
// append's growth by a quarter at a time had left about 40 MB of abandoned
// buffers behind there, fresh memory whose page faults cost more than the
// copies. The buffer is a pages.Buffer, in huge pages of its own: in the
// Go heap, the 19 MB that its growth still took on bench-raw were cleared
// by the runtime, 4 KiB page by page (count on one thread, 1.920 CPU-s and
// 137 MiB against 1.985 and 146, medians of 8 alternating runs).
func (c *countsChunk) growPages(size, n int) {
	used := c.pages.Len()
	if used+size <= c.pages.Cap() {
		return
	}
	rows := c.values + int64(n)
	est := int64(used+size) * max(RowGroupRows, rows) / max(rows, 1)
	c.pages.Reserve(max(int(est+est/8), 2*c.pages.Cap()))
}

// pageCoding is how a column's data pages are coded inside their zstd
// frames.
type pageCoding int

const (
	// codeMatches is klauspost's encoder at its fastest level, matches
	// and all.
	codeMatches pageCoding = iota
	// codeLiterals is Huffman-coded literals alone (literalFrames).
	codeLiterals
	// codeStored is raw blocks: frames that hold the bytes as they are.
	codeStored
)

// countsColumns describes the columns and how their dictionary indices
// and delta-coded ids are coded. As Huffman-coded literals alone, the
// counts' indices made the count stage on bench-raw 6 % cheaper than with
// klauspost's fastest level (median of the ratios of 8 alternating rounds)
// and the file 6 % smaller. The target ids, long runs of one id, keep the
// matches, which shrink them eight-fold. The context ids, bit-packed
// deltas close to random bits, are stored: zstd's matches gained 2 % on
// them, for a third of its time on the file, and the literals 8 % (29.1
// of 31.7 MB), for 3.9 % of count's instructions (cachegrind, 13.49 G
// against 12.97 G); counts.parquet is 52.88 MB where the literals made it
// 50.30, and 52.64 before the counts' indices were stored in whole bytes
// (indexWidth).
var countsColumns = [4]struct {
	name   string
	typ    format.Type
	codec  format.CompressionCodec
	coding pageCoding
}{
	{"target_id", format.Int32, format.Zstd, codeMatches},
	{"context_id", format.Int32, format.Zstd, codeStored},
	{"n_pos", format.Double, format.Zstd, codeLiterals},
	{"n_neg", format.Double, format.Zstd, codeLiterals},
}

// rowGroup writes a row group, made of one chunk of every column.
func (a *countsAssembler) rowGroup(chunks [len(countsColumns)]*countsChunk) error {
	rows := chunks[0].rows
	rg := format.RowGroup{NumRows: rows, FileOffset: a.off, Ordinal: int16(len(a.groups))}
	for i, c := range chunks {
		start := a.off
		md := format.ColumnMetaData{
			Type:         countsColumns[i].typ,
			PathInSchema: thrift.Slice[string]{countsColumns[i].name},
			Codec:        c.codec,
			NumValues:    c.values,
			Statistics:   c.statistics(countsColumns[i].typ),
		}
		if len(c.dictPage) > 0 {
			md.DictionaryPageOffset = a.off
			if err := a.write(c.dictPage); err != nil {
				return err
			}
		}
		md.DataPageOffset = a.off
		if err := a.write(c.pages.Bytes()); err != nil {
			return err
		}
		for enc, seen := range c.encodingsSeen {
			if seen {
				md.Encoding = append(md.Encoding, format.Encoding(enc))
			}
		}
		md.TotalUncompressedSize = c.dictRaw + c.uncompressed
		md.TotalCompressedSize = a.off - start
		rg.TotalByteSize += md.TotalUncompressedSize
		rg.TotalCompressedSize += md.TotalCompressedSize
		rg.Columns = append(rg.Columns, format.ColumnChunk{FileOffset: start, MetaData: md})
	}
	a.groups = append(a.groups, rg)
	a.numRows += rows
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

func (a *countsAssembler) write(bs ...[]byte) error {
	for _, b := range bs {
		n, err := a.out.Write(b)
		a.off += int64(n)
		if err != nil {
			return err
		}
	}
	return nil
}

// finish writes the footer.
func (a *countsAssembler) finish(kv [][2]string) error {
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
		Version: 1, Schema: schema, NumRows: a.numRows, RowGroups: a.groups,
		CreatedBy: "pwe version " + kvValue(kv, KeyVersion), ColumnOrders: orders,
	}
	for _, p := range kv {
		md.KeyValueMetadata = append(md.KeyValueMetadata, format.KeyValue{Key: p[0], Value: p[1]})
	}
	b, err := thrift.Marshal(new(thrift.CompactProtocol), &md)
	if err != nil {
		return err
	}
	if err := a.write(b, binary.LittleEndian.AppendUint32(nil, uint32(len(b))), []byte("PAR1")); err != nil {
		return err
	}
	return a.out.Flush()
}

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

// lookup sets *idx to the dictionary indices of the values of parts, one
// after another, adding new values, and *bitWidth to the bit width of the
// largest index; it reports false, leaving the dictionary as it was, when
// the values would not fit.
func (d *countsDict) lookup(parts [][]float64, idx *[]int32, bitWidth *int) bool {
	if d.small == nil {
		d.small = make([]int32, countsSmallDict)
		d.other = make(map[uint64]int32)
	}
	n0 := len(d.values)
	n := 0
	for _, p := range parts {
		n += len(p)
	}
	out := slices.Grow((*idx)[:0], n)[:n]
	*idx = out
	// The bit width of the largest index is that of all indices or-ed.
	var or int32
	for _, p := range parts {
		o, ok := d.lookupRun(p, out[:len(p)])
		if !ok {
			d.truncate(n0)
			return false
		}
		or |= o
		out = out[len(p):]
	}
	*bitWidth = bits.Len32(uint32(or))
	return true
}

// lookupRun sets out to the dictionary indices of vals, adding new values,
// and returns the indices or-ed; it reports false when the dictionary is
// full, with the values up to there added.
func (d *countsDict) lookupRun(vals []float64, out []int32) (int32, bool) {
	small := (*[countsSmallDict]int32)(d.small)
	var bitsOf int32
	for i := 0; i < len(vals); {
		end := len(vals)
		if hasAVX2 {
			// Groups of four whole numbers already in the dictionary, then
			// the rest of the group that ended that, one by one. On
			// bench-raw, lookup took 952 of count's samples on one thread,
			// and 417 so (perf record), about 3.5 % of count.
			n, or := smallIndexAVX2(vals[i:], small, out[i:])
			i += n
			bitsOf |= or
			end = min(end, i+4)
		}
		for ; i < end; i++ {
			// The loop keeps to the common case, a whole number already
			// in the dictionary; index, out of line, does the rest.
			v := vals[i]
			if k, ok := smallKey(v); ok {
				if j := small[k]; j > 0 {
					out[i] = j - 1
					bitsOf |= j - 1
					continue
				}
			}
			j, ok := d.index(v)
			if !ok {
				return 0, false
			}
			out[i] = j
			bitsOf |= j
		}
	}
	return bitsOf, true
}

// index returns the dictionary index of v, adding it if it is new, or false
// when the dictionary is full.
//
//go:noinline
func (d *countsDict) index(v float64) (int32, bool) {
	if k, ok := smallKey(v); ok {
		j := d.small[k] - 1
		if j < 0 {
			if j = d.add(v); j < 0 {
				return 0, false
			}
			d.small[k] = j + 1
		}
		return j, true
	}
	b := math.Float64bits(v)
	j, ok := d.other[b]
	if !ok {
		if j = d.add(v); j < 0 {
			return 0, false
		}
		d.other[b] = j
	}
	return j, true
}

// int32Range widens [lo, hi] to hold every value of col, in assembly where
// there is AVX2. The Go loop keeps four running ranges over interleaved
// values: one range would make each comparison wait for the one before,
// and this loop ran at a quarter of the speed (10 % of the count stage on
// bench-raw).
func int32Range(col []int32, lo, hi int32) (int32, int32) {
	if hasAVX2 && len(col) >= 16 {
		n := len(col) &^ 15
		lo, hi = int32RangeAVX2(col[:n], lo, hi)
		col = col[n:]
	}
	l0, l1, l2, l3 := lo, lo, lo, lo
	h0, h1, h2, h3 := hi, hi, hi, hi
	for len(col) >= 4 {
		x := col[:4:4]
		l0, h0 = min(l0, x[0]), max(h0, x[0])
		l1, h1 = min(l1, x[1]), max(h1, x[1])
		l2, h2 = min(l2, x[2]), max(h2, x[2])
		l3, h3 = min(l3, x[3]), max(h3, x[3])
		col = col[4:]
	}
	for _, x := range col {
		l0, h0 = min(l0, x), max(h0, x)
	}
	return min(l0, l1, l2, l3), max(h0, h1, h2, h3)
}

// foldRange folds values into the range (lo, hi) and the NaN flag.
func foldRange(values []float64, lo, hi float64, nan bool) (float64, float64, bool) {
	for _, x := range values {
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
	return lo, hi, nan
}

// smallKey returns v's slot in the direct-mapped table of whole numbers
// below countsSmallDict (-0 excluded: its bits differ from 0's), which
// lookup and truncate must agree on.
func smallKey(v float64) (int, bool) {
	k := int(v)
	return k, k >= 0 && k < countsSmallDict && math.Float64bits(float64(k)) == math.Float64bits(v)
}

// add appends v and returns its index, or -1 when the dictionary is full.
func (d *countsDict) add(v float64) int32 {
	if len(d.values) >= countsMaxDict {
		return -1
	}
	d.values = append(d.values, v)
	return int32(len(d.values) - 1)
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
