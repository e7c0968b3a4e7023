package counts

import (
	"fmt"
	"math"
	"math/big"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/pwe-project/pwe/formats"
)

// checkAgainstRef compares the positive counts with the naive reference:
// the same set of pairs, and n_pos equal to the correctly rounded value of
// the exact rational sum (the counter divides two exact integers, which
// rounds correctly too).
func checkAgainstRef(t *testing.T, what string, rows []formats.CountRow, ref map[[2]int32]*big.Rat) {
	t.Helper()
	got := 0
	for _, r := range rows {
		if r.NPos == 0 {
			continue
		}
		got++
		want, ok := ref[[2]int32{r.TargetID, r.ContextID}]
		if !ok {
			t.Fatalf("%s: pair (%d, %d) has n_pos %v, reference has none", what, r.TargetID, r.ContextID, r.NPos)
		}
		if f, _ := want.Float64(); f != r.NPos {
			t.Fatalf("%s: pair (%d, %d): n_pos %v, want %v (%s)", what, r.TargetID, r.ContextID, r.NPos, f, want.RatString())
		}
	}
	if got != len(ref) {
		t.Fatalf("%s: %d pairs with n_pos > 0, reference has %d", what, got, len(ref))
	}
}

func TestMatchesReference(t *testing.T) {
	for w := 1; w <= 8; w++ {
		for _, wt := range []Weighting{Uniform, Linear, Harmonic} {
			for _, gaps := range []bool{false, true} {
				seed := uint64(w*100 + int(wt)*10)
				if gaps {
					seed++
				}
				v := 5 + int(seed*7919%300)
				cp := newCorpus(seed, v, 120, 40, gaps)
				ref, refPairs := refCounts(cp.docs, w, wt)
				cfg := Config{Window: w, Weighting: wt, Seed: seed, TempDir: t.TempDir()}
				for _, tc := range []struct {
					name    string
					workers int
					tune    *tuning
				}{
					{"in-memory", 1, nil},
					{"no-dense-spills", 2, &tuning{dense: 0, bufPairs: 400, fanIn: 6}},
					{"small-dense-spills", 3, &tuning{dense: 7, bufPairs: 600}},
					{"all-dense", 1, &tuning{dense: v}},
					{"direct-then-spills", 2, &tuning{direct: 500, dense: 5, bufPairs: 400}},
					{"direct-spills-ranges", 1, &tuning{direct: 400, ranges: 5, parts: 40}},
					{"direct", 3, &tuning{direct: 1 << 20}},
					{"direct-ranges", 3, &tuning{direct: 1 << 20, ranges: 7, parts: 60}},
					{"direct-one-range", 2, &tuning{direct: 1 << 20, ranges: 1}},
					{"direct-bitsets", 1, &tuning{direct: 1 << 20, scanRow: -1}},
					{"direct-wide", 2, &tuning{direct: 1 << 20, wide: true}},
					{"direct-wide-spills", 1, &tuning{direct: 300, wide: true, dense: 5, bufPairs: 400}},
					{"direct-scans", 2, &tuning{direct: 1 << 20, scanRow: 1}},
				} {
					what := fmt.Sprintf("W=%d %v gaps=%v %s", w, wt, gaps, tc.name)
					cfg.Workers = tc.workers
					rows, st := runCounter(t, cfg, cp.counts, cp.docs, seed, tc.tune)
					checkAgainstRef(t, what, rows, ref)
					if st.PositivePairs != refPairs {
						t.Fatalf("%s: %d positive pairs, want %d", what, st.PositivePairs, refPairs)
					}
					if st.UniquePairs != int64(len(ref)) {
						t.Fatalf("%s: UniquePairs %d, want %d", what, st.UniquePairs, len(ref))
					}
				}
			}
		}
	}
}

// TestIndexRelease counts a corpus whose index spans hundreds of 4 KiB
// blocks, on one and three workers, with the index in one range and in
// four or more, and checks the rows against the reference and that the
// merge gave back the index. A block given back too early reads as zeros,
// which are no token's position: the windows around them would fall off
// the store's start (a panic) or count the wrong pairs. Giving back one
// partition too far, or past a partition still being merged on another
// worker, fails here.
func TestIndexRelease(t *testing.T) {
	cp := newCorpus(31, 300, 1500, 300, false)
	ref, _ := refCounts(cp.docs, 5, Uniform)
	var total int64
	for _, d := range cp.docs {
		total += int64(len(d))
	}
	for _, workers := range []int{1, 3} {
		for _, ranges := range []int{1, 4} {
			what := fmt.Sprintf("%d workers, %d ranges", workers, ranges)
			var given int64
			cfg := Config{Window: 5, Workers: workers, Seed: 3, TempDir: t.TempDir()}
			rows, _ := runCounter(t, cfg, cp.counts, cp.docs, 9, &tuning{direct: 1 << 22, ranges: ranges, parts: 80, dense: -1, given: &given})
			checkAgainstRef(t, what, rows, ref)
			// One range: all but the last blocks of each store's index go
			// back. Several: only the last range's (a tenth of the
			// positions or less here) does, as the others' memory is the
			// next range's.
			want := int64(1)
			if ranges == 1 {
				want = total / 2
			}
			if given < want {
				t.Errorf("%s: %d of %d positions given back, want at least %d", what, given, total, want)
			}
		}
	}
}

