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
		name: "report",
		args: "FIT_DIR [-o report.html] [--pairs FILE]",
		summary: `Write a self-contained HTML report of a fit.
Log-posterior traces per chain, histograms of R-hat and bulk ESS with the
lines of fit's rule (1.01, and 100 per chain), posterior densities of the
similarities summarised by pwe summarize (or of the pairs in --pairs),
neighbour tables, and the run's settings (manifest.json beside FIT_DIR
when pwe run made the fit, or else the files' pwe.config).`,
		example: `  pwe summarize fit/ --pairs-all-among elinor,marianne,edward --neighbours elinor
  pwe report fit/ -o report.html`,
		setup: func(fs *flag.FlagSet, e *env) func(context.Context, []string) error {
			var cfg stages.ReportConfig
			fs.StringVar(&cfg.Output, "o", "", "output `file` (default: FIT_DIR/report.html; - : standard output)")
			fs.StringVar(&cfg.Pairs, "pairs", "", "pairs `file` whose similarity densities are drawn (default: those of similarity.parquet)")
			fs.IntVar(&cfg.MaxPairs, "max-pairs", 12, "at most `n` density plots")
			return func(ctx context.Context, args []string) error {
				if len(args) != 1 {
					return usagef("report: want one fit directory, got %d arguments", len(args))
				}
				cfg.Fit, cfg.Stdout = args[0], e.stdout
				if err := cfg.Validate(); err != nil {
					return usagef("report: %v", err)
				}
				st, err := stages.Report(ctx, cfg)
				if err != nil {
					return fmt.Errorf("report: %w", err)
				}
				e.stage("report").Info(fmt.Sprintf("%d plots, %d tables -> %s", st.Plots, st.Tables, cfg.WithDefaults().Output),
					slog.Any(pipeline.StatsKey, st))
				return nil
			}
		},
	})
}
