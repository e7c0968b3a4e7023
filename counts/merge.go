package counts

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"math"
	"math/bits"
	"os"
	"runtime"
	"slices"
	"sync"
	"sync/atomic"

	"golang.org/x/sync/errgroup"

	"github.com/pwe-project/pwe/formats"
	"github.com/pwe-project/pwe/internal/cacheline"
	"github.com/pwe-project/pwe/internal/pages"
)

// batchRows is the number of rows handed to emit at a time by each of
// several merge workers; one worker hands over formats.CountsPageRows.
// Count on bench-raw, two threads, 256 MiB (medians of 8 alternating runs):
// 2.125 CPU-s and 185 MiB peak RSS with 4096 rows, 2.010 with 8192, 1.965
// and 168 MiB with 16384, 1.950 with 32768, 2.020 with 65536. Fewer
// batches mean fewer hand-overs, each of which may move a worker, and its
// tally, to the other core, and fewer batches made for the look-ahead,
// fresh memory each.
const batchRows = 16384

var errOverflow = errors.New("counts: a pair count overflowed 64 bits; use a smaller corpus, window or weighting scale")

// Progress follows the merge that Finish runs: SetTotal gives the number of
// parts the targets are merged in, which take about equal work, and Add(1)
// tells that one more has been emitted.
type Progress interface {
	SetTotal(parts int64)
	Add(parts int64)
}

// SetProgress has Finish report the merge's progress to p (nil: no
// report). The parts are emitted after the last spill and any merging of
// spilled runs, which report nothing.
func (c *Counter) SetProgress(p Progress) { c.progress = p }

// LendTo has Finish, where several workers merge, hand their batches of
// rows to lend instead of emit: lend may read a batch after it returns,
// until it calls release, which it must call exactly once (as
// formats.CountsWriter.LendColumns does). The batches are then not copied
// on their way out, and lend is called on the goroutine that calls Finish,
// in order. A single worker's batches are a page each, which emit takes
// without a copy (see Counter.layout).
func (c *Counter) LendTo(lend func(cols *formats.CountColumns, release func()) error) {
	c.lend = lend
}

// Finish merges the counts of every accumulator, draws the negatives and
// calls emit with batches of rows sorted by (target, context). It must be
// called once, after every Add call has returned. emit must not keep the
// batch after returning; it may take the batch's memory, leaving it other
// memory with room for as many rows (as formats.CountsWriter.TakeColumns
// does). Temporary files are removed whether Finish succeeds or not.
func (c *Counter) Finish(ctx context.Context, emit func(*formats.CountColumns) error) (Stats, error) {
	c.mu.Lock()
	if c.ended {
		c.mu.Unlock()
		return Stats{}, errors.New("counts: Finish after Finish or Close")
	}
	accs := c.accs
	c.mu.Unlock()
	defer c.Close()
	var stores []*directStore
	// The stores go once merged (Close leaves them to Finish).
	defer func() {
		for _, d := range stores {
			d.free()
		}
	}()

	var st Stats
	// Accumulators keep their documents, or count pairs (direct.go).
	var pairAccs []*Accumulator
	for _, a := range accs {
		if a.err != nil {
			return st, a.err
		}
		st.Documents += a.docs
		st.Tokens += a.tokens
		st.Subsampled += a.subsampled
		st.PositivePairs += a.pairs
		if a.direct != nil {
			stores = append(stores, a.direct)
		} else {
			pairAccs = append(pairAccs, a)
		}
	}
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(c.cfg.Workers)
	for _, a := range pairAccs {
		g.Go(func() error {
			if err := gctx.Err(); err != nil {
				return err
			}
			a.dense.add(a.denseKeys, &a.ix)
			return nil
		})
	}
	for _, d := range stores {
		g.Go(func() error {
			if err := gctx.Err(); err != nil {
				return err
			}
			d.index(c.v)
			return nil
		})
	}
	err := g.Wait()
	if err == nil {
		// The stores stay for the merge: the pair buffers' last runs go to
		// files beside them.
		err = c.spillLast(ctx, pairAccs, stores == nil)
	}
	for _, a := range accs {
		a.release()
	}
	if err != nil {
		return st, err
	}
	// The pair buffers, most of the budget, are free now. Collect them
	// before the merge starts allocating: the collector's next goal is
	// otherwise twice the heap that held them, and the merge's short-lived
	// batches would spread over that much fresh memory, whose page faults
	// cost more system time the larger the budget.
	runtime.GC()
	// The stores' index is filled one range of targets at a time, the
	// first now, each next one once the merge is done with the last.
	var chunks []int
	if stores != nil {
		chunks = c.indexChunks(stores)
		c.placeChunk(stores, chunks, 0)
	}

	// The merge sums the accumulators' dense tables entry by entry as it
	// reads them (denseRows.row), in parallel, rather than into a table of
	// uint64 first, serially, which had taken 5-10 ms.
	dense := collectDense(pairAccs, c.dense)
	if dense != nil {
		st.DenseSize = c.dense
	}

	mergers := make([]*merger, c.cfg.Workers)
	for i := range mergers {
		mergers[i] = newMerger(c)
	}
	if err := c.reduceRuns(ctx, mergers[0]); err != nil {
		return st, err
	}
	if err := c.mergeAll(ctx, mergers, dense, stores, chunks, emit); err != nil {
		return st, err
	}
	for _, m := range mergers {
		st.UniquePairs += m.uniquePairs
		st.Rows += m.rows
	}
	st.Spills, st.SpilledBytes, st.KeptRuns = c.spills, c.spilled, c.kept
	return st, nil
}

