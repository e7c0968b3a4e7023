package main

import (
	"context"
	"flag"
	"fmt"
	"log/slog"
	"strings"

	"github.com/pwe-project/pwe/counts"
	"github.com/pwe-project/pwe/internal/version"
	"github.com/pwe-project/pwe/pipeline"
	"github.com/pwe-project/pwe/stages"
)

func versionString() string { return version.String() }

// textInputFlags declares the flags that say how a corpus splits into
// documents.
func textInputFlags(fs *flag.FlagSet, in *stages.TextInput) {
	fs.StringVar(&in.Format, "format", "", "input `format`: text, jsonl, parquet, csv or tsv (implied by --text-field / --text-column and .csv/.tsv names)")
	fs.StringVar(&in.DocSep, "doc-sep", "", "text documents: `line` (one per line, the default), blank (paragraphs) or file (one per file, archive member or WARC record)")
	fs.StringVar(&in.TextField, "text-field", "", "JSON Lines (or one JSON array of objects): the `field` holding the text (a.b: field b of object a)")
	fs.StringVar(&in.TextColumn, "text-column", "", "Parquet or CSV input: the `column` holding the text (CSV: by its header)")
}

func init() {
	register(&command{
		name: "tokenize",
		args: "INPUT... -o vocab.parquet [--tokens tokens.bin]",
		summary: `Count the tokens of a corpus and write its vocabulary.
INPUT is a file, a directory (read recursively), a tar or zip archive (read
member by member: .tar, .tar.gz, .tgz, .tar.zst, .tar.bz2, .tar.xz, .zip), a
glob pattern ("**" for any number of directories: 'corpus/**/*.txt') or -
for standard input; .gz, .zst, .bz2 and .xz files are decompressed. Of a
WARC file (Common Crawl's .warc.wet.gz) only its pages' text is read. Tokens
are Unicode words (UAX #29), case-folded unless --no-lower, in Unicode
normalization form C. With --tokens, the corpus is also written as token
ids, which pwe count --tokens reads instead of the text (for English text
about a third of its size; it saves count from decompressing and segmenting
the corpus again). The table of distinct tokens stays within --memory: past
a quarter of it, its counts spill to --temp-dir and are merged, which leaves
the vocabulary unchanged.`,
		example: `  pwe tokenize corpus/ -o vocab.parquet --max-vocab 50000 --min-count 5
  pwe tokenize posts.jsonl.zst --text-field body -o vocab.parquet
  pwe tokenize 'archive/**/*.txt.gz' -o vocab.parquet
  pwe tokenize reviews.csv.gz --text-column review -o vocab.parquet
  pwe tokenize 'CC-MAIN-2024-10/**/*.warc.wet.gz' -o vocab.parquet
  pwe tokenize corpus/ -o vocab.parquet --tokens tokens.bin && pwe count --tokens tokens.bin --vocab vocab.parquet -o counts.parquet`,
		setup: func(fs *flag.FlagSet, e *env) func(context.Context, []string) error {
			var cfg stages.TokenizeConfig
			memory := pipeline.Bytes(stages.DefaultMemory)
			textInputFlags(fs, &cfg.Input)
			fs.StringVar(&cfg.Output, "o", "", "output `vocab.parquet` (-: an Arrow stream on stdout)")
			fs.StringVar(&cfg.Tokens, "tokens", "", "also write the corpus as token ids to `tokens.bin`, for pwe count --tokens")
			fs.BoolVar(&cfg.Tokenizer.KeepCase, "no-lower", false, "keep case instead of Unicode case folding")
			fs.StringVar(&cfg.Tokenizer.StopwordsFile, "stopwords", "", "`file` of stop words to drop, one per line")
			fs.IntVar(&cfg.Tokenizer.MinLength, "min-length", 0, "drop tokens shorter than `n` characters")
			fs.IntVar(&cfg.MaxVocab, "max-vocab", 0, "keep the `n` most frequent tokens (0: all)")
			fs.Int64Var(&cfg.MinCount, "min-count", 1, "drop tokens seen fewer than `n` times")
			fs.IntVar(&cfg.Threads, "threads", 0, "`threads`: cores used (0: every core), as many as --memory holds; the vocabulary and token stream do not depend on it")
			fs.Var(&memory, "memory", "memory `budget` for the tables of distinct tokens and the threads' text in flight, e.g. 256MiB")
			fs.StringVar(&cfg.TempDir, "temp-dir", "", "`directory` for spilled counts, and for a zip archive read from standard input or compressed (default: the system's; made if missing)")
			return func(ctx context.Context, args []string) error {
				cfg.Input.Paths = args
				cfg.Stdout = e.stdout
				cfg.Memory = int64(memory)
				limitThreads(cfg.Threads)
				if err := cfg.WithDefaults().Validate(); err != nil {
					return usagef("tokenize: %v", err)
				}
				st, err := pipeline.Tokenize(ctx, e.rep, cfg)
				if err != nil {
					return fmt.Errorf("tokenize: %w", err)
				}
				e.stage("tokenize").Info(st.Summary()+" -> "+cfg.Output,
					slog.Any(pipeline.StatsKey, st), slog.Float64(pipeline.SecondsKey, st.Seconds))
				return nil
			}
		},
	})
	register(&command{
		name: "count",
		args: "{INPUT... | --tokens tokens.bin} --vocab vocab.parquet -o counts.parquet",
		summary: `Count (target, context) pairs inside a window and draw negative samples.
Pairs are counted within --memory, from the documents kept in memory (or,
with a window above 15, in pair tables), spilling runs sorted by token to a
temporary directory beyond it; the output is sorted by (target_id,
context_id). The tokenizer settings, and the document format unless given,
come from vocab.parquet. --tokens reads the token ids that pwe tokenize
--tokens wrote instead of the text, which is faster; the counts are the
same.`,
		example: `  pwe count corpus/ --vocab vocab.parquet -o counts.parquet --window 5 --negatives 1 --seed 1
  pwe count --tokens tokens.bin --vocab vocab.parquet -o counts.parquet
  pwe count today.txt --vocab vocab.parquet --append counts.parquet -o counts.parquet
  pwe count corpus/ --vocab vocab.parquet -o - | pwe fit --counts - --vocab vocab.parquet -o fit/`,
		setup: func(fs *flag.FlagSet, e *env) func(context.Context, []string) error {
			var cfg stages.CountConfig
			memory := pipeline.Bytes(stages.DefaultMemory)
			negatives, negPower := 1, counts.DefaultNegPower
			textInputFlags(fs, &cfg.Input)
			fs.StringVar(&cfg.Vocab, "vocab", "", "the `vocab.parquet` written by pwe tokenize (-: an Arrow stream on stdin)")
			fs.StringVar(&cfg.Tokens, "tokens", "", "count the token ids in `tokens.bin` (pwe tokenize --tokens) instead of reading INPUT")
			fs.StringVar(&cfg.Output, "o", "", "output `counts.parquet` (-: an Arrow stream on stdout)")
			fs.StringVar(&cfg.Append, "append", "", "add the counts to those in `counts.parquet` (same vocabulary and settings; -o may name the same file)")
			fs.IntVar(&cfg.Window, "window", 5, "symmetric window of `W` tokens on each side")
			fs.StringVar(&cfg.Weighting, "weights", "uniform", "window `weights`: uniform, linear (word2vec's expected random window) or harmonic (1/distance, GloVe; windows up to 22)")
			fs.StringVar(&cfg.OOV, "oov", "drop", "out-of-vocabulary tokens: `drop` before windowing, or keep as gaps")
			fs.Float64Var(&cfg.Subsample, "subsample", 0, "word2vec subsampling threshold `t` (0: off; 1e-5 is usual)")
			fs.IntVar(&negatives, "negatives", 1, "negative samples `K` per positive pair")
			fs.Float64Var(&negPower, "neg-power", negPower, "negatives follow unigram counts to this `power` (0: uniform)")
			fs.StringVar(&cfg.NegativesMode, "negatives-mode", "sampled", "`sampled`, or expected (dense expected counts; small vocabularies)")
			fs.BoolVar(&cfg.ForceExpected, "force", false, "allow expected negatives above the vocabulary limit")
			fs.Uint64Var(&cfg.Seed, "seed", 1, "random `seed` for subsampling and negatives")
			fs.Var(&memory, "memory", "memory `budget` for counting (the documents kept, or pair tables), e.g. 256MiB")
			fs.StringVar(&cfg.TempDir, "temp-dir", "", "`directory` for spilled runs, and for a zip archive read from standard input or compressed (default: the system's; made if missing)")
			fs.IntVar(&cfg.Threads, "threads", 0, "`threads`: cores used (0: every core), as many as --memory holds; the output does not depend on it")
			return func(ctx context.Context, args []string) error {
				cfg.Input.Paths = args
				cfg.Stdout = e.stdout
				limitThreads(cfg.Threads)
				cfg.Negatives, cfg.NegPower = &negatives, &negPower
				cfg.Memory = int64(memory)
				if err := cfg.WithDefaults().Validate(); err != nil {
					return usagef("count: %v", err)
				}
				st, err := pipeline.Count(ctx, e.rep, cfg)
				if err != nil {
					return fmt.Errorf("count: %w", err)
				}
				log := e.stage("count")
				log.Info(st.Summary()+" -> "+cfg.Output,
					slog.Any(pipeline.StatsKey, st), slog.Float64(pipeline.SecondsKey, st.Seconds))
				if cfg.Append != "" {
					log.Info(appendSummary(st, cfg.Append))
				}
				return nil
			}
		},
	})
}

// appendSummary tells what an append added and which unknown tokens it met.
func appendSummary(st stages.CountStats, old string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "appended to %s (%d rows); %d documents and %d tokens counted in all; %d tokens outside the vocabulary",
		old, st.OldRows, st.TotalDocuments, st.TotalTokens, st.OOVTokens)
	for i, t := range st.TopOOV {
		sep := ", "
		if i == 0 {
			sep = ", most frequent: "
		}
		fmt.Fprintf(&b, "%s%s (%d)", sep, t.Token, t.Count)
	}
	return b.String()
}
