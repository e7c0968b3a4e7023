// Command pwe samples the posterior of word and item embeddings. It runs as
// a staged data-pipeline operator: text (or MovieLens ratings) in;
// vocabulary, pair counts and posterior draws out, as Parquet.
//
// Run `pwe help` for the commands and `pwe COMMAND --help` for each one's
// flags and an example. This is the only package that calls os.Exit.
package main

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"golang.org/x/term"

	"github.com/pwe-project/pwe/internal/cleanup"
)

func main() {
	e := &env{stdout: os.Stdout, stderr: os.Stderr}
	ctx, cancel := context.WithCancel(context.Background())
	sigs := make(chan os.Signal, 2)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM)
	go e.interrupts(sigs, cancel)
	// x/term asks the terminal driver: a mode check alone would take
	// /dev/null for a terminal, and the width sizes the bar.
	if fd := int(os.Stderr.Fd()); term.IsTerminal(fd) {
		e.terminal = true
		e.width, _, _ = term.GetSize(fd)
	}
	code := e.main(ctx, os.Args[1:])
	signal.Stop(sigs)
	os.Exit(code)
}

// interrupts cancels the command at the first signal: each stage stops at
// its next check and removes what it was writing. A second signal stops the
// process at once, for a stage that never comes to a check: one waiting to
// read standard input or a named pipe that nothing writes, or to open one.
// The temporary files of unfinished outputs and spills (package cleanup)
// are removed first, so that nothing half-written is left behind.
func (e *env) interrupts(sigs <-chan os.Signal, cancel func()) {
	<-sigs
	cancel()
	<-sigs
	cleanup.RemoveAll()
	const msg = "interrupted twice: stopped at once"
	if log := e.logger.Load(); log != nil {
		log.Error(msg)
	} else {
		fmt.Fprintln(e.stderr, "pwe: "+msg)
	}
	os.Exit(exitRuntime)
}
