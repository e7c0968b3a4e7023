package stages

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/pwe-project/pwe/formats"
	"github.com/pwe-project/pwe/formats/input"
	"github.com/pwe-project/pwe/internal/bytesize"
	"github.com/pwe-project/pwe/tokenize"
)

// TokenizeConfig configures the tokenize stage: text to vocab.parquet.
type TokenizeConfig struct {
	// Input is the corpus; a configuration file names it once, for the
	// whole run, in its own section.
	Input     TextInput       `json:"input" yaml:"-"`
	Tokenizer TokenizerConfig `json:"tokenizer" yaml:"tokenizer"`
	// MaxVocab keeps the MaxVocab most frequent tokens (0: no limit).
	MaxVocab int `json:"max_vocab" yaml:"max_vocab"`
	// MinCount drops tokens seen fewer times (default 1).
	MinCount int64 `json:"min_count" yaml:"min_count"`

	// Output is the path of vocab.parquet, or "-" for an Arrow stream on
	// Stdout (default os.Stdout).
	Output string    `json:"-" yaml:"-"`
	Stdout io.Writer `json:"-" yaml:"-"`
	// Tokens, if set, is the path of a token stream to write as well: the
	// corpus as token ids, which the count stage reads instead of the text
	// (CountConfig.Tokens).
	Tokens string `json:"-" yaml:"-"`
	// Threads tokenise in parallel (0: every core). The vocabulary does not
	// depend on it.
	Threads int `json:"-" yaml:"-"`
	// Memory bounds the tables of distinct tokens (default 1 GiB): past a
	// quarter of it (their capacity, the garbage of their growth and a
	// spill's sort take the rest) their counts are spilled to TempDir
	// (default the system's) and merged at the end. Neither changes the
	// vocabulary.
	Memory  int64  `json:"-" yaml:"-"`
	TempDir string `json:"-" yaml:"-"`
	// spillAt, if positive, replaces a quarter of the budget as the footprint at
	// which a table spills, for tests on small corpora.
	spillAt int64
	// Progress, if set, follows the reading of the corpus.
	Progress ReadProgress `json:"-" yaml:"-"`
}

// WithDefaults fills unset fields.
func (c TokenizeConfig) WithDefaults() TokenizeConfig {
	if c.MinCount == 0 {
		c.MinCount = 1
	}
	if c.Memory == 0 {
		c.Memory = DefaultMemory
	}
	if c.TempDir == "" {
		c.TempDir = os.TempDir()
	}
	c.Threads = threadsOrDefault(c.Threads)
	c.Tokenizer.Rules, c.Tokenizer.Unicode = tokenize.Rules, tokenize.Unicode
	return c
}

// MinTokenizeMemory is the smallest memory budget tokenize accepts.
const MinTokenizeMemory = 1 << 20

// Validate reports settings that cannot work.
func (c TokenizeConfig) Validate() error {
	if err := c.Input.Validate(); err != nil {
		return err
	}
	switch {
	case c.Output == "":
		return errors.New("no output: name vocab.parquet with -o")
	case c.Tokens == StdioPath:
		return errors.New("--tokens names a file: a token stream ends with its dictionary, which count reads first")
	case c.MaxVocab < 0:
		return fmt.Errorf("max-vocab %d is negative", c.MaxVocab)
	case c.MinCount < 1:
		return fmt.Errorf("min-count %d, want at least 1", c.MinCount)
	case c.Tokenizer.MinLength < 0:
		return fmt.Errorf("min-length %d is negative", c.Tokenizer.MinLength)
	case c.Memory < MinTokenizeMemory:
		return fmt.Errorf("memory budget %s, want at least %s", bytesize.Format(c.Memory), bytesize.Format(MinTokenizeMemory))
	}
	return nil
}

