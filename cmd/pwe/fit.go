package main

import (
	"context"
	"flag"
	"fmt"
	"log/slog"
	"path/filepath"
	"strconv"
	"strings"
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
values (or, when the MAP has shrunk towards the origin, at a draw of the
unanchored posterior started there: --anchor-values), and runs parallel Pólya-Gamma Gibbs chains. Writes map.parquet,
draws.parquet, sample_stats.parquet and summary.parquet into DIR.`,
		example: `  pwe fit --counts counts.parquet --vocab vocab.parquet --dim 20 -o fit/ --chains 4 --draws 1000 --seed 1
  (after Ctrl-C, the same command with --resume continues; the draws are those of an uninterrupted run)
  pwe fit --counts new-counts.parquet --vocab vocab.parquet --dim 20 -o fit2/ --init-from fit/ --warmup 100`,
		setup: func(fs *flag.FlagSet, e *env) func(context.Context, []string) error {
			var cfg stages.FitConfig
			memory := pipeline.Bytes(stages.DefaultMemory)
			warmup := 500
			fs.StringVar(&cfg.Counts, "counts", "", "the `counts.parquet` written by pwe count")
			fs.StringVar(&cfg.Vocab, "vocab", "", "the `vocab.parquet` written by pwe tokenize")
			fs.StringVar(&cfg.Output, "o", "", "output `directory`")
			fs.StringVar(&cfg.Method, "method", "gibbs", "`gibbs` (posterior draws), map (point estimate only) or laplace (independent draws from the Gaussian approximation at the MAP)")
			fs.StringVar(&cfg.Laplace, "laplace", "auto", "factorisation for --method laplace: dense (all correlations; at most 10000 free coordinates (2V-D)D), per-token (each vector given the others at the MAP), or `auto` (dense up to 4000)")
			fs.IntVar(&cfg.Dim, "dim", 20, "embedding dimension `D`")
			fs.IntVar(&cfg.MAPStarts, "map-starts", posterior.DefaultMAPStarts, "random `starts` of the MAP's optimiser; the highest optimum is kept (more starts guard against a local optimum, where chains mix slowly)")
			fs.IntVar(&cfg.MAPMaxIter, "map-max-iter", 0, "at most `n` optimiser iterations per MAP start (0: 20000); a start stopped short is reported, and the fit goes on from the best point found")
			fs.StringVar(&cfg.Anchors, "anchors", "", "anchor `rule`: volume (the default: greedy maximum volume of count-weighted context vectors, at the MAP or the draw of --anchor-values), first, last, or comma-separated tokens")
			fs.StringVar(&cfg.AnchorValues, "anchor-values", "", "where the anchors' context `values` are fixed: auto (the default for --method gibbs: draw when the MAP's mean squared context coordinate is under half the draw's, else map), draw (the last state of an unanchored chain from the MAP, of the posterior's scale even when the MAP is the origin, but slower mixing), or map; methods map and laplace use the MAP")
			fs.IntVar(&cfg.AnchorSweeps, "anchor-sweeps", posterior.DefaultAnchorSweeps, "`sweeps` of the unanchored chain that draws the anchor values")
			fs.IntVar(&cfg.Chains, "chains", 4, "independent `chains`, run in parallel")
			fs.IntVar(&warmup, "warmup", 500, "warmup `sweeps` discarded per chain")
			fs.IntVar(&cfg.Draws, "draws", stages.DefaultDraws, "`draws` kept per chain")
			fs.IntVar(&cfg.Thin, "thin", 1, "`sweeps` per kept draw")
			fs.IntVar(&cfg.Inner, "inner", 1, "Pólya-Gamma and Gaussian `steps` per token and sweep")
			groupMoves := posterior.DefaultGroupMoves
			fs.IntVar(&groupMoves, "group-moves", groupMoves, "Metropolis frame-change `moves` per sweep (0: none); they speed up mixing of the raw coordinates")
			var overrelax overrelaxFlag
			fs.Var(&overrelax, "overrelax", "overrelaxation `coefficient` in (-1, 1) of each conditional draw's Gaussian step (0: plain Gibbs), or auto: -(1 - 0.2/D), at most 0.98 in size; near -1 it speeds up mixing of the raw coordinates")
			fs.StringVar(&cfg.Init, "init", "map", "chain starts: `map` (with per-chain jitter) or prior")
			fs.Float64Var(&cfg.PriorSD, "prior-sd", 1, "prior standard `deviation` of every coordinate")
			fs.Uint64Var(&cfg.Seed, "seed", 1, "random `seed`; the draws do not depend on --threads")
			fs.StringVar(&cfg.DrawsLayout, "draws-layout", "vector", "draws.parquet rows: `vector` (one per vector) or long (one per coordinate)")
			fs.StringVar(&cfg.SaveDraws, "save-draws", "all", "write draws of `all` tokens, none, or the tokens listed in a file")
			fs.Var(&memory, "memory", "memory `budget` of the summary step, e.g. 512MiB")
			fs.StringVar(&cfg.TempDir, "temp-dir", "", "`directory` holding the draws while sampling (default: the output directory)")
			fs.IntVar(&cfg.Threads, "threads", 0, "`threads`: cores used (0: every core)")
			checkpoint := checkpointFlag{interval: stages.DefaultCheckpointInterval}
			fs.Var(&checkpoint, "checkpoint-every", "save each chain's state into DIR/checkpoint every `N` sweeps or every duration (e.g. 5m); 0: never, and an interrupted fit cannot resume")
			fs.BoolVar(&cfg.Resume, "resume", false, "continue the interrupted fit checkpointed in DIR (same inputs and settings; any --threads)")
			fs.StringVar(&cfg.InitFrom, "init-from", "", "start chain c from the last draw of chain c mod K of the fit in `directory` (its draws.parquet, tokens matched by name)")
			return func(ctx context.Context, args []string) error {
				if len(args) > 0 {
					return usagef("fit: unexpected argument %q (inputs are named with --counts and --vocab)", args[0])
				}
				cfg.Warmup = &warmup
				cfg.GroupMoves = &groupMoves
				cfg.Overrelax = overrelax.value
				cfg.Threads = limitThreads(cfg.Threads)
				cfg.Memory = int64(memory)
				cfg.CheckpointEvery, cfg.CheckpointInterval = checkpoint.sweeps, checkpoint.interval
				if err := cfg.Validate(); err != nil {
					return usagef("fit: %v", err)
				}
				if !cfg.Resume && cfg.CheckpointInterval != stages.NoCheckpoints && stages.HasCheckpoint(cfg.Output) {
					e.stage("fit").Warn(fmt.Sprintf("%s holds an interrupted fit; starting over (add --resume to continue it instead)",
						filepath.Join(cfg.Output, stages.CheckpointDir)))
				}
				release, err := e.lockOutput("fit", cfg.Output)
				if err != nil {
					return fmt.Errorf("fit: %w", err)
				}
				defer release()
				st, err := pipeline.Fit(ctx, e.rep, cfg)
				if err != nil {
					return fmt.Errorf("fit: %w", err)
				}
				log := e.stage("fit")
				if len(st.Removed) > 0 {
					log.Info(fmt.Sprintf("removed what the earlier fit in %s left and this one does not replace: %s", cfg.Output, strings.Join(st.Removed, ", ")))
				}
				summary := []any{slog.Any(pipeline.StatsKey, st), slog.Float64(pipeline.SecondsKey, st.MAPSeconds+st.GibbsSeconds+st.SummarySecond)}
				mapLine := fmt.Sprintf("V=%d, %d unique pairs; MAP log posterior %.8g (best of %s) after %d iterations (%.2fs); anchors %v at the %s",
					st.V, st.Pairs, st.MAPLogPost, startsText(st.MAPStarts), st.MAPIter, st.MAPSeconds, st.Anchors, anchorValuesText(st))
				if l := st.Laplace; l != nil {
					log.Info(mapLine)
					log.Info(fmt.Sprintf("Laplace (%s, %d free coordinates): %d chains x %d independent draws in %.2fs (factorisation %.2fs) -> %s",
						l.Mode, l.Free, cfg.Chains, st.Draws, l.Seconds, l.FactorSeconds, cfg.Output), summary...)
					return nil
				}
				if cfg.Method != "gibbs" {
					log.Info(mapLine, summary...)
					return nil
				}
				log.Info(mapLine)
				log.Info(fmt.Sprintf("%d chains x %d draws in %.2fs (%.1f sweeps/s); %s -> %s",
					cfg.Chains, st.Draws, st.GibbsSeconds, st.SweepsPerSec, st.Convergence(), cfg.Output), summary...)
				return nil
			}
		},
	})
}

// startsText lists the log posteriors of the MAP's starts.
func startsText(lps []float64) string {
	var b strings.Builder
	for k, lp := range lps {
		if k > 0 {
			b.WriteString(", ")
		}
		b.WriteString(strconv.FormatFloat(lp, 'g', 8, 64))
	}
	return b.String()
}

// anchorValuesText says where the anchors' context vectors were fixed.
func anchorValuesText(st stages.FitStats) string {
	if st.AnchorValues != posterior.AnchorAtDraw.String() {
		return "MAP"
	}
	return fmt.Sprintf("last state of an unanchored chain of %d sweeps", st.AnchorSweeps)
}

// checkpointFlag is --checkpoint-every: a number of sweeps, a duration,
// or 0 for no checkpoints.
type checkpointFlag struct {
	sweeps   int
	interval time.Duration
}

func (f *checkpointFlag) String() string {
	switch {
	case f.sweeps > 0:
		return strconv.Itoa(f.sweeps)
	case f.interval == stages.NoCheckpoints:
		return "0"
	}
	return f.interval.String()
}

func (f *checkpointFlag) Set(s string) error {
	if n, err := strconv.Atoi(s); err == nil {
		switch {
		case n == 0:
			f.sweeps, f.interval = 0, stages.NoCheckpoints
		case n > 0:
			f.sweeps, f.interval = n, 0
		default:
			return fmt.Errorf("%d sweeps is negative", n)
		}
		return nil
	}
	d, err := time.ParseDuration(s)
	if err != nil || d <= 0 {
		return fmt.Errorf("%q: want a number of sweeps, a positive duration such as 5m, or 0", s)
	}
	f.sweeps, f.interval = 0, d
	return nil
}

// overrelaxFlag is --overrelax: a coefficient, or auto (the default), which
// leaves it to depend on --dim (posterior.DefaultOverrelax).
type overrelaxFlag struct{ value *float64 }

func (f *overrelaxFlag) String() string {
	if f.value == nil {
		return "auto"
	}
	return strconv.FormatFloat(*f.value, 'g', -1, 64)
}

func (f *overrelaxFlag) Set(s string) error {
	if s == "auto" {
		f.value = nil
		return nil
	}
	k, err := strconv.ParseFloat(s, 64)
	if err != nil {
		return fmt.Errorf("want a number in (-1, 1) or auto, got %q", s)
	}
	f.value = &k
	return nil
}
