package pipeline

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/pwe-project/pwe/formats"
	"github.com/pwe-project/pwe/formats/input"
	"github.com/pwe-project/pwe/internal/runlock"
	"github.com/pwe-project/pwe/stages"
)

const config = `
output: out
seed: 3
input:
  paths: [../testdata/austen-200.txt]
  doc_sep: blank
tokenize:
  max_vocab: 40
count:
  window: 3
fit:
  dim: 2
  chains: 2
  warmup: 20
  draws: 20
`

func loadConfig(t *testing.T, dir, text string) Config {
	t.Helper()
	path := filepath.Join(dir, "run.yaml")
	// The config lives in dir but names the fixture relative to the
	// package directory, so rewrite it as an absolute path.
	abs, err := filepath.Abs("../testdata/austen-200.txt")
	if err != nil {
		t.Fatal(err)
	}
	text = strings.Replace(text, "../testdata/austen-200.txt", abs, 1)
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	cfg, err := Load(path)
	if err != nil {
		t.Fatal(err)
	}
	return cfg
}

func TestRunSkipRerunForce(t *testing.T) {
	dir := t.TempDir()
	cfg := loadConfig(t, dir, config)
	if cfg.Output != filepath.Join(dir, "out") {
		t.Fatalf("output %q, want it relative to the config file", cfg.Output)
	}
	ctx := context.Background()
	rep, err := Run(ctx, cfg, Options{})
	if err != nil {
		t.Fatal(err)
	}
	all := []string{"tokenize", "count", "fit"}
	if !slices.Equal(rep.Ran, all) {
		t.Fatalf("first run ran %v, want %v", rep.Ran, all)
	}
	for _, f := range []string{VocabFile, CountsFile, "fit/map.parquet", "fit/draws.parquet", "fit/summary.parquet", "fit/sample_stats.parquet", ManifestFile} {
		if _, err := os.Stat(filepath.Join(cfg.Output, f)); err != nil {
			t.Errorf("missing output: %v", err)
		}
	}
	man, err := readManifest(filepath.Join(cfg.Output, ManifestFile))
	if err != nil {
		t.Fatal(err)
	}
	if len(man.Stages) != 3 {
		t.Fatalf("manifest has %d stages", len(man.Stages))
	}
	for _, r := range man.Stages {
		if r.Key == "" || len(r.Inputs) == 0 || len(r.Outputs) == 0 || r.Version == "" || r.End.Before(r.Start) || r.PeakRSS <= 0 {
			t.Errorf("incomplete manifest record %+v", r)
		}
	}
	if fit := man.find("fit"); fit.Seed != 3 {
		t.Errorf("fit seed %d, want the run's seed 3", fit.Seed)
	}

	rep, err = Run(ctx, cfg, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Ran) != 0 || !slices.Equal(rep.Skipped, all) {
		t.Fatalf("unchanged rerun ran %v, skipped %v", rep.Ran, rep.Skipped)
	}

	// A count setting changes: count and fit re-run, tokenize does not.
	cfg.Count.Window = 4
	rep, err = Run(ctx, cfg, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(rep.Ran, []string{"count", "fit"}) || !slices.Equal(rep.Skipped, []string{"tokenize"}) {
		t.Fatalf("after changing the window: ran %v, skipped %v", rep.Ran, rep.Skipped)
	}
	_, meta, err := formats.ReadAll[formats.CountRow](filepath.Join(cfg.Output, CountsFile), formats.SchemaCounts)
	if raw, _ := meta.Config.(json.RawMessage); err != nil || !strings.Contains(string(raw), `"window":4`) {
		t.Errorf("counts.parquet was not rewritten with window 4: %s %v", raw, err)
	}

	// An output altered behind pwe's back makes its stage stale.
	if err := os.WriteFile(filepath.Join(cfg.Output, "fit", "map.parquet"), []byte("junk"), 0o644); err != nil {
		t.Fatal(err)
	}
	rep, err = Run(ctx, cfg, Options{})
	if err != nil || !slices.Equal(rep.Ran, []string{"fit"}) {
		t.Fatalf("after damaging map.parquet: ran %v (%v), want fit", rep.Ran, err)
	}

	rep, err = Run(ctx, cfg, Options{Force: true})
	if err != nil || !slices.Equal(rep.Ran, all) {
		t.Fatalf("--force ran %v (%v)", rep.Ran, err)
	}
}

// TestRunHeapAdvice checks that Run advises huge pages for the heap once,
// before the first of tokenize and count that runs, and withdraws the
// advice once, after the last of them and before fit.
func TestRunHeapAdvice(t *testing.T) {
	dir := t.TempDir()
	cfg := loadConfig(t, dir, config)
	var events []string
	exists := func(name string) bool {
		_, err := os.Stat(filepath.Join(cfg.Output, name))
		return err == nil
	}
	defer func(f func(int64) func()) { adviseHeap = f }(adviseHeap)
	adviseHeap = func(n int64) func() {
		if n != int64(cfg.Memory) {
			t.Errorf("advice for %d bytes, want the run's budget %d", n, int64(cfg.Memory))
		}
		events = append(events, "advise")
		return func() {
			// Count's output is in place, fit's is not.
			if !exists(CountsFile) || exists("fit/map.parquet") {
				t.Errorf("advice withdrawn with counts.parquet there %v, fit/map.parquet there %v", exists(CountsFile), exists("fit/map.parquet"))
			}
			events = append(events, "withdraw")
		}
	}
	ctx := context.Background()
	for _, c := range []struct {
		window int
		ran    []string
	}{{3, []string{"tokenize", "count", "fit"}}, {4, []string{"count", "fit"}}} {
		events = nil
		os.RemoveAll(filepath.Join(cfg.Output, "fit"))
		cfg.Count.Window = c.window
		rep, err := Run(ctx, cfg, Options{})
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(rep.Ran, c.ran) {
			t.Fatalf("ran %v, want %v", rep.Ran, c.ran)
		}
		if want := []string{"advise", "withdraw"}; !slices.Equal(events, want) {
			t.Errorf("running %v: %v, want %v", c.ran, events, want)
		}
	}
}

func TestLoadRejects(t *testing.T) {
	dir := t.TempDir()
	// Each error names the file and says what is wrong (want).
	cases := map[string]struct{ text, want string }{
		"unknown key":    {"output: x\ninput: {paths: [a]}\ntokenize: {max_vocabb: 3}\n", "max_vocabb"},
		"no input":       {"output: x\n", "input"},
		"both inputs":    {"output: x\ninput: {paths: [a]}\nmovielens: {ratings: r.csv}\n", "exactly one input"},
		"bad memory":     {"output: x\nmemory: lots\ninput: {paths: [a]}\n", `"lots" is not a size`},
		"zero memory":    {"output: x\nmemory: 0\ninput: {paths: [a]}\n", "at least a byte"},
		"zero window":    {"output: x\ninput: {paths: [a]}\ncount: {window: 0}\n", "line 3: count: window 0"},
		"zero draws":     {"output: x\ninput: {paths: [a]}\nfit:\n  chains: 2\n  draws: 0.0\n", "line 5: fit: draws 0"},
		"threads":        {"output: x\nthreads: -2\ninput: {paths: [a]}\n", "threads -2"},
		"not yaml":       {"output: [x\n", "yaml"},
		"no output here": {"input: {paths: [a]}\n", "no output"},
		"empty":          {"", "holds no settings"},
		"two documents":  {"output: x\ninput: {paths: [a]}\n---\nfit: {dimm: 3}\n", "line 3: a second YAML document"},
		"fraction":       {"output: x\ninput: {paths: [a]}\nfit:\n  dim: 2.5\n", "line 4: dim 2.5: want a whole number"},
		"fraction zero":  {"output: x\ninput: {paths: [a]}\ncount: {window: 0.4}\n", "line 3: window 0.4: want a whole number"},
		"stage's input":  {"output: x\ninput: {paths: [a]}\ntokenize: {input: {paths: [b]}}\n", "field input not found"},
		"late stage":     {"output: x\ninput: {paths: [a]}\ncount: {window: -3}\nsummarize: {neighbours: [a], top: -2}\n", "count: counts: window -3, want 1..1000\nsummarize: top -2"},
		"weighting":      {"output: x\ninput: {paths: [a]}\ncount: {weighting: cubic}\n", "count: "},
		"draws":          {"output: x\ninput: {paths: [a]}\nfit: {draws: -10}\n", "fit: "},
		"summarize top":  {"output: x\ninput: {paths: [a]}\nsummarize: {neighbours: [a], top: -2}\n", "summarize: "},
	}
	for name, c := range cases {
		path := filepath.Join(dir, strings.ReplaceAll(name, " ", "_")+".yaml")
		os.WriteFile(path, []byte(c.text), 0o644)
		if _, err := Load(path); err == nil || !strings.Contains(err.Error(), path) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: error %v, want one naming %s and saying %q", name, err, path, c.want)
		}
	}
}

