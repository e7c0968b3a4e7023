package main

import (
	"context"
	"flag"
	"fmt"
	"log/slog"

	"github.com/pwe-project/pwe/pipeline"
	"github.com/pwe-project/pwe/stages"
)

func init() {
	register(&command{
		name: "split",
		args: "COUNTS --test-fraction P -o DIR",
		summary: `Divide pair counts into training and held-out counts by observation.
Each observation goes to the test part with probability P, independently
(binomial thinning of n_pos and n_neg; a fractional count's fraction moves
whole, with the same probability). train + test equals the input exactly.
Writes train.parquet and test.parquet into DIR.`,
		example: `  pwe split counts.parquet --test-fraction 0.2 --seed 1 -o split/
  pwe fit --counts split/train.parquet --vocab vocab.parquet -o fit/
  pwe evaluate fit/ --heldout split/test.parquet`,
		setup: func(fs *flag.FlagSet, e *env) func(context.Context, []string) error {
			var cfg stages.SplitConfig
			fs.Float64Var(&cfg.TestFraction, "test-fraction", 0, "probability `P` that an observation is held out (0 < P < 1)")
			fs.Uint64Var(&cfg.Seed, "seed", 1, "random `seed`")
			fs.StringVar(&cfg.Output, "o", "", "output `directory`")
			return func(ctx context.Context, args []string) error {
				if len(args) != 1 {
					return usagef("split: want one counts file, got %d arguments", len(args))
				}
				cfg.Counts = args[0]
				if err := cfg.Validate(); err != nil {
					return usagef("split: %v", err)
				}
				release, err := e.lockOutput("split", cfg.Output)
				if err != nil {
					return fmt.Errorf("split: %w", err)
				}
				defer release()
				st, err := stages.Split(ctx, cfg)
				if err != nil {
					return fmt.Errorf("split: %w", err)
				}
				e.stage("split").Info(fmt.Sprintf("%d pairs, %.0f observations; %.0f (%.2f%%) held out in %d pairs -> %s",
					st.Rows, st.Total, st.Test, 100*st.Test/st.Total, st.TestRows, cfg.Output), slog.Any(pipeline.StatsKey, st))
				return nil
			}
		},
	})
}
