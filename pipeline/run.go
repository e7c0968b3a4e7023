package pipeline

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/pwe-project/pwe/formats/input"
	"github.com/pwe-project/pwe/internal/atomicfile"
	"github.com/pwe-project/pwe/internal/pages"
	"github.com/pwe-project/pwe/internal/runlock"
	"github.com/pwe-project/pwe/internal/version"
	"github.com/pwe-project/pwe/stages"
)

// Names of the outputs inside the run's directory.
const (
	VocabFile  = "vocab.parquet"
	CountsFile = "counts.parquet"
	// TokensFile is the corpus as token ids, written by tokenize and read
	// by count, so that the text is read and segmented once; a count with
	// other settings later reads it instead of the text.
	TokensFile = "tokens.bin"
	FitDir     = "fit"
	// StagingDir holds each stage's outputs until the stage has succeeded;
	// they are then renamed into place.
	StagingDir = ".pwe-staging"
)

// Options control a run.
type Options struct {
	// Force re-runs every stage, up to date or not.
	Force bool
	// Reporter receives the run's messages and the stages' progress (nil:
	// silent).
	Reporter *Reporter
}

// Report says which stages ran and which were up to date.
type Report struct {
	Ran, Skipped []string
}

// stage is one step of a run: its settings (recorded and hashed), its
// inputs and outputs, and the function that produces the outputs.
type stage struct {
	name     string
	settings any
	seed     uint64
	inputs   []string
	// corpus is the number of inputs, first among them, that are a
	// corpus's files, which the manifest records as one entry above 1000
	// files, as the stage's own file does (input.Summarize), and the
	// others each on its own.
	corpus int
	// outputs are the stage's final paths. run writes each of them, under
	// its base name, into the stage's staging directory, and Run renames
	// them into place once run has succeeded, so that a stage failing
	// halfway through its files leaves every previous output as it was.
	outputs []string
	run     func(ctx context.Context) (stats any, err error)
	// hugeHeap marks tokenize and count, which share the run's advice of
	// huge pages for the heap (see Run).
	hugeHeap bool
}