// spillLast spills the keys left in the accumulators' buffers, in pieces of
// about equal size, about one per worker, largest first: the workers then
// finish together. Each spilling its own buffer, a worker whose buffer had been
// spilled shortly before the end waited for the others, on bench-raw with
// two workers and a budget of 256 MiB for up to 40 ms of the 0.6 s merge.
//
// The pieces' runs stay in the buffers (keepRun) when the buffers, as far
// as they have been touched, take at most half the budget: the merge keeps
// its share, and reads them without a file's writing, reading and
// decoding. On bench-raw with the default budget, count took 2.5 % less
// CPU on one thread and 5.6 % on two, for 115-125 MiB more peak RSS. With
// 256 MiB, where spills fill the buffers, keeping them had saved nothing
// and taken the peak RSS from 190 to 274 MiB.
func (c *Counter) spillLast(ctx context.Context, accs []*Accumulator, mayKeep bool) error {
	total := 0
	var held int64
	for _, a := range accs {
		total += a.n
		// The buffer and the sort's scratch as far as they have been
		// touched: their capacity beyond that takes no memory.
		held += bytesPerPair * int64(max(a.n, a.spilled))
	}
	if total == 0 {
		return nil
	}
	keep := mayKeep && held <= c.cfg.Memory/2
	per := (total + c.cfg.Workers - 1) / c.cfg.Workers
	type piece struct {
		a          *Accumulator
		start, end int
	}
	var pieces []piece
	scratch := make(chan *spillScratch, c.cfg.Workers)
	for _, a := range accs {
		a.scratch()
		// A buffer little over the share stays whole: a small piece
		// would cost a run more to merge for little balance.
		for start := 0; start < a.n; {
			end := a.n
			if end-start > per+per/8 {
				end = start + per
			}
			pieces = append(pieces, piece{a, start, end})
			start = end
		}
		if a.spillScratch != nil && len(scratch) < cap(scratch) {
			scratch <- a.spillScratch
		}
	}
	for len(scratch) < min(cap(scratch), len(pieces)) {
		scratch <- newSpillScratch(c)
	}
	slices.SortStableFunc(pieces, func(x, y piece) int { return cmp.Compare(y.end-y.start, x.end-x.start) })
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(c.cfg.Workers)
	for _, p := range pieces {
		g.Go(func() error {
			if err := gctx.Err(); err != nil {
				return err
			}
			s := <-scratch
			defer func() { scratch <- s }()
			a := p.a
			return c.spillKeys(a.buf[p.start:p.end], a.tmp[p.start:p.end], a.perm[p.start:p.end], s, keep)
		})
	}
	err := g.Wait()
	for _, a := range accs {
		a.n = 0
	}
	return err
}

