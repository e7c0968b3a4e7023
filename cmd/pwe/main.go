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

	"golang.org/x/term"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	e := &env{stdout: os.Stdout, stderr: os.Stderr}
	// x/term asks the terminal driver: a mode check alone would take
	// /dev/null for a terminal, and the width sizes the bar.
	if fd := int(os.Stderr.Fd()); term.IsTerminal(fd) {
		e.terminal = true
		e.width, _, _ = term.GetSize(fd)
	}
	code := e.main(ctx, os.Args[1:])
	stop()
	os.Exit(code)
}
