package counts

import (
	"errors"
	"fmt"

	"github.com/pwe-project/pwe/internal/cacheline"
)

// Accumulator counts the positive pairs of the documents one goroutine
// adds. Pairs of ids both below F go to a dense triangular table (see
// dense.go); the rest are buffered as packed keys and, when the buffer is
// full, sorted, aggregated and spilled as a run. Each unordered
// co-occurrence is counted once under its canonical key (min id, max id).
type Accumulator struct {
	_     cacheline.Pad
	c     *Counter
	f     int32
	dense denseAdder
	ix    denseIndex
	buf   []uint64 // packed keys hi<<(idBits+dBits) | lo<<dBits | d
	// denseKeys holds the keys of pairs for the dense table until it
	// adds them.
	denseKeys []uint64
	tmp       []uint64
	perm      []uint32
	// spillScratch is the rest of a spill's memory, made by the first.
	spillScratch *spillScratch
	n            int
	// spilled is the most keys a spill took from the buffer: with its
	// scratch, as far as the buffer has been touched.
	spilled int
	filt    []int32
	err     error
	// direct holds the documents themselves (direct.go), unless the
	// accumulator counts pairs: then the fields above are made instead.
	direct *directStore
	rows   *rowCounter // spillStore's
	runBuf []byte      // spillStore's write buffer

	docs, tokens, subsampled, pairs int64
	_                               cacheline.Pad
}

func newAccumulator(c *Counter) *Accumulator {
	a := &Accumulator{c: c}
	if c.directTokens > 0 {
		a.direct = &directStore{isWide: !c.narrow, limit: c.directTokens}
		return a
	}
	a.countPairs()
	return a
}

// countPairs makes the dense table and the pair buffer, and drops the
// store.
func (a *Accumulator) countPairs() {
	c := a.c
	f := c.dense
	*a = Accumulator{
		c:     c,
		f:     int32(f),
		dense: newDenseAdder(f, c.denseBytes),
		docs:  a.docs, tokens: a.tokens, subsampled: a.subsampled, pairs: a.pairs,
		ix: denseIndex{
			tri: make([]int, f), wt: make([]uint32, len(c.weights)),
			hiShift: c.idBits + c.dBits, dBits: c.dBits,
			idMask: uint64(1)<<c.idBits - 1, dMask: uint64(1)<<c.dBits - 1,
		},
		buf: make([]uint64, min(c.bufPairs, 1<<16)),
		// The dense keys of a window must fit after the room check.
		denseKeys: make([]uint64, 0, denseChunk+c.cfg.Window),
	}
	for d, x := range c.weights {
		a.ix.wt[d] = uint32(x)
	}
	for hi := range a.ix.tri {
		a.ix.tri[hi] = hi * (hi + 1) / 2
	}
}

var errFinished = errors.New("counts: Add after Finish or Close")

// release drops the buffers; the dense table stays for the merge.
func (a *Accumulator) release() {
	a.buf, a.tmp, a.perm, a.spillScratch, a.filt, a.denseKeys = nil, nil, nil, nil, nil, nil
	a.direct, a.rows, a.runBuf = nil, nil, nil
	if a.err == nil {
		a.err = errFinished
	}
}