func TestSymmetry(t *testing.T) {
	cp := newCorpus(5, 400, 300, 80, true)
	for _, wt := range []Weighting{Uniform, Linear, Harmonic} {
		rows, _ := runCounter(t, Config{Window: 6, Weighting: wt, Workers: 2, TempDir: t.TempDir()}, cp.counts, cp.docs, 1,
			&tuning{dense: 20, bufPairs: 500})
		pos := map[[2]int32]float64{}
		for _, r := range rows {
			if r.NPos > 0 {
				pos[[2]int32{r.TargetID, r.ContextID}] = r.NPos
			}
		}
		if len(pos) == 0 {
			t.Fatal("no positive pairs")
		}
		for k, x := range pos {
			if y := pos[[2]int32{k[1], k[0]}]; y != x {
				t.Fatalf("%v: n_pos[%d,%d] = %v but n_pos[%d,%d] = %v", wt, k[0], k[1], x, k[1], k[0], y)
			}
		}
	}
}

// TestDeterminism: spills, workers and the distribution of documents over
// workers change nothing, subsampling and negatives included.
func TestDeterminism(t *testing.T) {
	cp := newCorpus(9, 700, 600, 120, true)
	base := Config{Window: 5, Weighting: Linear, Subsample: 1e-3, Negatives: 3, Seed: 42}
	cfg := base
	cfg.Workers, cfg.TempDir = 1, t.TempDir()
	want, wst := runCounter(t, cfg, cp.counts, cp.docs, 1, nil)
	if wst.Subsampled == 0 || wst.Spills != 0 {
		t.Fatalf("reference run: %+v: want some subsampling and no spill", wst)
	}
	for _, tc := range []struct {
		workers int
		split   uint64
		tune    *tuning
	}{
		{2, 2, nil},
		{4, 3, nil},
		{2, 4, &tuning{dense: 16, bufPairs: 300, fanIn: 5}},
		{4, 5, &tuning{dense: 0, bufPairs: 1000}},
		{1, 6, &tuning{dense: 500, bufPairs: 50, fanIn: 4}},
		{2, 7, &tuning{dense: 0, skew: true}},
		{3, 8, &tuning{dense: 64, skew: true}},
		{3, 9, &tuning{direct: 1 << 20}},
		{2, 10, &tuning{direct: 500, fanIn: 4}},
		{4, 11, &tuning{direct: 4000, dense: -1}},
		{2, 12, &tuning{direct: 1 << 20, fuseBelow: 40}},
		// Every row drained through the bitsets, and every row by a scan.
		{2, 14, &tuning{direct: 1 << 20, scanRow: -1}},
		{1, 15, &tuning{direct: 1 << 20, scanRow: 1}},
		{2, 16, &tuning{direct: 1 << 20, scanRow: 1, fuseBelow: 40}},
		// Documents longer than a store: their accumulator counts pairs,
		// the others keep documents, and the merge reads both.
		{3, 13, &tuning{direct: 50, dense: 16, bufPairs: 300, byLength: true}},
	} {
		cfg.Workers = tc.workers
		got, st := runCounter(t, cfg, cp.counts, cp.docs, tc.split, tc.tune)
		rowsEqual(t, fmt.Sprintf("%d workers %+v", tc.workers, tc.tune), want, got)
		// Without spills before the end, the first accumulator's share is
		// cut in pieces for the others: one run more than workers.
		if tc.tune != nil && tc.tune.skew && st.KeptRuns <= tc.workers {
			t.Fatalf("%d workers %+v: %d runs kept, want the first accumulator's keys cut in pieces", tc.workers, tc.tune, st.KeptRuns)
		}
		if tc.tune != nil && (tc.tune.bufPairs > 0 && tc.tune.bufPairs < 500 || tc.tune.direct > 0 && tc.tune.direct < 1000) && st.Spills < 20 {
			t.Fatalf("%+v: only %d spills", tc.tune, st.Spills)
		}
		if st.Subsampled != wst.Subsampled || st.PositivePairs != wst.PositivePairs || st.Tokens != wst.Tokens {
			t.Fatalf("stats differ: %+v vs %+v", st, wst)
		}
	}
	// A different seed changes the subsampling and the negatives.
	cfg.Seed = 43
	other, _ := runCounter(t, cfg, cp.counts, cp.docs, 1, nil)
	if len(other) == len(want) {
		same := true
		for i := range other {
			same = same && other[i] == want[i]
		}
		if same {
			t.Fatal("seed 43 gives the same rows as seed 42")
		}
	}
}