// TestLoadPaths: -o stands in for a file's missing output, and every path
// of the file is relative to it, the temporary directory's and the file of
// tokens whose draws are kept included.
func TestLoadPaths(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "run.yaml")
	text := "input: {paths: [a.txt]}\ntemp_dir: scratch\nfit: {save_draws: keep.txt}\n"
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := Load(path); err == nil || !strings.Contains(err.Error(), "no output") {
		t.Errorf("no output and no -o: %v", err)
	}
	cfg, err := LoadWithOutput(path, "elsewhere")
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Output != "elsewhere" || cfg.TempDir != filepath.Join(dir, "scratch") || cfg.Fit.SaveDraws != filepath.Join(dir, "keep.txt") ||
		cfg.Input.Paths[0] != filepath.Join(dir, "a.txt") {
		t.Errorf("output %q, temp_dir %q, save_draws %q, input %q; want elsewhere and all else in %s",
			cfg.Output, cfg.TempDir, cfg.Fit.SaveDraws, cfg.Input.Paths, dir)
	}
	abs, err := cfg.absolute()
	if err != nil {
		t.Fatal(err)
	}
	if wd, _ := os.Getwd(); abs.Output != filepath.Join(wd, "elsewhere") || abs.Input.Paths[0] != cfg.Input.Paths[0] {
		t.Errorf("absolute: output %q, input %q", abs.Output, abs.Input.Paths)
	}
}