// TokenizeStats summarise a tokenize run; they are recorded as pwe.stats.
type TokenizeStats struct {
	Documents      int64 `json:"documents"`
	SkippedRecords int64 `json:"skipped_records"`
	Tokens         int64 `json:"tokens"`
	Dropped        int64 `json:"dropped_segments"`
	InvalidUTF8    int64 `json:"invalid_utf8_replaced"`
	// FirstInvalidUTF8 is where the first document with invalid UTF-8
	// is, as path:line (or row).
	FirstInvalidUTF8 string  `json:"first_invalid_utf8,omitempty"`
	DistinctTokens   int     `json:"distinct_tokens"`
	VocabSize        int     `json:"vocab_size"`
	VocabCoverage    float64 `json:"vocab_coverage"`
	// Spills counts the tables of distinct tokens spilled to disk for
	// want of memory; it depends on the budget, not on the corpus alone,
	// so it is reported but not recorded.
	Spills  int     `json:"-"`
	Seconds float64 `json:"-"` // wall time; not recorded, so reruns give the same bytes
	// Threads is the threads the run could use and Workers those that
	// tokenized: fewer when the memory budget holds no more.
	Threads int `json:"-"`
	Workers int `json:"-"`
}

// tokenizeWorkerBytes is what a tokenizing worker holds besides the tables
// of distinct tokens: batches of text in flight with their tokens and ids
// and, on text beyond ASCII, its memo of words. On bench-raw with --memory
// 16MiB, peak RSS grew by 2.2 MB a worker from 8 to 64 workers (71 to 195
// MB). The first worker's is part of the program's own memory, outside the
// budget.
const tokenizeWorkerBytes = 5 << 19

// tokenizeWorkers returns how many of threads workers a memory budget
// holds: those beyond the first take at most a quarter of it. The tables
// of distinct tokens spill past another quarter whatever the workers, so
// that a token stream's bytes do not depend on the threads, and their
// growth and spills take the rest.
func tokenizeWorkers(threads int, memory int64) int {
	return int(max(1, min(int64(threads), 1+memory/4/tokenizeWorkerBytes)))
}