// Run executes the configured stages in order, skipping those that are up
// to date, and rewrites the manifest after each stage. An interrupted fit
// returns a *stages.InterruptedError whose message says how to continue.
func Run(ctx context.Context, cfg Config, opt Options) (Report, error) {
	if err := cfg.Validate(); err != nil {
		return Report{}, err
	}
	cfg, err := cfg.absolute()
	if err != nil {
		return Report{}, err
	}
	if err := cfg.checkFiles(); err != nil {
		return Report{}, err
	}
	// Planned first, so that a run refused for its inputs (an output
	// directory named as the corpus) leaves nothing behind.
	plan, err := cfg.plan(opt)
	if err != nil {
		return Report{}, err
	}
	if err := os.MkdirAll(cfg.Output, 0o755); err != nil {
		return Report{}, err
	}
	// One run at a time in a directory: two would decide alike what is out
	// of date, write over each other's outputs and staging files, and
	// record fingerprints of files the other had since replaced.
	lock, err := runlock.Acquire(cfg.Output)
	switch {
	case errors.Is(err, runlock.ErrUnsupported):
		opt.Reporter.Stage("run").Warn(err.Error())
	case err != nil:
		return Report{}, err
	}
	defer lock.Release()
	// Its fit directory too: pwe fit or summarize may be writing there.
	if err := runlock.Free(filepath.Join(cfg.Output, FitDir)); err != nil {
		return Report{}, err
	}
	mpath := filepath.Join(cfg.Output, ManifestFile)
	man, err := readManifest(mpath)
	if err != nil {
		return Report{}, err
	}
	cpath := filepath.Join(cfg.Output, HashCacheFile)
	cache := loadHashCache(cpath)
	// Whatever the run's end, the fingerprints it made spare the next one
	// their reading; a cache that cannot be written only costs that.
	defer cache.save(cpath)
	// Tokenize and count take the heap's huge-page advice (pages.HugeHeap)
	// from the first of them that runs to the end of the last, and fit,
	// which can run for hours, goes without. The advice acts once in a
	// process: taken by tokenize itself, it would have been withdrawn when
	// tokenize ended, and count, on a heap that tokenize had used, would
	// have had none. On bench-raw, pwe run of tokenize and count on two
	// threads took 8 900 page faults without it (BENCHMARKS.md, session 34).
	withdraw := func() {}
	advised := false
	defer func() { withdraw() }()
	var rep Report
	for _, st := range plan {
		if err := ctx.Err(); err != nil {
			return rep, err
		}
		inputs, err := cache.fingerprints(st.inputs)
		if err != nil {
			return rep, &StageError{Stage: st.name, Err: err}
		}
		settings, err := json.Marshal(st.settings)
		if err != nil {
			return rep, err
		}
		key := stageKey(st.name, settings, inputs)
		log := opt.Reporter.Stage(st.name)
		if !opt.Force && cache.upToDate(man.find(st.name), key, st.outputs) {
			log.Info("up to date, skipped")
			rep.Skipped = append(rep.Skipped, st.name)
			continue
		}
		log.Info("running")
		if st.hugeHeap && !advised {
			withdraw, advised = adviseHeap(int64(cfg.Memory)), true
		} else if !st.hugeHeap {
			withdraw()
			withdraw = func() {}
		}
		start := time.Now()
		stats, err := st.run(ctx)
		if err == nil {
			err = publish(st, cfg.staging(st.name))
		}
		if err != nil {
			return rep, &StageError{Stage: st.name, Err: err}
		}
		outputs, err := cache.fingerprints(st.outputs)
		if err != nil {
			return rep, &StageError{Stage: st.name, Err: err}
		}
		// A fit that now writes only the MAP leaves no draws of the fit
		// before it; nor, once the configuration has no summarize, the
		// similarities of that fit in its directory, which the report
		// would show beside the new one. Files outside the output
		// directory (a report: path elsewhere) are left.
		if old := man.find(st.name); old != nil {
			if gone := cache.dropStale(old, st.outputs, cfg.Output); len(gone) > 0 {
				log.Info("removed what it no longer writes: " + strings.Join(gone, ", "))
			}
		}
		// Nor the report of that fit, once the configuration has none.
		for _, after := range []struct{ name, dir string }{{"summarize", filepath.Join(cfg.Output, FitDir)}, {"report", cfg.Output}} {
			old := man.find(after.name)
			if st.name != "fit" || old == nil || slices.ContainsFunc(plan, func(s stage) bool { return s.name == after.name }) {
				continue
			}
			if gone := cache.dropStale(old, nil, after.dir); len(gone) > 0 {
				opt.Reporter.Stage(after.name).Info("not configured; removed the previous fit's " + strings.Join(gone, ", "))
			}
			man.remove(after.name)
		}
		end := time.Now()
		man.set(StageRecord{
			Name: st.name, Key: key, Settings: settings, Seed: st.seed, Inputs: append(input.Summarize(inputs[:st.corpus]), inputs[st.corpus:]...), Outputs: outputs,
			Version: version.String(), Start: start.UTC(), End: end.UTC(), Seconds: end.Sub(start).Seconds(),
			PeakRSS: peakRSS(), Stats: stats,
		})
		if err := man.write(mpath); err != nil {
			return rep, err
		}
		msg := fmt.Sprintf("done in %.2fs", end.Sub(start).Seconds())
		if sum, ok := stats.(stages.Summarizer); ok {
			msg = sum.Summary() + "; " + msg
		}
		log.Info(msg,
			slog.Float64(SecondsKey, end.Sub(start).Seconds()), slog.Any(StatsKey, stats))
		rep.Ran = append(rep.Ran, st.name)
	}
	if len(rep.Ran) == 0 {
		opt.Reporter.Stage("run").Info("nothing to do: every stage is up to date (--force re-runs them)")
	}
	return rep, nil
}

