package counts

import (
	"context"
	"math"
	"math/big"
	"math/rand/v2"
	"sync"
	"testing"

	"gonum.org/v1/gonum/stat/distuv"

	"github.com/pwe-project/pwe/formats"
)

// corpus is a random test corpus: Zipf ids over v tokens, documents of
// random length (0 and 1 included), optional -1 gaps.
type corpus struct {
	v      int
	docs   [][]int32
	counts []int64 // vocabulary counts, descending
}

func newCorpus(seed uint64, v, nDocs, maxLen int, gaps bool) corpus {
	r := rand.New(rand.NewPCG(seed, 17))
	z := rand.NewZipf(r, 1.1, 2, uint64(v-1))
	c := corpus{v: v, counts: make([]int64, v)}
	for range nDocs {
		n := r.IntN(maxLen + 1)
		if r.IntN(5) == 0 {
			n = r.IntN(2)
		}
		doc := make([]int32, n)
		for i := range doc {
			if gaps && r.IntN(6) == 0 {
				doc[i] = -1
				continue
			}
			doc[i] = int32(z.Uint64())
			c.counts[doc[i]]++
		}
		c.docs = append(c.docs, doc)
	}
	// The counter wants counts non-increasing in id, as a vocabulary has;
	// Zipf ids are nearly so, and a rank-preserving fix-up makes it exact.
	for i := 1; i < v; i++ {
		c.counts[i] = min(c.counts[i], c.counts[i-1])
	}
	for i := range c.counts {
		c.counts[i]++
	}
	return c
}

// refWeight is the window weight from its definition, as a rational.
func refWeight(wt Weighting, w, d int) *big.Rat {
	switch wt {
	case Linear:
		x := new(big.Rat).Sub(big.NewRat(1, 1), big.NewRat(int64(d-1), int64(w)))
		if x.Sign() < 0 {
			x.SetInt64(0)
		}
		return x
	case Harmonic:
		return big.NewRat(1, int64(d))
	default:
		return big.NewRat(1, 1)
	}
}

// refCounts is the naive reference: every ordered pair of distinct
// positions within the window, weights summed as exact rationals.
func refCounts(docs [][]int32, w int, wt Weighting) (map[[2]int32]*big.Rat, int64) {
	m := map[[2]int32]*big.Rat{}
	var pairs int64
	for _, doc := range docs {
		for p := range doc {
			for q := range doc {
				d := p - q
				if d < 0 {
					d = -d
				}
				if p == q || d > w || doc[p] < 0 || doc[q] < 0 {
					continue
				}
				k := [2]int32{doc[p], doc[q]}
				if m[k] == nil {
					m[k] = new(big.Rat)
				}
				m[k].Add(m[k], refWeight(wt, w, d))
				pairs++
			}
		}
	}
	return m, pairs
}

// tuning overrides the memory layout to force code paths.
type tuning struct {
	dense, bufPairs, fanIn int
	// direct replaces the tokens an accumulator keeps as they are before
	// it counts pairs (0: pairs from the start).
	direct int
	// wide has the stores hold wide words whatever the vocabulary.
	wide bool
	// ranges, if positive, replaces the number of ranges of targets a
	// store's index holds at a time.
	ranges int
	// fuseBelow, if positive, replaces the weighted total below which
	// the merge of stores draws negatives into its own tally.
	fuseBelow uint64
	// scanRow, if not 0, replaces the pairs from which a row is drained
	// by a scan; -1 scans none.
	scanRow int
	reserve int64 // passed to every accumulator's Reserve
	// skew gives three documents in four to the first accumulator.
	skew bool
	// byLength gives the documents longer than a store (direct) to the
	// last accumulator, and the others to the rest.
	byLength bool
	// ahead, parts and batchCap, if positive, replace the merge's
	// look-ahead, its number of partitions and its rows per batch.
	ahead, parts, batchCap int
	// emitted, if not nil, sees every batch the merge emits.
	emitted func(*formats.CountColumns)
	// lend, if positive, has the merge lend its batches (LendTo) to a
	// writer that reads each only once it holds lend more, then scribbles
	// over it and releases it; lent counts the batches lent.
	lend int
	lent *int
	// given, if not nil, gets the number of the index's positions that
	// the merge gave back.
	given *int64
}

