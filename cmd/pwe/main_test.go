package main

import (
	"bytes"
	"context"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/pwe-project/pwe/pipeline"
	"github.com/pwe-project/pwe/stages"
)

func runPwe(args ...string) (stdout, stderr string, code int) {
	var out, errb bytes.Buffer
	e := &env{stdout: &out, stderr: &errb}
	code = e.main(context.Background(), args)
	return out.String(), errb.String(), code
}

func TestExitCodes(t *testing.T) {
	outDir := t.TempDir()
	tempFile := filepath.Join(outDir, "file")
	if err := os.WriteFile(tempFile, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		args []string
		code int
		msg  string
	}{
		{nil, exitUsage, "no command"},
		{[]string{"frobnicate"}, exitUsage, "unknown command"},
		{[]string{"tokenize", "--no-such-flag"}, exitUsage, "no-such-flag"},
		{[]string{"tokenize", "x.txt"}, exitUsage, "no output"},
		{[]string{"tokenize", "x.txt", "-o", "v.parquet", "--memory", "100KiB"}, exitUsage, "memory budget 100KiB, want at least 1MiB"},
		{[]string{"count", "x.txt", "-o", "c.parquet"}, exitUsage, "no vocabulary"},
		{[]string{"fit", "--counts", "c", "--vocab", "v", "-o", "d", "--dim", "5000"}, exitUsage, "dim 5000"},
		// Zero would read as unset, and the default run instead.
		{[]string{"count", "x.txt", "--vocab", "v", "-o", "c.parquet", "--window", "0"}, exitUsage, "--window 0: pwe reads 0 as not set and would use the default, 5"},
		{[]string{"fit", "--counts", "c", "--vocab", "v", "-o", "d", "--draws=0"}, exitUsage, "--draws 0"},
		{[]string{"count", "x.txt", "--vocab", "v", "-o", "c.parquet", "--memory", "0"}, exitUsage, "at least a byte"},
		{[]string{"tokenize", "x.txt", "-o", "v.parquet", "--threads", "-1"}, exitUsage, "--threads -1"},
		{[]string{"count", "x.txt", "--vocab", "v", "-o", "c.parquet", "--negatives", "-1"}, exitUsage, "negatives -1 is negative"},
		// Where zero means what it says, it passes (and the missing files fail).
		{[]string{"count", "/no/such.txt", "--vocab", "/no/v.parquet", "-o", filepath.Join(t.TempDir(), "c.parquet"),
			"--negatives", "0", "--seed", "0", "--subsample", "0", "--threads", "0", "--neg-power", "0"}, exitRuntime, "/no/v.parquet"},
		{[]string{"count", "x.txt", "--vocab", "v", "-o", "c.parquet", "--neg-power", "-1"}, exitUsage, "negative power -1, want a finite number >= 0"},
		{[]string{"tokenize", "/no/such/file.txt", "-o", filepath.Join(t.TempDir(), "v.parquet")}, exitRuntime, "/no/such/file.txt"},
		{[]string{"inspect", "/no/such.parquet"}, exitRuntime, "no/such.parquet"},
		{[]string{"inspect", "/no/such.parquet", "--rows", "-2"}, exitUsage, "--rows -2: want a count of rows, or -1 for all"},
		{[]string{"tokenize", "x.txt", "-o", "--quiet"}, exitUsage, "tokenize: -o --quiet: that is a flag, not a file name"},
		// An output that names a directory is refused before the inputs are
		// read (these do not exist).
		{[]string{"tokenize", "/no/such/file.txt", "-o", outDir}, exitRuntime, outDir + " is a directory, not a file to write"},
		{[]string{"tokenize", "/no/such/file.txt", "-o", filepath.Join(outDir, "v.parquet"), "--tokens", outDir}, exitRuntime, outDir + " is a directory"},
		{[]string{"count", "/no/such.txt", "--vocab", "/no/v.parquet", "-o", outDir}, exitRuntime, outDir + " is a directory, not a file to write"},
		// So is a temporary directory that cannot be made (here, below a file).
		{[]string{"tokenize", "/no/such/file.txt", "-o", filepath.Join(outDir, "v.parquet"), "--temp-dir", filepath.Join(tempFile, "sub")}, exitRuntime, "temporary directory " + filepath.Join(tempFile, "sub") + ": mkdir " + tempFile},
		{[]string{"count", "/no/such.txt", "--vocab", "/no/v.parquet", "-o", filepath.Join(outDir, "c.parquet"), "--temp-dir", filepath.Join(tempFile, "sub")}, exitRuntime, "temporary directory " + filepath.Join(tempFile, "sub") + ": mkdir " + tempFile},
		{[]string{"version"}, exitOK, ""},
	}
	for _, c := range cases {
		_, stderr, code := runPwe(c.args...)
		if code != c.code || !strings.Contains(stderr, c.msg) {
			t.Errorf("pwe %v: exit %d, stderr %q; want exit %d mentioning %q", c.args, code, stderr, c.code, c.msg)
		}
	}
}