// StageError is the error of a run's stage; its message is the stage's
// name and the error, and in a JSON log the record of the error names the
// stage as the stage's own records do.
type StageError struct {
	Stage string
	Err   error
}

func (e *StageError) Error() string { return e.Stage + ": " + e.Err.Error() }
func (e *StageError) Unwrap() error { return e.Err }

// staging is the directory of a stage's outputs before they are published.
// It does not depend on the run, so a stage interrupted and run again
// finds what it left there (a fit's checkpoint).
func (c Config) staging(stage string) string {
	return filepath.Join(c.Output, StagingDir, stage)
}

// adviseHeap is pages.HugeHeap; tests replace it to see when Run calls it.
var adviseHeap = pages.HugeHeap

// rename publishes one output; tests replace it to inject failures.
var rename = os.Rename

// move renames from to to, or, where to is on another file system (a
// report published to a web server's directory), copies it there under a
// temporary name, renames that, and removes from: to is never seen half
// written.
func move(from, to string) error {
	err := rename(from, to)
	if !errors.Is(err, syscall.EXDEV) {
		return err
	}
	src, err := os.Open(from)
	if err != nil {
		return err
	}
	defer src.Close()
	dst, err := atomicfile.Create(to)
	if err != nil {
		return err
	}
	defer dst.Abort()
	if _, err := io.Copy(dst, src); err != nil {
		return err
	}
	if err := dst.Commit(); err != nil {
		return err
	}
	return os.Remove(from)
}

// publish renames a stage's outputs from its staging directory dir to
// their final names and removes dir, with whatever else the stage left
// there (a fit's checkpoint and spilled draws). The renames are not one
// atomic step, but the manifest is rewritten only after all of them, so an
// interruption in between leaves outputs that do not match it and the
// stage runs again.
func publish(st stage, dir string) error {
	for _, out := range st.outputs {
		if err := os.MkdirAll(filepath.Dir(out), 0o755); err != nil {
			return err
		}
		if err := move(filepath.Join(dir, filepath.Base(out)), out); err != nil {
			return fmt.Errorf("publishing %s: %w", out, err)
		}
	}
	if err := os.RemoveAll(dir); err != nil {
		return err
	}
	os.Remove(filepath.Dir(dir)) // fails, harmlessly, while other stages' files are there
	return nil
}

// finalPaths returns where publish moves the files a stage writes to
// staged: the same names in dir.
func finalPaths(dir string, staged []string) []string {
	outputs := make([]string, len(staged))
	for i, p := range staged {
		outputs[i] = filepath.Join(dir, filepath.Base(p))
	}
	return outputs
}