// runCounter counts docs with the given number of accumulators, each
// document going to a randomly chosen one (seeded by split), run
// concurrently, and returns all rows.
func runCounter(t testing.TB, cfg Config, counts []int64, docs [][]int32, split uint64, tune *tuning) ([]formats.CountRow, Stats) {
	t.Helper()
	c, err := New(cfg, counts)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if tune != nil {
		c.directTokens, c.wideTokens = tune.direct, tune.direct
		c.narrow = c.narrow && !tune.wide
		// The merge gives back the index in small pages, so that the
		// small stores of tests have some given back.
		c.releaseAlign = 4096
		if tune.ranges > 0 {
			c.indexRanges = tune.ranges
		}
		if tune.fuseBelow > 0 {
			c.fuseBelow = tune.fuseBelow
		}
		switch {
		case tune.scanRow < 0:
			c.scanRow = math.MaxInt
		case tune.scanRow > 0:
			c.scanRow = tune.scanRow
		}
		if tune.dense >= 0 {
			c.dense = min(tune.dense, c.v)
		}
		if tune.bufPairs > 0 {
			c.bufPairs = tune.bufPairs
		}
		if tune.fanIn > 0 {
			c.fanIn = tune.fanIn
		}
		if tune.ahead > 0 {
			c.ahead = tune.ahead
		}
		if tune.batchCap > 0 {
			c.batchCap = tune.batchCap
		}
		if tune.parts > 0 {
			var total int64
			for _, n := range counts {
				total += n
			}
			c.parts = partitions(counts, float64(total), tune.parts)
		}
	}
	workers := c.cfg.Workers
	accs := make([]*Accumulator, workers)
	for i := range accs {
		accs[i] = c.NewAccumulator()
		if tune != nil && tune.reserve > 0 {
			accs[i].Reserve(tune.reserve)
		}
	}
	owner := make([]int, len(docs))
	r := rand.New(rand.NewPCG(split, 3))
	for i := range owner {
		owner[i] = r.IntN(workers)
		if tune != nil && tune.skew && r.IntN(4) != 0 {
			owner[i] = 0
		}
		if tune != nil && tune.byLength {
			owner[i] = r.IntN(workers - 1)
			if len(docs[i]) > tune.direct {
				owner[i] = workers - 1
			}
		}
	}
	var wg sync.WaitGroup
	errs := make([]error, workers)
	for wi := range workers {
		wg.Go(func() {
			for i, doc := range docs {
				if owner[i] == wi {
					if err := accs[wi].Add(doc, int64(i)); err != nil {
						errs[wi] = err
						return
					}
				}
			}
		})
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	var rows []formats.CountRow
	type loan struct {
		cols     *formats.CountColumns
		release  func()
		released bool
	}
	var held []*loan
	read := func(l *loan) {
		rows = l.cols.AppendTo(rows)
		for i := range l.cols.Target {
			l.cols.Target[i], l.cols.NPos[i] = -1, math.NaN()
		}
		l.release()
	}
	if tune != nil && tune.lend > 0 {
		c.LendTo(func(cols *formats.CountColumns, release func()) error {
			l := &loan{cols: cols}
			l.release = func() {
				if l.released {
					t.Fatalf("a batch released twice")
				}
				l.released = true
				release()
			}
			held = append(held, l)
			*tune.lent++
			if len(held) > tune.lend {
				read(held[0])
				held = held[1:]
			}
			return nil
		})
	}
	st, err := c.Finish(context.Background(), func(b *formats.CountColumns) error {
		rows = b.AppendTo(rows)
		if tune != nil && tune.emitted != nil {
			tune.emitted(b)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if tune != nil && tune.given != nil {
		*tune.given = c.indexGiven.Load()
	}
	for _, l := range held {
		read(l)
	}
	held = nil
	for i := range rows {
		var prev *formats.CountRow
		if i > 0 {
			prev = &rows[i-1]
		}
		if err := formats.CheckCountRow(rows[i], prev, len(counts)); err != nil {
			t.Fatalf("row %d: %v", i, err)
		}
		if rows[i].NPos == 0 && rows[i].NNeg == 0 {
			t.Fatalf("row %d: %+v has no counts", i, rows[i])
		}
	}
	return rows, st
}

func rowsEqual(t *testing.T, what string, a, b []formats.CountRow) {
	t.Helper()
	if len(a) != len(b) {
		t.Fatalf("%s: %d rows vs %d", what, len(a), len(b))
	}
	for i := range a {
		if a[i] != b[i] {
			t.Fatalf("%s: row %d: %+v vs %+v", what, i, a[i], b[i])
		}
	}
}

// chiSquareCritical returns the upper alpha quantile of chi-square with df
// degrees of freedom.
func chiSquareCritical(df int, alpha float64) float64 {
	return distuv.ChiSquared{K: float64(df)}.Quantile(1 - alpha)
}

// finishRows finishes c and returns all its rows.
func finishRows(t *testing.T, c *Counter) ([]formats.CountRow, Stats) {
	t.Helper()
	var rows []formats.CountRow
	st, err := c.Finish(context.Background(), func(b *formats.CountColumns) error {
		rows = b.AppendTo(rows)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return rows, st
}