// Tokenize reads the corpus, counts tokens and writes the vocabulary: the
// MaxVocab most frequent tokens with count at least MinCount, ids by
// descending count, ties broken by token bytes.
func Tokenize(ctx context.Context, cfg TokenizeConfig) (TokenizeStats, error) {
	start := time.Now()
	cfg = cfg.WithDefaults()
	stopwords := cfg.Tokenizer.StopwordsFile // load clears it
	if err := cfg.Tokenizer.load(); err != nil {
		return TokenizeStats{}, err
	}
	if err := cfg.Validate(); err != nil {
		return TokenizeStats{}, err
	}
	if err := outputsNotDirs(cfg.Output, cfg.Tokens); err != nil {
		return TokenizeStats{}, err
	}
	if err := makeTempDir(cfg.TempDir); err != nil {
		return TokenizeStats{}, err
	}
	defer hugeHeap(cfg.Memory)()
	cfg.Input.TempDir = cfg.TempDir
	r, size, err := cfg.Input.open(cfg.Progress, []string{stopwords}, cfg.Output, cfg.Tokens)
	if err != nil {
		return TokenizeStats{}, err
	}
	defer r.Close()

	tokenizers := make([]*tokenize.Tokenizer, tokenizeWorkers(cfg.Threads, cfg.Memory))
	for w := range tokenizers {
		tokenizers[w] = tokenize.New(cfg.Tokenizer.options())
	}
	defer limitMemory(cfg.Memory)()
	runs := tokenize.NewRuns(cfg.TempDir)
	defer runs.Close()
	sp := spiller{runs: runs, limit: cfg.Memory / 4, dir: cfg.TempDir}
	if cfg.spillAt > 0 {
		sp.limit = cfg.spillAt
	}
	var total *tokenize.Counter
	var stream *formats.TokenStreamWriter
	invalid := newInvalidText()
	if cfg.Tokens != "" {
		if stream, err = formats.CreateTokenStream(cfg.Tokens); err != nil {
			return TokenizeStats{}, err
		}
		defer stream.Abort()
		sp.stream = stream
		total, err = tokenizeToStream(ctx, r, tokenizers, cfg.Tokenizer.options(), sp, distinctGuess(size, sp.limit), invalid)
	} else {
		total, err = countTokens(ctx, r, tokenizers, sp, distinctGuess(size, sp.limit), invalid)
	}
	if total != nil {
		// After the stream's closing, which reads it (deferred later).
		defer total.Free()
	}
	if err != nil {
		return TokenizeStats{}, err
	}
	var ts tokenize.Stats
	for _, tk := range tokenizers {
		ts.Add(tk.Stats())
	}
	stats := TokenizeStats{
		Documents:        ts.Docs,
		SkippedRecords:   r.Skipped(),
		Tokens:           ts.Tokens,
		Dropped:          ts.Dropped,
		InvalidUTF8:      ts.InvalidUTF8,
		FirstInvalidUTF8: invalid.first(),
		DistinctTokens:   total.Len(),
		Spills:           runs.Len(),
		Threads:          cfg.Threads,
		Workers:          len(tokenizers),
	}
	if ts.Tokens == 0 {
		return stats, fmt.Errorf("%w: no token in %s", ErrEmptyCorpus, strings.Join(cfg.Input.Paths, ", "))
	}
	// Spilled counts are merged into the vocabulary; the last table joins
	// them. Otherwise the vocabulary's size is known before its tokens are
	// ranked, which then overlaps the closing of the stream.
	var entries []tokenize.Entry
	var vocabSize int
	var covered int64
	if stats.Spills > 0 {
		if err := runs.Spill(total); err != nil {
			return stats, err
		}
		if entries, stats.DistinctTokens, err = runs.Vocabulary(cfg.MaxVocab, cfg.MinCount, cfg.Memory/4); err != nil {
			return stats, err
		}
		vocabSize = len(entries)
		for _, e := range entries {
			covered += e.Count
		}
	} else {
		vocabSize, covered = total.VocabularySize(cfg.MaxVocab, cfg.MinCount)
	}
	if vocabSize == 0 {
		return stats, fmt.Errorf("%w: no token occurs at least %d times (min-count)", ErrEmptyCorpus, cfg.MinCount)
	}
	stats.VocabSize = vocabSize
	stats.VocabCoverage = float64(covered) / float64(ts.Tokens)
	stats.Seconds = time.Since(start).Seconds()
	meta := formats.Meta{Config: cfg, Inputs: r.Fingerprints(), Stats: stats}
	// The metadata needs the vocabulary's size, not its tokens: the stream
	// is closed (its chunks synced, its trailer written) on another
	// goroutine while the tokens are ranked and the vocabulary written (both
	// only read the Counter).
	streamClosed := func() error { return nil }
	if stream != nil {
		closed := make(chan error, 1)
		total.Flush() // so that the two only read it
		go func() { closed <- stream.Close(meta, total) }()
		streamClosed = sync.OnceValue(func() error { return <-closed })
		defer streamClosed()
	}
	if stats.Spills == 0 {
		entries = total.Vocabulary(cfg.MaxVocab, cfg.MinCount)
	}
	rows := make([]formats.VocabRow, len(entries))
	for i, e := range entries {
		rows[i] = formats.VocabRow{TokenID: int32(i), Token: e.Token, Count: e.Count}
	}
	if stream == nil || cfg.Output == StdioPath {
		// On Stdout, the vocabulary follows the stream's publication.
		if err := streamClosed(); err != nil {
			return stats, err
		}
		return stats, writeVocab(cfg.Output, cfg.Stdout, rows, meta)
	}
	// The vocabulary is published after the stream, as if written after it.
	vw, err := formats.CreateVocab(cfg.Output, meta)
	if err != nil {
		return stats, err
	}
	defer vw.Abort()
	err = vw.Write(rows)
	if err == nil {
		err = vw.Finish()
	}
	if serr := streamClosed(); err == nil {
		err = serr
	}
	if err != nil {
		return stats, err
	}
	return stats, vw.Close()
}

// distinctGuess guesses how many distinct tokens a corpus of rawBytes
// holds, so that the corpus-wide table can start near its final size
// rather than double its way there (rehashing took 3.5 % of tokenize on
// bench-raw; with the guess, tokenize on two threads takes 3 % less CPU).
// Heaps' law as bench-raw gives it (322 thousand distinct tokens in 72 MB, 38
// times the square root of the bytes) is taken a sixth lower, so that a
// table seldom starts larger than its corpus fills (a compressed or
// repetitive corpus fills less), and capped at a million tokens (32 MiB of
// slots), which bounds what a wrong guess wastes, and to what fits the
// limit at which the table spills (about 64 bytes a token).
func distinctGuess(rawBytes, limit int64) int {
	return int(min(32*math.Sqrt(float64(rawBytes)), 1<<20, float64(limit/64)))
}

// spiller moves tables of distinct tokens out of memory when their
// footprint passes limit: their counts to runs, and, for a token stream,
// their entries of its dictionary.
type spiller struct {
	runs   *tokenize.Runs
	limit  int64
	stream *formats.TokenStreamWriter
	dir    string
}