func TestTinyBudgetSpills(t *testing.T) {
	cp := newCorpus(11, 1000, 400, 200, false)
	cfg := Config{Window: 5, Negatives: 1, Seed: 7, TempDir: t.TempDir()}
	want, _ := runCounter(t, cfg, cp.counts, cp.docs, 1, nil)
	cfg.Memory = MinMemory
	cfg.Workers = 2
	got, st := runCounter(t, cfg, cp.counts, cp.docs, 2, nil)
	if st.Spills < 2 {
		t.Fatalf("a %d-byte budget spilled only %d times", cfg.Memory, st.Spills)
	}
	rowsEqual(t, "tiny budget", want, got)
}

// TestWorkersWithinBudget: a budget too small for every worker asked for
// serves as many as it holds, one more not fitting, and they count what one
// worker does; a large one serves at most MaxWorkers; a budget too small
// for even one is an error that names no workers.
func TestWorkersWithinBudget(t *testing.T) {
	cp := newCorpus(13, 2000, 600, 150, false)
	cfg := Config{Window: 5, Negatives: 1, Seed: 11, Memory: 4 << 20, TempDir: t.TempDir()}
	want, _ := runCounter(t, cfg, cp.counts, cp.docs, 1, nil)
	cfg.Workers = 64
	c, err := New(cfg, cp.counts)
	if err != nil {
		t.Fatal(err)
	}
	w := c.Workers()
	c.Close()
	if w <= 1 || w >= cfg.Workers {
		t.Fatalf("a %d-byte budget for %d tokens took %d of %d workers; want more than one and fewer than all",
			cfg.Memory, len(cp.counts), w, cfg.Workers)
	}
	if err := c.layout(w + 1); err == nil {
		t.Fatalf("%d workers were taken, but the budget holds %d", w, w+1)
	}
	// Each worker counting pairs from the start spills its share.
	got, st := runCounter(t, cfg, cp.counts, cp.docs, 2, &tuning{dense: -1})
	if st.Spills == 0 {
		t.Fatalf("%d workers on a %d-byte budget never spilled", w, cfg.Memory)
	}
	rowsEqual(t, fmt.Sprintf("%d workers", w), want, got)

	// Memory held outside the counter by every worker but the first comes
	// off the budget: at 1 MiB each, 4 MiB holds 4 workers (a fifth would
	// leave the counter nothing), and a lone worker is not charged.
	for _, tc := range []struct {
		memory, workerBytes int64
		want                int
	}{{4 << 20, 1 << 20, 4}, {MinMemory << 1, 1 << 30, 1}} {
		cfg := Config{Window: 5, Memory: tc.memory, Workers: 64, WorkerBytes: tc.workerBytes}
		c, err := New(cfg, cp.counts)
		if err != nil {
			t.Fatalf("%d bytes, %d held by each worker: %v", tc.memory, tc.workerBytes, err)
		}
		if c.Workers() != tc.want {
			t.Fatalf("%d bytes, %d held by each worker: %d workers, want %d", tc.memory, tc.workerBytes, c.Workers(), tc.want)
		}
		c.Close()
	}

	cfg.Memory, cfg.Workers = DefaultMemory, 5000
	if c, err = New(cfg, cp.counts); err != nil || c.Workers() != MaxWorkers {
		t.Fatalf("%d workers asked for with a budget of %d: %v; want %d", cfg.Workers, cfg.Memory, err, MaxWorkers)
	}
	c.Close()

	cfg.Memory = MinMemory
	_, err = New(cfg, newCorpus(13, 6000, 10, 10, false).counts)
	if err == nil || !strings.Contains(err.Error(), "too small for a vocabulary of 6000 tokens") || strings.Contains(err.Error(), "workers") {
		t.Fatalf("a %d-byte budget for 6000 tokens: got error %v, want one that it is too small, naming no workers", cfg.Memory, err)
	}
}

// TestManyTargetsPerPartition counts a vocabulary larger than the merge's
// partitions, so that several workers merge partitions of several targets,
// some of them with no rows, from spill files and kept runs: the rows must
// be one worker's.
func TestManyTargetsPerPartition(t *testing.T) {
	cp := newCorpus(13, 3000, 500, 150, true)
	cfg := Config{Window: 3, Negatives: 2, Seed: 9, Workers: 1, TempDir: t.TempDir()}
	want, _ := runCounter(t, cfg, cp.counts, cp.docs, 1, nil)
	for _, tc := range []struct {
		workers int
		tune    *tuning
	}{
		{2, nil},
		{3, &tuning{dense: 32, bufPairs: 2000, fanIn: 6}},
	} {
		cfg.Workers = tc.workers
		c, err := New(cfg, cp.counts)
		if err != nil {
			t.Fatal(err)
		}
		if p := len(c.parts) - 1; p != partitionsParallel {
			t.Fatalf("%d workers: %d partitions of %d targets, want %d", tc.workers, p, cp.v, partitionsParallel)
		}
		c.Close()
		got, st := runCounter(t, cfg, cp.counts, cp.docs, 3, tc.tune)
		if tc.tune != nil && st.Spills == 0 {
			t.Fatalf("%d workers %+v: no spill", tc.workers, tc.tune)
		}
		rowsEqual(t, fmt.Sprintf("%d workers %+v", tc.workers, tc.tune), want, got)
	}
}

