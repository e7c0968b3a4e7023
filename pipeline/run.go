package pipeline

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	"github.com/pwe-project/pwe/formats/input"
	"github.com/pwe-project/pwe/internal/version"
	"github.com/pwe-project/pwe/stages"
)

// Names of the outputs inside the run's directory.
const (
	VocabFile  = "vocab.parquet"
	CountsFile = "counts.parquet"
	FitDir     = "fit"
)

// Options control a run.
type Options struct {
	// Force re-runs every stage, up to date or not.
	Force bool
	// Log receives one line per stage (nil: discarded).
	Log io.Writer
	// OnSweep is passed to the fit stage for progress reports.
	OnSweep func(chain, sweep int)
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
	outputs  []string
	run      func(ctx context.Context) (stats any, err error)
}

// Run executes the configured stages in order, skipping those that are up
// to date, and rewrites the manifest after each stage.
func Run(ctx context.Context, cfg Config, opt Options) (Report, error) {
	if err := cfg.Validate(); err != nil {
		return Report{}, err
	}
	log := opt.Log
	if log == nil {
		log = io.Discard
	}
	if err := os.MkdirAll(cfg.Output, 0o755); err != nil {
		return Report{}, err
	}
	mpath := filepath.Join(cfg.Output, ManifestFile)
	man, err := readManifest(mpath)
	if err != nil {
		return Report{}, err
	}
	plan, err := cfg.plan(opt)
	if err != nil {
		return Report{}, err
	}
	var rep Report
	for _, st := range plan {
		if err := ctx.Err(); err != nil {
			return rep, err
		}
		inputs, err := fingerprints(st.inputs)
		if err != nil {
			return rep, fmt.Errorf("%s: %w", st.name, err)
		}
		settings, err := json.Marshal(st.settings)
		if err != nil {
			return rep, err
		}
		key := stageKey(st.name, settings, inputs)
		if !opt.Force && upToDate(man.find(st.name), key, st.outputs) {
			fmt.Fprintf(log, "%s: up to date, skipped\n", st.name)
			rep.Skipped = append(rep.Skipped, st.name)
			continue
		}
		fmt.Fprintf(log, "%s: running\n", st.name)
		start := time.Now()
		stats, err := st.run(ctx)
		if err != nil {
			return rep, fmt.Errorf("%s: %w", st.name, err)
		}
		outputs, err := fingerprints(st.outputs)
		if err != nil {
			return rep, fmt.Errorf("%s: %w", st.name, err)
		}
		end := time.Now()
		man.set(StageRecord{
			Name: st.name, Key: key, Settings: settings, Seed: st.seed, Inputs: inputs, Outputs: outputs,
			Version: version.String(), Start: start.UTC(), End: end.UTC(), Seconds: end.Sub(start).Seconds(),
			PeakRSS: peakRSS(), Stats: stats,
		})
		if err := man.write(mpath); err != nil {
			return rep, err
		}
		fmt.Fprintf(log, "%s: done in %.2fs\n", st.name, end.Sub(start).Seconds())
		rep.Ran = append(rep.Ran, st.name)
	}
	if len(rep.Ran) == 0 {
		fmt.Fprintln(log, "nothing to do: every stage is up to date (--force re-runs them)")
	}
	return rep, nil
}

// plan lists the stages of the configuration with their paths filled in.
func (c Config) plan(opt Options) ([]stage, error) {
	vocab := filepath.Join(c.Output, VocabFile)
	counts := filepath.Join(c.Output, CountsFile)
	var plan []stage
	if c.MovieLens != nil {
		ml := *c.MovieLens
		ml.Output, ml.Threads, ml.Memory, ml.TempDir = c.Output, c.Threads, int64(c.Memory), c.TempDir
		ml.Seed = seedOr(ml.Seed, c.Seed)
		ins := []string{ml.Ratings}
		if ml.Movies != "" {
			ins = append(ins, ml.Movies)
		}
		plan = append(plan, stage{
			name: "movielens", settings: ml, seed: ml.Seed, inputs: ins, outputs: []string{vocab, counts},
			run: func(ctx context.Context) (any, error) { return stages.MovieLens(ctx, ml) },
		})
	} else {
		paths, err := input.Expand(c.Input.Paths)
		if err != nil {
			return nil, err
		}
		tk := c.Tokenize
		tk.Input, tk.Output, tk.Threads = *c.Input, vocab, c.Threads
		plan = append(plan, stage{
			name: "tokenize", settings: tk, inputs: paths, outputs: []string{vocab},
			run: func(ctx context.Context) (any, error) { return stages.Tokenize(ctx, tk) },
		})
		ct := c.Count
		ct.Input, ct.Vocab, ct.Output = *c.Input, vocab, counts
		ct.Threads, ct.Memory, ct.TempDir = c.Threads, int64(c.Memory), c.TempDir
		ct.Seed = seedOr(ct.Seed, c.Seed)
		plan = append(plan, stage{
			name: "count", settings: ct, seed: ct.Seed, inputs: append(paths, vocab), outputs: []string{counts},
			run: func(ctx context.Context) (any, error) { return stages.Count(ctx, ct) },
		})
	}
	if c.SkipFit {
		return plan, nil
	}
	ft := c.Fit
	ft.Counts, ft.Vocab, ft.Output = counts, vocab, filepath.Join(c.Output, FitDir)
	ft.Threads, ft.Memory, ft.TempDir, ft.OnSweep = c.Threads, int64(c.Memory), c.TempDir, opt.OnSweep
	ft.Seed = seedOr(ft.Seed, c.Seed)
	ft = ft.WithDefaults()
	outs := []string{filepath.Join(ft.Output, stages.MapFile)}
	if ft.Method == "gibbs" {
		outs = append(outs, filepath.Join(ft.Output, stages.SampleStatsFile), filepath.Join(ft.Output, stages.SummaryFile))
		if ft.SaveDraws != "none" {
			outs = append(outs, filepath.Join(ft.Output, stages.DrawsFile))
		}
	}
	plan = append(plan, stage{
		name: "fit", settings: ft, seed: ft.Seed, inputs: []string{counts, vocab}, outputs: outs,
		run: func(ctx context.Context) (any, error) { return stages.Fit(ctx, ft) },
	})
	return plan, nil
}

func seedOr(s, fallback uint64) uint64 {
	if s != 0 {
		return s
	}
	return fallback
}

// fingerprints hashes every path; the embedded corpus is hashed through
// its reader, standard input cannot be (ErrStdin).
func fingerprints(paths []string) ([]input.Fingerprint, error) {
	fps := make([]input.Fingerprint, 0, len(paths))
	for _, p := range paths {
		if p == "-" {
			return nil, errStdin
		}
		fp, err := input.FingerprintFile(p)
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

// upToDate reports whether rec matches key and every output still has the
// fingerprint rec recorded.
func upToDate(rec *StageRecord, key string, outputs []string) bool {
	if rec == nil || rec.Key != key || len(rec.Outputs) != len(outputs) {
		return false
	}
	for i, p := range outputs {
		fp, err := input.FingerprintFile(p)
		if err != nil || fp.SHA256 != rec.Outputs[i].SHA256 || fp.Size != rec.Outputs[i].Size {
			return false
		}
	}
	return true
}