// Add counts the pairs of one document. ids holds vocabulary ids, with -1
// marking out-of-vocabulary tokens that keep their place but form no pair;
// docSeq is the document's 0-based ordinal in the corpus, which keys the
// subsampling decisions. Add must not be called concurrently on one
// Accumulator, nor after Finish.
func (a *Accumulator) Add(ids []int32, docSeq int64) error {
	if a.err != nil {
		return a.err
	}
	c := a.c
	v := int32(c.v)
	a.docs++
	seq := ids
	gaps := false
	if c.keepThr == nil {
		for p, id := range ids {
			if id < -1 || id >= v {
				return a.badID(docSeq, p, id)
			}
			if id >= 0 {
				a.tokens++
			} else {
				gaps = true
			}
		}
	} else {
		docKey := mix64(streamKey(c.cfg.Seed, domainSubsample, uint64(docSeq)))
		a.filt = a.filt[:0]
		for p, id := range ids {
			if id < -1 || id >= v {
				return a.badID(docSeq, p, id)
			}
			if id >= 0 {
				a.tokens++
				thr := c.keepThr[id]
				if thr != ^uint64(0) && mix64(docKey+uint64(p)*golden) >= thr {
					a.subsampled++
					continue
				}
			}
			gaps = gaps || id < 0
			a.filt = append(a.filt, id)
		}
		seq = a.filt
	}
	if d := a.direct; d != nil {
		// A gap's word, V, does not fit a narrow store of 65536 tokens'
		// ids: the store is counted as it is, and turns wide.
		widen := gaps && !d.isWide && c.v >= narrowIDs
		if (widen || d.tokens()+len(seq) > d.limit) && d.tokens() > 0 {
			if err := a.spillStore(); err != nil {
				a.err = err
				return err
			}
		}
		if widen {
			d.widen(c.wideTokens)
		}
		if len(seq) <= d.limit {
			d.add(seq, v)
			a.pairs += directPairs(seq, c.cfg.Window, gaps)
			return nil
		}
		// A document longer than the store holds: this accumulator counts
		// its pairs, and those of the documents after it.
		a.countPairs()
	}
	if err := a.count(seq); err != nil {
		a.err = err
		return err
	}
	return nil
}

// AddMapped adds the documents of a chunk of a token stream as Add would
// one at a time: docLens[k] of sids for the k-th, whose ordinal is docSeq+k,
// each stream id mapped through vocab to its vocabulary id, or to -1 (kept
// as a gap where keepOOV is set, dropped otherwise). vocab's values must
// lie in [-1, V), and sids index it. It returns the number of ids mapped
// to -1, and adds one to oovByID[sid] for each where oovByID is not nil.
// scratch is space for the ids of a document, returned for reuse.
//
// Where the accumulator keeps its documents, nothing is subsampled and no
// gap is kept, and a document fits in the store whatever its ids map to,
// the ids are mapped into the store's words, without the document's ids
// made, checked and copied on the way: on bench-raw the mapping, Add and
// the store's copy took 72 instructions a token between them, and this 52
// (cachegrind), most of the rest a document's due, at 7 tokens a line.
func (a *Accumulator) AddMapped(sids []uint32, docLens []int32, vocab []int32, keepOOV bool, oovByID []int64, docSeq int64, scratch []int32) (oov int64, _ []int32, err error) {
	fast := a.c.keepThr == nil && !keepOOV
	w := a.c.cfg.Window
	for k, n32 := range docLens {
		n := int(n32)
		doc := sids[:n]
		sids = sids[n:]
		// The store may have been spilled, widened or given up by Add.
		if d := a.direct; fast && a.err == nil && d != nil && n <= d.limit && (d.tokens() == 0 || d.tokens()+n <= d.limit) {
			if d.words() == 0 {
				d.pad()
			}
			at := d.words()
			if at+n > d.room() {
				d.grow(n, d.limit+2*directPad)
			}
			d.mark(at)
			var m int
			var o int64
			if d.isWide {
				d.wide, m, o = mapWords(d.wide, doc, vocab, oovByID)
			} else {
				d.narrow, m, o = mapWords(d.narrow, doc, vocab, oovByID)
			}
			oov += o
			a.docs++
			a.tokens += int64(m)
			a.pairs += gaplessPairs(m, w)
			continue
		}
		// mapWords with a flag for the gaps would serve here too, but the
		// flag in its loop cost count 47 M instructions (12.73 G against
		// 12.68 G).
		scratch = scratch[:0]
		for _, sid := range doc {
			id := vocab[sid]
			if id >= 0 || keepOOV {
				scratch = append(scratch, id)
			}
			if id < 0 {
				oov++
				if oovByID != nil {
					oovByID[sid]++
				}
			}
		}
		if err := a.Add(scratch, docSeq+int64(k)); err != nil {
			return oov, scratch, err
		}
	}
	return oov, scratch, nil
}

