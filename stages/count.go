package stages

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"reflect"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/pwe-project/pwe/counts"
	"github.com/pwe-project/pwe/formats"
	"github.com/pwe-project/pwe/formats/input"
	"github.com/pwe-project/pwe/internal/bytesize"
	"github.com/pwe-project/pwe/internal/cacheline"
	"github.com/pwe-project/pwe/tokenize"
)

// CountConfig configures the count stage: text and vocab.parquet to
// counts.parquet.
type CountConfig struct {
	// Input is the corpus. When it names no document format, the format of
	// the vocabulary's corpus applies. A configuration file names it once,
	// for the whole run, in its own section.
	Input TextInput `json:"input" yaml:"-"`
	// Tokens, instead of Input, names a token stream written by the tokenize
	// stage (TokenizeConfig.Tokens): the corpus as token ids, counted
	// without reading or segmenting the text again.
	Tokens string `json:"tokens,omitempty" yaml:"-"`
	// Vocab is the path of vocab.parquet; the tokenizer settings are read
	// from its metadata so that both stages split text the same way.
	Vocab string `json:"-" yaml:"-"`
	// OOV is "drop" (default: out-of-vocabulary tokens are removed before
	// windowing) or "keep" (their positions stay as gaps).
	OOV string `json:"oov" yaml:"oov"`
	// Window is the symmetric window half-width W (default 5).
	Window int `json:"window" yaml:"window"`
	// Weighting is "uniform" (default), "linear" or "harmonic".
	Weighting string `json:"weighting" yaml:"weighting"`
	// Subsample is word2vec's subsampling threshold t (0: off).
	Subsample float64 `json:"subsample" yaml:"subsample"`
	// Negatives is K, the negative samples per positive pair (default 1 when
	// nil; 0 writes none).
	Negatives *int `json:"negatives" yaml:"negatives"`
	// NegPower raises the unigram distribution of negatives (default 0.75
	// when nil; 0: uniform over the vocabulary's tokens).
	NegPower *float64 `json:"neg_power" yaml:"neg_power"`
	// NegativesMode is "sampled" (default) or "expected".
	NegativesMode string `json:"negatives_mode" yaml:"negatives_mode"`
	// ForceExpected allows expected negatives above the vocabulary limit.
	ForceExpected bool `json:"force_expected,omitempty" yaml:"force_expected"`
	// Seed drives subsampling and negative sampling.
	Seed uint64 `json:"seed" yaml:"seed"`

	// Append names earlier counts (counts.parquet) to which this corpus's
	// counts are added: the output is their pairwise sum. They must have
	// been made with the same vocabulary file and the same window,
	// weighting, oov, subsample and negatives settings. Output may be the
	// same path; it is replaced when complete.
	Append string `json:"append,omitempty" yaml:"-"`

	// Output is the path of counts.parquet, or "-" for an Arrow stream on
	// Stdout.
	Output  string `json:"-" yaml:"-"`
	Threads int    `json:"-" yaml:"-"`
	// Stdin is read, as an Arrow stream, for Vocab "-"; Stdout receives the
	// stream for Output "-" (defaults os.Stdin and os.Stdout).
	Stdin  io.Reader `json:"-" yaml:"-"`
	Stdout io.Writer `json:"-" yaml:"-"`
	// Memory is the byte budget for pair aggregation (default 1 GiB);
	// beyond it sorted runs spill to TempDir.
	Memory  int64  `json:"-" yaml:"-"`
	TempDir string `json:"-" yaml:"-"`
	// Progress, if set, follows the reading of the corpus.
	Progress ReadProgress `json:"-" yaml:"-"`
	// Merge, if set, is called when the reading ends and the merge that
	// writes the rows begins; what it returns follows the merge in parts
	// of about equal work (counts.Counter.SetProgress; nil: no report).
	Merge func() counts.Progress `json:"-" yaml:"-"`

	// oovSpillAt, if positive, replaces the part of the budget an append
	// run's tally of out-of-vocabulary tokens takes, for tests on small
	// corpora.
	oovSpillAt int64
	// candidateLimit, if positive, replaces the number of a stream
	// dictionary's tokens that collectCandidates holds, for tests.
	candidateLimit int
}

