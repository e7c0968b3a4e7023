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
		name: "export",
		args: "FIT_DIR --format word2vec|parquet [--estimate mean|map] -o FILE",
		summary: `Export point estimates of the vectors.
The posterior mean (default; from summary.parquet, the anchors' context
vectors at the values the draws held them at) or the MAP, as word2vec text (header
"V D", then a token and D numbers per line; gensim's KeyedVectors reads it,
and white space inside a token becomes "_") or as Parquet in map.parquet's
schema (both kinds of vector, anchors marked).`,
		example: `  pwe export fit/ --format word2vec -o vectors.txt
  pwe export fit/ --format parquet --estimate map -o map-copy.parquet`,
		setup: func(fs *flag.FlagSet, e *env) func(context.Context, []string) error {
			var cfg stages.ExportConfig
			fs.StringVar(&cfg.Format, "format", "word2vec", "`word2vec` (text) or parquet")
			fs.StringVar(&cfg.Estimate, "estimate", "mean", "`mean` (posterior mean) or map")
			fs.StringVar(&cfg.Vectors, "vectors", "rho", "word2vec: which vectors, `rho`, alpha or sum")
			fs.StringVar(&cfg.Output, "o", "", "output `file` (- : standard output, word2vec only)")
			return func(ctx context.Context, args []string) error {
				if len(args) != 1 {
					return usagef("export: want one fit directory, got %d arguments", len(args))
				}
				cfg.Fit, cfg.Stdout = args[0], e.stdout
				if err := cfg.Validate(); err != nil {
					return usagef("export: %v", err)
				}
				st, err := stages.Export(ctx, cfg)
				if err != nil {
					return fmt.Errorf("export: %w", err)
				}
				cfg = cfg.WithDefaults()
				log := e.stage("export")
				log.Info(fmt.Sprintf("%s estimate of %d tokens x %d dimensions as %s -> %s", cfg.Estimate, st.V, st.D, cfg.Format, cfg.Output),
					slog.Any(pipeline.StatsKey, st))
				if st.Renamed > 0 {
					log.Warn(fmt.Sprintf("%d tokens contain white space, written with underscores", st.Renamed))
				}
				return nil
			}
		},
	})
}
