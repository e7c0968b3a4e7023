package counts

import (
	"fmt"
	"math"
	"math/bits"
	"runtime"
	"slices"

	"github.com/pwe-project/pwe/internal/cacheline"
	"github.com/pwe-project/pwe/internal/pages"
	"github.com/pwe-project/pwe/internal/prefetch"
)

// Counting target by target. An accumulator keeps the documents it is
// given, as they are, in a directStore: about 8 bytes a token, against 20
// for each of the W pairs a token forms. A target's row is then counted at
// once from the windows around its occurrences, found through an index of
// the store by token, into a tally the size of the vocabulary that the
// cache holds: nothing is buffered, sorted or merged pair by pair, and a
// pair of frequent tokens is counted in a table of one row rather than in
// a dense table larger than the cache. Finish counts the rows of the
// stores as it merges. A store that fills half its accumulator's share of
// the budget is counted row by row into a run, in target order without a
// sort, and emptied.
//
// The rows are the pair buffer's (accumulate.go), which counts instead
// where a token's room does not fit a nibble (a window above 15), its id
// does not fit 24 bits, or a document does not fit a store.

// maxDirectWindow is the largest window counted target by target: a
// token's room on each side is a nibble.
const maxDirectWindow = 15

// directBytesPerToken is what a stored token takes: its word, and its
// place in the index.
const directBytesPerToken = 4 + 4

// A stored token is a word: its id below, and above it, from bit
// roomShift, its room, left<<4 | right: how many tokens of its document
// lie within the window on each side. A gap is the id V.
const (
	roomShift = 24
	idMask24  = 1<<roomShift - 1
)

// directPad is the number of gap words before and after the documents: the
// prefetch reaches one window to each side of a position.
const directPad = maxDirectWindow

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
// grow collects it at once (16 MiB).
const collectWords = 4 << 20

// directTokens is the most tokens one accumulator's store may hold in its
// share of the budget, or 0 when it counts pairs instead. Besides the
// store and its index, the share pays for a tally of the vocabulary (the
// merger's, or a spill's), the index's offsets and a spill's write buffer.
func directTokens(share int64, v, window, runBuf int) int {
	if window > maxDirectWindow || v >= idMask24 {
		return 0
	}
	n := (share/2 - 12*int64(v+1) - int64(runBuf)) / directBytesPerToken
	// Positions in the index are uint32, and a store's length an int.
	return int(max(0, min(n, 1<<32-1-2*directPad, math.MaxInt-2*directPad)))
}

// directStore is the documents an accumulator was given.
type directStore struct {
	_     cacheline.Pad
	words []uint32
	// The index: the positions of target t, in increasing order, are
	// pos[off[t]:off[t+1]].
	off []uint32
	pos []uint32
	_   cacheline.Pad
}

// tokens is the number of tokens stored.
func (d *directStore) tokens() int { return max(0, len(d.words)-directPad) }

// add appends one document, already subsampled, with gaps as -1, to a
// store that may hold limit tokens.
func (d *directStore) add(seq []int32, v int32, w, limit int) {
	if len(d.words) == 0 {
		d.pad(v)
	}
	n := len(seq)
	if len(d.words)+n > cap(d.words) {
		d.grow(n, limit+2*directPad)
	}
	for p, x := range seq {
		if x < 0 {
			x = v
		}
		left, right := min(p, w), min(n-1-p, w)
		d.words = append(d.words, uint32(x)|uint32(left<<4|right)<<roomShift)
	}
}

// grow makes room for n more words, doubling the store up to most words:
// append's growth by a quarter at large sizes would copy a large store more
// often, and its doubling at small ones could pass the budget.
func (d *directStore) grow(n, most int) {
	size := max(min(2*cap(d.words), most), len(d.words)+n, 1<<12)
	old := cap(d.words)
	pages.Unhuge(d.words)
	d.words = append(newWords(size), d.words...)
	if old >= collectWords {
		// The old store is garbage, half as large as the new one: collected
		// now, its memory serves what comes next instead of adding to the
		// peak until the collector meets the memory limit.
		runtime.GC()
	}
}

// reserve grows the store at once to hold n tokens.
func (d *directStore) reserve(n int) {
	if n += 2 * directPad; n > cap(d.words) {
		pages.Unhuge(d.words)
		d.words = append(newWords(n), d.words...)
	}
}

// newWords makes an empty store with room for n words, in huge pages where
// the kernel gives them on advice. A store is written in order, and its
// index read all over: on bench-raw, with the store and the index in huge
// pages, count on one thread made 18 000 page faults instead of 37 500, and
// took 0.34 s of system time on two threads against 0.44 (medians of 8
// alternating runs).
func newWords(n int) []uint32 {
	w := make([]uint32, 0, n)
	pages.Huge(w)
	return w
}

// pad appends directPad gaps.
func (d *directStore) pad(v int32) {
	for range directPad {
		d.words = append(d.words, uint32(v))
	}
}