// DefaultMemory is the count stage's default memory budget.
const DefaultMemory = 1 << 30

// WithDefaults fills unset fields.
func (c CountConfig) WithDefaults() CountConfig {
	if c.OOV == "" {
		c.OOV = "drop"
	}
	if c.Window == 0 {
		c.Window = 5
	}
	if c.Weighting == "" {
		c.Weighting = "uniform"
	}
	if c.Negatives == nil {
		k := 1
		c.Negatives = &k
	}
	if c.NegPower == nil {
		p := counts.DefaultNegPower
		c.NegPower = &p
	}
	if c.NegativesMode == "" {
		c.NegativesMode = "sampled"
	}
	if c.Memory == 0 {
		c.Memory = DefaultMemory
	}
	if c.TempDir == "" {
		c.TempDir = os.TempDir()
	}
	c.Threads = threadsOrDefault(c.Threads)
	return c
}

func (c CountConfig) counterConfig() (counts.Config, error) {
	w, err := counts.ParseWeighting(c.Weighting)
	if err != nil {
		return counts.Config{}, err
	}
	m, err := counts.ParseNegMode(c.NegativesMode)
	if err != nil {
		return counts.Config{}, err
	}
	cc := counts.Config{
		Window: c.Window, Weighting: w, Subsample: c.Subsample, Negatives: *c.Negatives,
		NegPower: c.NegPower, NegMode: m, ForceExpected: c.ForceExpected,
		Memory: c.Memory, Workers: c.Threads, WorkerBytes: countWorkerBytes, TempDir: c.TempDir, Seed: c.Seed,
	}
	return cc, cc.Validate()
}

// countWorkerBytes is what a counting worker holds besides the counter: a
// batch of text in flight with its tokens and ids, or a decoded chunk of a
// token stream. On bench-raw with --memory 256MiB, from 16 to 58 workers,
// count's peak RSS grew by about 1.8 MiB a worker from text and 1.2 MiB
// from a token stream, and 64 threads peaked at 302 MiB from text. The
// first worker's is part of the program's own memory, outside the budget.
const countWorkerBytes = 2 << 20

// Validate reports settings that cannot work.
func (c CountConfig) Validate() error {
	switch {
	case c.Tokens == "":
		if err := c.Input.Validate(); err != nil {
			return err
		}
	case len(c.Input.Paths) > 0:
		return fmt.Errorf("the corpus is given twice: as the token stream %s and as %v; name one", c.Tokens, c.Input.Paths)
	case c.Tokens == StdioPath:
		return errors.New("--tokens names a file: a token stream ends with its dictionary, which is read first")
	case c.Input.Format != "" || c.Input.DocSep != "" || c.Input.TextField != "" || c.Input.TextColumn != "":
		return errors.New("--format, --doc-sep, --text-field and --text-column describe text input; a token stream is split into documents already")
	}
	switch {
	case c.Vocab == "":
		return errors.New("no vocabulary: name vocab.parquet with --vocab")
	case c.Output == "":
		return errors.New("no output: name counts.parquet with -o")
	case c.OOV != "drop" && c.OOV != "keep":
		return fmt.Errorf("oov %q, want drop or keep", c.OOV)
	case c.Append == StdioPath:
		return errors.New("--append names a file: the earlier counts are fingerprinted before counting, which standard input does not allow")
	case c.Negatives != nil && *c.Negatives < 0:
		// The counter reads a negative K as unset, and would draw one.
		return fmt.Errorf("negatives %d is negative, want K >= 0 (0: none)", *c.Negatives)
	}
	stdin := [][2]string{{"--vocab", c.Vocab}}
	for _, p := range c.Input.Paths {
		stdin = append(stdin, [2]string{"the corpus", p})
	}
	if err := oneStdin(stdin...); err != nil {
		return err
	}
	_, err := c.WithDefaults().counterConfig()
	return err
}