// mergeAll merges the partitions on cfg.Workers goroutines and emits their
// batches in partition order. A worker merging a partition after the one
// being emitted holds its batches until that partition's turn; such
// batches each take one of c.ahead look-ahead tokens, which bounds the
// memory they hold. The batches of the partition being emitted take
// instead one of hotBatches tokens of their own, so the merge cannot stall
// waiting for a look-ahead token, and their worker stays a few batches
// ahead of the emitter, which then reads them from the cache.
func (c *Counter) mergeAll(ctx context.Context, mergers []*merger, dense denseRows, stores []*directStore, chunks []int, emit func(*formats.CountColumns) error) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	nParts := len(c.parts) - 1
	// The partitions of range k of the stores' index (chunks) wait for
	// placed[k]; the worker that finishes the last partition of a range
	// fills the index with the next one.
	if chunks == nil {
		chunks = []int{0, nParts}
	}
	placed := make([]chan struct{}, len(chunks)-1)
	left := make([]atomic.Int64, len(chunks)-1)
	chunkOf := make([]int, nParts)
	for k := range placed {
		placed[k] = make(chan struct{})
		left[k].Store(int64(chunks[k+1] - chunks[k]))
		for p := chunks[k]; p < chunks[k+1]; p++ {
			chunkOf[p] = k
		}
	}
	close(placed[0])
	var release *indexRelease
	if stores != nil {
		release = c.newIndexRelease(stores, chunks[len(chunks)-2], nParts)
	}
	// A partition's channels are made when its merger or the emitter first
	// needs them, and dropped once it is emitted: there are many
	// partitions, and a channel's buffer holds c.ahead batches.
	var mu sync.Mutex
	outs := make([]chan rowBatch, nParts)
	turns := make([]chan struct{}, nParts)
	channels := func(p int) (chan rowBatch, chan struct{}) {
		mu.Lock()
		defer mu.Unlock()
		if outs[p] == nil {
			outs[p] = make(chan rowBatch, c.ahead)
			turns[p] = make(chan struct{})
		}
		return outs[p], turns[p]
	}
	// Emitted batches return to free for reuse. A batch holds a token
	// from when it is taken to when it is back in free, so free has room
	// for every batch. One dropped for want of room would be garbage, and
	// each new one a batch to clear (384 KiB, or 1.5 MB for a single
	// worker).
	lend := c.lend
	if len(mergers) == 1 {
		lend = nil
	}
	spare := 0
	if lend != nil {
		spare = lentBatches
	}
	free := make(chan *formats.CountColumns, c.ahead+hotBatches+spare)
	if len(mergers) > 1 {
		pool, release := batchPool(cap(free), c.batchCap)
		defer release()
		for _, b := range pool {
			free <- b
		}
	}
	tokens := make(chan struct{}, c.ahead)
	hot := make(chan struct{}, hotBatches)
	var next atomic.Int64
	g, gctx := errgroup.WithContext(ctx)
	for _, m := range mergers {
		g.Go(func() error {
			for {
				p := int(next.Add(1) - 1)
				if p >= nParts {
					return nil
				}
				k := chunkOf[p]
				select {
				case <-placed[k]:
				case <-gctx.Done():
					return gctx.Err()
				}
				m.out, m.turn = channels(p)
				m.free, m.tokens, m.hot, m.ctx = free, tokens, hot, gctx
				err := m.newBatch()
				if err == nil && stores != nil {
					err = m.directPartition(p, c.sections(p), stores, dense, m.finalRow)
				} else if err == nil {
					err = m.partition(p, c.sections(p), dense, m.finalRow)
				}
				if err == nil {
					err = m.flush()
				}
				close(m.out)
				if err != nil {
					return err
				}
				if release != nil {
					release.merged(p)
				}
				if left[k].Add(-1) == 0 && k+1 < len(placed) {
					c.placeChunk(stores, chunks, k+1)
					close(placed[k+1])
				}
			}
		})
	}
	if c.progress != nil {
		c.progress.SetTotal(int64(nParts))
	}
	var emitErr error
emitting:
	for p := range nParts {
		out, turn := channels(p)
		close(turn)
		for {
			select {
			case b, ok := <-out:
				if !ok {
					mu.Lock()
					outs[p], turns[p] = nil, nil
					mu.Unlock()
					if c.progress != nil {
						c.progress.Add(1)
					}
					continue emitting
				}
				// The batch goes back to free, then its token (see
				// recycleBatch).
				var err error
				if lend != nil {
					cols := b.cols
					err = lend(cols, func() { recycleBatch(free, cols) })
				} else {
					err = emit(b.cols)
					recycleBatch(free, b.cols)
				}
				<-b.token
				if err != nil {
					emitErr = err
					cancel()
					break emitting
				}
			case <-gctx.Done():
				break emitting
			}
		}
	}
	err := g.Wait()
	if emitErr != nil {
		return emitErr
	}
	if err != nil {
		return err
	}
	return ctx.Err()
}

