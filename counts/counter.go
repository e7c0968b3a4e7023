package counts

import (
	"errors"
	"fmt"
	"math"
	"math/bits"
	"os"
	"slices"
	"sync"
	"sync/atomic"
	"unsafe"

	"github.com/pwe-project/pwe/formats"
	"github.com/pwe-project/pwe/internal/bytesize"
	"github.com/pwe-project/pwe/internal/cleanup"
	"github.com/pwe-project/pwe/internal/pages"
)

// Stats summarise a counting run.
type Stats struct {
	// Documents is the number of Add calls.
	Documents int64
	// Tokens counts the in-vocabulary ids added (-1 gaps excluded), before
	// subsampling.
	Tokens int64
	// Subsampled counts the tokens discarded by subsampling.
	Subsampled int64
	// PositivePairs counts ordered positive pairs, unweighted.
	PositivePairs int64
	// UniquePairs counts output rows with n_pos > 0.
	UniquePairs int64
	// Rows counts output rows (n_pos > 0 or n_neg > 0).
	Rows int64
	// Spills counts the sorted runs written to temporary files, including
	// intermediate merges.
	Spills int
	// SpilledBytes is their total size.
	SpilledBytes int64
	// KeptRuns counts the runs of the keys left at the end, which stay in
	// memory (in pieces, about one per worker).
	KeptRuns int
	// DenseSize is F: pairs of ids both below F are counted in a dense
	// table rather than spilled.
	DenseSize int
}

// Counter aggregates positive pairs from many accumulators and, in Finish,
// merges them, draws the negatives and emits the rows in order.
type Counter struct {
	cfg     Config
	v       int
	weights []uint64 // integer weight per distance 1..W; weights[0] is the scale
	scale   uint64
	idBits  uint
	dBits   uint
	keepThr []uint64 // subsampling: keep a token when its hash < keepThr[id]; nil = off
	neg     *negTable
	parts   []int32 // target partitions: [parts[p], parts[p+1])
	dense   int     // F
	// denseBytes is the size of a dense table's count: 2 or 4.
	denseBytes int
	bufPairs   int // pair buffer entries per accumulator
	// directTokens is the most tokens an accumulator keeps as they are
	// (direct.go), in narrow words if narrow; 0 when it counts pairs from
	// the start. A store that turns wide keeps at most wideTokens.
	directTokens, wideTokens int
	narrow                   bool
	// storeBytes is the memory of a store and its index.
	storeBytes int64
	// indexRanges is the least number of ranges of targets whose indices
	// a store holds one at a time (1; more in tests).
	indexRanges int
	// releaseAlign is the alignment, in bytes, of the blocks of the index
	// that the merge gives back behind it (indexRelease): whole huge
	// pages (4 KiB in tests, to give back small indices too).
	releaseAlign int
	// indexGiven counts the positions of the index that the merge has
	// given back (for tests).
	indexGiven atomic.Int64
	// fuseBelow is the weighted total of a target's positive pairs below
	// which the merge of stores draws its negatives into the same tally
	// (1<<32; less in tests).
	fuseBelow uint64
	// scanRow is the number of pairs (2W a target's occurrence) from
	// which a row counted from stores is drained by a scan of the tally
	// rather than through its bitsets (V/4; other values in tests).
	scanRow  int
	runBuf   int // bytes of a spill's write buffer
	readBuf  int // bytes per merge cursor
	fanIn    int // sections one merge reads at once
	ahead    int // row batches the merge may hold for partitions not yet emitted
	batchCap int // rows per batch
	progress Progress
	lend     func(cols *formats.CountColumns, release func()) error

	mu      sync.Mutex
	dir     string
	runs    []*run
	accs    []*Accumulator
	spills  int
	spilled int64
	kept    int
	ended   bool
}