// CountStats summarise a count run; they are recorded as pwe.stats.
type CountStats struct {
	Documents   int64 `json:"documents"`
	Tokens      int64 `json:"tokens"`
	OOVTokens   int64 `json:"oov_tokens"`
	InvalidUTF8 int64 `json:"invalid_utf8_replaced"`
	// FirstInvalidUTF8 is where the first document with invalid UTF-8
	// is, as path:line (or row).
	FirstInvalidUTF8 string `json:"first_invalid_utf8,omitempty"`
	Subsampled       int64  `json:"subsampled"`
	PositivePairs    int64  `json:"positive_pairs"`
	UniquePairs      int64  `json:"unique_pairs"`
	// Append runs only: the most frequent out-of-vocabulary tokens of this
	// corpus, the rows of the earlier counts, and the documents and tokens
	// of every corpus counted into the output so far.
	TopOOV         []TokenCount `json:"top_oov,omitempty"`
	OldRows        int64        `json:"appended_to_rows,omitempty"`
	TotalDocuments int64        `json:"total_documents,omitempty"`
	TotalTokens    int64        `json:"total_tokens,omitempty"`

	Spills       int     `json:"-"` // depend on the memory budget, not the content
	SpilledBytes int64   `json:"-"`
	Seconds      float64 `json:"-"`
	// Threads is the threads the run could use and Workers those that
	// counted: fewer when the memory budget holds no more.
	Threads int `json:"-"`
	Workers int `json:"-"`
	// oovSpills counts the runs an append run's tally of out-of-vocabulary
	// tokens spilled.
	oovSpills int
}

// vocabSettings reads the tokenize stage's settings from vocab.parquet.
func vocabSettings(meta formats.Meta) (TokenizeConfig, error) {
	var tc TokenizeConfig
	raw, _ := meta.Config.(json.RawMessage)
	if len(raw) == 0 {
		return tc, nil
	}
	if err := json.Unmarshal(raw, &tc); err != nil {
		return tc, fmt.Errorf("pwe.config: %w", err)
	}
	return tc, nil
}

// inheritFormat takes the document format of the vocabulary's corpus when
// none is given, so that `pwe count` splits documents as `pwe tokenize` did
// without repeating --doc-sep or --text-field.
func (t *TextInput) inheritFormat(from TextInput) {
	if t.Format == "" && t.DocSep == "" && t.TextField == "" && t.TextColumn == "" {
		t.Format, t.DocSep, t.TextField, t.TextColumn = from.Format, from.DocSep, from.TextField, from.TextColumn
	}
}