// rowBatch is a batch of output rows with the channel of the token it
// holds, to be returned when it is emitted.
type rowBatch struct {
	cols  *formats.CountColumns
	token chan struct{}
}

// recycleBatch returns a batch to free for reuse, or leaves it to the
// collector when free is full. Where it can, a batch goes back before its
// token, so that a worker that takes the token next finds the batch there.
func recycleBatch(free chan *formats.CountColumns, cols *formats.CountColumns) {
	select {
	case free <- cols:
	default:
	}
}

// batchPool makes n empty batches of room for rows rows each, cut from one
// slab per column in huge pages where the kernel gives them on advice:
// several workers' look-ahead fills them all, and made one by one they were
// each fresh memory to fault in 4 KiB at a time (on bench-raw, with two
// threads, about 3 000 of count's 17 800 page faults; count took 1.890
// CPU-s against 1.950, medians of 8 alternating runs). The caller calls
// release once the batches are done with: it withdraws the huge-page advice
// from the slabs (pages.Unhuge).
func batchPool(n, rows int) (pool []*formats.CountColumns, release func()) {
	tg, cx := make([]int32, n*rows), make([]int32, n*rows)
	np, nn := make([]float64, n*rows), make([]float64, n*rows)
	for _, s := range [][]int32{tg, cx} {
		pages.Huge(s)
	}
	for _, s := range [][]float64{np, nn} {
		pages.Huge(s)
	}
	pool = make([]*formats.CountColumns, n)
	for i := range pool {
		at, end := i*rows, (i+1)*rows
		pool[i] = &formats.CountColumns{Target: tg[at:at:end], Context: cx[at:at:end], NPos: np[at:at:end], NNeg: nn[at:at:end]}
	}
	return pool, func() {
		pages.Unhuge(tg)
		pages.Unhuge(cx)
		pages.Unhuge(np)
		pages.Unhuge(nn)
	}
}

// hotBatches bounds the batches of the partition being emitted that are
// made and not yet emitted. Without it, that partition's worker could run
// up to c.ahead batches (tens of megabytes) ahead of the emitter, which
// then read them back from memory: on bench-raw with two threads and the
// default budget, count's peak RSS went from 406 to 495 MiB.
const hotBatches = 2

// lentBatches is about the number of batches lent to the writer at a time
// (formats.CountsWriter.LendColumns; up to about 30 on bench-raw, six in
// each of the five pages the writer holds, often fewer), for which the
// pool of batches has room besides the look-ahead.
const lentBatches = 16

// sections lists partition p of every section of every run.
func (c *Counter) sections(p int) []section {
	var s []section
	for _, r := range c.runs {
		for i := range r.sections {
			if sec := r.section(i, p); sec.end > sec.start {
				s = append(s, sec)
			}
		}
	}
	return s
}

// reduceRuns merges the oldest runs into one until the merge fan-in
// suffices, so that the final merge's read buffers fit the budget.
func (c *Counter) reduceRuns(ctx context.Context, m *merger) error {
	for {
		total := 0
		for _, r := range c.runs {
			total += len(r.sections)
		}
		if total <= c.fanIn {
			return nil
		}
		k, secs := 0, 0
		for k < len(c.runs) && (k < 2 || secs+len(c.runs[k].sections) <= c.fanIn) {
			secs += len(c.runs[k].sections)
			k++
		}
		group := c.runs[:k]
		f, err := c.createRunFile()
		if err != nil {
			return err
		}
		out := &run{f: f}
		w := newRunWriter(f, c.parts, make([]byte, 0, runBufSize))
		w.startSection()
		sink := func(t int32, cs []int32, vs []uint64) error {
			w.group(t, len(cs))
			prev := int32(0)
			for i, ctxID := range cs {
				w.entry(uint32(ctxID-prev), vs[i])
				prev = ctxID
			}
			return w.err
		}
		for p := range len(c.parts) - 1 {
			if err := ctx.Err(); err != nil {
				f.Close()
				return err
			}
			var secs []section
			for _, r := range group {
				for i := range r.sections {
					if sec := r.section(i, p); sec.end > sec.start {
						secs = append(secs, sec)
					}
				}
			}
			if err := m.partition(p, secs, nil, sink); err != nil {
				f.Close()
				return err
			}
		}
		out.sections = [][]int64{w.endSection()}
		w.flush()
		if w.err != nil {
			f.Close()
			return fmt.Errorf("counts: writing spill file: %w", w.err)
		}
		for _, r := range group {
			if r.f != nil {
				r.f.Close()
				os.Remove(r.f.Name())
			}
		}
		c.mu.Lock()
		c.runs = append(c.runs[k:len(c.runs):len(c.runs)], out)
		c.spills++
		c.spilled += w.nBytes
		c.mu.Unlock()
	}
}

