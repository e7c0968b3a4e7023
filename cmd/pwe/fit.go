package main

import (
	"context"
	"flag"
	"fmt"
	"sync"
	"time"

	"github.com/pwe-project/pwe/pipeline"
	"github.com/pwe-project/pwe/posterior"
	"github.com/pwe-project/pwe/stages"
)

func init() {
	register(&command{
		name: "fit",
		args: "--counts counts.parquet --vocab vocab.parquet -o DIR",
		summary: `Sample the identified posterior of the embeddings.
Finds the MAP, fixes the context vectors of D anchor tokens at their MAP
values, and runs parallel Pólya-Gamma Gibbs chains. Writes map.parquet,
draws.parquet, sample_stats.parquet and summary.parquet into DIR.`,
		example: `  pwe fit --counts counts.parquet --vocab vocab.parquet --dim 20 -o fit/ --chains 4 --draws 500 --seed 1`,
		setup: func(fs *flag.FlagSet, e *env) func(context.Context, []string) error {
			var cfg stages.FitConfig
			memory := pipeline.Bytes(stages.DefaultMemory)
			warmup := 500
			fs.StringVar(&cfg.Counts, "counts", "", "the `counts.parquet` written by pwe count")
			fs.StringVar(&cfg.Vocab, "vocab", "", "the `vocab.parquet` written by pwe tokenize")
			fs.StringVar(&cfg.Output, "o", "", "output `directory`")
			fs.StringVar(&cfg.Method, "method", "gibbs", "`gibbs` (posterior draws) or map (point estimate only)")
			fs.IntVar(&cfg.Dim, "dim", 20, "embedding dimension `D`")
			fs.StringVar(&cfg.Anchors, "anchors", "", "anchor `rule`: volume (the default: greedy maximum volume of count-weighted MAP context vectors), first, last, or comma-separated tokens")
			fs.IntVar(&cfg.Chains, "chains", 4, "independent `chains`, run in parallel")
			fs.IntVar(&warmup, "warmup", 500, "warmup `sweeps` discarded per chain")
			fs.IntVar(&cfg.Draws, "draws", 500, "`draws` kept per chain")
			fs.IntVar(&cfg.Thin, "thin", 1, "`sweeps` per kept draw")
			fs.IntVar(&cfg.Inner, "inner", 1, "Pólya-Gamma and Gaussian `steps` per token and sweep")
			groupMoves := posterior.DefaultGroupMoves
			fs.IntVar(&groupMoves, "group-moves", groupMoves, "Metropolis frame-change `moves` per sweep (0: none); they speed up mixing of the raw coordinates")
			fs.StringVar(&cfg.Init, "init", "map", "chain starts: `map` (with per-chain jitter) or prior")
			fs.Float64Var(&cfg.PriorSD, "prior-sd", 1, "prior standard `deviation` of every coordinate")
			fs.Uint64Var(&cfg.Seed, "seed", 1, "random `seed`; the draws do not depend on --threads")
			fs.StringVar(&cfg.DrawsLayout, "draws-layout", "vector", "draws.parquet rows: `vector` (one per vector) or long (one per coordinate)")
			fs.StringVar(&cfg.SaveDraws, "save-draws", "all", "write draws of `all` tokens, none, or the tokens listed in a file")
			fs.Var(&memory, "memory", "memory `budget` of the summary step, e.g. 512MiB")
			fs.StringVar(&cfg.TempDir, "temp-dir", "", "`directory` holding the draws while sampling (default: the output directory)")
			fs.IntVar(&cfg.Threads, "threads", 0, "`threads`: cores used (0: every core)")
			return func(ctx context.Context, args []string) error {
				if len(args) > 0 {
					return usagef("fit: unexpected argument %q (inputs are named with --counts and --vocab)", args[0])
				}
				cfg.Warmup = &warmup
				cfg.GroupMoves = &groupMoves
				limitThreads(cfg.Threads)
				cfg.Memory = int64(memory)
				if err := cfg.Validate(); err != nil {
					return usagef("fit: %v", err)
				}
				cfg.OnSweep = sweepReporter(e, cfg.WithDefaults())
				st, err := stages.Fit(ctx, cfg)
				for _, w := range st.Warnings {
					fmt.Fprintf(e.stderr, "fit: warning: %s\n", w)
				}
				if err != nil {
					return fmt.Errorf("fit: %w", err)
				}
				fmt.Fprintf(e.stderr, "fit: V=%d, %d unique pairs; MAP log posterior %.6g after %d iterations (%.2fs); anchors %v\n",
					st.V, st.Pairs, st.MAPLogPost, st.MAPIter, st.MAPSeconds, st.Anchors)
				if cfg.Method == "gibbs" {
					fmt.Fprintf(e.stderr, "fit: %d chains x %d draws in %.2fs (%.1f sweeps/s); max R-hat %.4f, min bulk ESS %.0f -> %s\n",
						cfg.Chains, st.Draws, st.GibbsSeconds, st.SweepsPerSec, st.MaxRhat, st.MinESSBulk, cfg.Output)
				}
				return nil
			}
		},
	})
}

// sweepReporter prints a progress line at most every ten seconds.
func sweepReporter(e *env, cfg stages.FitConfig) func(chain, sweep int) {
	var mu sync.Mutex
	start, last := time.Now(), time.Now()
	done := 0
	total := cfg.Chains * (*cfg.Warmup + cfg.Draws*cfg.Thin)
	return func(chain, sweep int) {
		mu.Lock()
		defer mu.Unlock()
		done++
		if time.Since(last) < 10*time.Second {
			return
		}
		last = time.Now()
		rate := float64(done) / time.Since(start).Seconds()
		fmt.Fprintf(e.stderr, "fit: %d/%d sweeps (%.1f/s, about %.0fs left)\n", done, total, rate, float64(total-done)/rate)
	}
}