// index pads the end of the store and builds off and pos, by a counting
// sort of the stored ids, in the memory of the last index if it fits.
func (d *directStore) index(v int) {
	d.pad(int32(v))
	if len(d.off) != v+2 {
		d.off = make([]uint32, v+2)
	}
	off := d.off
	clear(off)
	for _, w := range d.words {
		if x := int(w & idMask24); x < v {
			off[x+2]++
		}
	}
	// off[t+1] becomes the start of t, then its end as pos fills.
	for t := 2; t < len(off); t++ {
		off[t] += off[t-1]
	}
	n := int(off[v+1])
	if cap(d.pos) < n {
		pages.Unhuge(d.pos)
		d.pos = make([]uint32, n)
		pages.Huge(d.pos)
	}
	pos := d.pos[:n]
	for p, w := range d.words {
		if x := int(w & idMask24); x < v {
			pos[off[x+1]] = uint32(p)
			off[x+1]++
		}
	}
	d.pos = pos
}

// free drops the store's memory, withdrawing the huge-page advice from it
// (pages.Unhuge): the Go runtime reuses it for other values.
func (d *directStore) free() {
	pages.Unhuge(d.words)
	pages.Unhuge(d.pos)
	d.words, d.off, d.pos = nil, nil, nil
}

// reset empties the store, keeping its memory.
func (d *directStore) reset() {
	d.words = d.words[:0]
	d.pos = d.pos[:0]
}

// directPairs returns the ordered positive pairs of one document: twice
// the pairs within the window that involve no gap.
func directPairs(seq []int32, w int, gaps bool) int64 {
	n := int64(len(seq))
	if !gaps {
		m := min(int64(w), max(n-1, 0))
		return 2 * (m*n - m*(m+1)/2)
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
		rc.ahead = append(rc.ahead, d.off[t0])
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
	tl := rc.tally
	sums, bitset, summary := tl.sums, tl.bitset, tl.summary
	span := rc.c.cfg.Window
	var wsum uint64
	for si, d := range stores {
		words, pos := d.words, d.pos
		last := d.off[rc.t1]
		for i, end := d.off[t], d.off[t+1]; i < end; {
			b := pos[i:min(end, i+directBlock)]
			i += uint32(len(b))
			if want := min(i+directAhead, last); rc.ahead[si] < want {
				prefetch.Words(words, pos[rc.ahead[si]:want], span)
				rc.ahead[si] = want
			}
			if rc.dense {
				wsum += countDense(words, b, sums, &rc.wt, &rc.cum)
			} else {
				wsum += countMarked(words, b, sums, bitset, summary, &rc.wt, &rc.cum)
			}
		}
	}
	return wsum
}

// countDense adds to sums the windows around the store positions b, and
// returns their total weight. It and countMarked are functions of their
// own, not inlined into count: there, with count's other variables live,
// the compiler kept the loops' counters on the stack, and every step of
// the window waited on a store and a load of its counter. BenchmarkCount
// (one worker, K = 0), medians of 6 alternating runs: 0.685 CPU-s against
// 0.73.
//
//go:noinline
func countDense(words, b []uint32, sums []uint64, wt, cum *[maxDirectWindow + 1]uint64) uint64 {
	var wsum uint64
	for _, q := range b {
		win := window(words, q)
		left, right := rooms(win)
		wsum += cum[left] + cum[right]
		for k := 1; k <= left; k++ {
			sums[win[directPad-k]&idMask24] += wt[k]
		}
		for k := 1; k <= right; k++ {
			sums[win[directPad+k]&idMask24] += wt[k]
		}
	}
	return wsum
}

// window returns the words within a window of the largest size around
// the stored position q: the pads put them inside the store.
func window(words []uint32, q uint32) *[2*directPad + 1]uint32 {
	return (*[2*directPad + 1]uint32)(words[int(q)-directPad : int(q)+directPad+1])
}

// rooms returns the room on each side of the word at the middle of win.
func rooms(win *[2*directPad + 1]uint32) (left, right int) {
	r := win[directPad] >> roomShift
	return int(r >> 4), int(r & 15)
}

// countMarked is countDense for a row drained through the bitsets: each
// context counted is also marked in bitset and summary.
//
//go:noinline
func countMarked(words, b []uint32, sums []uint64, bitset, summary []uint64, wt, cum *[maxDirectWindow + 1]uint64) uint64 {
	var wsum uint64
	for _, q := range b {
		win := window(words, q)
		left, right := rooms(win)
		wsum += cum[left] + cum[right]
		for k := 1; k <= left; k++ {
			j := win[directPad-k] & idMask24
			sums[j] += wt[k]
			w := j >> 6
			bitset[w] |= 1 << (j & 63)
			summary[w>>6] |= 1 << (w & 63)
		}
		for k := 1; k <= right; k++ {
			j := win[directPad+k] & idMask24
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
	w := newRunWriter(f, c.parts, a.runBuf)
	w.startSection()
	for p := range len(c.parts) - 1 {
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
				tg[n], cx[n] = t, int32(j)
				np[n], nn[n] = float64(pos)/scale, float64(x>>32)
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