// merger assembles target rows from the sections of one partition.
type merger struct {
	_       cacheline.Pad
	c       *Counter
	cursors []cursor
	bufs    [][]byte
	tally   *tally[uint64] // for rows combined from many runs
	counter *rowCounter    // for rows counted from stores
	cs, tc  []int32
	vs, tv  []uint64
	// mc, mv, splits and msplits are mergeParts's scratch.
	mc      []int32
	mv      []uint64
	splits  []int
	msplits []int
	packed  []uint64
	neg     *negSampler
	ncs     []int32
	nns     []uint64

	ctx         context.Context
	out         chan rowBatch
	free        chan *formats.CountColumns
	turn        chan struct{} // closed when the partition is being emitted
	tokens, hot chan struct{}
	batch       *formats.CountColumns
	batchToken  chan struct{} // the channel of the token batch holds
	// limit is the number of rows the batch takes: c.batchCap, or for a
	// single worker the rows up to the next page boundary of the output.
	limit       int
	uniquePairs int64
	rows        int64
	_           cacheline.Pad
}

func newMerger(c *Counter) *merger {
	m := &merger{c: c, tally: newTally[uint64](c.v)}
	if c.neg != nil {
		m.neg = newNegSampler(c.neg)
	}
	return m
}

// partition merges the sections of partition p, adds the dense table's
// rows if dense is not nil, and calls sink for every non-empty target row
// in increasing order, with contexts increasing and canonical counts.
func (m *merger) partition(p int, secs []section, dense denseRows, sink func(t int32, cs []int32, vs []uint64) error) error {
	c := m.c
	cur, err := m.cursorsOn(secs)
	if err != nil {
		return err
	}
	f := int32(0)
	if dense != nil {
		f = dense.size()
	}
	t1 := c.parts[p+1]
	t := c.parts[p]
	for {
		next := t1
		if t < f {
			next = t
		}
		for i := range cur {
			if !cur[i].done && cur[i].t < next {
				next = cur[i].t
			}
		}
		if next >= t1 {
			return nil
		}
		t = next
		cs, vs := m.cs[:0], m.vs[:0]
		if t < f {
			var err error
			if cs, vs, err = dense.row(t, cs, vs); err != nil {
				return err
			}
		}
		// k groups hold target t; below and above count those of spill
		// sections, whose contexts lie at or below t and above it.
		k, which, below, above := 0, 0, 0, 0
		for i := range cur {
			if !cur[i].done && cur[i].t == t {
				k++
				which = i
				below += int(b2u(cur[i].contexts == upToTarget))
				above += int(b2u(cur[i].contexts == aboveTarget))
			}
		}
		var err error
		switch {
		case k == 1:
			cs, vs, err = cur[which].appendGroup(cs, vs)
		case below+above == k:
			// Spills' parts of the row: those up to t come before those
			// above it, and the dense row, if any, holds only contexts
			// below them. A side's one part is appended as it is; more, as
			// when several workers spilled, merge.
			for _, side := range [2]struct {
				want  contextRange
				parts int
			}{{upToTarget, below}, {aboveTarget, above}} {
				tc, tv, splits := m.tc[:0], m.tv[:0], append(m.splits[:0], 0)
				for i := range cur {
					if err != nil || cur[i].done || cur[i].t != t || cur[i].contexts != side.want {
						continue
					}
					if side.parts == 1 {
						cs, vs, err = cur[i].appendGroup(cs, vs)
						continue
					}
					tc, tv, err = cur[i].appendGroup(tc, tv)
					splits = append(splits, len(tc))
				}
				m.tc, m.tv, m.splits = tc, tv, splits
				if side.parts > 1 {
					cs, vs = m.mergeParts(cs, vs)
				}
			}
		case k > 1:
			tc, tv := m.tc[:0], m.tv[:0]
			for i := range cur {
				if !cur[i].done && cur[i].t == t {
					if tc, tv, err = cur[i].appendGroup(tc, tv); err != nil {
						break
					}
				}
			}
			m.tc, m.tv = tc, tv
			cs, vs = m.combine(tc, tv, cs, vs)
		}
		m.cs, m.vs = cs, vs
		if err != nil {
			return err
		}
		if len(cs) > 0 {
			if err := sink(t, cs, vs); err != nil {
				return err
			}
		}
		t++
	}
}