// spill spills c if its footprint passes the limit; it reports whether it
// did, leaving c reset.
func (sp spiller) spill(c *tokenize.Counter, limit int64) (bool, error) {
	if c.Footprint() <= limit {
		return false, nil
	}
	if sp.stream != nil {
		if err := sp.stream.SpillDictionary(c, sp.dir); err != nil {
			return false, err
		}
	}
	if err := sp.runs.Spill(c); err != nil {
		return false, err
	}
	c.Reset()
	return true, nil
}

// countTokens counts the tokens of r on one goroutine per tokenizer, each
// spilling its table beyond its share of the limit.
func countTokens(ctx context.Context, r *input.Reader, tokenizers []*tokenize.Tokenizer, sp spiller, distinct int, invalid *invalidText) (*tokenize.Counter, error) {
	counters := make([]*tokenize.Counter, len(tokenizers))
	for w := range counters {
		counters[w] = tokenize.NewCounter()
	}
	// The first takes in the others' tokens at the end: it alone is made
	// for the corpus's.
	counters[0] = tokenize.NewCounterSize(distinct)
	var total *tokenize.Counter
	defer func() {
		for _, c := range counters {
			if c != total {
				c.Free()
			}
		}
	}()
	share := sp.limit / int64(len(counters))
	err := fanOut(ctx, r, len(tokenizers), func(w int, b *input.Batch) error {
		tk, counter := tokenizers[w], counters[w]
		var toks [][]byte
		add := func(piece [][]byte) error {
			counter.Add(piece)
			return nil
		}
		defer invalid.note(tk, tk.Stats().InvalidUTF8, b)
		for _, doc := range b.Docs {
			toks, _ = tk.EachPiece(toks, doc, add)
		}
		_, err := sp.spill(counter, share)
		return err
	})
	if err != nil {
		return nil, err
	}
	// Once counts are spilled, every table joins them; the caller spills the
	// first.
	for _, c := range counters[1:] {
		if sp.runs.Len() > 0 {
			if _, err := sp.spill(c, -1); err != nil {
				return nil, err
			}
		} else {
			counters[0].Merge(c)
		}
	}
	total = counters[0]
	return total, nil
}

// tokenBatch is one batch of documents as ids: the stream's ids where
// worker 0 numbered it, a Lookup's where another worker did.
type tokenBatch struct {
	ids     []uint32
	docLens []int32
	pending tokenize.Pending // the tokens a Lookup left to the Counter
}

