package main

import (
	"context"
	"flag"
	"os"

	"github.com/pwe-project/pwe/formats"
	"github.com/pwe-project/pwe/stages"
)

func init() {
	register(&command{
		name:    "inspect",
		args:    "FILE.parquet | tokens.bin | -",
		summary: "Print the schema, the metadata (the stage's settings) and the first rows of a Parquet file (- : an Arrow stream on stdin), or the metadata and first documents of a token stream.",
		example: "  pwe inspect counts.parquet --rows 5\n  pwe inspect tokens.bin --rows 3\n  pwe count corpus.txt --vocab vocab.parquet -o - | pwe inspect -",
		setup: func(fs *flag.FlagSet, e *env) func(context.Context, []string) error {
			rows := fs.Int("rows", 10, "print the first `n` rows (-1: all)")
			return func(ctx context.Context, args []string) error {
				if len(args) != 1 {
					return usagef("inspect: want one file, got %d arguments", len(args))
				}
				if *rows < -1 {
					return usagef("inspect: --rows %d: want a count of rows, or -1 for all", *rows)
				}
				if args[0] == stages.StdioPath {
					return formats.DumpStream(e.stdout, os.Stdin, "stdin", formats.DumpOptions{Rows: *rows})
				}
				return formats.Dump(e.stdout, args[0], formats.DumpOptions{Rows: *rows})
			}
		},
	})
}