// cursorsOn returns cursors at the start of the sections secs.
func (m *merger) cursorsOn(secs []section) ([]cursor, error) {
	for len(m.cursors) < len(secs) {
		m.cursors = append(m.cursors, cursor{})
		m.bufs = append(m.bufs, make([]byte, 0, m.c.readBuf))
	}
	cur := m.cursors[:len(secs)]
	for i, s := range secs {
		if err := cur[i].reset(s, m.bufs[i]); err != nil {
			return nil, err
		}
	}
	return cur, nil
}

// mergeParts appends the union of the groups sorted by context that m.tc
// and m.tv hold, group i from m.splits[i] to m.splits[i+1], summing the
// counts of a context in several: it merges them two by two, which took
// less time than a tally (combine) for the four to six parts of a row that
// two workers' spills give.
func (m *merger) mergeParts(cs []int32, vs []uint64) ([]int32, []uint64) {
	tc, tv, splits := m.tc, m.tv, m.splits
	oc, ov, osp := m.mc, m.mv, m.msplits
	for len(splits) > 3 {
		oc, ov, osp = oc[:0], ov[:0], append(osp[:0], 0)
		for i := 0; i+1 < len(splits); i += 2 {
			a, b := splits[i], splits[i+1]
			if i+2 < len(splits) {
				c := splits[i+2]
				oc, ov = mergeSorted(tc[a:b], tv[a:b], tc[b:c], tv[b:c], oc, ov)
			} else {
				oc, ov = append(oc, tc[a:b]...), append(ov, tv[a:b]...)
			}
			osp = append(osp, len(oc))
		}
		tc, tv, splits, oc, ov, osp = oc, ov, osp, tc, tv, splits
	}
	m.tc, m.tv, m.splits, m.mc, m.mv, m.msplits = tc, tv, splits, oc, ov, osp
	if len(splits) == 2 {
		return append(cs, tc[:splits[1]]...), append(vs, tv[:splits[1]]...)
	}
	a, b := splits[1], splits[2]
	return mergeSorted(tc[:a], tv[:a], tc[a:b], tv[a:b], cs, vs)
}

// mergeSorted appends the union of two groups sorted by context, summing
// the counts of a context in both. Which group holds the next context is
// as good as random, so each step takes both groups' next contexts and
// moves on by arithmetic, not branches.
func mergeSorted(ac []int32, av []uint64, bc []int32, bv []uint64, cs []int32, vs []uint64) ([]int32, []uint64) {
	n := len(cs)
	cs = slices.Grow(cs, len(ac)+len(bc))[:n+len(ac)+len(bc)]
	vs = slices.Grow(vs, len(ac)+len(bc))[:len(cs)]
	i, j := 0, 0
	for i < len(ac) && j < len(bc) {
		x, y := ac[i], bc[j]
		p, q := b2u(x <= y), b2u(y <= x)
		cs[n], vs[n] = min(x, y), av[i]&-p+bv[j]&-q
		n++
		i += int(p)
		j += int(q)
	}
	copy(vs[n:], av[i:])
	n += copy(cs[n:], ac[i:])
	copy(vs[n:], bv[j:])
	n += copy(cs[n:], bc[j:])
	return cs[:n], vs[:n]
}