// TestMergeBatchesBounded checks that the merge makes no more row batches
// than it has tokens, the look-ahead's and hotBatches, however slowly they
// are emitted: a single worker, which has no look-ahead, makes only
// hotBatches. Each batch is 384 KiB, and a merge that ran ahead of the
// emitter would also find its rows out of the cache. Four partitions of
// many batches each make the bound on the emitted one's batches matter:
// the test's batches are smaller than the merge's, testBatchRows.
func TestMergeBatchesBounded(t *testing.T) {
	const testBatchRows = 4096
	cp := newCorpus(13, 3000, 500, 150, true)
	cfg := Config{Window: 3, Negatives: 2, Seed: 9, Workers: 1, TempDir: t.TempDir()}
	want, _ := runCounter(t, cfg, cp.counts, cp.docs, 1, nil)
	if need := 20 * testBatchRows; len(want) < need {
		t.Fatalf("%d rows, want at least %d for the bound to matter", len(want), need)
	}
	for _, tc := range []struct{ workers, ahead, parts int }{{1, 0, 0}, {1, 0, 4}, {2, 3, 4}, {3, 5, 4}, {2, 3, 0}} {
		cfg.Workers = tc.workers
		batches := map[*formats.CountColumns]bool{}
		emitted := func(b *formats.CountColumns) {
			batches[b] = true
			time.Sleep(20 * time.Microsecond) // let the workers run ahead
		}
		// One worker's batches hold a page each; the bound needs many.
		tune := &tuning{dense: -1, ahead: tc.ahead, parts: tc.parts, batchCap: testBatchRows, emitted: emitted}
		got, _ := runCounter(t, cfg, cp.counts, cp.docs, 3, tune)
		rowsEqual(t, fmt.Sprintf("%d workers", tc.workers), want, got)
		if bound := tc.ahead + hotBatches; len(batches) > bound {
			t.Errorf("%d workers, look-ahead %d: %d distinct batches, want at most %d", tc.workers, tc.ahead, len(batches), bound)
		}
	}
}

// TestMergeLends checks that a merge on several workers that lends its
// batches gives the rows it emits otherwise, when the writer keeps many
// batches before it reads them: the merge must neither reuse a batch
// before its release nor read it after. One worker's merge emits.
func TestMergeLends(t *testing.T) {
	cp := newCorpus(15, 3000, 500, 150, true)
	cfg := Config{Window: 3, Negatives: 2, Seed: 5, Workers: 1, TempDir: t.TempDir()}
	want, _ := runCounter(t, cfg, cp.counts, cp.docs, 1, nil)
	for _, tc := range []struct{ workers, hold int }{{1, 3}, {2, 1}, {2, 7}, {3, 40}} {
		cfg.Workers = tc.workers
		lent := 0
		tune := &tuning{dense: -1, ahead: 3, parts: 8, batchCap: 1000, lend: tc.hold, lent: &lent}
		got, _ := runCounter(t, cfg, cp.counts, cp.docs, 2, tune)
		what := fmt.Sprintf("%d workers holding %d batches", tc.workers, tc.hold)
		rowsEqual(t, what, want, got)
		if tc.workers == 1 && lent != 0 || tc.workers > 1 && lent < len(want)/1000 {
			t.Errorf("%s: %d batches lent of %d rows", what, lent, len(want))
		}
	}
}

// TestMergePageBatches checks that a single merge worker's batches never
// cross a multiple of the batch size, so that each full one is a page of
// the output, and that the merge goes on as before when emit takes a
// batch's memory and leaves it other memory, as the Parquet writer does.
// Several workers' batches only keep to the batch size.
func TestMergePageBatches(t *testing.T) {
	cp := newCorpus(14, 2000, 400, 150, true)
	cfg := Config{Window: 3, Negatives: 1, Seed: 4, Workers: 1, TempDir: t.TempDir()}
	want, _ := runCounter(t, cfg, cp.counts, cp.docs, 1, nil)
	const batchCap = 1000
	for _, workers := range []int{1, 2} {
		cfg.Workers = workers
		var rows, full, taken int
		emitted := func(b *formats.CountColumns) {
			n := b.Len()
			if n > batchCap {
				t.Fatalf("%d workers: a batch of %d rows, more than %d", workers, n, batchCap)
			}
			if workers == 1 && rows/batchCap != (rows+n-1)/batchCap {
				t.Fatalf("one worker: a batch of rows [%d, %d) crosses a multiple of %d", rows, rows+n, batchCap)
			}
			rows += n
			if n == batchCap {
				full++
			}
			if full%2 == 1 {
				*b = formats.MakeCountColumns(batchCap)
				taken++
			}
		}
		const parts = 4
		got, _ := runCounter(t, cfg, cp.counts, cp.docs, 2, &tuning{dense: -1, parts: parts, batchCap: batchCap, emitted: emitted})
		rowsEqual(t, fmt.Sprintf("%d workers", workers), want, got)
		// Each partition but the first may start and end in mid-batch.
		if most := len(want)/batchCap - 2*parts; full < most || taken == 0 {
			t.Errorf("%d workers: %d full batches of %d rows (%d of them taken) in %d rows, want at least %d",
				workers, full, batchCap, taken, len(want), most)
		}
	}
}

