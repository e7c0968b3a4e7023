package counts

import (
	"encoding/binary"
	"fmt"
	"math"
	"math/bits"
	"runtime"
	"slices"
	"sync"

	"github.com/pwe-project/pwe/internal/cacheline"
	"github.com/pwe-project/pwe/internal/pages"
	"github.com/pwe-project/pwe/internal/prefetch"
)

// Counting target by target. An accumulator keeps the documents it is
// given, as they are, in a directStore: 2 bytes a token (4 where ids take
// 32 bits) and 4 for its place in the store's index, against 20 for each
// of the W pairs a token forms. A target's row is then counted at once
// from the windows around its occurrences, found through the index, into
// a tally the size of the vocabulary that the cache holds: nothing is
// buffered, sorted or merged pair by pair, and a pair of frequent tokens
// is counted in a table of one row rather than in a dense table larger
// than the cache. Finish counts the rows of the stores as it merges. The
// index is filled a range of targets at a time where the budget does not
// hold all of it; a store that fills half its accumulator's share of the
// budget even so is counted row by row into a run, in target order
// without a sort, and emptied.
//
// The rows are the pair buffer's (accumulate.go), which counts instead
// where the window is above 15 or a document does not fit a store.

// maxDirectWindow is the largest window counted target by target: a
// token's rooms are kept as nibbles (blockRooms), and the row counter's
// weight arrays have a nibble's range.
const maxDirectWindow = 15

// A stored token is a word: its id, or V for a gap. A store's words are
// narrow, 16 bits, where every id and the gap's V fit in them, and wide,
// 32 bits, otherwise. Where the vocabulary has exactly 65536 tokens, a
// store starts narrow and turns wide at its first gap (Accumulator.Add).
// Its room in its document, how many of the document's tokens lie within
// the window on each side, comes from the store's bitset of document
// starts (roomsAt).
type word interface{ ~uint16 | ~uint32 }

// narrowIDs is the number of values a narrow word holds.
const narrowIDs = 1 << 16

// The budget counts, for each stored token, its word, a bit of the starts
// and half its place in the index (4 bytes): the index is filled one range
// of targets at a time where the budget does not hold all of it
// (Counter.indexChunks). That is 33 bytes for 8 narrow tokens, 49 for
// wide ones.
const (
	narrowBytesPer8 = 8*(2+2) + 1
	wideBytesPer8   = 8*(4+2) + 1
)

// directPad is the number of words before and after the documents: the
// prefetch reaches one window to each side of a position. Their values
// are never read: the rooms end at the documents' ends.
const directPad = maxDirectWindow

// startBias is added to a position to make its bit in the starts: roomsAt
// reads the 32 bits below a position's.
const startBias = 32

// A target's occurrences are counted directBlock at a time, with the words
// around the next directAhead prefetched. Nearer is better: count on
// bench-raw, one thread, took 1.585 CPU-s (median of 8 alternating runs)
// with 8 and 16 against 1.71 with 16 and 48, and 1.80 with 32 and 128 in
// another set.
const (
	directBlock = 8
	directAhead = 16
)

// collectWords is the size of an abandoned store, in words, above which
// grow collects it at once (16 Mi words).
const collectWords = 4 << 20

// storeBytes is the memory one accumulator's store and its index may take
// in its share of the budget. The share also pays for a tally of the
// vocabulary (the merger's, or a spill's), the index's offsets and
// cursors, and a spill's write buffer.
func storeBytes(share int64, v, runBuf int) int64 {
	return share/2 - 16*int64(v+1) - int64(runBuf)
}

// directTokens is the most tokens a store may hold in size bytes,
// bytesPer8 for 8 tokens (narrowBytesPer8 or wideBytesPer8), or 0 where
// the accumulators count pairs instead.
func directTokens(size int64, window, bytesPer8 int) int {
	if window > maxDirectWindow {
		return 0
	}
	n := size * 8 / int64(bytesPer8)
	// Positions in the index are uint32, and a store's length an int.
	return int(max(0, min(n, 1<<32-1-2*directPad, math.MaxInt-2*directPad-startBias)))
}

// directStore is the documents an accumulator was given.
type directStore struct {
	_ cacheline.Pad
	// The words, in narrow unless isWide.
	narrow []uint16
	wide   []uint32
	isWide bool
	// starts has the bit p+startBias set where a document starts at
	// position p, and after the last one.
	starts []byte
	// The index of the targets being counted: the positions of target t,
	// in increasing order, are pos[off[t]-base : off[t+1]-base] (place).
	off  []uint32
	pos  []uint32
	base uint32
	cur  []uint32 // place's
	// limit is the most tokens the store may hold.
	limit int
	_     cacheline.Pad
}