// Memory layout. Of the budget M, what the workers beyond the first hold
// outside the counter (Config.WorkerBytes each) and the vocabulary-sized
// tables (negative sampling, subsampling, partition map: about 48 bytes per
// token) come off the top. Of the rest, 3/4 is shared equally by the
// accumulators, each spending at most a quarter of its share on the dense
// table (and all of them 4 or 8 MiB at most, by the size of their counts),
// some on a spill's histograms and write buffer, and the rest on the pair
// buffer (8 bytes per pair, 8 of radix scratch, 4 for the transposition
// index); the remaining 1/4 serves the merge workers (about 17 bytes per
// token each for tallies, plus the cursors' read buffers).
// Accumulator buffers are released before the merge starts, which reads
// the dense tables as they are. An accumulator that keeps its documents
// instead (direct.go) spends at most half its share on them and their
// index, with a tally of the vocabulary and a spill's write buffer; they
// stay through the merge.
const (
	tableBytesPerToken  = 48
	mergeBytesPerToken  = 17
	bytesPerPair        = 20
	maxDense            = 2048
	minReadBuf          = 1 << 10
	maxReadBuf          = 256 << 10
	minBufPairs         = 1 << 10
	partitionsOneWorker = 16
	partitionsParallel  = 1024
)

// New prepares a counter for a vocabulary whose ids are ordered by
// descending count; vocabCounts[id] is the token's corpus count.
func New(cfg Config, vocabCounts []int64) (*Counter, error) {
	cfg = cfg.WithDefaults()
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	v := len(vocabCounts)
	if v == 0 {
		return nil, ErrEmptyVocabulary
	}
	if v > math.MaxInt32 {
		return nil, fmt.Errorf("counts: vocabulary of %d tokens exceeds int32 ids", v)
	}
	var total float64
	for id, n := range vocabCounts {
		if n < 0 {
			return nil, fmt.Errorf("counts: vocabulary id %d has negative count %d", id, n)
		}
		total += float64(n)
	}
	c := &Counter{cfg: cfg, v: v}
	var err error
	if c.weights, err = windowScale(cfg.Window, cfg.Weighting); err != nil {
		return nil, err
	}
	c.scale = c.weights[0]
	c.idBits = uint(max(1, bits.Len32(uint32(v-1))))
	if cfg.Weighting != Uniform {
		c.dBits = uint(bits.Len(uint(cfg.Window)))
	}
	c.denseBytes = denseBytes(slices.Max(c.weights[1:]))
	if 2*c.idBits+c.dBits > 64 {
		return nil, fmt.Errorf("counts: a vocabulary of %d tokens with a weighted window of %d does not fit 64-bit pair keys", v, cfg.Window)
	}
	if cfg.Negatives > 0 {
		if cfg.NegMode == Expected && v > MaxExpectedVocab && !cfg.ForceExpected {
			return nil, fmt.Errorf("counts: expected negatives write V*V rows: %d x %d = %d; use sampled negatives, or force them (--force; force_expected in a configuration file)",
				v, v, int64(v)*int64(v))
		}
		var ok bool
		if c.neg, ok = newNegTable(vocabCounts, *cfg.NegPower); !ok {
			return nil, errors.New("counts: every vocabulary count is zero, so there is no distribution to draw negatives from")
		}
	}
	if cfg.Subsample > 0 && total > 0 {
		c.keepThr = make([]uint64, v)
		for id, n := range vocabCounts {
			c.keepThr[id] = keepProbThreshold(float64(n)/total, cfg.Subsample)
		}
	}
	if err := c.chooseWorkers(); err != nil {
		return nil, err
	}
	// The merge emits partitions in order, and a worker merging one ahead
	// of the partition being emitted stops when its rows fill the merge's
	// look-ahead (c.ahead batches), so partitions must be small enough for
	// their rows to fit in it. On ten copies of bench-raw at 256 MiB with
	// 32 partitions (16 per worker), where the largest held 14 million
	// rows against a look-ahead of 660 thousand, the two merge workers
	// waited 3.1 s of their 7 and count took 6.05-6.42 s; with 1024,
	// 5.52-5.81 s, and bench-raw itself no longer. One worker has nothing
	// to wait for, and reading 1024 partitions of each spill file took it
	// 2-4 % longer there.
	parts := partitionsOneWorker
	if c.cfg.Workers > 1 {
		parts = partitionsParallel
	}
	c.parts = partitions(vocabCounts, total, min(v, parts))
	return c, nil
}