// TestReserve checks that a buffer reserved at once, below, at and beyond
// its full size, counts what a growing one does, and that Reserve keeps to
// the budget's buffer size.
func TestReserve(t *testing.T) {
	cp := newCorpus(12, 500, 300, 120, true)
	cfg := Config{Window: 4, Negatives: 1, Seed: 3, Workers: 2, TempDir: t.TempDir()}
	want, _ := runCounter(t, cfg, cp.counts, cp.docs, 5, &tuning{dense: 20, bufPairs: 3000})
	for _, reserve := range []int64{100, 3000, 1 << 40} {
		got, st := runCounter(t, cfg, cp.counts, cp.docs, 5, &tuning{dense: 20, bufPairs: 3000, reserve: reserve})
		if st.Spills == 0 {
			t.Fatalf("reserve %d: no spill", reserve)
		}
		rowsEqual(t, fmt.Sprintf("reserve %d", reserve), want, got)
	}
	c, err := New(Config{Window: 4, Workers: 1, Memory: MinMemory}, cp.counts)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	a := c.NewAccumulator()
	a.Reserve(1 << 40)
	if a.direct == nil || a.direct.room() != c.directTokens+2*directPad {
		t.Fatalf("Reserve(2^40) left a store of %d words; the budget allows %d tokens", a.direct.room(), c.directTokens)
	}
	c.directTokens = 0
	c.accs = nil
	a = c.NewAccumulator()
	a.Reserve(1 << 40)
	if len(a.buf) != c.bufPairs {
		t.Fatalf("Reserve(2^40) left a buffer of %d pairs; the budget allows %d", len(a.buf), c.bufPairs)
	}
	// A store reserved below, at and beyond the documents' size.
	for _, reserve := range []int64{100, 4 * 3000, 1 << 40} {
		got, st := runCounter(t, cfg, cp.counts, cp.docs, 5, &tuning{direct: 3000, reserve: reserve})
		if st.Spills == 0 {
			t.Fatalf("store, reserve %d: no spill", reserve)
		}
		rowsEqual(t, fmt.Sprintf("store, reserve %d", reserve), want, got)
	}
}

// TestDenseOverflow: with harmonic weights over a window of 22 the scale is
// lcm(1..22) ≈ 2^27.8, so frequent pairs overflow the dense table's uint32
// counts after a few dozen co-occurrences and must be buffered instead.
func TestDenseOverflow(t *testing.T) {
	cp := newCorpus(51, 40, 60, 100, false)
	ref, _ := refCounts(cp.docs, 22, Harmonic)
	scale, _ := windowScale(22, Harmonic)
	overflow := false
	for _, x := range ref {
		f, _ := x.Float64()
		overflow = overflow || f*float64(scale[0]) > 1<<33
	}
	if !overflow {
		t.Fatal("no pair overflows a uint32 count; the test corpus is too small")
	}
	for _, workers := range []int{1, 2} {
		rows, _ := runCounter(t, Config{Window: 22, Weighting: Harmonic, Workers: workers, TempDir: t.TempDir()}, cp.counts, cp.docs, 3, nil)
		checkAgainstRef(t, fmt.Sprintf("harmonic W=22, %d workers", workers), rows, ref)
	}
}

// TestDenseWraps: with small window weights the dense counts are uint16,
// and the counts of frequent pairs go past 65535. A thousand runs of 30
// copies of token 2 wrap its diagonal entry twice; 65 536 documents "0 1"
// leave the entry of (0, 1) at exactly 0 in a single table, so the merge
// must insert it from its wraps alone.
func TestDenseWraps(t *testing.T) {
	var docs [][]int32
	for range 1 << 16 {
		docs = append(docs, []int32{0, 1})
	}
	for range 10 {
		docs = append(docs, []int32{0, 3})
	}
	for range 1000 {
		run := make([]int32, 30)
		for i := range run {
			run[i] = 2
		}
		docs = append(docs, run)
	}
	counts := []int64{1<<16 + 10, 1 << 16, 30000, 10}
	for _, wt := range []Weighting{Uniform, Linear} {
		cfg := Config{Window: 5, Weighting: wt, TempDir: t.TempDir()}
		c, err := New(cfg, counts)
		if err != nil {
			t.Fatal(err)
		}
		if c.denseBytes != 2 || c.dense < 3 {
			t.Fatalf("%v: dense counts of %d bytes for %d ids; the test needs uint16 counts for ids 0-2", wt, c.denseBytes, c.dense)
		}
		c.Close()
		ref, _ := refCounts(docs, 5, wt)
		for _, workers := range []int{1, 2} {
			cfg.Workers = workers
			rows, _ := runCounter(t, cfg, counts, docs, 5, nil)
			checkAgainstRef(t, fmt.Sprintf("%v, %d workers", wt, workers), rows, ref)
		}
	}
}