// words is the number of words stored, pads included.
func (d *directStore) words() int {
	if d.isWide {
		return len(d.wide)
	}
	return len(d.narrow)
}

// room is the number of words the store holds without growing.
func (d *directStore) room() int {
	if d.isWide {
		return cap(d.wide)
	}
	return cap(d.narrow)
}

// tokens is the number of tokens stored.
func (d *directStore) tokens() int { return max(0, d.words()-directPad) }

// add appends one document, already subsampled, with gaps as -1.
func (d *directStore) add(seq []int32, v int32) {
	if d.words() == 0 {
		d.pad()
	}
	n := d.words()
	if n+len(seq) > d.room() {
		d.grow(len(seq), d.limit+2*directPad)
	}
	d.mark(n)
	if d.isWide {
		d.wide = appendWords(d.wide, seq, v)
	} else {
		d.narrow = appendWords(d.narrow, seq, v)
	}
}

// appendWords appends the words of seq, which words has room for, with
// gaps as v.
func appendWords[W word](words []W, seq []int32, v int32) []W {
	n := len(words)
	out := words[n : n+len(seq)]
	for i, x := range seq {
		if x < 0 {
			x = v
		}
		out[i] = W(x)
	}
	return words[:n+len(seq)]
}

// mark sets the start bit of position p.
func (d *directStore) mark(p int) {
	b := p + startBias
	d.starts[b>>3] |= 1 << (b & 7)
}

// grow makes room for n more words, doubling the store up to most words:
// append's growth by a quarter at large sizes would copy a large store more
// often, and its doubling at small ones could pass the budget.
func (d *directStore) grow(n, most int) {
	d.resize(max(min(2*d.room(), most), d.words()+n, 1<<12))
}

// reserve grows the store at once to hold n tokens.
func (d *directStore) reserve(n int) {
	if n += 2 * directPad; n > d.room() {
		d.resize(n)
	}
}

// resize moves the store to new memory with room for size words.
func (d *directStore) resize(size int) {
	old := d.room()
	if d.isWide {
		d.wide = moveWords(d.wide, size)
	} else {
		d.narrow = moveWords(d.narrow, size)
	}
	starts := make([]byte, startsLen(size))
	copy(starts, d.starts)
	d.starts = starts
	if old >= collectWords {
		// The old store is garbage, half as large as the new one: collected
		// now, its memory serves what comes next instead of adding to the
		// peak until the collector meets the memory limit.
		runtime.GC()
	}
}

// startsLen is the length of the starts of a store of size words: roomsAt
// reads 8 bytes from 4 below a position's.
func startsLen(size int) int { return (size+startBias)/8 + 8 }

// moveWords returns words in new memory with room for size words, in huge
// pages where the kernel gives them on advice. A store is written in
// order, and its index read all over: on bench-raw, with the store and the
// index in huge pages, count on one thread made 18 000 page faults instead
// of 37 500, and took 0.34 s of system time on two threads against 0.44
// (medians of 8 alternating runs).
func moveWords[W word](words []W, size int) []W {
	pages.Unhuge(words)
	w := make([]W, 0, size)
	pages.Huge(w)
	return append(w, words...)
}

// pad appends directPad words.
func (d *directStore) pad() {
	if d.words()+directPad > d.room() {
		d.grow(directPad, d.words()+directPad)
	}
	if d.isWide {
		d.wide = d.wide[:len(d.wide)+directPad]
	} else {
		d.narrow = d.narrow[:len(d.narrow)+directPad]
	}
}

// widen turns an empty narrow store wide, with room for as many tokens,
// up to limit: a store reserved for its input grew otherwise by doubling,
// leaving copies behind it (with --oov keep on bench-raw, count's peak RSS
// was 189 MB instead of 154).
func (d *directStore) widen(limit int) {
	n := min(max(d.room()-2*directPad, 0), limit)
	pages.Unhuge(d.narrow)
	d.narrow, d.starts = nil, nil
	d.isWide, d.limit = true, limit
	if n > 0 {
		d.reserve(n)
	}
}

// index marks the end of the last document, pads the store and counts
// its ids: off[t] becomes the index's start of target t, and off[v] its
// length. place then fills the index one range of targets at a time.
func (d *directStore) index(v int) {
	if d.words() == 0 {
		d.pad()
	}
	end := d.words()
	d.mark(end)
	d.pad()
	if len(d.off) != v+1 {
		d.off = make([]uint32, v+1)
	}
	clear(d.off)
	if d.isWide {
		countIDs(d.wide[directPad:end], v, d.off)
	} else {
		countIDs(d.narrow[directPad:end], v, d.off)
	}
	for t := 1; t <= v; t++ {
		d.off[t] += d.off[t-1]
	}
}

