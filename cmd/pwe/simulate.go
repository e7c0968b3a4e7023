package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"math"
	"strconv"

	"github.com/pwe-project/pwe/pipeline"
	"github.com/pwe-project/pwe/stages"
)

func init() {
	register(&command{
		name: "simulate",
		args: "--vocab-size V --dim D --observations N -o DIR",
		summary: `Simulate a data set from the model, as the reference paper did.
True vectors have independent Normal(0, snr^2/D) coordinates; each of N
observations is a pair, uniform over pairs of distinct tokens or (--zipf)
target and context independently Zipf-Mandelbrot over ranks, labelled
positive with probability sigmoid(rho_i . alpha_j). Writes vocab.parquet
(tokens w0000, w0001, ...), counts.parquet and truth.parquet (the true
vectors, in map.parquet's schema) into DIR.`,
		example: `  pwe simulate --vocab-size 100 --dim 5 --observations 1e5 --zipf --seed 1 -o sim/
  pwe fit --counts sim/counts.parquet --vocab sim/vocab.parquet --dim 5 -o sim/fit
  pwe evaluate sim/fit --truth sim/truth.parquet`,
		setup: func(fs *flag.FlagSet, e *env) func(context.Context, []string) error {
			var cfg stages.SimulateConfig
			var n wholeNumber
			zipf := false
			fs.IntVar(&cfg.VocabSize, "vocab-size", 0, "vocabulary size `V` (at least 2)")
			fs.IntVar(&cfg.Dim, "dim", 0, "dimension `D` of the true vectors")
			fs.Var(&n, "observations", "number `N` of labelled pairs (1e6 is accepted)")
			fs.BoolVar(&zipf, "zipf", false, "draw target and context from the Zipf-Mandelbrot law instead of uniformly")
			fs.Float64Var(&cfg.ZipfA, "zipf-a", 1, "Zipf-Mandelbrot exponent `a`: P(rank r) proportional to (r + b)^-a")
			fs.Float64Var(&cfg.ZipfB, "zipf-b", 2.7, "Zipf-Mandelbrot shift `b`")
			fs.Float64Var(&cfg.SNR, "snr", 1, "signal-to-noise `ratio`: true coordinates have variance snr^2/D")
			fs.Uint64Var(&cfg.Seed, "seed", 1, "random `seed`")
			fs.StringVar(&cfg.Output, "o", "", "output `directory`")
			return func(ctx context.Context, args []string) error {
				if len(args) > 0 {
					return usagef("simulate: unexpected argument %q", args[0])
				}
				cfg.Observations = int(n)
				if zipf {
					cfg.Pairs = "zipf"
				}
				if err := cfg.Validate(); err != nil {
					return usagef("simulate: %v", err)
				}
				release, err := e.lockOutput("simulate", cfg.Output)
				if err != nil {
					return fmt.Errorf("simulate: %w", err)
				}
				defer release()
				st, err := stages.Simulate(ctx, cfg)
				if err != nil {
					return fmt.Errorf("simulate: %w", err)
				}
				e.stage("simulate").Info(fmt.Sprintf("V=%d, D=%d, %d observations (%.0f positive) in %d unique pairs -> %s",
					cfg.VocabSize, cfg.Dim, st.Observations, st.Positives, st.Pairs, cfg.Output), slog.Any(pipeline.StatsKey, st))
				return nil
			}
		},
	})
}

// wholeNumber is a flag for counts that accepts 1e6 as well as 1000000.
type wholeNumber int

func (w *wholeNumber) String() string { return strconv.Itoa(int(*w)) }

func (w *wholeNumber) Set(s string) error {
	x, err := strconv.ParseFloat(s, 64)
	switch {
	case err != nil && !errors.Is(err, strconv.ErrRange) || x != math.Trunc(x) || x < 0:
		return fmt.Errorf("%q is not a whole number", s)
	case x > maxWholeNumber:
		return fmt.Errorf("%s is more than %.4g", s, float64(maxWholeNumber))
	}
	*w = wholeNumber(x)
	return nil
}

// maxWholeNumber bounds a wholeNumber: 2^61, well inside an int, and far
// more observations than a simulation can draw (10^9 take minutes).
const maxWholeNumber = math.MaxInt32 * float64(1<<30)