// TestStageSeeds checks that a stage's seed in the file is its seed, 0
// included, and that a stage without one takes the run's.
func TestStageSeeds(t *testing.T) {
	cases := []struct {
		name, sections     string
		wantCount, wantFit uint64
	}{
		{"none set", "", 3, 3},
		{"zero and seven", "count: {seed: 0}\nfit: {seed: 7}\n", 0, 7},
		{"fit zero", "fit:\n  dim: 2\n  seed: 0\n", 3, 0},
	}
	for _, c := range cases {
		cfg := loadConfig(t, t.TempDir(), "output: out\nseed: 3\ninput: {paths: [../testdata/austen-200.txt]}\n"+c.sections)
		plan, err := cfg.plan(Options{})
		if err != nil {
			t.Fatal(err)
		}
		seeds := map[string]uint64{}
		for _, st := range plan {
			seeds[st.name] = st.seed
		}
		if seeds["count"] != c.wantCount || seeds["fit"] != c.wantFit {
			t.Errorf("%s: count seed %d, fit seed %d; want %d and %d", c.name, seeds["count"], seeds["fit"], c.wantCount, c.wantFit)
		}
	}
}

func TestParseBytes(t *testing.T) {
	for s, want := range map[string]Bytes{"256MiB": 256 << 20, "1GiB": 1 << 30, "500MB": 500e6, "1048576": 1 << 20, "1.5G": 3 << 29, "64k": 64 << 10} {
		got, err := ParseBytes(s)
		if err != nil || got != want {
			t.Errorf("ParseBytes(%q) = %d, %v; want %d", s, got, err, want)
		}
	}
	for _, s := range []string{"", "MiB", "-1GiB", "ten", "1e30GiB", "0", "0MiB", "0.5"} {
		if _, err := ParseBytes(s); err == nil {
			t.Errorf("ParseBytes(%q) succeeded", s)
		}
	}
}