// TestSubsampleRate: the number of discarded tokens matches word2vec's
// keep probabilities within the binomial error.
func TestSubsampleRate(t *testing.T) {
	cp := newCorpus(61, 200, 2000, 100, true)
	const thr = 1e-3
	_, st := runCounter(t, Config{Subsample: thr, TempDir: t.TempDir()}, cp.counts, cp.docs, 1, nil)
	var total float64
	for _, n := range cp.counts {
		total += float64(n)
	}
	var mean, variance float64
	for _, doc := range cp.docs {
		for _, id := range doc {
			if id < 0 {
				continue
			}
			f := float64(cp.counts[id]) / total
			keep := min(1, (math.Sqrt(f/thr)+1)*thr/f)
			mean += 1 - keep
			variance += keep * (1 - keep)
		}
	}
	if z := (float64(st.Subsampled) - mean) / math.Sqrt(variance); math.Abs(z) > 5 || mean < 100 {
		t.Fatalf("%d tokens subsampled, expected %.1f ± %.1f (z = %.1f)", st.Subsampled, mean, math.Sqrt(variance), z)
	}
}

// TestMergeSorted merges random sorted groups, some empty, with shared and
// distinct contexts, after a prefix already in the output, against a map.
func TestMergeSorted(t *testing.T) {
	rng := rand.New(rand.NewPCG(21, 22))
	group := func(n int) ([]int32, []uint64) {
		seen := map[int32]bool{}
		var cs []int32
		for len(cs) < n {
			if c := int32(rng.IntN(3 * n)); !seen[c] {
				seen[c] = true
				cs = append(cs, c)
			}
		}
		slices.Sort(cs)
		vs := make([]uint64, n)
		for i := range vs {
			vs[i] = 1 + rng.Uint64N(1000)
		}
		return cs, vs
	}
	for trial := range 300 {
		ac, av := group(rng.IntN(40))
		bc, bv := group(rng.IntN(40))
		want := map[int32]uint64{}
		for i, c := range ac {
			want[c] += av[i]
		}
		for i, c := range bc {
			want[c] += bv[i]
		}
		pre := []int32{-5, -2}
		cs, vs := mergeSorted(ac, av, bc, bv, pre, []uint64{7, 8})
		if len(cs) != 2+len(want) || cs[0] != -5 || cs[1] != -2 || vs[0] != 7 || vs[1] != 8 {
			t.Fatalf("trial %d: %d contexts %v, want the prefix and %d", trial, len(cs), cs, len(want))
		}
		for i := 2; i < len(cs); i++ {
			if i > 2 && cs[i] <= cs[i-1] || vs[i] != want[cs[i]] {
				t.Fatalf("trial %d: position %d: context %d count %d, want increasing contexts with count %d", trial, i, cs[i], vs[i], want[cs[i]])
			}
		}
	}
}

// TestStoreWithinShare: a store grows to what the budget gives it and no
// further, spills its rows when full, and counts what a store that holds
// everything does.
func TestStoreWithinShare(t *testing.T) {
	cp := newCorpus(14, 3000, 3600, 150, false)
	cfg := Config{Window: 5, Negatives: 2, Seed: 5, Memory: 1 << 20, Workers: 1, TempDir: t.TempDir()}
	c, err := New(cfg, cp.counts)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if c.directTokens <= 0 {
		t.Fatalf("a %d-byte budget gives no store", cfg.Memory)
	}
	var total int
	for _, d := range cp.docs {
		total += len(d)
	}
	if total < 3*c.directTokens {
		t.Fatalf("the corpus has %d tokens, want more than three stores of %d", total, c.directTokens)
	}
	a := c.NewAccumulator()
	most := 0
	for i, d := range cp.docs {
		if err := a.Add(d, int64(i)); err != nil {
			t.Fatal(err)
		}
		if a.direct == nil {
			t.Fatalf("document %d (%d tokens) left the store", i, len(d))
		}
		if n := a.direct.room(); n > c.directTokens+2*directPad {
			t.Fatalf("after document %d the store has room for %d words; the budget gives %d tokens", i, n, c.directTokens)
		}
		most = max(most, a.direct.tokens())
	}
	if most < c.directTokens*3/4 {
		t.Fatalf("the store held at most %d tokens of %d", most, c.directTokens)
	}
	rows, st := finishRows(t, c)
	if st.Spills < 2 {
		t.Fatalf("%d spills of a store of %d tokens for %d tokens", st.Spills, c.directTokens, total)
	}
	cfg.Memory = 0
	want, _ := runCounter(t, cfg, cp.counts, cp.docs, 1, nil)
	rowsEqual(t, "stores spilled", want, rows)
}