// plan lists the stages of the configuration with their paths filled in.
func (c Config) plan(opt Options) ([]stage, error) {
	vocab := filepath.Join(c.Output, VocabFile)
	counts := filepath.Join(c.Output, CountsFile)
	var plan []stage
	if c.MovieLens != nil {
		ml := *c.MovieLens
		ml.Output, ml.Threads, ml.Memory, ml.TempDir = c.staging("movielens"), c.Threads, int64(c.Memory), c.TempDir
		ml.Seed = c.stageSeed("movielens", ml.Seed)
		ins := []string{ml.Ratings}
		if ml.Movies != "" {
			ins = append(ins, ml.Movies)
		}
		plan = append(plan, stage{
			name: "movielens", settings: ml, seed: ml.Seed, inputs: ins, outputs: []string{vocab, counts},
			run: func(ctx context.Context) (any, error) { return MovieLens(ctx, opt.Reporter, ml) },
		})
	} else {
		// A corpus directory that holds the output directory must not
		// take the run's own outputs as the next run's text.
		in := *c.Input
		in.Skip = []string{c.Output}
		if c.file != "" {
			// Nor its configuration file, beside the corpus (paths: [.]).
			in.Skip = append(in.Skip, c.file)
		}
		paths, err := input.ExpandOnce(in.Paths, in.Skip...)
		if err != nil {
			return nil, err
		}
		tokens := filepath.Join(c.Output, TokensFile)
		tk := c.Tokenize
		tk.Input, tk.Output, tk.Threads = in, filepath.Join(c.staging("tokenize"), VocabFile), c.Threads
		tk.Memory, tk.TempDir = int64(c.Memory), c.TempDir
		tk.Tokens = filepath.Join(c.staging("tokenize"), TokensFile)
		tk = tk.WithDefaults() // the settings recorded name the tokenizer's rules
		// The stop words are read when tokenize runs, so their file is one
		// of its inputs: a change to it makes the vocabulary again.
		tkInputs := paths
		if f := tk.Tokenizer.StopwordsFile; f != "" {
			tkInputs = append(slices.Clone(paths), f)
		}
		plan = append(plan, stage{
			name: "tokenize", settings: tk, inputs: tkInputs, corpus: len(paths), outputs: []string{vocab, tokens},
			run:      func(ctx context.Context) (any, error) { return Tokenize(ctx, opt.Reporter, tk) },
			hugeHeap: true,
		})
		ct := c.Count
		ct.Input, ct.Tokens, ct.Vocab, ct.Output = stages.TextInput{}, tokens, vocab, filepath.Join(c.staging("count"), CountsFile)
		ct.Threads, ct.Memory, ct.TempDir = c.Threads, int64(c.Memory), c.TempDir
		ct.Seed = c.stageSeed("count", ct.Seed)
		// The settings recorded are those the stage runs with, so that
		// spelling out a default does not make it stale.
		ct = ct.WithDefaults()
		plan = append(plan, stage{
			name: "count", settings: ct, seed: ct.Seed, inputs: []string{tokens, vocab}, outputs: []string{counts},
			run:      func(ctx context.Context) (any, error) { return Count(ctx, opt.Reporter, ct) },
			hugeHeap: true,
		})
	}
	if c.SkipFit {
		return plan, nil
	}
	ft := c.Fit
	ft.Counts, ft.Vocab, ft.Output = counts, vocab, c.staging("fit")
	ft.Threads, ft.Memory, ft.TempDir = c.Threads, int64(c.Memory), c.TempDir
	ft.Seed = c.stageSeed("fit", ft.Seed)
	ft = ft.WithDefaults()
	fitDir := filepath.Join(c.Output, FitDir)
	ftInputs := []string{counts, vocab}
	if f := ft.SaveDraws; f != "all" && f != "none" {
		// The file of tokens whose draws are kept is read when the fit
		// runs: a change to it makes the draws again.
		ftInputs = append(ftInputs, f)
	}
	plan = append(plan, stage{
		name: "fit", settings: ft, seed: ft.Seed, inputs: ftInputs, outputs: finalPaths(fitDir, ft.Outputs()),
		run: func(ctx context.Context) (any, error) {
			ft := ft
			// An interrupted fit of the same inputs and settings continues
			// from its checkpoint (--force starts over).
			if ft.Resume = !opt.Force && stages.FitCheckpointMatches(ft); ft.Resume {
				opt.Reporter.Stage("fit").Info("resuming the interrupted fit from its checkpoint")
			}
			st, err := Fit(ctx, opt.Reporter, ft)
			var interrupted *stages.InterruptedError
			if errors.As(err, &interrupted) {
				interrupted.HowToResume = "run the same pwe run again to continue (--force starts over)"
			}
			return st, err
		},
	})
	var summarized []string
	if c.Summarize.Wants() {
		sm := c.Summarize
		sm.Fit, sm.Output, sm.Threads = fitDir, c.staging("summarize"), c.Threads
		sm = sm.WithDefaults()
		summarized = finalPaths(fitDir, sm.Outputs())
		ins := []string{filepath.Join(fitDir, stages.DrawsFile)}
		if sm.Pairs != "" {
			ins = append(ins, sm.Pairs)
		}
		plan = append(plan, stage{
			name: "summarize", settings: sm, inputs: ins, outputs: summarized,
			run: func(ctx context.Context) (any, error) { return Summarize(ctx, opt.Reporter, sm) },
		})
	}
	if c.Report != "" {
		final := string(c.Report)
		if !filepath.IsAbs(final) {
			final = filepath.Join(c.Output, final)
		}
		rp := stages.ReportConfig{Fit: fitDir, Output: filepath.Join(c.staging("report"), filepath.Base(final))}
		// The report reads the draws only for densities of summarised
		// pairs, whose similarity.parquet changes with them.
		ins := []string{filepath.Join(fitDir, stages.MapFile)}
		if ft.Method == "gibbs" {
			ins = append(ins, filepath.Join(fitDir, stages.SampleStatsFile), filepath.Join(fitDir, stages.SummaryFile))
		}
		plan = append(plan, stage{
			name: "report", settings: rp.WithDefaults(), inputs: append(ins, summarized...), outputs: []string{final},
			run: func(ctx context.Context) (any, error) { return stages.Report(ctx, rp) },
		})
	}
	return plan, nil
}