// Count reads the corpus, maps tokens to vocabulary ids and writes the pair
// counts, sorted by (target_id, context_id); with Append, their sum with
// the earlier counts.
func Count(ctx context.Context, cfg CountConfig) (CountStats, error) {
	start := time.Now()
	cfg = cfg.WithDefaults()
	if err := cfg.Validate(); err != nil {
		return CountStats{}, err
	}
	if err := outputsNotDirs(cfg.Output); err != nil {
		return CountStats{}, err
	}
	if err := makeTempDir(cfg.TempDir); err != nil {
		return CountStats{}, err
	}
	cc, err := cfg.counterConfig()
	if err != nil {
		return CountStats{}, err
	}
	defer hugeHeap(cfg.Memory)()
	resumeGC := pauseGC()
	defer resumeGC()
	// Until the counting, the work goes from one step to the next: the
	// steps that can run beside another do, on goroutines of their own.
	// The stream is opened (its trailer read and its dictionary checked)
	// while the vocabulary is read; its fingerprint is taken as its chunks
	// are read (countStream).
	var openStream func() (*formats.TokenStream, error)
	if cfg.Tokens != "" {
		// --append may name the output: that is how counts grow.
		if err := checkOutputs([]string{cfg.Tokens, cfg.Vocab}, cfg.Output); err != nil {
			return CountStats{}, err
		}
		openStream = async(func() (*formats.TokenStream, error) { return formats.OpenTokenStream(cfg.Tokens) })
		defer func() {
			if s, err := openStream(); err == nil {
				s.Close()
			}
		}()
	}
	vocab, vmeta, vfp, err := readVocab(cfg.Vocab, cfg.Stdin, true)
	if err != nil {
		return CountStats{}, err
	}
	vcfg, err := vocabSettings(vmeta)
	if err != nil {
		return CountStats{}, fmt.Errorf("%s: %w", cfg.Vocab, err)
	}
	tcfg := vcfg.Tokenizer
	if cfg.Tokens == "" {
		cfg.Input.inheritFormat(vcfg.Input)
		if err := tcfg.checkRules(cfg.Vocab, vocab); err != nil {
			return CountStats{}, err
		}
	}
	tokens := make([]string, len(vocab))
	freq := make([]int64, len(vocab))
	for i, v := range vocab {
		tokens[i], freq[i] = v.Token, v.Count
	}
	// The stream's dictionary is read for the tokens to look up while the
	// index and the counter are made (countStream).
	var scanDictionary func() (*dictCandidates, error)
	if cfg.Tokens != "" {
		least := slices.Min(freq)
		limit := int(min(int64(2*len(vocab)+dictionarySlack), cfg.Memory/8/candidateBytes))
		if cfg.candidateLimit > 0 {
			limit = cfg.candidateLimit
		}
		scanDictionary = async(func() (*dictCandidates, error) {
			s, err := openStream()
			if err != nil {
				return nil, err
			}
			return collectCandidates(s, least, limit, len(vocab))
		})
		defer func() { _, _ = scanDictionary() }() // before the stream closes
	}
	// The index is built while the counter is made.
	newIndex := async(func() (*tokenize.Index, error) { return tokenize.NewIndex(tokens) })
	var prior *appendTarget
	if cfg.Append != "" {
		if prior, err = openAppend(cfg, vfp); err != nil {
			return CountStats{}, err
		}
		defer prior.r.Close()
		cc.Seed = AppendSeed(cfg.Seed, prior.inputs)
	}

	var stream *formats.TokenStream
	if cfg.Tokens != "" {
		if stream, err = openStream(); err != nil {
			return CountStats{}, err
		}
		// The map from the stream's ids to the vocabulary, and when
		// appending the OOV counts per id and worker, live beside the
		// counter's tables: they come off its budget (as MovieLens's
		// tables do, down to the smallest budget the counter takes).
		reserve := 4 * int64(stream.DictLen)
		if prior != nil {
			// One table per worker: as many workers as half the budget holds.
			per := 8 * int64(stream.DictLen)
			cc.Workers = int(min(int64(cc.Workers), max(1, (cc.Memory/2-reserve)/per)))
			reserve += per * int64(cc.Workers)
		}
		if reserve > cc.Memory/2 {
			return CountStats{}, fmt.Errorf("%s: its dictionary of %d distinct tokens needs %s of the memory budget of %s; raise --memory",
				cfg.Tokens, stream.DictLen, bytesize.Format(reserve), bytesize.Format(cc.Memory))
		}
		cc.Memory = max(cc.Memory-reserve, counts.MinMemory)
	}
	// An append run's tally of out-of-vocabulary tokens takes its part of
	// the budget too.
	var oovLimit int64
	if prior != nil {
		oovLimit = cc.Memory / oovShare
		if cfg.oovSpillAt > 0 {
			oovLimit = cfg.oovSpillAt
		}
		cc.Memory = max(cc.Memory-oovLimit, counts.MinMemory)
	}

	defer limitMemory(cfg.Memory)()

	counter, err := counts.New(cc, freq)
	if err != nil {
		return CountStats{}, err
	}
	defer counter.Close()
	workers := make([]*countWorker, counter.Workers())
	for w := range workers {
		workers[w] = &countWorker{acc: counter.NewAccumulator(), keepOOV: cfg.OOV == "keep"}
	}
	var oov *oovTally
	if prior != nil {
		// A table per worker for text; a token stream's are counted by id,
		// and named in one table at the end.
		tables := len(workers)
		if cfg.Tokens != "" {
			tables = 1
		}
		oov = newOOVTally(cfg.TempDir, oovLimit, tables)
		defer oov.Close()
	}
	index, err := newIndex()
	if err != nil {
		return CountStats{}, fmt.Errorf("%s: %w", cfg.Vocab, err)
	}
	resumeGC()
	stats := CountStats{Threads: cfg.Threads, Workers: len(workers)}
	var corpus []input.Fingerprint
	if cfg.Tokens != "" {
		corpus, err = countStream(ctx, cfg, stream, tcfg, index, scanDictionary, workers, oov, &stats)
	} else {
		corpus, err = countText(ctx, cfg, tcfg, index, workers, oov, &stats)
	}
	if err != nil {
		return stats, err
	}
	for _, wk := range workers {
		stats.OOVTokens += wk.oov
	}
	// Appending a corpus without a known token leaves the counts as they
	// were, which a nightly job should not fail on.
	if stats.Tokens == stats.OOVTokens && prior == nil {
		what := strings.Join(cfg.Input.Paths, ", ")
		if cfg.Tokens != "" {
			what = cfg.Tokens
		}
		return stats, fmt.Errorf("%w: no in-vocabulary token in %s", ErrEmptyCorpus, what)
	}

	var inputs []input.Fingerprint
	if prior != nil {
		inputs = append(inputs, prior.fp)
		stats.oovSpills = oov.runs.Len()
		if stats.TopOOV, err = oov.top(); err != nil {
			return stats, err
		}
		stats.TotalDocuments = prior.documents + stats.Documents
		stats.TotalTokens = prior.tokens + stats.Tokens
	}
	inputs = append(append(inputs, corpus...), vfp)
	out, err := createCounts(cfg.Output, cfg.Stdout, formats.Meta{
		Config: struct {
			CountConfig
			Tokenizer TokenizerConfig `json:"tokenizer"`
		}{cfg, tcfg},
		Inputs: inputs,
	}, cc.NegMode == counts.Expected)
	if err != nil {
		return stats, err
	}
	defer out.Abort()
	emit := out.TakeColumns
	if l, ok := out.(interface {
		LendColumns(*formats.CountColumns, func()) error
	}); ok && prior == nil {
		counter.LendTo(l.LendColumns)
	}
	var merge *counts.Appender
	if prior != nil {
		if merge, err = counts.NewAppender(cc, len(vocab), prior.r, out.Write); err != nil {
			return stats, err
		}
		emit = merge.AddColumns
	}
	if cfg.Merge != nil {
		counter.SetProgress(cfg.Merge())
	}
	cs, err := counter.Finish(ctx, emit)
	if err != nil {
		return stats, err
	}
	stats.Subsampled = cs.Subsampled
	stats.PositivePairs = cs.PositivePairs
	stats.UniquePairs = cs.UniquePairs
	stats.Spills, stats.SpilledBytes = cs.Spills, cs.SpilledBytes
	if merge != nil {
		as, err := merge.Finish()
		if err != nil {
			return stats, err
		}
		stats.UniquePairs, stats.OldRows = as.UniquePairs, as.OldRows
	}
	if err := out.SetStats(stats); err != nil {
		return stats, err
	}
	if err := out.Close(); err != nil {
		return stats, err
	}
	stats.Seconds = time.Since(start).Seconds()
	return stats, nil
}