// combine appends the entries (tc, tv), which come from several sorted
// groups, sorted by context with equal contexts summed.
func (m *merger) combine(tc []int32, tv []uint64, cs []int32, vs []uint64) ([]int32, []uint64) {
	if len(tc)*64 >= len(m.tally.summary) {
		for i, x := range tc {
			m.tally.add(x, tv[i])
		}
		return m.tally.drain(cs, vs)
	}
	// Few entries in a large vocabulary: sort (context, index) keys.
	p := m.packed[:0]
	for i, x := range tc {
		p = append(p, uint64(x)<<32|uint64(i))
	}
	slices.Sort(p)
	m.packed = p
	for i := 0; i < len(p); {
		x := int32(p[i] >> 32)
		var s uint64
		for ; i < len(p) && int32(p[i]>>32) == x; i++ {
			s += tv[uint32(p[i])]
		}
		cs = append(cs, x)
		vs = append(vs, s)
	}
	return cs, vs
}

// finalRow turns the canonical positive counts of target t into output
// rows, drawing or computing its negatives.
func (m *merger) finalRow(t int32, cs []int32, vs []uint64) error {
	c := m.c
	// Diagonal pairs were counted once per unordered co-occurrence but
	// are two ordered pairs: their counts double here, in the scratch
	// row, so that every n_pos is then vs[i] / scale.
	var wsum uint64
	for i, x := range cs {
		v := vs[i]
		if x == t {
			v *= 2
			if v>>1 != vs[i] {
				return errOverflow
			}
			vs[i] = v
		}
		var carry uint64
		if wsum, carry = bits.Add64(wsum, v, 0); carry != 0 {
			return errOverflow
		}
	}
	m.uniquePairs += int64(len(cs))
	scale := float64(c.scale)
	k := uint64(c.cfg.Negatives)
	ncs, nns := m.ncs[:0], m.nns[:0]
	expected := c.neg != nil && c.cfg.NegMode == Expected
	if c.neg != nil && !expected {
		hi, lo := bits.Mul64(k, wsum)
		if hi != 0 {
			return errOverflow
		}
		draws := lo / c.scale
		r := newRNG(c.cfg.Seed, domainNegatives, uint64(t))
		if rem := lo % c.scale; rem != 0 && r.below(c.scale) < rem {
			draws++
		}
		if m.neg.tallies(draws) {
			m.neg.aliasTally(&r, draws)
			return m.tallyRows(t, cs, vs, scale)
		}
		ncs, nns = m.neg.sample(&r, draws, negAuto, ncs, nns)
		m.ncs, m.nns = ncs, nns
	}
	if expected {
		// K * W_t * P(j) for every j with P(j) > 0.
		kw := float64(k) * (float64(wsum) / scale)
		i := 0
		for j, pj := range c.neg.p {
			var npos, nneg float64
			if i < len(cs) && cs[i] == int32(j) {
				npos = float64(vs[i]) / scale
				i++
			}
			if pj > 0 {
				nneg = kw * pj
			}
			if npos == 0 && nneg == 0 {
				continue
			}
			if m.batch.Len() == m.limit {
				if err := m.send(); err != nil {
					return err
				}
			}
			b := m.batch
			b.Target, b.Context = append(b.Target, t), append(b.Context, int32(j))
			b.NPos, b.NNeg = append(b.NPos, npos), append(b.NNeg, nneg)
		}
		return nil
	}
	// Rows go straight into the batch's columns, resliced to their
	// capacity, whose room is checked first: they are most of what the
	// merge moves. Whether a row comes from the positives, the negatives or
	// both is as good as random, so the merge takes both sides' next
	// contexts and steps through arithmetic, not branches; a sentinel
	// context beyond every id ends each side.
	ni, nj := len(cs), len(ncs)
	cs, vs = append(cs, math.MaxInt32), append(vs, 0)
	ncs, nns = append(ncs, math.MaxInt32), append(nns, 0)
	m.cs, m.vs, m.ncs, m.nns = cs, vs, ncs, nns
	tg, cx, np, nn, n := m.open()
	i, j := 0, 0
	for i < ni || j < nj {
		if n == len(tg) {
			m.close(tg, cx, np, nn, n)
			if err := m.send(); err != nil {
				return err
			}
			tg, cx, np, nn, n = m.open()
		}
		c, d := cs[i], ncs[j]
		p, q := b2u(c <= d), b2u(d <= c)
		tg[n], cx[n] = t, min(c, d)
		np[n], nn[n] = float64(vs[i]&-p)/scale, float64(nns[j]&-q)
		n++
		i += int(p)
		j += int(q)
	}
	m.close(tg, cx, np, nn, n)
	return nil
}