// TestExitCodeInterrupted checks the message and exit code of an
// interrupted command: a fit's says where the chains' state is and how to
// continue (pwe fit's, or pwe run's as pipeline words it), once, even
// under --quiet.
func TestExitCodeInterrupted(t *testing.T) {
	cases := []struct {
		err  error
		want string
	}{
		{fmt.Errorf("fit: %w", &stages.InterruptedError{Checkpoint: "out/checkpoint", Err: context.Canceled}),
			"fit: interrupted; the chains' state is saved in out/checkpoint: run the same command with --resume to continue\n"},
		{fmt.Errorf("run: fit: %w", &stages.InterruptedError{Checkpoint: "out/.pwe-staging/fit/checkpoint",
			HowToResume: "run the same pwe run again to continue (--force starts over)", Err: context.Canceled}),
			"fit: interrupted; the chains' state is saved in out/.pwe-staging/fit/checkpoint: run the same pwe run again to continue (--force starts over)\n"},
		{fmt.Errorf("tokenize: %w", context.Canceled), "pwe: interrupted\n"},
	}
	for _, c := range cases {
		var log bytes.Buffer
		code := exitCode(c.err, pipeline.NewReporter(&log, pipeline.ReporterConfig{Quiet: true}).Logger())
		if code != exitRuntime || log.String() != c.want {
			t.Errorf("%v: exit %d, message %q; want exit %d, %q", c.err, code, log.String(), exitRuntime, c.want)
		}
	}
}

// TestHelp checks that every command documents its flags and an example,
// and that no flag's line gives its default twice (the help adds it).
func TestHelp(t *testing.T) {
	for _, c := range commands {
		stdout, _, code := runPwe(c.name, "--help")
		if code != exitOK || !strings.Contains(stdout, "usage: pwe "+c.name) || !strings.Contains(stdout, "example:") {
			t.Errorf("pwe %s --help: exit %d, output lacks usage or example:\n%s", c.name, code, stdout)
		}
		for _, line := range strings.Split(stdout, "\n") {
			if strings.Count(line, "(default") > 1 {
				t.Errorf("pwe %s --help gives a default twice: %q", c.name, line)
			}
		}
	}
}

// TestTokenizeCountInspect runs the text stages through the command line,
// with flags after the positional arguments.
func TestTokenizeCountInspect(t *testing.T) {
	dir := t.TempDir()
	vocab, counts := filepath.Join(dir, "v.parquet"), filepath.Join(dir, "c.parquet")
	if _, stderr, code := runPwe("tokenize", "../../testdata/kjv-150.txt", "-o", vocab, "--max-vocab", "50"); code != exitOK {
		t.Fatalf("tokenize: %s", stderr)
	}
	if _, stderr, code := runPwe("count", "../../testdata/kjv-150.txt", "--vocab", vocab, "-o", counts, "--window", "2", "--memory", "1MiB"); code != exitOK {
		t.Fatalf("count: %s", stderr)
	}
	stdout, stderr, code := runPwe("inspect", counts, "--rows", "2")
	if code != exitOK || !strings.Contains(stdout, "pwe.counts/1") || !strings.Contains(stdout, `"window": 2`) {
		t.Fatalf("inspect: exit %d\n%s\n%s", code, stdout, stderr)
	}
	if lines := strings.Count(stdout[strings.Index(stdout, "rows ("):], "\n"); lines != 3 {
		t.Errorf("inspect --rows 2 printed %d row lines:\n%s", lines-1, stdout)
	}
}

