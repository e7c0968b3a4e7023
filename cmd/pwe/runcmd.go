package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"strconv"

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
			var threads optionalInt
			fs.Var(&threads, "threads", "worker `threads` (default: the file's threads; 0: every core)")
			return func(ctx context.Context, args []string) error {
				if len(args) != 1 {
					return usagef("run: want one configuration file, got %d arguments", len(args))
				}
				cfg, err := pipeline.LoadWithOutput(args[0], *out)
				if err != nil {
					return usagef("run: %v", err)
				}
				if threads.set {
					cfg.Threads = threads.n
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

// optionalInt is an int flag that knows whether it was given, and shows no
// default in the help, where the default comes from elsewhere.
type optionalInt struct {
	n   int
	set bool
}

func (o *optionalInt) String() string {
	if o == nil || !o.set {
		return ""
	}
	return strconv.Itoa(o.n)
}

func (o *optionalInt) Set(s string) error {
	n, err := strconv.Atoi(s)
	if err != nil {
		return errors.New("want a whole number")
	}
	o.n, o.set = n, true
	return nil
}
