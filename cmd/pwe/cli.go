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
	"runtime"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync/atomic"

	"github.com/pwe-project/pwe/internal/runlock"
	"github.com/pwe-project/pwe/pipeline"
	"github.com/pwe-project/pwe/stages"
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

// exitCode maps the outcome of a command to the process exit code, logging
// the error. It is the one place that decides exit codes and the one that
// tells the user a run was interrupted.
func exitCode(err error, log *slog.Logger) int {
	var ue *usageError
	var fit *stages.InterruptedError
	switch {
	case err == nil, errors.Is(err, errHelp):
		return exitOK
	case errors.As(err, &ue):
		log.Error(err.Error())
		return exitUsage
	case errors.As(err, &fit):
		// Where the chains' state is and how to continue, whether pwe fit
		// or pwe run was interrupted.
		log.With(pipeline.StageKey, "fit").Error(fit.Error())
		return exitRuntime
	case errors.Is(err, context.Canceled):
		log.Error("interrupted")
		return exitRuntime
	default:
		var se *pipeline.StageError
		if errors.As(err, &se) {
			log = log.With(pipeline.StageKey, se.Stage)
		}
		log.Error(err.Error())
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
	// terminal and width describe stderr, for progress bars.
	terminal bool
	width    int

	global globalFlags
	rep    *pipeline.Reporter // nil until the global flags are known
	// logger is rep's logger, for the goroutine that handles signals.
	logger atomic.Pointer[slog.Logger]
}

// globalFlags are accepted before the command name and among any command's
// flags.
type globalFlags struct {
	progress  string
	quiet     bool
	logFormat string
}

func (g *globalFlags) declare(fs *flag.FlagSet) {
	if g.progress == "" {
		g.progress, g.logFormat = "auto", "text"
	}
	fs.StringVar(&g.progress, "progress", g.progress, "progress `mode`: auto (a bar on a terminal, a line every 10s otherwise), always or never")
	fs.BoolVar(&g.quiet, "quiet", g.quiet, "print errors only: no messages, no progress")
	fs.StringVar(&g.logFormat, "log-format", g.logFormat, "messages on stderr as `text` or json (one object per line, for log collectors)")
}

// globalNames are the names globalFlags declares, to tell them from a
// command's own flags in its help.
var globalNames = func() map[string]bool {
	names := map[string]bool{}
	var g globalFlags
	fs := flag.NewFlagSet("", flag.ContinueOnError)
	g.declare(fs)
	fs.VisitAll(func(f *flag.Flag) { names[f.Name] = true })
	return names
}()

// configure builds the Reporter from the global flags. A bad value is a
// usage error, reported with the default settings.
func (e *env) configure() error {
	cfg := pipeline.ReporterConfig{Quiet: e.global.quiet, Terminal: e.terminal, Width: e.width}
	var err error
	if cfg.Progress, err = pipeline.ParseProgressMode(e.global.progress); err != nil {
		err = usagef("--progress %q: want auto, always or never", e.global.progress)
	} else if cfg.Format, err = pipeline.ParseLogFormat(e.global.logFormat); err != nil {
		err = usagef("--log-format %q: want text or json", e.global.logFormat)
	}
	if err != nil {
		cfg = pipeline.ReporterConfig{Terminal: e.terminal, Width: e.width}
	}
	e.rep = pipeline.NewReporter(e.stderr, cfg)
	e.logger.Store(e.rep.Logger())
	return err
}

// usageOut is where the command list goes after a usage error: stderr,
// unless that must hold only errors or only JSON lines.
func (e *env) usageOut() io.Writer {
	if e.global.quiet || e.global.logFormat == "json" {
		return io.Discard
	}
	return e.stderr
}

// stage returns the logger of one stage's messages.
func (e *env) stage(name string) *slog.Logger { return e.rep.Stage(name) }

// lockOutput makes a command's output directory and locks it
// (internal/runlock), as pwe run does its own: two fits into one
// directory, or a fit into a directory that a run is using, would write
// over each other's checkpoints and files. Where the file system cannot
// lock, the command goes on with a warning. release is never nil.
//
// A directory it made is removed again, with the lock's file, if the
// command leaves nothing else in it (it failed before writing): a
// misspelt token must not leave an empty output directory behind.
func (e *env) lockOutput(stage, dir string) (release func() error, err error) {
	_, statErr := os.Stat(dir)
	made := errors.Is(statErr, fs.ErrNotExist)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	lock, err := runlock.Acquire(dir)
	switch {
	case errors.Is(err, runlock.ErrUnsupported):
		e.stage(stage).Warn(err.Error())
	case err != nil:
		return nil, err
	}
	release = func() error {
		err := lock.Release()
		if !made {
			return err
		}
		if entries, _ := os.ReadDir(dir); len(entries) == 1 && entries[0].Name() == runlock.File {
			os.Remove(filepath.Join(dir, runlock.File))
			os.Remove(dir)
		}
		return err
	}
	// A directory inside a pwe run's output (its fit/) is the run's too.
	if err := runlock.Free(filepath.Dir(filepath.Clean(dir))); err != nil {
		release()
		return nil, err
	}
	return release, nil
}

var commands []*command

func register(c *command) { commands = append(commands, c) }

// main runs pwe with args and returns the exit code.
func (e *env) main(ctx context.Context, args []string) int {
	err := e.run(ctx, args)
	if e.rep == nil {
		e.configure()
	}
	return exitCode(err, e.rep.Logger())
}

func (e *env) run(ctx context.Context, args []string) error {
	gfs := flag.NewFlagSet("pwe", flag.ContinueOnError)
	gfs.SetOutput(io.Discard)
	e.global.declare(gfs)
	showVersion := gfs.Bool("version", false, "print the version")
	err := gfs.Parse(args)
	if cerr := e.configure(); err == nil {
		err = cerr
	}
	switch {
	case errors.Is(err, flag.ErrHelp):
		printUsage(e.stdout)
		return nil
	case err != nil:
		return usagef("%v (see pwe help)", err)
	case *showVersion:
		fmt.Fprintln(e.stdout, "pwe", versionString())
		return nil
	}
	args = gfs.Args()
	if len(args) == 0 {
		printUsage(e.usageOut())
		return usagef("no command given")
	}
	name := args[0]
	switch name {
	case "help":
		if len(args) > 1 {
			return e.run(ctx, []string{args[1], "--help"})
		}
		printUsage(e.stdout)
		return nil
	case "version":
		fmt.Fprintln(e.stdout, "pwe", versionString())
		return nil
	}
	for _, c := range commands {
		if c.name == name {
			return c.exec(ctx, args[1:], e)
		}
	}
	printUsage(e.usageOut())
	return usagef("unknown command %q", name)
}

func (c *command) exec(ctx context.Context, args []string, e *env) error {
	fs := flag.NewFlagSet("pwe "+c.name, flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	runFn := c.setup(fs, e)
	e.global.declare(fs)
	pos, err := parseInterspersed(fs, args)
	if cerr := e.configure(); err == nil && cerr != nil {
		return cerr
	}
	if errors.Is(err, flag.ErrHelp) {
		c.printHelp(e.stdout, fs)
		return errHelp
	}
	if err != nil {
		return usagef("%s: %v (see pwe %s --help)", c.name, err, c.name)
	}
	if err := checkGiven(fs, c.name); err != nil {
		return err
	}
	defer startProfile(e.rep.Logger())()
	return runFn(ctx, pos)
}

// checkGiven refuses flag values that the stages would not refuse but would
// read as something else: zero for the settings of stages.ZeroIsUnset
// (taken as unset, so that the default would run), a negative --threads
// (taken as every core), and an output named like a flag (-o followed by
// another flag takes it as the output's name).
func checkGiven(fs *flag.FlagSet, command string) error {
	var err error
	fs.Visit(func(f *flag.Flag) {
		v, perr := strconv.ParseFloat(f.Value.String(), 64)
		switch {
		case err == nil && f.Name == "o" && strings.HasPrefix(f.Value.String(), "-") && f.Value.String() != "-":
			// `-o --quiet` would write a file named --quiet.
			err = usagef("%s: -o %s: that is a flag, not a file name; name the output after -o", command, f.Value)
		case err != nil || perr != nil:
		case f.Name == "threads" && v < 0:
			err = usagef("%s: --threads %s: want 0 (every core) or more", command, f.Value)
		case v == 0 && slices.Contains(stages.ZeroIsUnset[command], strings.ReplaceAll(f.Name, "-", "_")):
			err = usagef("%s: --%s 0: pwe reads 0 as not set and would use the default, %s; give the value you mean",
				command, f.Name, f.DefValue)
		}
	})
	return err
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
		if !globalNames[f.Name] {
			printFlag(w, f)
		}
	})
	printGlobalFlags(w)
	if c.example != "" {
		fmt.Fprintf(w, "\nexample:\n%s\n", c.example)
	}
}