// TestTextWarnings checks that pwe tokenize and pwe count warn of
// invalid UTF-8 in the corpus they read, naming the line of the first, and
// that count does not repeat
// the warning when it reads tokenize's token stream instead.
func TestTextWarnings(t *testing.T) {
	dir := t.TempDir()
	corpus, vocab, counts := filepath.Join(dir, "corpus.txt"), filepath.Join(dir, "v.parquet"), filepath.Join(dir, "c.parquet")
	tokens := filepath.Join(dir, "tokens.bin")
	if err := os.WriteFile(corpus, []byte("the cat sat on the mat\nthe dog ate the caf\xff\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		args []string
		warn bool
	}{
		{[]string{"tokenize", corpus, "-o", vocab, "--tokens", tokens}, true},
		{[]string{"count", corpus, "--vocab", vocab, "-o", counts}, true},
		{[]string{"count", "--tokens", tokens, "--vocab", vocab, "-o", counts}, false},
	} {
		_, stderr, code := runPwe(c.args...)
		warning := c.args[0] + ": warning: replaced 1 bytes of invalid UTF-8, the first in " + corpus + ":2\n"
		if code != exitOK || strings.Contains(stderr, warning) != c.warn {
			t.Errorf("pwe %v: exit %d, stderr %q; want the warning %q: %v", c.args, code, stderr, warning, c.warn)
		}
	}
}

// TestCountWarnsOfNoPairs: a corpus whose documents form no pair inside
// the vocabulary is counted, with a warning that says why the counts are
// empty; one pair is enough to silence it.
func TestCountWarnsOfNoPairs(t *testing.T) {
	dir := t.TempDir()
	vocab, counts := filepath.Join(dir, "v.parquet"), filepath.Join(dir, "c.parquet")
	write := func(name, text string) string {
		path := filepath.Join(dir, name)
		if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		return path
	}
	if _, stderr, code := runPwe("tokenize", write("corpus.txt", "the cat sat\n"), "-o", vocab); code != exitOK {
		t.Fatalf("tokenize: exit %d: %s", code, stderr)
	}
	warning := "count: warning: no pair formed: no two in-vocabulary tokens of a document lie within the window (2 of 5 tokens are out of the vocabulary)"
	for _, c := range []struct {
		text string
		warn bool
	}{
		{"the\ndog cat\nsat\nmat\n", true},
		{"the\ndog cat sat\n", false},
	} {
		_, stderr, code := runPwe("count", write("new.txt", c.text), "--vocab", vocab, "-o", counts)
		if code != exitOK || strings.Contains(stderr, warning) != c.warn {
			t.Errorf("count %q: exit %d, stderr %q; want the warning %q: %v", c.text, code, stderr, warning, c.warn)
		}
	}
}

// TestCountWarnsOfFewerWorkers: more threads than the memory budget holds
// workers for count on fewer, with a warning; as many as it holds count
// without one; more than counts.MaxWorkers count on that many.
// TestTokenizeWarnsOfFewerWorkers: a budget of 16MiB holds two tokenizing
// workers (one and a quarter of the budget at 2.5 MiB each), which give the
// vocabulary of one thread.
func TestTokenizeWarnsOfFewerWorkers(t *testing.T) {
	// The files are compared whole: their pwe.created_at, in seconds,
	// differed when the runs straddled a second (CI, session 46).
	t.Setenv("SOURCE_DATE_EPOCH", "1700000000")
	dir := t.TempDir()
	var vocabs [][]byte
	for _, threads := range []int{1, 2, 3, 64} {
		vocab := filepath.Join(dir, fmt.Sprintf("v%d.parquet", threads))
		_, stderr, code := runPwe("tokenize", "../../testdata/austen-200.txt", "-o", vocab, "--memory", "16MiB", "--threads", strconv.Itoa(threads))
		want := fmt.Sprintf("tokenize: warning: tokenized on 2 of %d threads: a memory budget of 16MiB holds no more workers; a larger one would use them all\n", threads)
		if code != exitOK || strings.Contains(stderr, want) != (threads > 2) || threads <= 2 && strings.Contains(stderr, "warning") {
			t.Errorf("tokenize on %d threads: exit %d, stderr %q; want the warning %q: %v", threads, code, stderr, want, threads > 2)
		}
		vocabs = append(vocabs, read(t, vocab))
	}
	for i := range vocabs {
		if !bytes.Equal(vocabs[i], vocabs[0]) {
			t.Errorf("vocabulary %d differs from one thread's", i)
		}
	}
}

func TestCountWarnsOfFewerWorkers(t *testing.T) {
	dir := t.TempDir()
	corpus, vocab, counts := filepath.Join(dir, "corpus.txt"), filepath.Join(dir, "v.parquet"), filepath.Join(dir, "c.parquet")
	var text strings.Builder
	for i := range 3000 {
		fmt.Fprintf(&text, "w%d w%d w%d\n", i, (i*7)%3000, (i*13)%3000)
	}
	if err := os.WriteFile(corpus, []byte(text.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, stderr, code := runPwe("tokenize", corpus, "-o", vocab); code != exitOK {
		t.Fatalf("tokenize: exit %d: %s", code, stderr)
	}
	warning := regexp.MustCompile(`count: warning: counted on ([0-9]+) of ([0-9]+) threads: a memory budget of 8MiB holds no more workers for this vocabulary`)
	for _, threads := range []int{64, 2} {
		_, stderr, code := runPwe("count", corpus, "--vocab", vocab, "-o", counts, "--memory", "8MiB", "--threads", strconv.Itoa(threads))
		m := warning.FindStringSubmatch(stderr)
		if code != exitOK || (m != nil) != (threads == 64) || m != nil && (m[2] != "64" || m[1] == "1" || m[1] == "64") {
			t.Errorf("count on %d threads: exit %d, stderr %q; want a warning of fewer workers: %v", threads, code, stderr, threads == 64)
		}
	}
	_, stderr, code := runPwe("count", corpus, "--vocab", vocab, "-o", counts, "--threads", "2000", "--memory", "4GiB")
	if want := "count: warning: counted on 1024 of 2000 threads, the most counting uses\n"; code != exitOK || !strings.Contains(stderr, want) {
		t.Errorf("count on 2000 threads: exit %d, stderr %q; want the warning %q", code, stderr, want)
	}
}

func TestParseInterspersed(t *testing.T) {
	var out, errb bytes.Buffer
	e := &env{stdout: &out, stderr: &errb}
	var got []string
	c := &command{name: "t", setup: func(fs *flag.FlagSet, e *env) func(context.Context, []string) error {
		fs.String("o", "", "")
		return func(_ context.Context, args []string) error { got = args; return nil }
	}}
	if err := c.exec(context.Background(), []string{"a", "-o", "x", "-", "b", "--", "-c"}, e); err != nil {
		t.Fatal(err)
	}
	if want := []string{"a", "-", "b", "-c"}; strings.Join(got, " ") != strings.Join(want, " ") {
		t.Errorf("positional %q, want %q", got, want)
	}
}

// TestFitWarnings checks that a MAP stopped by --map-max-iter is reported
// on stderr as a warning while the fit goes on.
func TestFitWarnings(t *testing.T) {
	dir := t.TempDir()
	vocab, counts, out := filepath.Join(dir, "v.parquet"), filepath.Join(dir, "c.parquet"), filepath.Join(dir, "fit")
	for _, args := range [][]string{
		{"tokenize", "../../testdata/austen-200.txt", "--max-vocab", "50", "-o", vocab},
		{"count", "../../testdata/austen-200.txt", "--vocab", vocab, "-o", counts},
	} {
		if _, stderr, code := runPwe(args...); code != exitOK {
			t.Fatalf("pwe %v: exit %d\n%s", args, code, stderr)
		}
	}
	_, stderr, code := runPwe("fit", "--counts", counts, "--vocab", vocab, "--dim", "2", "--method", "map", "--map-max-iter", "2", "-o", out)
	if want := "fit: warning: posterior: MAP did not converge"; code != exitOK || !strings.Contains(stderr, want) || !strings.Contains(stderr, "continuing from the best point found") {
		t.Errorf("exit %d, stderr %q; want a warning %q", code, stderr, want)
	}
	if _, err := os.Stat(filepath.Join(out, "map.parquet")); err != nil {
		t.Error(err)
	}
	if _, stderr, code := runPwe("fit", "--counts", counts, "--vocab", vocab, "--map-max-iter", "-1", "-o", out); code != exitUsage || !strings.Contains(stderr, "map-max-iter -1") {
		t.Errorf("--map-max-iter -1: exit %d, stderr %q; want a usage error", code, stderr)
	}
}