// TestScanEntries compares scanEntries, which writes eight entries at a
// time with AVX-512 where it can, with the rows written out here: blocks of
// every length up to 70, entries empty, with positive counts only, with
// negatives only and with both, at scale 1 and at a scale that divides.
func TestScanEntries(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	for _, scale := range []float64{1, 2520} {
		for n := range 71 {
			blk := make([]uint64, n)
			for k := range blk {
				var pos, neg uint64
				if rng.IntN(2) == 0 {
					pos = rng.Uint64N(1 << 32)
				}
				if rng.IntN(2) == 0 {
					neg = rng.Uint64N(1 << 32)
				}
				blk[k] = neg<<32 | pos
			}
			const base, target = 1000, 17
			var wantCx []int32
			var wantNp, wantNn []float64
			var wantUnique int64
			for k, x := range blk {
				if x == 0 {
					continue
				}
				wantCx = append(wantCx, base+int32(k))
				p := float64(uint32(x))
				if scale != 1 {
					p /= scale
				}
				wantNp = append(wantNp, p)
				wantNn = append(wantNn, float64(x>>32))
				if uint32(x) != 0 {
					wantUnique++
				}
			}
			tg, cx := make([]int32, n), make([]int32, n)
			np, nn := make([]float64, n), make([]float64, n)
			rows, unique := scanEntries(blk, base, target, tg, cx, np, nn, scale)
			what := fmt.Sprintf("scale %v, %d entries", scale, n)
			if rows != len(wantCx) || unique != wantUnique {
				t.Fatalf("%s: %d rows, %d unique; want %d, %d", what, rows, unique, len(wantCx), wantUnique)
			}
			for i := range rows {
				if tg[i] != target || cx[i] != wantCx[i] || np[i] != wantNp[i] || nn[i] != wantNn[i] {
					t.Fatalf("%s: row %d is (%d, %d, %v, %v), want (%d, %d, %v, %v)", what, i, tg[i], cx[i], np[i], nn[i], target, wantCx[i], wantNp[i], wantNn[i])
				}
			}
			if slices.ContainsFunc(blk, func(x uint64) bool { return x != 0 }) {
				t.Fatalf("%s: entries left in the block", what)
			}
		}
	}
}

// TestBatchPool checks that the pool's batches are empty, have the room
// asked for, and do not overlap: filled to their room and one row past it
// (which must move that batch's columns), each keeps its own rows.
func TestBatchPool(t *testing.T) {
	const n, rows = 5, 7
	pool, release := batchPool(n, rows)
	defer release()
	if len(pool) != n {
		t.Fatalf("%d batches, want %d", len(pool), n)
	}
	row := func(b, i int) formats.CountRow {
		return formats.CountRow{TargetID: int32(b), ContextID: int32(i), NPos: float64(b*100 + i), NNeg: float64(-i)}
	}
	for b, cols := range pool {
		if cols.Len() != 0 || cap(cols.Target) != rows || cap(cols.Context) != rows || cap(cols.NPos) != rows || cap(cols.NNeg) != rows {
			t.Fatalf("batch %d: %d rows, room for %d %d %d %d, want 0 and %d", b, cols.Len(),
				cap(cols.Target), cap(cols.Context), cap(cols.NPos), cap(cols.NNeg), rows)
		}
		for i := range rows {
			cols.AppendRows([]formats.CountRow{row(b, i)})
		}
	}
	pool[0].AppendRows([]formats.CountRow{row(0, rows)})
	for b, cols := range pool {
		want := rows + int(b2u(b == 0))
		if cols.Len() != want {
			t.Fatalf("batch %d: %d rows, want %d", b, cols.Len(), want)
		}
		for i := range want {
			if got := cols.Row(i); got != row(b, i) {
				t.Fatalf("batch %d row %d: %+v, want %+v", b, i, got, row(b, i))
			}
		}
	}
}