// stageSeed is the seed of the named stage, whose section gives s: s if
// the configuration file sets it (0 included) or it is not 0, else the
// run's seed.
func (c Config) stageSeed(stage string, s uint64) uint64 {
	if s != 0 || c.seeded[stage] {
		return s
	}
	return c.Seed
}

// fingerprints hashes every path, unless the cache vouches for it; the
// embedded corpus is hashed through its reader, standard input cannot be
// (ErrStdin).
func (c *hashCache) fingerprints(paths []string) ([]input.Fingerprint, error) {
	fps := make([]input.Fingerprint, 0, len(paths))
	for _, p := range paths {
		if p == "-" {
			return nil, errStdin
		}
		fp, err := c.fingerprint(p)
		if err != nil {
			f, oerr := input.Open(p)
			if oerr != nil {
				return nil, err
			}
			_, cerr := io.Copy(io.Discard, f)
			f.Close()
			if cerr != nil {
				return nil, cerr
			}
			fp = f.Fingerprint()
		}
		fps = append(fps, fp)
	}
	return fps, nil
}

var errStdin = errors.New("pipeline: pwe run cannot read standard input (it must fingerprint its inputs); name files")

func stageKey(name string, settings []byte, inputs []input.Fingerprint) string {
	h := sha256.New()
	fmt.Fprintf(h, "%s\x00%s\x00", name, settings)
	for _, fp := range inputs {
		fmt.Fprintf(h, "%s\x00%d\x00", fp.SHA256, fp.Size)
	}
	return hex.EncodeToString(h.Sum(nil))
}

// dropStale removes the files rec lists as outputs that keep does not, and
// returns their paths: only files inside dir (a path recorded relative to
// another working directory is left) that still hold what the stage wrote,
// so a file changed or replaced since is never removed.
func (c *hashCache) dropStale(rec *StageRecord, keep []string, dir string) []string {
	var gone []string
	for _, out := range rec.Outputs {
		p := out.Path
		if !filepath.IsAbs(p) || slices.Contains(keep, p) {
			continue
		}
		if r, err := filepath.Rel(dir, p); err != nil || !filepath.IsLocal(r) {
			continue
		}
		fp, err := c.fingerprint(p)
		if err != nil || fp.SHA256 != out.SHA256 || fp.Size != out.Size {
			continue
		}
		if os.Remove(p) == nil {
			gone = append(gone, filepath.Base(p))
		}
	}
	return gone
}

// upToDate reports whether rec matches key and every output still has the
// fingerprint rec recorded.
func (c *hashCache) upToDate(rec *StageRecord, key string, outputs []string) bool {
	if rec == nil || rec.Key != key || len(rec.Outputs) != len(outputs) {
		return false
	}
	for i, p := range outputs {
		fp, err := c.fingerprint(p)
		if err != nil || fp.SHA256 != rec.Outputs[i].SHA256 || fp.Size != rec.Outputs[i].Size {
			return false
		}
	}
	return true
}