// chooseWorkers lays out the budget for as many of cfg.Workers workers as
// it holds: each needs tables the size of the vocabulary for the merge, so
// a budget that suits a few cores cannot serve a hundred. With fewer
// workers the output is the same, only slower to make.
func (c *Counter) chooseWorkers() error {
	var err error
	for w := min(c.cfg.Workers, MaxWorkers); w >= 1; w-- {
		if err = c.layout(w); err == nil {
			c.cfg.Workers = w
			return nil
		}
	}
	return err
}

// Workers is the number of workers the memory budget holds, at most
// Config.Workers: the accumulators NewAccumulator may make, and the
// goroutines of the merge.
func (c *Counter) Workers() int { return c.cfg.Workers }

// keepProbThreshold returns word2vec's keep probability (sqrt(f/t)+1)*t/f
// as a threshold on a uniform 64-bit hash; MaxUint64 means always keep.
func keepProbThreshold(f, t float64) uint64 {
	if f <= 0 {
		return math.MaxUint64
	}
	p := (math.Sqrt(f/t) + 1) * t / f
	if p >= 1 {
		return math.MaxUint64
	}
	return uint64(p * 0x1p64)
}

// partitions splits the targets into ranges of about equal expected work,
// taken as proportional to the token's count plus the average count.
func partitions(counts []int64, total float64, p int) []int32 {
	v := len(counts)
	avg := total/float64(v) + 1
	sum := total + avg*float64(v)
	parts := []int32{0}
	acc := 0.0
	for id, n := range counts {
		acc += float64(n) + avg
		k := len(parts)
		if k < p && id+1 < v && acc >= sum*float64(k)/float64(p) {
			parts = append(parts, int32(id+1))
		}
	}
	return append(parts, int32(v))
}

// layout divides the memory budget among workers workers, or reports
// that it cannot.
func (c *Counter) layout(workers int) error {
	w := int64(workers)
	m := c.cfg.Memory - (w-1)*c.cfg.WorkerBytes
	v := int64(c.v)
	avail := m - tableBytesPerToken*v
	share := avail * 3 / 4 / w
	mergeShare := avail/4/w - mergeBytesPerToken*v
	if share <= 0 || mergeShare < 8*minReadBuf {
		return fmt.Errorf("counts: memory budget of %s is too small for a vocabulary of %d tokens%s", bytesize.Format(c.cfg.Memory), v, onWorkers(w))
	}
	size := int64(c.denseBytes)
	f := int64(math.Sqrt(float64(share) / float64(size) / 2))
	for f > 0 && f*(f+1)/2*size > share/4 {
		f--
	}
	// The workers' dense tables together hold at most maxDense^2/2
	// entries (maxDense ids for one worker, maxDense/√2 each for two): on
	// two threads, two tables of maxDense crowded each other out of the
	// shared cache, and counting took 3 % more CPU and wall time.
	c.dense = int(min(f, int64(maxDense/math.Sqrt(float64(w))), v))
	// A spill's write buffer: at most a sixteenth of the share, so that
	// small budgets keep room for pairs.
	c.runBuf = int(min(runBufSize, share/16))
	rest := share - int64(c.dense*(c.dense+1)/2)*size - 4*(v+1) - 4*int64(radixHistLen(2*c.idBits+c.dBits)) - int64(c.runBuf)
	c.bufPairs = int(rest / bytesPerPair)
	c.narrow = c.v <= narrowIDs
	c.storeBytes = storeBytes(share, c.v, c.runBuf)
	c.wideTokens = directTokens(c.storeBytes, c.cfg.Window, wideBytesPer8)
	c.directTokens = c.wideTokens
	if c.narrow {
		c.directTokens = directTokens(c.storeBytes, c.cfg.Window, narrowBytesPer8)
	}
	c.indexRanges = 1
	c.releaseAlign = pages.HugeSize
	c.fuseBelow = 1 << 32
	c.scanRow = max(1, c.v/4)
	if c.bufPairs < minBufPairs {
		return fmt.Errorf("counts: memory budget of %s leaves room for only %d buffered pairs (vocabulary of %d tokens%s)",
			bytesize.Format(c.cfg.Memory), max(c.bufPairs, 0), v, onWorkers(w))
	}
	// Partitions are emitted in order, so the workers merging the
	// partitions after the one being written must keep their rows until
	// then; up to 1/16 of the budget (the accumulators' buffers are free by
	// then), and at most maxAheadBytes, lets them run ahead instead of
	// waiting. A single worker merges
	// the partitions in the order they are emitted and has nothing to run
	// ahead of: rows made ahead only leave the cache before they are
	// written (on one thread, count took 3-5 % more CPU with the look-ahead
	// on bench-raw, and 9-10 % on ten copies of it).
	// A single worker's batches end at the writer's page boundaries and
	// hold a page each, which emit can then take without a copy (see
	// formats.CountsWriter.TakeColumns): on bench-raw, count on one thread
	// took 1-7 % less CPU (5 % in three sets of four) than with batches of
	// batchRows copied into pages.
	c.ahead, c.batchCap = 0, formats.CountsPageRows
	// The batches lent to the writer (LendTo) come out of the same room.
	if w > 1 {
		c.batchCap = batchRows
		batch := batchRows * int64(unsafe.Sizeof(formats.CountRow{}))
		c.ahead = int(max(4*w, min(avail/16, maxAheadBytes)/batch-lentBatches))
	}
	c.readBuf = int(min(max(mergeShare/64, minReadBuf), maxReadBuf))
	c.fanIn = int(mergeShare / int64(c.readBuf))
	return nil
}

