package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"

	"github.com/pwe-project/pwe/formats/movielens"
	"github.com/pwe-project/pwe/formats/movielens/mltest"
)

// TestGlobalFlags checks --quiet, --log-format and --progress before and
// after the command name, and that the exit codes do not change.
func TestGlobalFlags(t *testing.T) {
	dir := t.TempDir()
	vocab := filepath.Join(dir, "v.parquet")
	corpus := "../../testdata/kjv-150.txt"
	for _, args := range [][]string{
		{"--quiet", "tokenize", corpus, "-o", vocab},
		{"tokenize", corpus, "-o", vocab, "--quiet"},
		{"--progress", "never", "tokenize", "--quiet", corpus, "-o", vocab},
	} {
		stdout, stderr, code := runPwe(args...)
		if code != exitOK || stderr != "" || stdout != "" {
			t.Errorf("pwe %v: exit %d, stdout %q, stderr %q; want exit 0 and silence", args, code, stdout, stderr)
		}
	}
	// Errors still appear under --quiet.
	_, stderr, code := runPwe("--quiet", "tokenize", "/no/such/file.txt", "-o", vocab)
	if code != exitRuntime || !strings.HasPrefix(stderr, "pwe: tokenize: ") || !strings.Contains(stderr, "/no/such/file.txt") || strings.Count(stderr, "\n") != 1 {
		t.Errorf("quiet failure: exit %d, stderr %q", code, stderr)
	}
	_, stderr, code = runPwe("tokenize", corpus, "--quiet", "--bogus")
	if code != exitUsage || !strings.Contains(stderr, "bogus") {
		t.Errorf("quiet usage error: exit %d, stderr %q", code, stderr)
	}

	// Without --quiet, the summary is one text line; with --log-format
	// json, every line is JSON and the summary carries the stats.
	_, stderr, code = runPwe("tokenize", corpus, "-o", vocab, "--max-vocab", "30")
	if code != exitOK || !strings.HasPrefix(stderr, "tokenize: ") || !strings.Contains(stderr, "vocabulary 30 tokens") {
		t.Errorf("text summary: exit %d, %q", code, stderr)
	}
	for _, args := range [][]string{
		{"--log-format", "json", "tokenize", corpus, "-o", vocab, "--max-vocab", "30"},
		{"tokenize", corpus, "-o", vocab, "--max-vocab", "30", "--log-format=json"},
	} {
		_, stderr, code = runPwe(args...)
		if code != exitOK {
			t.Fatalf("pwe %v: exit %d %s", args, code, stderr)
		}
		var found bool
		sc := bufio.NewScanner(strings.NewReader(stderr))
		for sc.Scan() {
			var rec struct {
				Level, Stage string
				Stats        *struct {
					Tokens    int64 `json:"tokens"`
					VocabSize int   `json:"vocab_size"`
				}
			}
			if err := json.Unmarshal(sc.Bytes(), &rec); err != nil {
				t.Fatalf("pwe %v: stderr line is not JSON: %v\n%s", args, err, sc.Text())
			}
			if rec.Stats != nil {
				found = rec.Stage == "tokenize" && rec.Level == "INFO" && rec.Stats.VocabSize == 30 && rec.Stats.Tokens > 0
			}
		}
		if !found {
			t.Errorf("pwe %v: no summary record with the stats:\n%s", args, stderr)
		}
	}
	_, stderr, code = runPwe("--log-format", "json", "tokenize", "/no/such/file.txt", "-o", vocab)
	var rec struct{ Level, Msg string }
	if err := json.Unmarshal([]byte(stderr), &rec); code != exitRuntime || err != nil || rec.Level != "ERROR" || !strings.Contains(rec.Msg, "/no/such/file.txt") {
		t.Errorf("JSON error: exit %d, %q (%v)", code, stderr, err)
	}

	for _, args := range [][]string{
		{"--progress", "sometimes", "version"},
		{"tokenize", corpus, "-o", vocab, "--log-format", "xml"},
		{"--log-format", "json", "frobnicate"},
	} {
		_, stderr, code := runPwe(args...)
		if code != exitUsage || stderr == "" {
			t.Errorf("pwe %v: exit %d, stderr %q; want a usage error", args, code, stderr)
		}
	}
	stdout, _, code := runPwe("tokenize", "--help")
	if code != exitOK || !strings.Contains(stdout, "global flags") || !strings.Contains(stdout, "--log-format") {
		t.Errorf("tokenize --help lacks the global flags:\n%s", stdout)
	}
}