// mapWords appends to words, which has room for them, the vocabulary ids
// of the stream ids in doc that have one, and returns them with their
// number and that of the others, counted in oovByID if it is not nil.
func mapWords[W word](words []W, doc []uint32, vocab []int32, oovByID []int64) ([]W, int, int64) {
	n := len(words)
	out := words[n : n+len(doc)]
	m := 0
	var oov int64
	for _, sid := range doc {
		id := vocab[sid]
		if id < 0 {
			oov++
			if oovByID != nil {
				oovByID[sid]++
			}
			continue
		}
		out[m] = W(id)
		m++
	}
	return words[:n+m], m, oov
}

func (a *Accumulator) badID(doc int64, p int, id int32) error {
	return fmt.Errorf("counts: document %d, position %d: id %d outside the vocabulary of %d tokens (or -1 for a gap)",
		doc, p, id, a.c.v)
}

// count is the hot loop. A pair of ids both below F is counted in the
// dense table in a second pass, over a short list of keys (denseTable.add): its
// increments, to random places in a table larger than the L2 cache, then
// have nothing else between them and wait on memory together rather than
// one at a time.
func (a *Accumulator) count(seq []int32) error {
	c := a.c
	w := c.cfg.Window
	f := a.f
	buf, dk := a.buf, a.denseKeys
	n, nd := a.n, len(dk)
	dk = dk[:cap(dk)]
	hiShift := c.idBits + c.dBits
	dBits := c.dBits
	dMask := uint64(1)<<dBits - 1
	pairs := int64(0)
	for p, x := range seq {
		if x < 0 {
			continue
		}
		if nd+w > len(dk) {
			a.dense.add(dk[:nd], &a.ix)
			nd = 0
		}
		if n+w > len(buf) {
			a.n = n
			if err := a.makeRoom(w); err != nil {
				return err
			}
			buf, n = a.buf, a.n
		}
		end := min(len(seq), p+w+1)
		for q := p + 1; q < end; q++ {
			y := seq[q]
			if y < 0 {
				continue
			}
			lo, hi := x, y
			if y < x {
				lo, hi = y, x
			}
			pairs++
			// A pair goes to the dense keys or to the buffer about as
			// often one way as the other, so it is written to both and
			// only one of them keeps it: a branch would be mispredicted.
			key := uint64(hi)<<hiShift | uint64(lo)<<dBits | uint64(q-p)&dMask
			dense := int(b2u(hi < f))
			dk[nd], buf[n] = key, key
			nd += dense
			n += 1 - dense
		}
	}
	a.n = n
	a.denseKeys = dk[:nd]
	a.pairs += 2 * pairs
	return nil
}

// denseChunk is the number of dense-table keys count gathers before it
// adds them to the table.
const denseChunk = 2048

// makeRoom makes room for k more keys in the buffer: it grows the buffer
// while it is below its full size, and spills it after that.
func (a *Accumulator) makeRoom(k int) error {
	if a.n+k <= len(a.buf) {
		return nil
	}
	if len(a.buf) < a.c.bufPairs {
		// Grow geometrically so that small inputs stay small, by a factor
		// of 8: every copy touches fresh pages, and their faults, not the
		// copying, made doubling cost 5 % of a large run; the abandoned
		// buffers also add to the peak.
		a.grow(8 * len(a.buf))
		return nil
	}
	return a.spill()
}

// grow replaces the buffer by one of size keys, or of the full size if
// that is more than half of it, keeping its keys.
func (a *Accumulator) grow(size int) {
	if 2*size > a.c.bufPairs {
		size = a.c.bufPairs
	}
	if size <= len(a.buf) {
		return
	}
	buf := make([]uint64, size)
	copy(buf, a.buf[:a.n])
	a.buf = buf
}

