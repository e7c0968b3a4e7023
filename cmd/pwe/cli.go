package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"runtime"
	"sort"
	"strings"
)

// Exit codes: DESIGN.md section 4.
const (
	exitOK      = 0
	exitRuntime = 1
	exitUsage   = 2
)

// usageError marks errors in the command line; they exit with code 2.
type usageError struct{ msg string }

func (e *usageError) Error() string { return e.msg }

func usagef(format string, args ...any) error {
	return &usageError{fmt.Sprintf(format, args...)}
}

// errHelp is returned after --help printed the usage: exit 0.
var errHelp = errors.New("help requested")

// exitCode maps the outcome of a command to the process exit code, printing
// the error. It is the one place that decides exit codes.
func exitCode(err error, stderr io.Writer) int {
	var ue *usageError
	switch {
	case err == nil, errors.Is(err, errHelp):
		return exitOK
	case errors.As(err, &ue):
		fmt.Fprintf(stderr, "pwe: %v\n", err)
		return exitUsage
	case errors.Is(err, context.Canceled):
		fmt.Fprintln(stderr, "pwe: interrupted")
		return exitRuntime
	default:
		fmt.Fprintf(stderr, "pwe: %v\n", err)
		return exitRuntime
	}
}

// command is one pwe subcommand.
type command struct {
	name    string
	args    string // synopsis of the positional arguments
	summary string
	example string
	// setup declares the flags on fs and returns the function that runs the
	// command with the positional arguments.
	setup func(fs *flag.FlagSet, env *env) func(ctx context.Context, args []string) error
}

// env is what a command sees of the process.
type env struct {
	stdout, stderr io.Writer
}

var commands []*command

func register(c *command) { commands = append(commands, c) }

func run(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	e := &env{stdout: stdout, stderr: stderr}
	if len(args) == 0 {
		printUsage(stderr)
		return usagef("no command given")
	}
	name := args[0]
	switch name {
	case "help", "-h", "--help":
		if len(args) > 1 {
			return run(ctx, []string{args[1], "--help"}, stdout, stderr)
		}
		printUsage(stdout)
		return nil
	case "version", "--version":
		fmt.Fprintln(stdout, "pwe", versionString())
		return nil
	}
	for _, c := range commands {
		if c.name == name {
			return c.exec(ctx, args[1:], e)
		}
	}
	printUsage(stderr)
	return usagef("unknown command %q", name)
}

func (c *command) exec(ctx context.Context, args []string, e *env) error {
	fs := flag.NewFlagSet("pwe "+c.name, flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	runFn := c.setup(fs, e)
	pos, err := parseInterspersed(fs, args)
	if errors.Is(err, flag.ErrHelp) {
		c.printHelp(e.stdout, fs)
		return errHelp
	}
	if err != nil {
		return usagef("%s: %v (see pwe %s --help)", c.name, err, c.name)
	}
	return runFn(ctx, pos)
}

// parseInterspersed parses flags wherever they stand among the positional
// arguments, as users write `pwe tokenize a.txt b.txt -o vocab.parquet`.
// "--" ends the flags; a lone "-" is a positional argument (standard input).
func parseInterspersed(fs *flag.FlagSet, args []string) ([]string, error) {
	var pos []string
	for {
		if err := fs.Parse(args); err != nil {
			return nil, err
		}
		rest := fs.Args()
		if len(rest) == 0 {
			return pos, nil
		}
		if len(args) > 0 && len(rest) < len(args) && args[len(args)-len(rest)-1] == "--" {
			return append(pos, rest...), nil
		}
		pos = append(pos, rest[0])
		args = rest[1:]
	}
}

func (c *command) printHelp(w io.Writer, fs *flag.FlagSet) {
	fmt.Fprintf(w, "usage: pwe %s %s\n\n%s\n\nflags:\n", c.name, c.args, c.summary)
	fs.VisitAll(func(f *flag.Flag) {
		name, usage := flag.UnquoteUsage(f)
		dash := "--"
		if len(f.Name) == 1 {
			dash = "-"
		}
		line := "  " + dash + f.Name
		if name != "" {
			line += " " + name
		}
		fmt.Fprintf(w, "%-28s %s", line, usage)
		if f.DefValue != "" && f.DefValue != "0" && f.DefValue != "false" && f.DefValue != "[]" {
			fmt.Fprintf(w, " (default %s)", f.DefValue)
		}
		fmt.Fprintln(w)
	})
	if c.example != "" {
		fmt.Fprintf(w, "\nexample:\n%s\n", c.example)
	}
}

func printUsage(w io.Writer) {
	fmt.Fprintln(w, "pwe: posterior word embeddings with honest uncertainty\n\nusage: pwe COMMAND [flags] [args]\n\ncommands:")
	sorted := append([]*command(nil), commands...)
	sort.Slice(sorted, func(i, j int) bool { return sorted[i].name < sorted[j].name })
	for _, c := range sorted {
		fmt.Fprintf(w, "  %-10s %s\n", c.name, firstLine(c.summary))
	}
	fmt.Fprintln(w, "\nRun 'pwe COMMAND --help' for a command's flags and an example.")
}

func firstLine(s string) string {
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		return s[:i]
	}
	return s
}

// limitThreads makes --threads bound the cores the whole process uses (the
// reader, the workers and the garbage collector), not only the worker
// goroutines, so that `--threads 1` leaves the other cores of a shared
// machine alone. Zero keeps every core.
func limitThreads(n int) {
	if n > 0 {
		runtime.GOMAXPROCS(n)
	}
}
