package main

import (
	"context"
	"flag"
	"fmt"

	"github.com/pwe-project/pwe/pipeline"
)

func init() {
	register(&command{
		name: "run",
		args: "CONFIG.yaml [-o DIR] [--force] [--threads N]",
		summary: `Run every stage named in a configuration file, skipping those up to date.
The file names the input (a text corpus or MovieLens ratings), each stage's
settings and the output directory; manifest.json in that directory records
what ran. A changed setting re-runs its stage and everything downstream.`,
		example: `  pwe run examples/quickstart.yaml
  pwe run nightly.yaml -o /data/pwe/2026-11-21 --force`,
		setup: func(fs *flag.FlagSet, e *env) func(context.Context, []string) error {
			out := fs.String("o", "", "output `directory` (overrides the file's output)")
			force := fs.Bool("force", false, "re-run every stage, up to date or not")
			threads := fs.Int("threads", -1, "worker `threads` (overrides the file's; 0: every core)")
			return func(ctx context.Context, args []string) error {
				if len(args) != 1 {
					return usagef("run: want one configuration file, got %d arguments", len(args))
				}
				cfg, err := pipeline.LoadWithOutput(args[0], *out)
				if err != nil {
					return usagef("run: %v", err)
				}
				if *threads >= 0 {
					cfg.Threads = *threads
				}
				cfg.Threads = limitThreads(cfg.Threads)
				_, err = pipeline.Run(ctx, cfg, pipeline.Options{Force: *force, Reporter: e.rep})
				if err != nil {
					return fmt.Errorf("run: %w", err)
				}
				return nil
			}
		},
	})
}