// Reserve grows the pair buffer (or the store of documents) at once to
// hold about pairs pairs, within the memory budget, when the caller knows
// how many the documents it will add may form (at most Window per token):
// a buffer that grows to that size leaves copies behind it, each pages of
// fresh memory to fault in.
func (a *Accumulator) Reserve(pairs int64) {
	if d := a.direct; d != nil {
		// The documents hold about pairs / Window tokens.
		d.reserve(int(min(pairs/int64(a.c.cfg.Window), int64(d.limit))))
		return
	}
	if a.buf != nil && pairs > int64(len(a.buf)) {
		a.grow(int(min(pairs, int64(a.c.bufPairs))))
	}
}

// spill sorts and aggregates the buffered keys and writes them as a run
// (spillKeys), emptying the buffer.
func (a *Accumulator) spill() error {
	if a.n == 0 {
		return nil
	}
	a.scratch()
	if a.spillScratch == nil {
		a.spillScratch = newSpillScratch(a.c)
	}
	err := a.c.spillKeys(a.buf[:a.n], a.tmp[:a.n], a.perm[:a.n], a.spillScratch, false)
	a.spilled = max(a.spilled, a.n)
	a.n = 0
	return err
}

// scratch makes the sort scratch of the buffered keys, as long as the
// buffer.
func (a *Accumulator) scratch() {
	if len(a.tmp) < a.n {
		a.tmp = make([]uint64, len(a.buf))
		a.perm = make([]uint32, len(a.buf))
	}
}

// spillScratch is the memory one spill works in, besides its keys' sort
// scratch.
type spillScratch struct {
	hist  []uint32 // per-target counts for the transposed section
	radix []uint32
	wbuf  []byte
}

func newSpillScratch(c *Counter) *spillScratch {
	return &spillScratch{
		hist:  make([]uint32, c.v+1),
		radix: make([]uint32, radixHistLen(2*c.idBits+c.dBits)),
		wbuf:  make([]byte, 0, c.runBuf),
	}
}

// spillKeys sorts and aggregates buf, packed keys, and writes them as a run
// with two sections: the canonical pairs grouped by their larger id, and
// the off-diagonal ones transposed, grouped by their smaller id. Together
// they hold every ordered pair once, grouped by target. The larger id is on
// top of the keys because radixSort splits on the top bits. tmp and perm,
// as long as buf, and s are its scratch; the keys are left in no order.
//
// With keep, the run stays in buf and tmp instead of a file (keepRun),
// unless its counts are too large to pack: spillLast keeps the last
// spill's runs, which the merge then reads without decoding them.
func (c *Counter) spillKeys(buf, tmp []uint64, perm []uint32, s *spillScratch, keep bool) error {
	keys, vals := radixSort(buf, tmp, 2*c.idBits+c.dBits, s.radix)

	keys, vals, maxVal := aggregate(keys, vals, c.dBits, c.weights)
	idBits := c.idBits
	idMask := uint64(1)<<idBits - 1
	valBits := min(64-2*idBits, 32)
	packed := maxVal < 1<<valBits
	if keep && packed {
		m := c.transposePacked(keys, vals, valBits, s.hist)
		c.keepRun(keys, vals[:m], valBits, s.hist)
		return nil
	}

	f, err := c.createRunFile()
	if err != nil {
		return err
	}
	r := &run{f: f, split: true}
	w := newRunWriter(f, c.parts, s.wbuf)

	w.startSection()
	for i := 0; i < len(keys); {
		hi := keys[i] >> idBits
		j := i + 1
		for j < len(keys) && keys[j]>>idBits == hi {
			j++
		}
		w.group(int32(hi), j-i)
		prev := uint32(0)
		for ; i < j; i++ {
			lo := uint32(keys[i] & idMask)
			w.entry(lo-prev, vals[i])
			prev = lo
		}
	}
	r.sections = append(r.sections, w.endSection())

	w.startSection()
	hist := s.hist
	if packed {
		c.transposePacked(keys, vals, valBits, hist)
		// hist[h] now ends group h.
		start := uint32(0)
		for h, end := range hist[:c.v] {
			if end == start {
				continue
			}
			w.group(int32(h), int(end-start))
			prev := uint32(0)
			for _, e := range vals[start:end] {
				hi := uint32(e)
				w.entry(hi-prev, e>>32)
				prev = hi
			}
			start = end
		}
	} else {
		// Transpose by a stable counting sort on the smaller id, through
		// an index: the counts do not fit beside the keys.
		clear(hist)
		for _, k := range keys {
			hi, lo := k>>idBits, k&idMask
			if hi != lo {
				hist[lo+1]++
			}
		}
		for t := 1; t < len(hist); t++ {
			hist[t] += hist[t-1]
		}
		for i, k := range keys {
			hi, lo := k>>idBits, k&idMask
			if hi != lo {
				perm[hist[lo]] = uint32(i)
				hist[lo]++
			}
		}
		m := int(hist[len(hist)-1])
		for i := 0; i < m; {
			lo := keys[perm[i]] & idMask
			j := i + 1
			for j < m && keys[perm[j]]&idMask == lo {
				j++
			}
			w.group(int32(lo), j-i)
			prev := uint32(0)
			for ; i < j; i++ {
				k := perm[i]
				hi := uint32(keys[k] >> idBits)
				w.entry(hi-prev, vals[k])
				prev = hi
			}
		}
	}
	r.sections = append(r.sections, w.endSection())
	w.flush()
	if w.err != nil {
		return fmt.Errorf("counts: writing spill file: %w", w.err)
	}
	c.addRun(r, w.nBytes)
	return nil
}