// async calls f on a goroutine of its own; the returned function waits for
// its results.
func async[T any](f func() (T, error)) func() (T, error) {
	type result struct {
		v   T
		err error
	}
	done := make(chan result, 1)
	go func() {
		v, err := f()
		done <- result{v, err}
	}()
	return sync.OnceValues(func() (T, error) {
		r := <-done
		return r.v, r.err
	})
}

// dictCandidates are the tokens of a stream's dictionary counted at least
// as often as the vocabulary's rarest token, up to a limit: their bytes,
// their stream ids and their counts. Where the limit cut them short, they
// may not include every vocabulary token, which countStream then finds by
// looking every token up.
type dictCandidates struct {
	text   []byte
	ends   []int
	sids   []int
	counts []int64
}

// collectCandidates holds at most 4096 more of a stream dictionary's tokens
// than twice the vocabulary (on bench-raw, 67 518 were counted at least as
// often as the 65 536th), in at most an eighth of the memory budget, at
// about candidateBytes each.
const (
	dictionarySlack = 1 << 12
	candidateBytes  = 40
)

// collectCandidates reads the dictionary of s for the tokens counted at
// least least times, up to limit of them, with room made at once for a
// few more than the vocabulary's size of them, at 8 bytes a token: grown
// by append, a quarter at a time past 256 elements, the lists took 12.6
// MB of fresh memory on bench-raw for their final 2.2 MB, and the kernel's
// clearing of its pages 0.7 % of count's samples.
func collectCandidates(s *formats.TokenStream, least int64, limit, vocabSize int) (*dictCandidates, error) {
	n := min(limit, vocabSize+vocabSize/16+64)
	c := &dictCandidates{text: make([]byte, 0, 8*n), ends: make([]int, 0, n), sids: make([]int, 0, n), counts: make([]int64, 0, n)}
	err := s.Dictionary(func(sid int, tok []byte, n int64) error {
		if n < least {
			return nil
		}
		if len(c.sids) == limit {
			return errCandidates
		}
		c.text = append(c.text, tok...)
		c.ends = append(c.ends, len(c.text))
		c.sids = append(c.sids, sid)
		c.counts = append(c.counts, n)
		return nil
	})
	if err == errCandidates {
		return c, nil
	}
	return c, err
}

