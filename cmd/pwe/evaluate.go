package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"text/tabwriter"

	"github.com/pwe-project/pwe/pipeline"
	"github.com/pwe-project/pwe/posterior"
	"github.com/pwe-project/pwe/stages"
)

func init() {
	register(&command{
		name: "evaluate",
		args: "FIT_DIR [--truth TRUTH.parquet] [--heldout TEST.parquet]",
		summary: `Measure a fit against true vectors and held-out counts.
Against the truth (pwe simulate's truth.parquet): the RMSE between the true
co-occurrence probabilities sigmoid(rho_i . alpha_j) and the estimate's over
all V x V pairs, for the MAP, the posterior mean of the probabilities and
the posterior-mean vectors, and the coverage of the equal-tailed 90%
intervals. Against held-out counts (pwe split's test.parquet): the
log-likelihood per observation for the MAP, the posterior-mean vectors and
the posterior predictive. Writes evaluation.parquet into FIT_DIR (or -o)
and prints the table.`,
		example: `  pwe evaluate fit/ --truth sim/truth.parquet --heldout split/test.parquet`,
		setup: func(fs *flag.FlagSet, e *env) func(context.Context, []string) error {
			var cfg stages.EvaluateConfig
			fs.StringVar(&cfg.Truth, "truth", "", "true vectors: `truth.parquet` written by pwe simulate")
			fs.StringVar(&cfg.HeldOut, "heldout", "", "held-out `counts` such as test.parquet written by pwe split")
			fs.StringVar(&cfg.Output, "o", "", "output `file` (default FIT_DIR/evaluation.parquet)")
			return func(ctx context.Context, args []string) error {
				if len(args) != 1 {
					return usagef("evaluate: want one fit directory, got %d arguments", len(args))
				}
				cfg.Fit = args[0]
				if err := cfg.Validate(); err != nil {
					return usagef("evaluate: %v", err)
				}
				ms, err := stages.Evaluate(ctx, cfg)
				if err != nil {
					return fmt.Errorf("evaluate: %w", err)
				}
				log := e.stage("evaluate")
				if mapOnly(cfg.Fit) {
					log.Warn(fmt.Sprintf("%s holds a summary of draws but not the draws (the fit kept none: --save-draws none): only the MAP is measured", cfg.Fit))
				}
				// The table is the command's data: stdout, whatever --quiet.
				log.Info(fmt.Sprintf("%d figures -> %s", len(ms), cfg.WithDefaults().Output),
					slog.Any(pipeline.StatsKey, ms))
				return printMetrics(e.stdout, ms)
			}
		},
	})
}

// printMetrics writes the figures as an aligned table.
func printMetrics(w io.Writer, ms []posterior.Metric) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "metric\testimator\tvalue\tn\tdraws\t")
	for _, m := range ms {
		fmt.Fprintf(tw, "%s\t%s\t%.6f\t%.0f\t%d\t\n", m.Name, m.Estimator, m.Value, m.N, m.Draws)
	}
	return tw.Flush()
}

// mapOnly reports whether fit is a sampled fit whose draws were not kept,
// which evaluate can measure only at the MAP.
func mapOnly(fit string) bool {
	_, errDraws := os.Stat(filepath.Join(fit, stages.DrawsFile))
	_, errSummary := os.Stat(filepath.Join(fit, stages.SummaryFile))
	return errors.Is(errDraws, fs.ErrNotExist) && errSummary == nil
}