// countIDs counts the ids below v of words in off[id+1].
func countIDs[W word](words []W, v int, off []uint32) {
	for _, w := range words {
		if x := int(w); x < v {
			off[x+1]++
		}
	}
}

// place fills the index with the positions of the targets t0 to t1, those
// of t at pos[off[t]-base : off[t+1]-base], base being off[t0]. room is
// the most positions a call will place, for which pos is made on the
// first.
func (d *directStore) place(t0, t1 int32, room int) {
	d.base = d.off[t0]
	n := d.off[t1] - d.base
	if cap(d.pos) < max(int(n), room)+1 {
		pages.Unhuge(d.pos)
		d.pos = make([]uint32, max(int(n), room)+1)
		pages.Huge(d.pos)
	}
	// Every id's next position goes to pos[cur[id]]: a target's moves on,
	// the others' stay at n, past the range, without a branch that would
	// be mispredicted for most tokens.
	v := len(d.off) - 1
	if len(d.cur) != v+1 {
		d.cur = make([]uint32, v+1)
	}
	for t := range d.cur {
		d.cur[t] = n
		if int32(t) >= t0 && int32(t) < t1 {
			d.cur[t] = d.off[t] - d.base
		}
	}
	pos := d.pos[:n+1]
	end := d.words() - directPad
	if d.isWide {
		placeRange(d.wide[directPad:end], uint32(t0), uint32(t1-t0), d.cur, pos)
	} else {
		placeRange(d.narrow[directPad:end], uint32(t0), uint32(t1-t0), d.cur, pos)
	}
	d.pos = pos[:n]
}

// placeRange writes the positions of words, which start at position
// directPad, at pos[cur[id]], moving that on for the ids from t0 to
// t0+span.
func placeRange[W word](words []W, t0, span uint32, cur, pos []uint32) {
	for i, w := range words {
		x := uint32(w)
		c := cur[x]
		pos[c] = uint32(i + directPad)
		cur[x] = c + uint32(b2u(x-t0 < span))
	}
}

// indexChunks returns the partitions at which the stores' index starts a
// new range of targets (place), from 0 to the last. There are as few
// ranges as let every store's index, a range at a time, fit the budget
// (storeBytes) beside its words, and at least c.indexRanges: on bench-raw
// at 256MiB, one range for all, which saves a pass over the store per
// range (count on one thread, with two ranges, took 3 % more CPU for 21 MB
// less peak RSS; BENCHMARKS.md, session 37).
func (c *Counter) indexChunks(stores []*directStore) []int {
	var total int
	for _, d := range stores {
		total += int(d.off[c.v])
	}
	// Ranges one more at a time, then twice as many: a budget too small
	// for any would otherwise be tried with every number of ranges up to
	// the number of positions.
	next := func(r int) int {
		if r < 16 {
			return r + 1
		}
		return 2 * r
	}
	for r := c.indexRanges; ; r = next(r) {
		chunks := c.rangeChunks(stores, r)
		fit := true
		for _, d := range stores {
			fit = fit && d.bytes(d.chunkRoom(c.parts, chunks)) <= c.storeBytes
		}
		if fit || r >= total {
			return chunks
		}
	}
}

// rangeChunks returns the partitions at which ranges of targets start,
// from 0 to the last, each holding at most 1/r of the stores' positions, or
// one partition.
func (c *Counter) rangeChunks(stores []*directStore, r int) []int {
	nParts := len(c.parts) - 1
	at := func(p int) uint64 {
		var n uint64
		for _, d := range stores {
			n += uint64(d.off[c.parts[p]])
		}
		return n
	}
	limit := at(nParts) / uint64(r)
	chunks := []int{0}
	for p := 1; p < nParts; p++ {
		if at(p+1)-at(chunks[len(chunks)-1]) > limit {
			chunks = append(chunks, p)
		}
	}
	return append(chunks, nParts)
}

// bytes is the memory the store takes with an index of room positions.
func (d *directStore) bytes(room int) int64 {
	size := int64(2)
	if d.isWide {
		size = 4
	}
	return size*int64(d.room()) + int64(len(d.starts)) + 4*int64(max(room+1, cap(d.pos)))
}

// placeChunk fills the stores' indices with range k of chunks, in
// parallel.
func (c *Counter) placeChunk(stores []*directStore, chunks []int, k int) {
	var wg sync.WaitGroup
	for _, d := range stores {
		wg.Go(func() { d.place(c.parts[chunks[k]], c.parts[chunks[k+1]], d.chunkRoom(c.parts, chunks)) })
	}
	wg.Wait()
}