// TestEveryCommandQuietAndJSON runs every command twice: with --quiet it
// must succeed with nothing on stderr, and with --log-format json every
// line on stderr must be a JSON record, the command's own messages among
// them. Data (evaluate's table, inspect's dump) stays on stdout either way.
func TestEveryCommandQuietAndJSON(t *testing.T) {
	dir := t.TempDir()
	p := func(name string) string { return filepath.Join(dir, name) }
	corpus := "../../testdata/kjv-150.txt"
	var ml bytes.Buffer
	w := mltest.NewRatingWriter(&ml, movielens.FormatCSV, mltest.Options{})
	for _, r := range mltest.Collect(mltest.Config{Users: 60, Movies: 30, MeanRatings: 12, MinRatings: 2, Zipf: 1.1, Seed: 1}) {
		w.Write(r)
	}
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p("ratings.csv"), ml.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	abs, err := filepath.Abs(corpus)
	if err != nil {
		t.Fatal(err)
	}
	runConfig := fmt.Sprintf("output: run\nseed: 1\ninput: {paths: [%s]}\ntokenize: {max_vocab: 30}\nskip_fit: true\n", abs)
	if err := os.WriteFile(p("run.yaml"), []byte(runConfig), 0o644); err != nil {
		t.Fatal(err)
	}
	fitArgs := []string{"--dim", "2", "--chains", "2", "--warmup", "10", "--draws", "10", "--threads", "1"}

	// In order: later commands read what earlier ones wrote.
	steps := []struct {
		args []string
		data bool // prints data on stdout
		logs bool // logs at least one message of its own
	}{
		{[]string{"tokenize", corpus, "-o", p("v.parquet"), "--max-vocab", "50"}, false, true},
		{[]string{"count", corpus, "--vocab", p("v.parquet"), "-o", p("c.parquet"), "--window", "2"}, false, true},
		{[]string{"movielens", p("ratings.csv"), "-o", p("ml")}, false, true},
		{append([]string{"fit", "--counts", p("c.parquet"), "--vocab", p("v.parquet"), "-o", p("fit")}, fitArgs...), false, true},
		{[]string{"summarize", p("fit"), "--pairs-all-among", "the,and,of", "--neighbours", "god", "--top", "3"}, false, true},
		{[]string{"export", p("fit"), "--format", "word2vec", "-o", p("vectors.txt")}, false, true},
		{[]string{"report", p("fit"), "-o", p("report.html")}, false, true},
		{[]string{"simulate", "--vocab-size", "8", "--dim", "2", "--observations", "2000", "-o", p("sim")}, false, true},
		{[]string{"split", p("sim/counts.parquet"), "--test-fraction", "0.2", "-o", p("sim")}, false, true},
		{[]string{"evaluate", p("fit"), "--heldout", p("c.parquet")}, true, true},
		{[]string{"run", p("run.yaml")}, false, true},
		{[]string{"inspect", p("v.parquet"), "--rows", "2"}, true, false},
	}
	covered := map[string]bool{}
	for _, s := range steps {
		name := s.args[0]
		covered[name] = true
		stdout, stderr, code := runPwe(append([]string{"--quiet"}, s.args...)...)
		if code != exitOK || stderr != "" {
			t.Fatalf("pwe --quiet %v: exit %d, stderr %q; want exit 0 and nothing on stderr", s.args, code, stderr)
		}
		if (stdout != "") != s.data {
			t.Errorf("pwe --quiet %v: stdout %q; want data: %v", s.args, stdout, s.data)
		}

		stdout, stderr, code = runPwe(append(s.args, "--log-format", "json")...)
		if code != exitOK {
			t.Fatalf("pwe %v --log-format json: exit %d\n%s", s.args, code, stderr)
		}
		if (stdout != "") != s.data {
			t.Errorf("pwe %v --log-format json: stdout %q; want data: %v", s.args, stdout, s.data)
		}
		own := false
		for _, line := range strings.Split(strings.TrimSuffix(stderr, "\n"), "\n") {
			if line == "" && stderr == "" {
				continue
			}
			var rec struct{ Level, Msg, Stage string }
			if err := json.Unmarshal([]byte(line), &rec); err != nil || rec.Level == "" || rec.Msg == "" {
				t.Errorf("pwe %v --log-format json: stderr line %q is not a log record (%v)", s.args, line, err)
				continue
			}
			// pwe run's own messages are its stages'.
			own = own || rec.Stage == name || name == "run" && slices.Contains([]string{"tokenize", "count", "movielens", "fit", "summarize", "report"}, rec.Stage)
		}
		if own != s.logs {
			t.Errorf("pwe %v --log-format json: messages of its own %v, want %v:\n%s", s.args, own, s.logs, stderr)
		}
	}
	for _, c := range commands {
		if !covered[c.name] {
			t.Errorf("command %s is not covered by this test", c.name)
		}
	}
}