func printFlag(w io.Writer, f *flag.Flag) {
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
}

// printGlobalFlags lists the global flags with their defaults, whatever
// this invocation set them to.
func printGlobalFlags(w io.Writer) {
	fmt.Fprintln(w, "\nglobal flags (before or after the command name):")
	var g globalFlags
	fs := flag.NewFlagSet("", flag.ContinueOnError)
	g.declare(fs)
	fs.VisitAll(func(f *flag.Flag) { printFlag(w, f) })
}

func printUsage(w io.Writer) {
	fmt.Fprintln(w, "pwe: posterior word embeddings with honest uncertainty\n\nusage: pwe COMMAND [flags] [args]\n\ncommands:")
	sorted := append([]*command(nil), commands...)
	sort.Slice(sorted, func(i, j int) bool { return sorted[i].name < sorted[j].name })
	for _, c := range sorted {
		fmt.Fprintf(w, "  %-10s %s\n", c.name, firstLine(c.summary))
	}
	printGlobalFlags(w)
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
// machine alone. Zero keeps every core. More threads than the machine
// gives the process run as goroutines on its cores: the runtime would
// otherwise make a processor each, and its collector a worker for every
// fourth (--threads 20000 took 18 s and 570 MB for 200 lines of text).
// It returns the threads that compute in parallel, n or fewer (0 stays 0),
// for the stages whose goroutines only compute: a fit on 20 000 would
// hold scratch space for each to no gain. Tokenize, count and movielens
// take the threads asked for as workers, as many as --memory holds.
func limitThreads(n int) int {
	if n <= 0 {
		return n
	}
	n = min(n, defaultProcs)
	runtime.GOMAXPROCS(n)
	return n
}

// defaultProcs is the cores the process may use, as the runtime found them
// (its CPU affinity and quota, or $GOMAXPROCS).
var defaultProcs = runtime.GOMAXPROCS(0)