// TestStoreWidths: stores hold 16-bit words where the vocabulary's ids and
// the gap's fit, and turn wide at the first gap where they do not (65536
// tokens), counting what they held first; either way the counts are the
// reference's. Ids span the whole vocabulary, its last included.
func TestStoreWidths(t *testing.T) {
	for _, tc := range []struct {
		v        int
		wantWide bool
	}{
		{v: 65535},
		{v: 65536, wantWide: true},
		{v: 65537, wantWide: true},
	} {
		r := rand.New(rand.NewPCG(uint64(tc.v), 8))
		var docs [][]int32
		for i := range 300 {
			doc := make([]int32, 1+r.IntN(30))
			for p := range doc {
				// Mostly a few ids, so that pairs repeat, and now and then
				// any id, the last ones most of those.
				switch k := r.IntN(10); {
				case k < 6:
					doc[p] = int32(r.IntN(20))
				case k < 8:
					doc[p] = int32(tc.v - 1 - r.IntN(3))
				default:
					doc[p] = int32(r.IntN(tc.v))
				}
				// Gaps from the 100th document on.
				if i >= 100 && r.IntN(8) == 0 {
					doc[p] = -1
				}
			}
			docs = append(docs, doc)
		}
		counts := make([]int64, tc.v)
		for i := range counts {
			counts[i] = int64(tc.v - i)
		}
		ref, _ := refCounts(docs, 3, Linear)
		cfg := Config{Window: 3, Weighting: Linear, Negatives: 0, Workers: 1, Memory: 64 << 20, TempDir: t.TempDir()}
		c, err := New(cfg, counts)
		if err != nil {
			t.Fatal(err)
		}
		if !c.narrow != (tc.v > narrowIDs) {
			t.Fatalf("V=%d: narrow stores %v", tc.v, c.narrow)
		}
		a := c.NewAccumulator()
		for i, d := range docs {
			if err := a.Add(d, int64(i)); err != nil {
				t.Fatal(err)
			}
			if i == 99 && a.direct.tokens() == 0 {
				t.Fatalf("V=%d: the store holds nothing before the gaps", tc.v)
			}
		}
		if a.direct == nil || a.direct.isWide != tc.wantWide {
			t.Fatalf("V=%d: the store ended wide=%v, want %v", tc.v, a.direct != nil && a.direct.isWide, tc.wantWide)
		}
		wantSpills := 0
		if tc.v == narrowIDs {
			wantSpills = 1 // the narrow store, at the first gap
		}
		rows, st := finishRows(t, c)
		if st.Spills != wantSpills {
			t.Fatalf("V=%d: %d spills, want %d", tc.v, st.Spills, wantSpills)
		}
		checkAgainstRef(t, fmt.Sprintf("V=%d", tc.v), rows, ref)
	}
}

// TestIndexRanges: the index of a store, filled one range of targets at a
// time, holds for each target exactly its positions, in order, and no
// more memory than the largest range; there are as many ranges as the
// budget needs.
func TestIndexRanges(t *testing.T) {
	cp := newCorpus(21, 500, 400, 60, true)
	for _, ranges := range []int{1, 2, 5} {
		c, err := New(Config{Window: 4, Workers: 1, TempDir: t.TempDir()}, cp.counts)
		if err != nil {
			t.Fatal(err)
		}
		c.indexRanges = ranges
		var sum int64
		for _, n := range cp.counts {
			sum += n
		}
		c.parts = partitions(cp.counts, float64(sum), 50)
		a := c.NewAccumulator()
		// Where each target is, the store's pads first.
		want := make([][]uint32, c.v)
		p := uint32(directPad)
		for i, d := range cp.docs {
			if err := a.Add(d, int64(i)); err != nil {
				t.Fatal(err)
			}
			for _, x := range d {
				if x >= 0 {
					want[x] = append(want[x], p)
				}
				p++
			}
		}
		d := a.direct
		d.index(c.v)
		stores := []*directStore{d}
		chunks := c.indexChunks(stores)
		if len(chunks)-1 < ranges || chunks[0] != 0 || chunks[len(chunks)-1] != len(c.parts)-1 {
			t.Fatalf("%d ranges: chunks %v of %d partitions", ranges, chunks, len(c.parts)-1)
		}
		// A range is at most 1/ranges of the positions, or one partition.
		var total, biggest uint32
		for q := range len(c.parts) - 1 {
			n := d.off[c.parts[q+1]] - d.off[c.parts[q]]
			total += n
			biggest = max(biggest, n)
		}
		room := d.chunkRoom(c.parts, chunks)
		if limit := max(total/uint32(ranges), biggest); uint32(room) > limit {
			t.Fatalf("%d ranges: a range of %d positions, over %d", ranges, room, limit)
		}
		// A budget that holds a third of the index takes three ranges or
		// more, each within it.
		saved := c.storeBytes
		c.indexRanges, c.storeBytes = 1, d.bytes(int(total/3))
		if fit := c.indexChunks(stores); len(fit)-1 < 3 || d.bytes(d.chunkRoom(c.parts, fit)) > c.storeBytes {
			t.Fatalf("a budget for %d of %d positions: ranges at %v, of up to %d positions", total/3, total, fit, d.chunkRoom(c.parts, fit))
		}
		// A budget that holds none ends with a partition a range.
		c.storeBytes = 0
		if fine := c.indexChunks(stores); uint32(d.chunkRoom(c.parts, fine)) > biggest {
			t.Fatalf("no budget: ranges at %v, of up to %d positions, over a partition's %d", fine, d.chunkRoom(c.parts, fine), biggest)
		}
		c.indexRanges, c.storeBytes = ranges, saved
		for k := range len(chunks) - 1 {
			t0, t1 := c.parts[chunks[k]], c.parts[chunks[k+1]]
			d.place(t0, t1, room)
			if cap(d.pos) != room+1 {
				t.Fatalf("%d ranges: the index has room for %d positions, want %d", ranges, cap(d.pos), room+1)
			}
			for tg := t0; tg < t1; tg++ {
				got := d.pos[d.off[tg]-d.base : d.off[tg+1]-d.base]
				if !slices.Equal(got, want[tg]) {
					t.Fatalf("%d ranges: target %d at %v, want %v", ranges, tg, got, want[tg])
				}
			}
		}
		c.Close()
	}
}
