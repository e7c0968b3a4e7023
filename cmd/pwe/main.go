// Command pwe samples the posterior of word and item embeddings. It runs as
// a staged data-pipeline operator: text (or MovieLens ratings) in;
// vocabulary, pair counts and posterior draws out, as Parquet.
//
// Run `pwe help` for the commands and `pwe COMMAND --help` for each one's
// flags and an example. This is the only package that calls os.Exit.
package main

import (
	"context"
	"os"
	"os/signal"
	"syscall"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	stopProfile := startProfile(os.Stderr)
	err := run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stopProfile()
	stop()
	os.Exit(exitCode(err, os.Stderr))
}
