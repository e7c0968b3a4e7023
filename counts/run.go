package counts

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"sort"
)

// A run is a spill file of aggregated pair counts grouped by target in
// increasing order. It holds one or more sections, each a sequence of
// groups
//
//	uvarint(target) uvarint(n) n × (uvarint(context delta) uvarint(count))
//
// where context deltas restart from 0 in every group. Counts are canonical:
// the integer sum for the unordered pair, so a diagonal entry is doubled on
// output. For every section the run records the byte offset at which each
// target partition starts, so that partitions merge independently.
type run struct {
	f        *os.File
	sections [][]int64 // per section: offsets of partitions 0..P, then the end
	// split says the run is a spill's: its first section holds each
	// target's contexts up to the target itself, its second those above.
	split bool
	// mem, if set, holds the run instead of f (keepRun); the sections'
	// offsets are then indices into its arrays.
	mem *memRun
}

// A memRun is a spill's run kept in memory, as spillKeys leaves it: the
// canonical pairs sorted by (hi, lo), each packed above its count, and the
// off-diagonal pairs grouped by lo, each as hi | count<<32, lo's group
// ending at ends[lo].
type memRun struct {
	keys, transposed []uint64
	ends             []uint32
	idBits, valBits  uint
}

// keepRun adds the run of a spill to the counter as a memRun: keys and
// transposed as transposePacked leaves them, ends its hist. The partition
// offsets of the first section are found by binary search on the sorted
// keys, those of the second are group starts.
func (c *Counter) keepRun(keys, transposed []uint64, valBits uint, ends []uint32) {
	mr := &memRun{keys: keys, transposed: transposed, ends: slices.Clone(ends[:c.v]), idBits: c.idBits, valBits: valBits}
	shift := valBits + c.idBits
	up, above := make([]int64, len(c.parts)), make([]int64, len(c.parts))
	for p, t := range c.parts {
		up[p] = int64(sort.Search(len(keys), func(i int) bool { return keys[i]>>shift >= uint64(t) }))
		if t > 0 {
			above[p] = int64(mr.ends[t-1])
		}
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.runs = append(c.runs, &run{sections: [][]int64{up, above}, split: true, mem: mr})
	c.kept++
}

// section is one partition of one run section: bytes [start, end) of f,
// or entries [start, end) of the section of a memRun.
type section struct {
	f          *os.File
	start, end int64
	contexts   contextRange
	mem        *memRun
	memSection int
}

// contextRange says which contexts of a target a section's groups hold.
type contextRange uint8

const (
	anyContexts contextRange = iota
	upToTarget               // contexts <= target
	aboveTarget              // contexts > target
)

func (r *run) section(s, p int) section {
	sec := section{f: r.f, start: r.sections[s][p], end: r.sections[s][p+1], mem: r.mem, memSection: s}
	if r.split {
		sec.contexts = upToTarget + contextRange(s)
	}
	return sec
}

// runWriter encodes groups into a file, recording partition offsets.
type runWriter struct {
	f      *os.File
	buf    []byte
	off    int64 // bytes written to f before buf
	parts  []int32
	offs   []int64
	nextP  int
	err    error
	nBytes int64
}

const runBufSize = 256 << 10

func newRunWriter(f *os.File, parts []int32, buf []byte) *runWriter {
	w := &runWriter{f: f, buf: buf[:0], parts: parts}
	w.off, w.err = f.Seek(0, io.SeekEnd)
	return w
}

// startSection begins a new section at the current offset.
func (w *runWriter) startSection() {
	w.offs = make([]int64, len(w.parts))
	w.nextP = 0
}

// group starts the group of target t with n entries.
func (w *runWriter) group(t int32, n int) {
	pos := w.off + int64(len(w.buf))
	for w.nextP < len(w.parts)-1 && t >= w.parts[w.nextP] {
		w.offs[w.nextP] = pos
		w.nextP++
	}
	w.buf = binary.AppendUvarint(w.buf, uint64(t))
	w.buf = binary.AppendUvarint(w.buf, uint64(n))
}

func (w *runWriter) entry(delta uint32, v uint64) {
	if delta < 0x80 && v < 0x80 {
		w.buf = append(w.buf, byte(delta), byte(v))
	} else {
		w.buf = binary.AppendUvarint(w.buf, uint64(delta))
		w.buf = binary.AppendUvarint(w.buf, v)
	}
	if len(w.buf) >= cap(w.buf)-32 {
		w.flush()
	}
}

func (w *runWriter) flush() {
	if w.err == nil && len(w.buf) > 0 {
		_, w.err = w.f.Write(w.buf)
	}
	w.off += int64(len(w.buf))
	w.nBytes += int64(len(w.buf))
	w.buf = w.buf[:0]
}

// endSection finishes the section and returns its partition offsets.
func (w *runWriter) endSection() []int64 {
	pos := w.off + int64(len(w.buf))
	for ; w.nextP < len(w.parts); w.nextP++ {
		w.offs[w.nextP] = pos
	}
	return w.offs
}

// cursor decodes the groups of one section.
type cursor struct {
	r       io.ReaderAt
	off     int64 // next file offset to read
	end     int64
	buf     []byte
	pos     int
	t       int32 // target of the current group
	n       int   // entries of the current group
	done    bool
	corrupt bool
	// contexts is the section's: which contexts of a target its groups hold.
	contexts contextRange
	// A cursor on a memRun's section reads its entries off to end, of
	// its keys or of its transposed entries.
	mem        *memRun
	transposed bool
}

func (c *cursor) reset(s section, buf []byte) error {
	*c = cursor{r: s.f, off: s.start, end: s.end, buf: buf[:0], contexts: s.contexts}
	if s.mem != nil {
		c.mem, c.transposed = s.mem, s.memSection == 1
		if c.transposed {
			// The first group is the first to end after the start.
			ends := s.mem.ends
			c.t = int32(sort.Search(len(ends), func(i int) bool { return int64(ends[i]) > s.start }))
		}
	}
	return c.nextGroup()
}

// fill makes at least 2*MaxVarintLen64 bytes available unless the section
// ends first.
func (c *cursor) fill() error {
	if len(c.buf)-c.pos >= 2*binary.MaxVarintLen64 || c.off >= c.end {
		return nil
	}
	n := copy(c.buf[:cap(c.buf)], c.buf[c.pos:])
	want := min(int64(cap(c.buf)-n), c.end-c.off)
	m, err := c.r.ReadAt(c.buf[n:n+int(want)], c.off)
	if m < int(want) {
		if err == nil || errors.Is(err, io.EOF) {
			err = io.ErrUnexpectedEOF
		}
		return fmt.Errorf("counts: reading spill file: %w", err)
	}
	c.off += want
	c.buf = c.buf[:n+int(want)]
	c.pos = 0
	return nil
}

func (c *cursor) uvarint() uint64 {
	if c.pos < len(c.buf) && c.buf[c.pos] < 0x80 {
		c.pos++
		return uint64(c.buf[c.pos-1])
	}
	v, k := binary.Uvarint(c.buf[c.pos:])
	if k <= 0 {
		c.corrupt = true
		c.pos = len(c.buf)
		return 0
	}
	c.pos += k
	return v
}

var errCorruptRun = errors.New("counts: spill file is corrupt")

// nextGroup reads the next group header, or sets done.
func (c *cursor) nextGroup() error {
	if c.mem != nil {
		c.memGroup()
		return nil
	}
	if err := c.fill(); err != nil {
		return err
	}
	if c.pos == len(c.buf) && c.off >= c.end {
		c.done = true
		return nil
	}
	c.t = int32(c.uvarint())
	c.n = int(c.uvarint())
	if c.corrupt {
		return errCorruptRun
	}
	return nil
}

// appendGroup appends the current group's entries and moves to the next
// group.
func (c *cursor) appendGroup(cs []int32, vs []uint64) ([]int32, []uint64, error) {
	if c.mem != nil {
		cs, vs = c.appendMemGroup(cs, vs)
		return cs, vs, nil
	}
	ctx := uint64(0)
	for range c.n {
		if len(c.buf)-c.pos < 2*binary.MaxVarintLen64 {
			if err := c.fill(); err != nil {
				return cs, vs, err
			}
		}
		// Most entries are two bytes, as runWriter.entry writes a delta and
		// a count both below 0x80.
		var v uint64
		if p := c.pos; p+1 < len(c.buf) && c.buf[p]|c.buf[p+1] < 0x80 {
			ctx += uint64(c.buf[p])
			v = uint64(c.buf[p+1])
			c.pos += 2
		} else {
			ctx += c.uvarint()
			v = c.uvarint()
		}
		cs = append(cs, int32(ctx))
		vs = append(vs, v)
	}
	if c.corrupt {
		return cs, vs, errCorruptRun
	}
	return cs, vs, c.nextGroup()
}

// memGroup finds the group of a memRun's section at off, setting t and n
// as nextGroup does for a file's.
func (c *cursor) memGroup() {
	if c.off >= c.end {
		c.done = true
		return
	}
	m := c.mem
	if c.transposed {
		// Groups are contiguous: the next is the first to end after off.
		t := c.t
		for int64(m.ends[t]) <= c.off {
			t++
		}
		c.t, c.n = t, int(int64(m.ends[t])-c.off)
		return
	}
	shift := m.idBits + m.valBits
	hi := m.keys[c.off] >> shift
	n := int64(1)
	for c.off+n < c.end && m.keys[c.off+n]>>shift == hi {
		n++
	}
	c.t, c.n = int32(hi), int(n)
}

// appendMemGroup is appendGroup for a memRun's section.
func (c *cursor) appendMemGroup(cs []int32, vs []uint64) ([]int32, []uint64) {
	m := c.mem
	if c.transposed {
		for _, e := range m.transposed[c.off : c.off+int64(c.n)] {
			cs = append(cs, int32(uint32(e)))
			vs = append(vs, e>>32)
		}
	} else {
		idMask := uint64(1)<<m.idBits - 1
		valMask := uint64(1)<<m.valBits - 1
		for _, k := range m.keys[c.off : c.off+int64(c.n)] {
			cs = append(cs, int32(k>>m.valBits&idMask))
			vs = append(vs, k&valMask)
		}
	}
	c.off += int64(c.n)
	c.memGroup()
	return cs, vs
}