// transposePacked packs each pair's count into its key, below it, which
// frees vals to receive the off-diagonal pairs transposed, as
// hi | count<<32, by a stable counting sort on the smaller id: input sorted
// by (hi, lo) comes out sorted by (lo, hi). Scattering them takes random
// writes, much cheaper than the random reads of a gather. It returns the
// number of transposed entries and leaves hist[lo] at the end of lo's group.
func (c *Counter) transposePacked(keys, vals []uint64, valBits uint, hist []uint32) int {
	idBits := c.idBits
	idMask := uint64(1)<<idBits - 1
	clear(hist)
	for i, k := range keys {
		hi, lo := k>>idBits, k&idMask
		if hi != lo {
			hist[lo+1]++
		}
		keys[i] = k<<valBits | vals[i]
	}
	for t := 1; t < len(hist); t++ {
		hist[t] += hist[t-1]
	}
	valMask := uint64(1)<<valBits - 1
	for _, k := range keys {
		pair := k >> valBits
		hi, lo := pair>>idBits, pair&idMask
		if hi != lo {
			vals[hist[lo]] = hi | (k&valMask)<<32
			hist[lo]++
		}
	}
	return int(hist[len(hist)-1])
}

// aggregate sums the weights of the distances of equal pairs among the
// sorted keys: it leaves each pair once in keys, without its distance, and
// its sum at the same index of vals (as long as keys), and returns both cut
// to the number of pairs, and the largest sum.
//
// Whether a run of equal pairs ends at a key is as good as random, so the
// loop does not branch on it: it writes the sum so far at every key and
// moves on to the next slot only where a run ends. The writes stay behind
// the reads, since there are no more runs than keys.
func aggregate(keys, vals []uint64, dBits uint, wt []uint64) (pairs, sums []uint64, maxVal uint64) {
	if len(keys) == 0 {
		return keys[:0], vals[:0], 0
	}
	vals = vals[:len(keys)]
	dMask := uint64(1)<<dBits - 1
	prev, s := keys[0]>>dBits, wt[keys[0]&dMask]
	u := 0
	for _, k := range keys[1:] {
		pair := k >> dBits
		next := b2u(pair != prev)
		keys[u], vals[u] = prev, s
		maxVal = max(maxVal, s)
		u += int(next)
		s = s&(next-1) + wt[k&dMask]
		prev = pair
	}
	keys[u], vals[u] = prev, s
	maxVal = max(maxVal, s)
	return keys[:u+1], vals[:u+1], maxVal
}