// TestLimitThreads: --threads beyond the cores the process has makes no
// more processors than those cores, fewer set them, and the compute stages
// get as many threads as run in parallel.
func TestLimitThreads(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(0))
	for _, c := range []struct{ n, want, procs int }{
		{100000, defaultProcs, defaultProcs},
		{1, 1, 1},
		{0, 0, 1}, // 0 leaves the setting alone
		{defaultProcs, defaultProcs, defaultProcs},
	} {
		if got := limitThreads(c.n); got != c.want || runtime.GOMAXPROCS(0) != c.procs {
			t.Errorf("limitThreads(%d) = %d with GOMAXPROCS %d, want %d and %d", c.n, got, runtime.GOMAXPROCS(0), c.want, c.procs)
		}
	}
	if _, stderr, code := runPwe("tokenize", "../../testdata/austen-200.txt", "-o", filepath.Join(t.TempDir(), "v.parquet"), "--threads", "100000"); code != exitOK || runtime.GOMAXPROCS(0) != defaultProcs {
		t.Errorf("tokenize --threads 100000: exit %d, GOMAXPROCS %d, want %d\n%s", code, runtime.GOMAXPROCS(0), defaultProcs, stderr)
	}
}

// TestRunErrorNamesStage: in a JSON log, the error of a run's stage names
// the stage, as the stage's other records do.
func TestRunErrorNamesStage(t *testing.T) {
	dir := t.TempDir()
	corpus := filepath.Join(dir, "corpus.txt.gz")
	if err := os.WriteFile(corpus, []byte{0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 0, 3}, 0o644); err != nil { // a gzip header and nothing else
		t.Fatal(err)
	}
	config := filepath.Join(dir, "run.yaml")
	if err := os.WriteFile(config, []byte("output: out\ninput: {paths: [corpus.txt.gz]}\nskip_fit: true\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	_, stderr, code := runPwe("run", config, "--log-format", "json")
	lines := strings.Split(strings.TrimSpace(stderr), "\n")
	var last map[string]any
	if err := json.Unmarshal([]byte(lines[len(lines)-1]), &last); err != nil {
		t.Fatalf("%v: %q", err, stderr)
	}
	if code != exitRuntime || last["level"] != "ERROR" || last["stage"] != "tokenize" || !strings.Contains(fmt.Sprint(last["msg"]), "corpus.txt.gz") {
		t.Errorf("exit %d, last record %v; want an error of stage tokenize naming the file", code, last)
	}
}

// TestEvaluateWithoutDraws: a sampled fit that kept no draws is measured at
// the MAP alone, which evaluate says, and only then.
func TestEvaluateWithoutDraws(t *testing.T) {
	dir := t.TempDir()
	p := func(name string) string { return filepath.Join(dir, name) }
	if _, stderr, code := runPwe("--quiet", "simulate", "--vocab-size", "8", "--dim", "2", "--observations", "2000", "-o", p("sim")); code != exitOK {
		t.Fatal(stderr)
	}
	const warning = "only the MAP is measured"
	for _, save := range []string{"none", "all"} {
		fit := p("fit-" + save)
		_, stderr, code := runPwe("--quiet", "fit", "--counts", p("sim/counts.parquet"), "--vocab", p("sim/vocab.parquet"), "-o", fit,
			"--dim", "2", "--chains", "2", "--warmup", "10", "--draws", "10", "--threads", "1", "--save-draws", save)
		if code != exitOK {
			t.Fatal(stderr)
		}
		stdout, stderr, code := runPwe("evaluate", fit, "--truth", p("sim/truth.parquet"))
		if code != exitOK {
			t.Fatal(stderr)
		}
		if strings.Contains(stderr, warning) != (save == "none") {
			t.Errorf("--save-draws %s: stderr %q", save, stderr)
		}
		if rows := strings.Count(stdout, "\n") - 1; (rows == 1) != (save == "none") {
			t.Errorf("--save-draws %s: %d figures:\n%s", save, rows, stdout)
		}
	}
}