// TestRunPublishesEveryFitMethodsOutputs runs the fit stage with each
// method and expects exactly the files that method writes in the fit
// directory, recorded in the manifest, and no staging directory left.
func TestRunPublishesEveryFitMethodsOutputs(t *testing.T) {
	want := map[string][]string{
		"map":     {"map.parquet"},
		"laplace": {"draws.parquet", "map.parquet", "sample_stats.parquet", "summary.parquet"},
	}
	for method, files := range want {
		t.Run(method, func(t *testing.T) {
			dir := t.TempDir()
			cfg := loadConfig(t, dir, strings.Replace(config, "fit:\n", "fit:\n  method: "+method+"\n", 1))
			if _, err := Run(context.Background(), cfg, Options{}); err != nil {
				t.Fatal(err)
			}
			entries, err := os.ReadDir(filepath.Join(cfg.Output, FitDir))
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, e := range entries {
				got = append(got, e.Name())
			}
			if !slices.Equal(got, files) {
				t.Errorf("fit directory holds %v, want %v", got, files)
			}
			if _, err := os.Stat(filepath.Join(cfg.Output, StagingDir)); !os.IsNotExist(err) {
				t.Errorf("staging directory left behind: %v", err)
			}
			man, err := readManifest(filepath.Join(cfg.Output, ManifestFile))
			if err != nil {
				t.Fatal(err)
			}
			if rec := man.find("fit"); rec == nil {
				t.Error("the manifest has no fit record")
			} else if len(rec.Outputs) != len(files) {
				t.Errorf("the manifest records %d fit outputs, want %d", len(rec.Outputs), len(files))
			}
		})
	}
}

// TestRunPublishesSummarizeAndReport runs the stages after the fit: the
// summaries land beside the fit's files, the report at an absolute path
// in a directory that does not exist yet, the manifest records exactly
// those files, and no staging directory is left.
func TestRunPublishesSummarizeAndReport(t *testing.T) {
	dir := t.TempDir()
	report := filepath.Join(dir, "reports", "austen.html")
	cfg := loadConfig(t, dir, config+"summarize:\n  pairs_all_among: [the, and, of]\n  neighbours: [the]\n  top: 3\nreport: "+report+"\n")
	rep, err := Run(context.Background(), cfg, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"tokenize", "count", "fit", "summarize", "report"}; !slices.Equal(rep.Ran, want) {
		t.Fatalf("ran %v, want %v", rep.Ran, want)
	}
	fitDir := filepath.Join(cfg.Output, FitDir)
	entries, err := os.ReadDir(fitDir)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, e := range entries {
		got = append(got, e.Name())
	}
	want := []string{"draws.parquet", "map.parquet", "neighbours.parquet", "sample_stats.parquet", "similarity.parquet", "summary.parquet"}
	if !slices.Equal(got, want) {
		t.Errorf("fit directory holds %v, want %v", got, want)
	}
	man, err := readManifest(filepath.Join(cfg.Output, ManifestFile))
	if err != nil {
		t.Fatal(err)
	}
	for name, files := range map[string][]string{
		"summarize": {filepath.Join(fitDir, "similarity.parquet"), filepath.Join(fitDir, "neighbours.parquet")},
		"report":    {report},
	} {
		rec := man.find(name)
		if rec == nil {
			t.Errorf("the manifest has no %s record", name)
			continue
		}
		var paths []string
		for _, fp := range rec.Outputs {
			paths = append(paths, fp.Path)
		}
		if !slices.Equal(paths, files) {
			t.Errorf("the manifest records %s outputs %v, want %v", name, paths, files)
		}
	}
	assertManifestMatchesFiles(t, cfg.Output)
}