// tallyRows writes the rows of target t whose negatives were drawn into
// the negative sampler's tally: the positive contexts cs join the tally's
// bitsets, so that one pass over them, in increasing context order, writes
// every row, and leaves the tally empty. The pass meets the positive
// contexts in the order of cs, so it takes their counts vs from there,
// without a branch.
func (m *merger) tallyRows(t int32, cs []int32, vs []uint64, scale float64) error {
	tl := m.neg.tally
	bitset, summary, sums := tl.bitset, tl.summary, tl.sums
	for _, x := range cs {
		w := x >> 6
		bitset[w] |= 1 << (x & 63)
		summary[w>>6] |= 1 << (w & 63)
	}
	// The positive contexts come up in the pass in their order, and k steps
	// through them; the sentinel, beyond every context, is never passed.
	cs, vs = append(cs, math.MaxInt32), append(vs, 0)
	m.cs, m.vs = cs, vs
	k := 0
	tg, cx, np, nn, n := m.open()
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
						// The tally must be left empty for the next target.
						tl.reset()
						return err
					}
					tg, cx, np, nn, n = m.open()
				}
				isPos := b2u(cs[k] == int32(j))
				tg[n], cx[n] = t, int32(j)
				np[n], nn[n] = float64(vs[k]&-isPos)/scale, float64(sums[j])
				sums[j] = 0
				k += int(isPos)
				n++
			}
		}
	}
	m.close(tg, cx, np, nn, n)
	return nil
}

// open returns the current batch's columns at their full length, for
// writing rows by index, and the number of rows they hold.
func (m *merger) open() (tg, cx []int32, np, nn []float64, n int) {
	b := m.batch
	l := m.limit
	return b.Target[:l], b.Context[:l], b.NPos[:l], b.NNeg[:l], b.Len()
}

// close cuts the columns that open returned to their first n rows.
func (m *merger) close(tg, cx []int32, np, nn []float64, n int) {
	b := m.batch
	b.Target, b.Context, b.NPos, b.NNeg = tg[:n], cx[:n], np[:n], nn[:n]
}

// b2u is 1 for true and 0 for false, without a branch.
func b2u(b bool) uint64 {
	var x uint64
	if b {
		x = 1
	}
	return x
}

// send hands the current batch to the emitter and starts a new one.
func (m *merger) send() error {
	if err := m.flush(); err != nil {
		return err
	}
	return m.newBatch()
}

// flush hands the current batch, if not empty, to the emitter; an empty
// batch goes back to the free list with its token.
func (m *merger) flush() error {
	b := rowBatch{m.batch, m.batchToken}
	m.batch, m.batchToken = nil, nil
	if b.cols.Len() == 0 {
		recycleBatch(m.free, b.cols)
		<-b.token
		return nil
	}
	m.rows += int64(b.cols.Len())
	select {
	case m.out <- b:
		return nil
	case <-m.ctx.Done():
		return m.ctx.Err()
	}
}

// newBatch starts a batch, taking a token first: a look-ahead token while
// the partition waits for its turn, a hot one once it is being emitted.
func (m *merger) newBatch() error {
	select {
	case <-m.turn:
	default:
		select {
		case m.tokens <- struct{}{}:
			m.batchToken = m.tokens
		case <-m.turn:
		case <-m.ctx.Done():
			return m.ctx.Err()
		}
	}
	if m.batchToken == nil {
		select {
		case m.hot <- struct{}{}:
			m.batchToken = m.hot
		case <-m.ctx.Done():
			return m.ctx.Err()
		}
	}
	select {
	case b := <-m.free:
		b.Reset()
		m.batch = b
	default:
		b := formats.MakeCountColumns(m.c.batchCap)
		m.batch = &b
	}
	m.limit = m.c.batchCap
	if m.c.cfg.Workers == 1 {
		m.limit -= int(m.rows % int64(m.c.batchCap))
	}
	return nil
}