// tokenizeToStream counts the tokens of r and writes them to stream as ids,
// which number the distinct tokens in the order of their first appearance
// in the corpus, so that the ids, and the stream's bytes, do not depend on
// the number of threads.
//
// Worker 0 takes the batches in corpus order (fanOutInOrder). A batch no
// other worker has taken, it numbers in the corpus-wide Counter as it
// segments it, as one thread does. The other workers number the tokens of
// batches further ahead through Lookups of the same Counter, which find
// the ids of the tokens it holds while worker 0 adds others; worker 0 then
// counts such a batch's tokens and numbers, in order, those the Counter did
// not hold when the worker looked (Counter.Settle). A token new to the
// corpus is one of those, so the ids come out in order of first
// appearance. A batch numbered while the Counter spilled is numbered again
// by worker 0, with a tokenizer of its own, whose statistics are dropped
// (the worker's counted the batch).
//
// On two threads, with bench-raw, worker 0 numbered about half of the
// batches itself, and the Counter numbered 6 % of the other half's tokens
// at Settle. The workers had numbered their batches in tables of their own
// before, which worker 0 then looked up in the Counter, one distinct token
// each: against that, tokenize on two threads took 7 % less CPU and 5 %
// less wall time (medians of 16 alternating runs).
func tokenizeToStream(ctx context.Context, r *input.Reader, tokenizers []*tokenize.Tokenizer, opts tokenize.Options, sp spiller, distinct int, invalid *invalidText) (*tokenize.Counter, error) {
	stream := sp.stream
	counter := tokenize.NewCounterSize(distinct)
	// When the corpus-wide Counter spills, its ids move to the stream's
	// dictionary, and the ids of the next go on from there: base is the
	// stream's id of the Counter's id 0. The Counter spills between
	// batches, in corpus order, so the stream's bytes do not depend on the
	// number of threads.
	var base uint32
	spill := func() error {
		spilled, err := sp.spill(counter, sp.limit)
		if spilled {
			if n := stream.DictionarySpilled(); n > math.MaxUint32/2 {
				return fmt.Errorf("the token stream's dictionary has %d entries, too close to the 32-bit ids' limit; raise --memory", n)
			}
			base = uint32(stream.DictionarySpilled())
		}
		return err
	}
	write := func(tb *tokenBatch) error {
		if base > 0 {
			for i := range tb.ids {
				tb.ids[i] += base
			}
		}
		if err := stream.WriteChunk(tb.docLens, tb.ids); err != nil {
			return err
		}
		return spill()
	}
	toks := make([][][]byte, len(tokenizers))
	lookups := make([]*tokenize.Lookup, len(tokenizers))
	for w := 1; w < len(lookups); w++ {
		lookups[w] = counter.NewLookup()
	}
	var direct tokenBatch
	var redo *tokenize.Tokenizer
	err := fanOutInOrder(ctx, len(tokenizers), nextBatch(r), func(b *input.Batch) error {
		toks[0] = numberBatch(tokenizers[0], counter.AddIDs, b, &direct, toks[0], invalid)
		return write(&direct)
	}, func(w int, b *input.Batch, tb *tokenBatch) error {
		l := lookups[w]
		l.Begin(&tb.pending)
		number := func(dst []uint32, toks [][]byte) []uint32 { return l.IDs(dst, toks, &tb.pending) }
		toks[w] = numberBatch(tokenizers[w], number, b, tb, toks[w], invalid)
		return nil
	}, func(b *input.Batch, tb *tokenBatch) error {
		if !counter.Settle(tb.ids, &tb.pending) {
			if redo == nil {
				redo = tokenize.New(opts)
			}
			toks[0] = numberBatch(redo, counter.AddIDs, b, tb, toks[0], invalid)
		}
		return write(tb)
	})
	return counter, err
}

// groupBytes bounds the text of the documents that numberBatch tokenizes
// together (Tokenizer.AppendDocs): about 600 tokens.
const groupBytes = 4096

// numberBatch tokenizes the documents of b and numbers their tokens with
// number (Counter.AddIDs, or a Lookup's IDs), into tb's ids and document
// lengths, noting in invalid where any invalid UTF-8 is; run is scratch
// space for the tokens, returned for reuse. The tokens of a run of
// documents are numbered together: number looks up many at a time. Runs of
// about 512 tokens were faster than a whole batch's.
func numberBatch(tk *tokenize.Tokenizer, number func(dst []uint32, tokens [][]byte) []uint32, b *input.Batch, tb *tokenBatch, run [][]byte, invalid *invalidText) [][]byte {
	defer invalid.note(tk, tk.Stats().InvalidUTF8, b)
	tb.ids, tb.docLens = tb.ids[:0], tb.docLens[:0]
	run = run[:0]
	numberPiece := func(piece [][]byte) error {
		tb.ids = number(tb.ids, piece)
		return nil
	}
	text, ends := b.Text()
	for i := 0; i < len(b.Docs); {
		doc := b.Docs[i]
		if len(doc) > tokenize.PieceBytes {
			// A long document is numbered a piece at a time (EachPiece),
			// after the run, whose tokens the pieces would release (the
			// reader gives a document longer than a batch a batch of its
			// own, so the run is empty then, but that is the reader's
			// choice).
			tb.ids = number(tb.ids, run)
			start := len(tb.ids)
			run, _ = tk.EachPiece(run[:0], doc, numberPiece)
			tb.docLens = append(tb.docLens, int32(len(tb.ids)-start))
			tk.Release()
			run = run[:0]
			i++
			continue
		}
		// The short documents that follow, up to groupBytes of them from
		// this one's start, are tokenized together.
		start := ends[i] - len(doc)
		j := i + 1
		for j < len(ends) && ends[j]-start <= groupBytes && ends[j]-ends[j-1] <= tokenize.PieceBytes {
			j++
		}
		run, tb.docLens = tk.AppendDocs(run, text, start, ends[i:j], tb.docLens)
		i = j
		if len(run) >= 512 {
			tb.ids = number(tb.ids, run)
			tk.Release()
			run = run[:0]
		}
	}
	tb.ids = number(tb.ids, run)
	tk.Release()
	return run[:0]
}