// indexRelease gives the memory of the stores' index back to the system
// behind the merge (pages.Release): the positions of the targets of the
// partitions merged are not read again once the index holds its last
// range of targets (the ranges before are overwritten by the next). On
// several workers partitions end out of order, so what is given back ends
// at the first partition not yet merged. On bench-raw at 256MiB the index
// is 44 MB, and the writer's memory, which grows by 20 MB during the
// merge, reuses the pages given back instead of fresh ones, which on a
// virtual machine cost far more: count's peak RSS fell from 125 MiB to
// 109 on one thread and from 155 to 133 on two, and its CPU from 1.935 s
// to 1.865 (medians of 20 rounds; BENCHMARKS.md, session 38).
type indexRelease struct {
	c      *Counter
	stores []*directStore
	mu     sync.Mutex
	first  int    // the last range's first partition
	done   []bool // partitions of the last range merged, from first
	next   int    // the first partition not merged
	freed  []int  // positions given back, per store
}

func (c *Counter) newIndexRelease(stores []*directStore, first, parts int) *indexRelease {
	return &indexRelease{c: c, stores: stores, first: first, done: make([]bool, parts-first), next: first, freed: make([]int, len(stores))}
}

// merged records that partition p is merged, and gives back the whole
// blocks of the index before the first partition still to merge, once
// their positions (4 bytes each) have grown by a quarter of a block since
// it last gave any back: one call of the system's for every few
// partitions.
func (r *indexRelease) merged(p int) {
	if p < r.first {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	r.done[p-r.first] = true
	for r.next-r.first < len(r.done) && r.done[r.next-r.first] {
		r.next++
	}
	t := r.c.parts[r.next]
	align := r.c.releaseAlign
	for i, d := range r.stores {
		if hi := int(d.off[t] - d.base); 4*(hi-r.freed[i]) >= align/4 {
			pages.Release(d.pos[:hi], align)
			r.c.indexGiven.Add(int64(hi - r.freed[i]))
			r.freed[i] = hi
		}
	}
}

// chunkRoom returns the most positions of one of the ranges of targets
// that start at the partitions chunks.
func (d *directStore) chunkRoom(parts []int32, chunks []int) int {
	room := 0
	for k := range len(chunks) - 1 {
		room = max(room, int(d.off[parts[chunks[k+1]]]-d.off[parts[chunks[k]]]))
	}
	return room
}

// free drops the store's memory, withdrawing the huge-page advice from it
// (pages.Unhuge): the Go runtime reuses it for other values.
func (d *directStore) free() {
	pages.Unhuge(d.narrow)
	pages.Unhuge(d.wide)
	pages.Unhuge(d.pos)
	d.narrow, d.wide, d.starts, d.off, d.pos, d.cur = nil, nil, nil, nil, nil, nil
}

// reset empties the store, keeping its memory.
func (d *directStore) reset() {
	d.narrow, d.wide = d.narrow[:0], d.wide[:0]
	clear(d.starts)
	d.pos = d.pos[:0]
}

// prefetch asks for the words around the positions idx, span to each
// side, and for their starts.
func (d *directStore) prefetch(idx []uint32, span int) {
	if d.isWide {
		prefetch.Window(d.wide, d.starts, startBias, idx, span)
	} else {
		prefetch.Window(d.narrow, d.starts, startBias, idx, span)
	}
}

// roomsAt returns the room of the token at position q on each side, at
// most w (at most 15): how many tokens of its document lie before and
// after it. The 64 bits of starts read hold q's at bit 32 to 39.
func roomsAt(starts []byte, q uint32, w int) (left, right int) {
	b := int(q) + startBias
	x := binary.LittleEndian.Uint64(starts[b>>3-4:])
	o := uint(b&7 + 32)
	left = min(bits.LeadingZeros64(x<<(63-o)), w) & 15
	right = min(bits.TrailingZeros64(x>>(o+1)), w) & 15
	return left, right
}

// directPairs returns the ordered positive pairs of one document: twice
// the pairs within the window that involve no gap.
func directPairs(seq []int32, w int, gaps bool) int64 {
	if !gaps {
		return gaplessPairs(len(seq), w)
	}
	var pairs int64
	for p, x := range seq {
		if x < 0 {
			continue
		}
		for _, y := range seq[p+1 : min(len(seq), p+w+1)] {
			pairs += int64(b2u(y >= 0))
		}
	}
	return 2 * pairs
}

// gaplessPairs is the number of ordered pairs within window w of a
// document of n tokens without gaps.
func gaplessPairs(n, w int) int64 {
	m := int64(min(w, max(n-1, 0)))
	return 2 * (m*int64(n) - m*(m+1)/2)
}

// rowCounter counts target rows from stores into a tally of V+1 entries,
// the last for gaps.
type rowCounter struct {
	_     cacheline.Pad
	c     *Counter
	tally *tally[uint64]
	// wt[k] is the weight of distance k, up to the window (0 beyond), and
	// cum[k] that of k tokens on one side of a token. Arrays of a nibble's
	// range need no bounds checks where they are indexed by rooms.
	wt, cum [maxDirectWindow + 1]uint64
	// ahead[i] is how far into store i's positions the words have been
	// prefetched: occurrences of a rare target lie far apart, and their
	// cache misses then wait together, ahead of use, rather than one by
	// one.
	ahead []uint32
	t1    int32 // end of the targets being counted
	// dense says the row being counted is drained by a scan of the tally.
	dense  bool
	cs, tc []int32
	vs, tv []uint64
	_      cacheline.Pad
}

func newRowCounter(c *Counter) *rowCounter {
	rc := &rowCounter{c: c, tally: newTally[uint64](c.v + 1)}
	for k := 1; k < len(rc.cum); k++ {
		if k < len(c.weights) {
			rc.wt[k] = c.weights[k]
		}
		rc.cum[k] = rc.cum[k-1] + rc.wt[k]
	}
	return rc
}

// start prepares to count the targets t0 to t1 in order.
func (rc *rowCounter) start(t0, t1 int32, stores []*directStore) {
	rc.ahead = rc.ahead[:0]
	for _, d := range stores {
		rc.ahead = append(rc.ahead, d.off[t0]-d.base)
	}
	rc.t1 = t1
}

// count adds the windows around every occurrence of t in the stores to the
// tally, and returns their total weight: each pair (t, j) once, and (t, t)
// twice.
func (rc *rowCounter) count(t int32, stores []*directStore) uint64 {
	// A target with many occurrences touches much of the vocabulary: its
	// row is drained by a scan of the whole tally, and its increments, and
	// its negatives' (directRows), leave the bitsets alone. Count on
	// bench-raw, one thread, medians of 8 alternating runs in two sets:
	// 1.69 and 1.67 CPU-s with rows of at least V/4 pairs taken so
	// (Counter.scanRow), against 1.76 and 1.855 with none, 1.77 at V and
	// 1.71 at V/8.
	var occ int
	for _, d := range stores {
		occ += int(d.off[t+1] - d.off[t])
	}
	rc.dense = occ*2*rc.c.cfg.Window >= rc.c.scanRow
	span := rc.c.cfg.Window
	var wsum uint64
	for si, d := range stores {
		pos := d.pos
		last := d.off[rc.t1] - d.base
		for i, end := d.off[t]-d.base, d.off[t+1]-d.base; i < end; {
			b := pos[i:min(end, i+directBlock)]
			i += uint32(len(b))
			if want := min(i+directAhead, last); rc.ahead[si] < want {
				d.prefetch(pos[rc.ahead[si]:want], span)
				rc.ahead[si] = want
			}
			if d.isWide {
				wsum += countWindows(rc, d.wide, d.starts, b)
			} else {
				wsum += countWindows(rc, d.narrow, d.starts, b)
			}
		}
	}
	return wsum
}

// countWindows adds to the tally the windows around the store positions
// b, at most directBlock of them, and returns their total weight.
func countWindows[W word](rc *rowCounter, words []W, starts []byte, b []uint32) uint64 {
	var rooms [directBlock]uint8
	blockRooms(starts, b, rc.c.cfg.Window, &rooms)
	tl := rc.tally
	if rc.dense {
		return countDense(words, b, &rooms, tl.sums, &rc.wt, &rc.cum)
	}
	return countMarked(words, b, &rooms, tl.sums, tl.bitset, tl.summary, &rc.wt, &rc.cum)
}

// blockRooms sets rooms[i] to the rooms of position b[i], at most w on
// each side, as left<<4 | right. Taken out of the loops over the windows,
// their computation leaves those loops the registers they need:
// otherwise the compiler kept the window's counter on the stack.
func blockRooms(starts []byte, b []uint32, w int, rooms *[directBlock]uint8) {
	for i, q := range b[:min(len(b), directBlock)] {
		left, right := roomsAt(starts, q, w)
		rooms[i] = uint8(left<<4 | right)
	}
}

// countDense adds to sums the windows around the store positions b, as
// far on each side as rooms says, and returns their total weight. It and
// countMarked are functions of their own, not inlined into count: there,
// with count's other variables live, the compiler kept the loops'
// counters on the stack, and every step of the window waited on a store
// and a load of its counter. BenchmarkCount (one worker, K = 0), medians of 6 alternating
// runs: 0.685 CPU-s against 0.73.
//
//go:noinline
func countDense[W word](words []W, b []uint32, rooms *[directBlock]uint8, sums []uint64, wt, cum *[maxDirectWindow + 1]uint64) uint64 {
	var wsum uint64
	for i, q := range b[:min(len(b), directBlock)] {
		win := window(words, q)
		left, right := int(rooms[i]>>4), int(rooms[i]&15)
		wsum += cum[left] + cum[right]
		for k := 1; k <= left; k++ {
			sums[win[directPad-k]] += wt[k]
		}
		for k := 1; k <= right; k++ {
			sums[win[directPad+k]] += wt[k]
		}
	}
	return wsum
}

// window returns the words within a window of the largest size around
// the stored position q: the pads put them inside the store.
func window[W word](words []W, q uint32) *[2*directPad + 1]W {
	return (*[2*directPad + 1]W)(words[int(q)-directPad : int(q)+directPad+1])
}

// countMarked is countDense for a row drained through the bitsets: each
// context counted is also marked in bitset and summary.
//
//go:noinline
func countMarked[W word](words []W, b []uint32, rooms *[directBlock]uint8, sums []uint64, bitset, summary []uint64, wt, cum *[maxDirectWindow + 1]uint64) uint64 {
	var wsum uint64
	for i, q := range b[:min(len(b), directBlock)] {
		win := window(words, q)
		left, right := int(rooms[i]>>4), int(rooms[i]&15)
		wsum += cum[left] + cum[right]
		for k := 1; k <= left; k++ {
			j := uint32(win[directPad-k])
			sums[j] += wt[k]
			w := j >> 6
			bitset[w] |= 1 << (j & 63)
			summary[w>>6] |= 1 << (w & 63)
		}
		for k := 1; k <= right; k++ {
			j := uint32(win[directPad+k])
			sums[j] += wt[k]
			w := j >> 6
			bitset[w] |= 1 << (j & 63)
			summary[w>>6] |= 1 << (w & 63)
		}
	}
	return wsum
}

// addGroup adds a run's group for target t, canonical counts, to the
// tally, and returns their total weight as count does.
func (rc *rowCounter) addGroup(t int32, cs []int32, vs []uint64) (uint64, error) {
	var wsum uint64
	for i, j := range cs {
		v := vs[i]
		if j == t {
			v *= 2
			if v>>1 != vs[i] {
				return 0, errOverflow
			}
		}
		var carry uint64
		if wsum, carry = bits.Add64(wsum, v, 0); carry != 0 {
			return 0, errOverflow
		}
		rc.tally.add(j, v)
	}
	return wsum, nil
}

// dropGaps removes the gaps' sentinel from the tally, and from wsum, the
// total weight that count and addGroup returned; it reports whether any
// pair is left.
func (rc *rowCounter) dropGaps(wsum uint64) (uint64, bool) {
	tl := rc.tally
	v := int32(rc.c.v)
	wsum -= tl.sums[v]
	tl.sums[v] = 0
	tl.bitset[v>>6] &^= 1 << (v & 63)
	if wsum == 0 {
		// Nothing else was touched.
		tl.summary[v>>12] = 0
		return 0, false
	}
	return wsum, true
}

// drain empties the tally into the canonical row of t: contexts
// increasing, (t, t) once.
func (rc *rowCounter) drain(t int32) ([]int32, []uint64) {
	var cs []int32
	var vs []uint64
	if rc.dense {
		cs, vs = rc.tally.drainAll(rc.cs[:0], rc.vs[:0])
	} else {
		cs, vs = rc.tally.drain(rc.cs[:0], rc.vs[:0])
	}
	rc.cs, rc.vs = cs, vs
	if i, ok := slices.BinarySearch(cs, t); ok {
		vs[i] /= 2
	}
	return cs, vs
}

// spillStore counts the rows of a full store into a run, in target order,
// and empties the store.
func (a *Accumulator) spillStore() error {
	c := a.c
	d := a.direct
	d.index(c.v)
	if a.rows == nil {
		a.rows = newRowCounter(c)
		a.runBuf = make([]byte, 0, c.runBuf)
	}
	rc := a.rows
	f, err := c.createRunFile()
	if err != nil {
		return err
	}
	stores := []*directStore{d}
	chunks := c.indexChunks(stores)
	room := d.chunkRoom(c.parts, chunks)
	w := newRunWriter(f, c.parts, a.runBuf)
	w.startSection()
	for k := range len(chunks) - 1 {
		d.place(c.parts[chunks[k]], c.parts[chunks[k+1]], room)
		for p := chunks[k]; p < chunks[k+1]; p++ {
			t0, t1 := c.parts[p], c.parts[p+1]
			rc.start(t0, t1, stores)
			for t := t0; t < t1; t++ {
				if _, ok := rc.dropGaps(rc.count(t, stores)); !ok {
					continue
				}
				cs, vs := rc.drain(t)
				w.group(t, len(cs))
				prev := int32(0)
				for i, j := range cs {
					w.entry(uint32(j-prev), vs[i])
					prev = j
				}
			}
		}
	}
	sections := [][]int64{w.endSection()}
	w.flush()
	if w.err != nil {
		return fmt.Errorf("counts: writing spill file: %w", w.err)
	}
	c.addRun(&run{f: f, sections: sections}, w.nBytes)
	d.reset()
	return nil
}

// directPartition counts the rows of the targets of partition p from the
// stores, adds those of the runs' sections secs and of the dense table if
// not nil, and either writes them with their negatives (directRows) or
// calls sink for every non-empty one in increasing order, with contexts
// increasing and canonical counts, as partition does.
func (m *merger) directPartition(p int, secs []section, stores []*directStore, dense denseRows, sink func(t int32, cs []int32, vs []uint64) error) error {
	c := m.c
	if m.counter == nil {
		m.counter = newRowCounter(c)
	}
	rc := m.counter
	cur, err := m.cursorsOn(secs)
	if err != nil {
		return err
	}
	f := int32(0)
	if dense != nil {
		f = dense.size()
	}
	fused := c.neg != nil && c.cfg.NegMode != Expected
	t0, t1 := c.parts[p], c.parts[p+1]
	rc.start(t0, t1, stores)
	for t := t0; t < t1; t++ {
		wsum := rc.count(t, stores)
		// The row's parts from elsewhere: the dense table's, then each run's.
		for i := -1; i < len(cur); i++ {
			var tc []int32
			var tv []uint64
			var err error
			switch {
			case i < 0 && t < f:
				tc, tv, err = dense.row(t, rc.tc[:0], rc.tv[:0])
			case i >= 0 && !cur[i].done && cur[i].t == t:
				tc, tv, err = cur[i].appendGroup(rc.tc[:0], rc.tv[:0])
			default:
				continue
			}
			rc.tc, rc.tv = tc, tv
			if err != nil {
				rc.tally.reset()
				return err
			}
			add, err := rc.addGroup(t, tc, tv)
			var carry uint64
			if wsum, carry = bits.Add64(wsum, add, 0); err == nil && carry != 0 {
				err = errOverflow
			}
			if err != nil {
				rc.tally.reset()
				return err
			}
		}
		wsum, ok := rc.dropGaps(wsum)
		if !ok {
			continue
		}
		if fused && wsum < c.fuseBelow {
			done, err := m.directRows(t, wsum)
			if err != nil {
				return err
			}
			if done {
				continue
			}
		}
		cs, vs := rc.drain(t)
		if err := sink(t, cs, vs); err != nil {
			return err
		}
	}
	return nil
}

// directRows draws the negatives of target t, whose positive counts,
// summing to wsum (below 2^32), are in the row counter's tally, into the
// same tally, above them: one pass over it, in increasing context order,
// then writes every row, and leaves it empty. It does what finalRow does
// for sampled negatives, with the same draws. It does nothing and reports
// false when the draws might not fit the tally's upper 32 bits.
func (m *merger) directRows(t int32, wsum uint64) (bool, error) {
	c := m.c
	tl := m.counter.tally
	sums, bitset, summary := tl.sums, tl.bitset, tl.summary
	hi, lo := bits.Mul64(uint64(c.cfg.Negatives), wsum)
	if hi != 0 || lo/c.scale >= 1<<32-1 {
		return false, nil
	}
	draws := lo / c.scale
	r := newRNG(c.cfg.Seed, domainNegatives, uint64(t))
	if rem := lo % c.scale; rem != 0 && r.below(c.scale) < rem {
		draws++
	}
	dense := m.counter.dense
	if m.neg.tallies(draws) {
		// A dense row is drained by a scan: its draws need no marks.
		marks, sum := bitset, summary
		if dense {
			marks, sum = nil, nil
		}
		aliasTallyInto(&r, draws, c.neg, sums, 1<<32, marks, sum)
	} else {
		ncs, nns := m.neg.sample(&r, draws, negAuto, m.ncs[:0], m.nns[:0])
		m.ncs, m.nns = ncs, nns
		for i, j := range ncs {
			tl.add(j, nns[i]<<32)
		}
	}
	scale := float64(c.scale)
	if dense {
		return true, m.scanRows(t, scale)
	}
	tg, cx, np, nn, n := m.open()
	var unique int64
	for s, sw := range summary {
		if sw == 0 {
			continue
		}
		summary[s] = 0
		for sw != 0 {
			w := s<<6 | bits.TrailingZeros64(sw)
			sw &= sw - 1
			word := bitset[w]
			bitset[w] = 0
			for word != 0 {
				j := w<<6 | bits.TrailingZeros64(word)
				word &= word - 1
				if n == len(tg) {
					m.close(tg, cx, np, nn, n)
					if err := m.send(); err != nil {
						tl.reset()
						return false, err
					}
					tg, cx, np, nn, n = m.open()
				}
				x := sums[j]
				sums[j] = 0
				pos := uint32(x)
				p := float64(pos)
				if scale != 1 {
					// Not with uniform weights: a division on every row
					// was 1.5-3.5 % of count's user time on bench-raw.
					p /= scale
				}
				tg[n], cx[n] = t, int32(j)
				np[n], nn[n] = p, float64(x>>32)
				unique += int64(b2u(pos != 0))
				n++
			}
		}
	}
	m.close(tg, cx, np, nn, n)
	m.uniquePairs += unique
	return true, nil
}

// scanRows is directRows's pass for a dense row: a scan of the whole
// tally, whose bitsets it then clears.
func (m *merger) scanRows(t int32, scale float64) error {
	tl := m.counter.tally
	sums := tl.sums
	tg, cx, np, nn, n := m.open()
	var unique int64
	for base := 0; base < len(sums); base += scanBlock {
		blk := sums[base:min(base+scanBlock, len(sums))]
		if len(tg)-n < len(blk) {
			// Near the batch's end, row by row.
			for k, x := range blk {
				if x == 0 {
					continue
				}
				if n == len(tg) {
					m.close(tg, cx, np, nn, n)
					if err := m.send(); err != nil {
						tl.reset()
						return err
					}
					tg, cx, np, nn, n = m.open()
				}
				blk[k] = 0
				pos := uint32(x)
				tg[n], cx[n] = t, int32(base+k)
				np[n], nn[n] = float64(pos)/scale, float64(x>>32)
				unique += int64(b2u(pos != 0))
				n++
			}
			continue
		}
		rows, u := scanEntries(blk, int32(base), t, tg[n:], cx[n:], np[n:], nn[n:], scale)
		n += rows
		unique += u
	}
	clear(tl.bitset)
	clear(tl.summary)
	m.close(tg, cx, np, nn, n)
	m.uniquePairs += unique
	return nil
}

// scanBlock is the number of tally entries scanRows takes at a time.
const scanBlock = 64

// scanEntries writes the non-zero entries of blk, the tally's entries of
// contexts base on, as rows of target t at the start of the columns, which
// have room for all of them, and empties blk; it returns the number of rows
// and how many of them have positive counts.
//
// Every entry is written, at the next row, which moves on past the non-zero
// ones: in a dense row, whether an entry is zero is as good as random, and a
// branch on it would be mispredicted often (count on bench-raw, one thread,
// median of 10 alternating runs: 1.445 user CPU-s against 1.47 with the
// branch). The loop is a function of its own, not inlined into scanRows,
// where the compiler kept its counters on the stack: each entry then waited
// on a store and a load of them. With uniform weights the scale is 1, and
// the counts are not divided.
//
// With AVX-512, scanEntriesAVX512 writes eight entries at a time: it packs
// the non-zero ones at the low lanes (VPCOMPRESSQ) and converts their
// counts together. Count on bench-raw, one thread: 277 samples in the scan
// against 666-705 (perf record, two runs each), about 3 % of count.
//
//go:noinline
func scanEntries(blk []uint64, base, t int32, tg, cx []int32, np, nn []float64, scale float64) (rows int, unique int64) {
	tg, cx, np, nn = tg[:len(blk)], cx[:len(blk)], np[:len(blk)], nn[:len(blk)]
	k := 0
	if hasAVX512 {
		rows, unique = scanEntriesAVX512(blk, base, t, tg, cx, np, nn, scale)
		k = len(blk) &^ 7
	}
	for ; k < len(blk); k++ {
		x := blk[k]
		pos := uint32(x)
		p := float64(pos)
		if scale != 1 {
			p /= scale
		}
		tg[rows], cx[rows] = t, base+int32(k)
		np[rows], nn[rows] = p, float64(x>>32)
		unique += int64(b2u(pos != 0))
		rows += int(b2u(x != 0))
	}
	clear(blk)
	return rows, unique
}