// maxAheadBytes bounds the merge's look-ahead. A larger budget had let it
// grow with the budget, to 169 batches (66 MB) at 1 GiB, which the workers
// did fill, in fresh memory, without gaining time: count on bench-raw, two
// threads, 1 GiB, took 1.950 CPU-s and 159 MiB with 42 batches against
// 2.130 and 204 MiB with 169 (medians of 8 alternating runs); at 256 MiB,
// 10, 20 and 41 batches took 1.940, 1.965 and 1.905 CPU-s.
const maxAheadBytes = 16 << 20

// onWorkers names the workers of a budget that is too small, unless there
// is only one.
func onWorkers(w int64) string {
	if w == 1 {
		return ""
	}
	return fmt.Sprintf(", %d workers", w)
}

// NewAccumulator returns a counting buffer for one goroutine. At most
// Workers() accumulators may be created; that limit is what the memory
// budget was divided by, so exceeding it panics.
func (c *Counter) NewAccumulator() *Accumulator {
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.accs) >= c.cfg.Workers {
		panic(fmt.Sprintf("counts: more than %d accumulators (Counter.Workers)", c.cfg.Workers))
	}
	if c.ended {
		panic("counts: NewAccumulator after Finish or Close")
	}
	a := newAccumulator(c)
	c.accs = append(c.accs, a)
	return a
}

// createRunFile opens a new spill file in the counter's private temporary
// directory, creating the directory on first use.
func (c *Counter) createRunFile() (*os.File, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.ended {
		return nil, errors.New("counts: spill after Finish or Close")
	}
	if c.dir == "" {
		dir, err := os.MkdirTemp(c.cfg.TempDir, "pwe-counts-")
		if err != nil {
			return nil, fmt.Errorf("counts: spill directory: %w", err)
		}
		cleanup.Add(dir)
		c.dir = dir
	}
	f, err := os.CreateTemp(c.dir, "run-*")
	if err != nil {
		return nil, fmt.Errorf("counts: spill file: %w", err)
	}
	return f, nil
}

func (c *Counter) addRun(r *run, nBytes int64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.runs = append(c.runs, r)
	c.spills++
	c.spilled += nBytes
}

// Close removes the temporary files. It is safe to call after Finish and
// more than once.
func (c *Counter) Close() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.ended = true
	var errs []error
	for _, r := range c.runs {
		if r.f != nil {
			errs = append(errs, r.f.Close())
		}
	}
	c.runs = nil
	if c.dir != "" {
		errs = append(errs, os.RemoveAll(c.dir))
		cleanup.Forget(c.dir)
		c.dir = ""
	}
	for _, a := range c.accs {
		// A store still here was never merged. Finish's release only drops
		// the accumulator's hold on its store, which the merge still reads,
		// and frees the store itself after the merge.
		if a.direct != nil {
			a.direct.free()
		}
		a.release()
	}
	return errors.Join(errs...)
}
