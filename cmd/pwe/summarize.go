package main

import (
	"cmp"
	"context"
	"flag"
	"fmt"
	"log/slog"
	"strings"

	"github.com/pwe-project/pwe/pipeline"
	"github.com/pwe-project/pwe/stages"
)

func init() {
	register(&command{
		name: "summarize",
		args: "FIT_DIR [--pairs FILE] [--pairs-all-among TOKENS] [--neighbours TOKENS --top K] [-o DIR]",
		summary: `Summarise similarities and nearest neighbours over the posterior draws.
Every quantity is computed in every draw of FIT_DIR/draws.parquet, then
summarised (mean, median, sd, mad, q5, q95, mcse_mean, ess_bulk, ess_tail,
rhat). Pairs give similarity.parquet (cosine, dot product and
co-occurrence probability); neighbours give neighbours.parquet (the tokens
among each query's top K in some draw, with the probability of being in
the top K, rank and cosine quantiles). TOKENS is a comma-separated list or
@FILE (one token per line, for tokens that contain commas).`,
		example: `  pwe summarize fit/ --pairs pairs.txt --neighbours elinor,marianne --top 10`,
		setup: func(fs *flag.FlagSet, e *env) func(context.Context, []string) error {
			var cfg stages.SummarizeConfig
			var among, neighbours string
			fs.StringVar(&cfg.Pairs, "pairs", "", "`file` of token pairs, two per line (tab-separated, or space-separated)")
			fs.StringVar(&among, "pairs-all-among", "", "every pair of these `tokens`")
			fs.StringVar(&neighbours, "neighbours", "", "query `tokens` whose nearest neighbours are summarised")
			fs.IntVar(&cfg.Top, "top", 10, "`K` nearest neighbours")
			fs.StringVar(&cfg.Vectors, "vectors", "rho", "vectors compared by cosine and dot product: `rho`, alpha or sum")
			fs.StringVar(&cfg.Output, "o", "", "output `directory` (default: FIT_DIR)")
			fs.String("temp-dir", "", "ignored, kept for existing scripts: summarize no longer writes temporary files")
			fs.IntVar(&cfg.Threads, "threads", 0, "`threads`: cores used (0: every core)")
			return func(ctx context.Context, args []string) error {
				if len(args) != 1 {
					return usagef("summarize: want one fit directory, got %d arguments", len(args))
				}
				cfg.Fit = args[0]
				var err error
				if cfg.PairsAllAmong, err = tokenList(among); err != nil {
					return usagef("summarize: --pairs-all-among: %v", err)
				}
				if cfg.Neighbours, err = tokenList(neighbours); err != nil {
					return usagef("summarize: --neighbours: %v", err)
				}
				cfg.Threads = limitThreads(cfg.Threads)
				if err := cfg.Validate(); err != nil {
					return usagef("summarize: %v", err)
				}
				release, err := e.lockOutput("summarize", cmp.Or(cfg.Output, cfg.Fit))
				if err != nil {
					return fmt.Errorf("summarize: %w", err)
				}
				defer release()
				st, err := pipeline.Summarize(ctx, e.rep, cfg)
				if err != nil {
					return fmt.Errorf("summarize: %w", err)
				}
				e.stage("summarize").Info(fmt.Sprintf("%d chains x %d draws of %d tokens; %d pairs, %d queries (%d neighbour rows) in %.2fs -> %s",
					st.Chains, st.DrawsPerChain, st.Tokens, st.Pairs, st.Queries, st.Neighbours, st.Seconds, strings.Join(cfg.Outputs(), ", ")),
					slog.Any(pipeline.StatsKey, st), slog.Float64(pipeline.SecondsKey, st.Seconds))
				return nil
			}
		},
	})
}

// tokenList parses TOKENS: comma-separated, or @FILE with one per line.
func tokenList(s string) ([]string, error) {
	if s == "" {
		return nil, nil
	}
	if strings.HasPrefix(s, "@") {
		return stages.ReadTokenFile(s[1:])
	}
	var out []string
	for _, t := range strings.Split(s, ",") {
		if t = strings.TrimSpace(t); t != "" {
			out = append(out, t)
		}
	}
	return out, nil
}