// errCandidates stops collectCandidates at its limit.
var errCandidates = errors.New("stages: too many candidates")

// lookUp calls fn with each candidate's stream id, its id in index (or -1)
// and its count.
func (c *dictCandidates) lookUp(index *tokenize.Index, fn func(sid int, v int32, n int64)) {
	start := 0
	for k, end := range c.ends {
		v, _ := index.ID(c.text[start:end])
		fn(c.sids[k], v, c.counts[k])
		start = end
	}
}

// countWorker is one goroutine's share of the count stage.
type countWorker struct {
	_       cacheline.Pad
	acc     *counts.Accumulator
	keepOOV bool
	ids     []int32
	oov     int64
	// For text: the tokenizer and its tokens. For a token stream: the
	// out-of-vocabulary tokens counted by stream id (append runs).
	tk           *tokenize.Tokenizer
	toks         [][]byte
	oovByID      []int64
	docs, tokens int64
	_            cacheline.Pad
}

// countText reads, tokenizes and counts the corpus of cfg.Input, and its
// out-of-vocabulary tokens in oov unless it is nil; it returns the corpus's
// fingerprints.
func countText(ctx context.Context, cfg CountConfig, tcfg TokenizerConfig, index *tokenize.Index, workers []*countWorker, oov *oovTally, stats *CountStats) ([]input.Fingerprint, error) {
	cfg.Input.TempDir = cfg.TempDir
	r, _, err := cfg.Input.open(cfg.Progress, []string{cfg.Vocab}, cfg.Output)
	if err != nil {
		return nil, err
	}
	defer r.Close()
	for _, wk := range workers {
		wk.tk = tokenize.New(tcfg.options())
	}
	invalid := newInvalidText()
	err = fanOut(ctx, r, len(workers), func(w int, b *input.Batch) error {
		wk := workers[w]
		defer invalid.note(wk.tk, wk.tk.Stats().InvalidUTF8, b)
		var oovTokens *tokenize.Counter
		if oov != nil {
			oovTokens = oov.table(w)
		}
		for d, doc := range b.Docs {
			// A long document is tokenized in pieces, and only its ids are
			// held whole.
			wk.ids = wk.ids[:0]
			var err error
			wk.toks, err = wk.tk.EachPiece(wk.toks, doc, func(toks [][]byte) error {
				for k, t := range toks {
					id, ok := index.ID(t)
					switch {
					case ok:
						wk.ids = append(wk.ids, id)
						continue
					case wk.keepOOV:
						wk.ids = append(wk.ids, -1)
					}
					wk.oov++
					if oovTokens != nil {
						oovTokens.Add(toks[k : k+1])
					}
				}
				return nil
			})
			if err != nil {
				return err
			}
			if err := wk.acc.Add(wk.ids, b.Seq+int64(d)); err != nil {
				return err
			}
		}
		if oov != nil {
			return oov.bound(w)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	var ts tokenize.Stats
	for _, wk := range workers {
		ts.Add(wk.tk.Stats())
	}
	stats.Documents, stats.Tokens, stats.InvalidUTF8 = ts.Docs, ts.Tokens, ts.InvalidUTF8
	stats.FirstInvalidUTF8 = invalid.first()
	return r.Fingerprints(), nil
}

// countStream counts the token stream s, opened from cfg.Tokens, whose
// tokenizer settings must be tcfg, those of the vocabulary; it returns the
// fingerprints of the stream's corpus and of the stream itself, which
// tokenStreamFingerprint gives. scan returns the dictionary's tokens to
// look up first (collectCandidates).
func countStream(ctx context.Context, cfg CountConfig, s *formats.TokenStream,
	tcfg TokenizerConfig, index *tokenize.Index, scan func() (*dictCandidates, error), workers []*countWorker, oov *oovTally, stats *CountStats) ([]input.Fingerprint, error) {
	var made TokenizeConfig
	var corpus []input.Fingerprint
	var ts TokenizeStats
	for _, f := range []struct {
		key string
		raw any
		dst any
	}{{formats.KeyConfig, s.Meta.Config, &made}, {formats.KeyInputs, s.Meta.Inputs, &corpus}, {formats.KeyStats, s.Meta.Stats, &ts}} {
		raw, _ := f.raw.(json.RawMessage)
		if err := json.Unmarshal(raw, f.dst); err != nil {
			return nil, fmt.Errorf("%s: %s: %w", cfg.Tokens, f.key, err)
		}
	}
	if !reflect.DeepEqual(made.Tokenizer, tcfg) {
		was, _ := json.Marshal(made.Tokenizer)
		want, _ := json.Marshal(tcfg)
		return nil, fmt.Errorf("%s was tokenized with %s but the vocabulary %s with %s; write the stream and the vocabulary in one pwe tokenize run",
			cfg.Tokens, was, cfg.Vocab, want)
	}
	// vocab[i] is the vocabulary id of stream id i, or -1. The dictionary
	// is read through rather than held: it has every distinct token of the
	// corpus, which the vocabulary and the memory budget do not bound.
	//
	// A vocabulary made from the stream's corpus holds no token counted
	// fewer times than its rarest token, so only the others are looked up
	// (on bench-raw, one in five), and those are gathered as the index is
	// made (collectCandidates). That holds if they include every
	// vocabulary token and the dictionary lists each token once. Otherwise,
	// with a vocabulary from another corpus, or a dictionary that tokenize
	// spilled in parts (where a token is listed once per part, with its
	// count there, which may fall below the rarest vocabulary token's
	// while another part's does not), a second pass looks every token up.
	vocab := make([]int32, s.DictLen)
	var known int64 // occurrences of vocabulary tokens
	var seen []bool
	found := 0
	mapToken := func(sid int, v int32, n int64) {
		vocab[sid] = v
		if v >= 0 {
			if !seen[v] {
				seen[v] = true
				found++
			}
			known += n
		}
	}
	cands, err := scan()
	if err != nil {
		return nil, err
	}
	once := ts.DistinctTokens == s.DictLen
	if once {
		for i := range vocab {
			vocab[i] = -1
		}
		seen = make([]bool, index.Len())
		cands.lookUp(index, mapToken)
	}
	if !once || found < index.Len() {
		known, found = 0, 0
		seen = make([]bool, index.Len())
		err := s.Dictionary(func(sid int, tok []byte, n int64) error {
			v, _ := index.ID(tok)
			mapToken(sid, v, n)
			return nil
		})
		if err != nil {
			return nil, err
		}
	}
	// Each token pairs with at most Window tokens after it: the workers'
	// buffers can take their share at once instead of growing to it. The
	// workers take chunks as they come free, so their shares differ: an
	// eighth more room than an even share, which costs no memory until it
	// is used, spares the worker that takes more than its share a copy of
	// its documents into a larger store, alone at the end of the counting.
	// On bench-raw with two workers the larger share was 0.1 to 6.7 % above
	// half in ten runs, and count on two threads took 1.27 and 1.35 s
	// against 1.375 and 1.395 without the room (wall, medians of 6 and 8
	// alternating runs).
	share := known * int64(cfg.Window) / int64(len(workers))
	if len(workers) > 1 {
		share += share / 8
	}
	for _, wk := range workers {
		wk.acc.Reserve(share)
	}
	if p := cfg.Progress; p != nil {
		p.SetTotal(s.ChunkBytes())
	}
	if oov != nil {
		for _, wk := range workers {
			wk.oovByID = make([]int64, s.DictLen)
		}
	}
	s.HashChunks()
	err = fanOutFrom(ctx, len(workers), func(c *formats.TokenChunk) (bool, error) {
		ok, err := s.NextChunk(c)
		if ok && cfg.Progress != nil {
			cfg.Progress.Add(c.Bytes)
		}
		return ok, err
	}, func(w int, c *formats.TokenChunk) error {
		if err := c.Decode(); err != nil {
			return err
		}
		wk := workers[w]
		oov, ids, err := wk.acc.AddMapped(c.IDs, c.DocLens, vocab, wk.keepOOV, wk.oovByID, c.DocSeq, wk.ids)
		wk.ids = ids
		wk.oov += oov
		if err != nil {
			return err
		}
		wk.docs += int64(len(c.DocLens))
		wk.tokens += int64(len(c.IDs))
		return nil
	})
	if err != nil {
		return nil, err
	}
	var docs, tokens int64
	for _, wk := range workers {
		docs, tokens = docs+wk.docs, tokens+wk.tokens
	}
	if docs != ts.Documents || tokens != ts.Tokens {
		return nil, fmt.Errorf("%s: %w: it holds %d documents and %d tokens but its trailer records %d and %d",
			cfg.Tokens, formats.ErrTokenStream, docs, tokens, ts.Documents, ts.Tokens)
	}
	stats.Documents, stats.Tokens, stats.InvalidUTF8 = docs, tokens, ts.InvalidUTF8
	if oov != nil {
		named := oov.table(0)
		err := s.Dictionary(func(id int, tok []byte, _ int64) error {
			var n int64
			for _, o := range workers {
				n += o.oovByID[id]
			}
			if n == 0 {
				return nil
			}
			named.AddCount(tok, n)
			return oov.bound(0)
		})
		if err != nil {
			return nil, err
		}
	}
	fp, err := tokenStreamFingerprint(ctx, s)
	if err != nil {
		return nil, err
	}
	return append(corpus, fp), nil
}

// tokenStreamFingerprint is the fingerprint of the token stream s, whose chunks
// were hashed as they were read (TokenStream.HashChunks): on bench-raw, a
// second read of the whole file had taken 0.06-0.09 CPU-s of count's 1.8.
// Should the stream not have been read through, the file is read again.
func tokenStreamFingerprint(ctx context.Context, s *formats.TokenStream) (input.Fingerprint, error) {
	sum, ok, err := s.SHA256()
	switch {
	case err != nil:
		return input.Fingerprint{}, err
	case !ok:
		return input.FingerprintFileContext(ctx, s.Path)
	}
	return input.Fingerprint{Path: s.Path, Size: s.Size, SHA256: sum}, nil
}