// TestRunStopwordsChange: the stop words file is an input of tokenize, so
// editing it makes the vocabulary and the counts again, without them.
func TestRunStopwordsChange(t *testing.T) {
	dir := t.TempDir()
	stop := filepath.Join(dir, "stop.txt")
	if err := os.WriteFile(stop, []byte("the\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	cfg := loadConfig(t, dir, config+"skip_fit: true\n")
	cfg.Tokenize.Tokenizer.StopwordsFile = stop
	ctx := context.Background()
	both := []string{"tokenize", "count"}
	if rep, err := Run(ctx, cfg, Options{}); err != nil || !slices.Equal(rep.Ran, both) {
		t.Fatalf("first run ran %v (%v)", rep.Ran, err)
	}
	if rep, err := Run(ctx, cfg, Options{}); err != nil || !slices.Equal(rep.Skipped, both) {
		t.Fatalf("unchanged rerun skipped %v (%v)", rep.Skipped, err)
	}
	if err := os.WriteFile(stop, []byte("the\nof\nand\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if rep, err := Run(ctx, cfg, Options{}); err != nil || !slices.Equal(rep.Ran, both) {
		t.Fatalf("after editing the stop words: ran %v, skipped %v (%v)", rep.Ran, rep.Skipped, err)
	}
	rows, _, err := formats.ReadVocab(filepath.Join(cfg.Output, VocabFile))
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range rows {
		if r.Token == "the" || r.Token == "of" || r.Token == "and" {
			t.Errorf("vocabulary has the stop word %q", r.Token)
		}
	}
}

// TestRunSettingsAsWritten: the same run written otherwise (its output
// directory from another working directory, a default spelled out) is up
// to date; a changed file of kept tokens runs the fit again; and a fit run
// again leaves none of the files it, or a summarize no longer configured,
// had written before.
func TestRunSettingsAsWritten(t *testing.T) {
	dir := t.TempDir()
	ctx := context.Background()
	keep := filepath.Join(dir, "keep.txt")
	if err := os.WriteFile(keep, []byte("the\nand\nof\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	summarize := "summarize:\n  pairs_all_among: [the, and]\n"
	corpus, err := filepath.Abs("../testdata/austen-200.txt") // before the Chdir below
	if err != nil {
		t.Fatal(err)
	}
	text := strings.Replace(config, "fit:\n", "fit:\n  save_draws: keep.txt\n", 1)
	text = strings.Replace(text, "../testdata/austen-200.txt", corpus, 1)
	run := func(text string, want ...string) Config {
		t.Helper()
		cfg := loadConfig(t, dir, text)
		rep, err := Run(ctx, cfg, Options{})
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(rep.Ran, want) {
			t.Errorf("ran %v, want %v", rep.Ran, want)
		}
		return cfg
	}
	cfg := run(text+summarize, "tokenize", "count", "fit", "summarize")
	fitFile := func(name string) string { return filepath.Join(cfg.Output, FitDir, name) }

	t.Chdir(dir)
	relative, err := LoadWithOutput("run.yaml", "./out/")
	if err != nil {
		t.Fatal(err)
	}
	if rep, err := Run(ctx, relative, Options{}); err != nil || len(rep.Ran) > 0 {
		t.Errorf("the same run with ./out/ from its directory ran %v (%v), want nothing", rep.Ran, err)
	}
	run(strings.Replace(text, "count:\n", "count:\n  weighting: uniform\n  oov: drop\n  neg_power: 0.75\n  negatives: 1\n", 1) + summarize)

	if err := os.WriteFile(keep, []byte("the\nand\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	run(text+summarize+"report: true\n", "fit", "summarize", "report")

	report := filepath.Join(cfg.Output, stages.ReportFile)
	for _, p := range []string{fitFile(stages.SimilarityFile), report} {
		if _, err := os.Stat(p); err != nil {
			t.Fatal(err)
		}
	}
	run(strings.Replace(text, "dim: 2", "dim: 3", 1), "fit")
	man, err := readManifest(filepath.Join(cfg.Output, ManifestFile))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(fitFile(stages.SimilarityFile)); !os.IsNotExist(err) || man.find("summarize") != nil {
		t.Errorf("the summarize no longer configured left %s (%v) or its record in the manifest", stages.SimilarityFile, err)
	}
	if _, err := os.Stat(report); !os.IsNotExist(err) || man.find("report") != nil {
		t.Errorf("the report no longer configured left %s (%v) or its record in the manifest", report, err)
	}
	run(strings.Replace(text, "fit:\n", "fit:\n  method: map\n", 1), "fit")
	for _, name := range []string{stages.DrawsFile, stages.SummaryFile, stages.SampleStatsFile} {
		if _, err := os.Stat(fitFile(name)); !os.IsNotExist(err) {
			t.Errorf("the MAP fit left the Gibbs fit's %s (%v)", name, err)
		}
	}
	assertManifestMatchesFiles(t, cfg.Output)
}

// TestRunConfigInCorpus: a configuration file in the corpus directory it
// names is not text: a change to its count settings counts again, but
// does not make the vocabulary again.
func TestRunConfigInCorpus(t *testing.T) {
	dir := t.TempDir()
	text, err := os.ReadFile("../testdata/austen-200.txt")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "austen.txt"), text, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		window string
		ran    []string
	}{{"3", []string{"tokenize", "count"}}, {"4", []string{"count"}}} {
		cfg := loadConfig(t, dir, "output: out\ninput: {paths: [.]}\ntokenize: {max_vocab: 40}\ncount: {window: "+c.window+"}\nskip_fit: true\n")
		rep, err := Run(context.Background(), cfg, Options{})
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(rep.Ran, c.ran) {
			t.Errorf("window %s: ran %v, want %v", c.window, rep.Ran, c.ran)
		}
	}
	man, err := readManifest(filepath.Join(dir, "out", ManifestFile))
	if err != nil {
		t.Fatal(err)
	}
	rec := man.find("tokenize")
	if rec == nil {
		t.Fatal("no tokenize record")
	}
	if len(rec.Inputs) != 1 || filepath.Base(rec.Inputs[0].Path) != "austen.txt" {
		t.Errorf("tokenize's inputs: %+v, want austen.txt alone", rec.Inputs)
	}

	// The corpus directory as the output: refused, and left as it was.
	cfg := loadConfig(t, dir, "output: .\ninput: {paths: [.]}\nskip_fit: true\n")
	if _, err := Run(context.Background(), cfg, Options{}); !errors.Is(err, input.ErrSkippedDir) {
		t.Errorf("the corpus directory as output: %v, want ErrSkippedDir", err)
	}
	if _, err := os.Stat(filepath.Join(dir, runlock.File)); !os.IsNotExist(err) {
		t.Errorf("the refused run left its lock file in the corpus (%v)", err)
	}
}

// TestRunMissingFiles: files the settings name (the stop words, the
// tokens whose draws are kept, the pairs) are looked for before the first
// stage runs, not when their stage comes, hours later.
func TestRunMissingFiles(t *testing.T) {
	dir := t.TempDir()
	out := filepath.Join(dir, "out")
	cfg := Config{
		Output: out, Input: &stages.TextInput{Paths: []string{"../testdata/austen-200.txt"}},
		Tokenize:  stages.TokenizeConfig{Tokenizer: stages.TokenizerConfig{StopwordsFile: filepath.Join(dir, "stop.txt")}},
		Fit:       stages.FitConfig{SaveDraws: filepath.Join(dir, "keep.txt")},
		Summarize: stages.SummarizeConfig{Pairs: filepath.Join(dir, "pairs.txt")},
	}
	_, err := Run(context.Background(), cfg, Options{})
	for _, want := range []string{"stopwords_file", "save_draws", "pairs"} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("error %v does not name %s", err, want)
		}
	}
	if _, err := os.Stat(out); err == nil {
		t.Error("the run made its output directory")
	}
}

// TestRunManyFilesAndStopwords: a corpus of more than 1000 files is one
// entry of the manifest's tokenize inputs, as of vocab.parquet's, and the
// stop-word file another, with its own fingerprint.
func TestRunManyFilesAndStopwords(t *testing.T) {
	dir := t.TempDir()
	for i := range 1001 {
		if err := os.WriteFile(filepath.Join(dir, fmt.Sprintf("f%04d.txt", i)), []byte("elinor marianne love\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	stop := filepath.Join(t.TempDir(), "stop.txt")
	if err := os.WriteFile(stop, []byte("love\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(t.TempDir(), "out")
	cfg := Config{Output: out, Input: &stages.TextInput{Paths: []string{dir}}, SkipFit: true,
		Tokenize: stages.TokenizeConfig{Tokenizer: stages.TokenizerConfig{StopwordsFile: stop}}}
	if _, err := Run(context.Background(), cfg, Options{}); err != nil {
		t.Fatal(err)
	}
	man, err := readManifest(filepath.Join(out, ManifestFile))
	if err != nil {
		t.Fatal(err)
	}
	ins := man.find("tokenize").Inputs
	want, err := input.FingerprintFile(stop)
	if err != nil {
		t.Fatal(err)
	}
	if len(ins) != 2 || !strings.HasPrefix(ins[0].Path, "1001 files, ") || ins[1] != want {
		t.Errorf("tokenize's inputs %+v, want the corpus in one entry and then %+v", ins, want)
	}
}
