package stages

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/pwe-project/pwe/formats"
	"github.com/pwe-project/pwe/formats/input"
	"github.com/pwe-project/pwe/internal/bytesize"
	"github.com/pwe-project/pwe/posterior"
)

// Output file names of the fit stage inside its output directory.
const (
	MapFile         = "map.parquet"
	DrawsFile       = "draws.parquet"
	SampleStatsFile = "sample_stats.parquet"
	SummaryFile     = "summary.parquet"
)

// DefaultDraws is the number of draws kept per chain when FitConfig.Draws
// is zero.
const DefaultDraws = posterior.DefaultDraws

// FitConfig configures the fit stage: counts.parquet and vocab.parquet to
// the MAP, posterior draws, sampler statistics and summaries.
type FitConfig struct {
	// Counts and Vocab are the input files; their fingerprints are recorded.
	Counts string `json:"-" yaml:"-"`
	Vocab  string `json:"-" yaml:"-"`
	// Method is "gibbs" (default: MAP, then posterior draws), "map", or
	// "laplace" (MAP, then independent draws from the Gaussian
	// approximation at it; Warmup, Thin, Inner, GroupMoves, Overrelax and Init are
	// then unused).
	Method string `json:"method" yaml:"method"`
	// Laplace is the factorisation of method "laplace": "auto" (default),
	// "dense" or "per-token" (see posterior.LaplaceMode).
	Laplace string `json:"laplace" yaml:"laplace"`
	// Dim is the embedding dimension D (default 20).
	Dim int `json:"dim" yaml:"dim"`
	// MAPStarts is the number of random starts of the MAP's optimiser;
	// the highest optimum is kept (default posterior.DefaultMAPStarts).
	MAPStarts int `json:"map_starts" yaml:"map_starts"`
	// MAPMaxIter bounds the optimiser's iterations per start (0: the
	// engine's default, posterior.MAPConfig.MaxIter). A start stopped by it
	// leaves a warning, and the fit continues from the best point found:
	// on a large problem a bound keeps the MAP from taking longer than the
	// sampling it only starts.
	MAPMaxIter int `json:"map_max_iter,omitempty" yaml:"map_max_iter"`
	// Anchors names the tokens whose context vectors are fixed (at the
	// values AnchorValues says) to identify the posterior: a rule ("last", "first", ...) or
	// comma-separated tokens. Empty means the engine's default rule.
	Anchors string `json:"anchors" yaml:"anchors"`
	// AnchorValues is where the anchors' context vectors are fixed: "auto"
	// (default for method gibbs: draw when the MAP is degenerate, else
	// map; see posterior.AnchorValues), "draw" (the last state of an
	// unanchored chain of AnchorSweeps sweeps from the MAP, whose scale is
	// the posterior's even when the data are too weak to move the MAP from
	// the origin, but which mixes more slowly) or "map". Methods map and
	// laplace anchor at the MAP.
	AnchorValues string `json:"anchor_values" yaml:"anchor_values"`
	// AnchorSweeps is the length of that chain (default
	// posterior.DefaultAnchorSweeps; unused for "map").
	AnchorSweeps int `json:"anchor_sweeps,omitempty" yaml:"anchor_sweeps"`
	// Chains, Warmup (sweeps discarded; default 500 when nil), Draws (kept
	// per chain; default DefaultDraws), Thin (sweeps per kept draw) and Inner (PG and
	// Gaussian steps per token and sweep) shape the Gibbs run.
	Chains int  `json:"chains" yaml:"chains"`
	Warmup *int `json:"warmup" yaml:"warmup"`
	Draws  int  `json:"draws" yaml:"draws"`
	Thin   int  `json:"thin" yaml:"thin"`
	Inner  int  `json:"inner" yaml:"inner"`
	// GroupMoves is the number of Metropolis frame-change moves per sweep
	// (default 20 when nil; 0: none).
	GroupMoves *int `json:"group_moves" yaml:"group_moves"`
	// Overrelax is the overrelaxation coefficient of the conditional draws'
	// Gaussian step, in (-1, 1) (default posterior.DefaultOverrelax(Dim)
	// when nil; 0: plain Gibbs draws).
	Overrelax *float64 `json:"overrelax" yaml:"overrelax"`
	// Init is "map" (default: the MAP with per-chain jitter) or "prior".
	Init string `json:"init" yaml:"init"`
	// PriorSD is the prior standard deviation s of every coordinate
	// (default 1).
	PriorSD float64 `json:"prior_sd" yaml:"prior_sd"`
	Seed    uint64  `json:"seed" yaml:"seed"`
	// DrawsLayout is "vector" (default: one row per vector) or "long" (one
	// row per coordinate).
	DrawsLayout string `json:"draws_layout" yaml:"draws_layout"`
	// SaveDraws is "all" (default), "none", or a file naming the tokens
	// (one per line) whose draws are written; the summary covers every
	// token either way.
	SaveDraws string `json:"save_draws" yaml:"save_draws"`

	// Output is the directory that receives the files.
	Output string `json:"-" yaml:"-"`
	// Threads are shared by the chains and the tokens (0: every core); the
	// draws do not depend on it.
	Threads int `json:"-" yaml:"-"`
	// Memory bounds the summary step (default 1 GiB): it transposes the
	// draws in blocks of coordinates that fit. Method "laplace" also holds
	// at most this much of draws at once.
	Memory int64 `json:"-" yaml:"-"`
	// TempDir holds the draws while sampling (default: the output
	// directory, which has room for draws.parquet anyway).
	TempDir string `json:"-" yaml:"-"`
	// OnSweep, if set, is called after every sweep of every chain, from the
	// chain's goroutine, for progress reports.
	OnSweep func(chain, sweep int) `json:"-" yaml:"-"`
	// OnSummarized, if set, is called as the summary of the draws is
	// written, with the coordinates done so far and their total: on a large
	// fit it reads the draws back block by block for minutes.
	OnSummarized func(done, total int) `json:"-" yaml:"-"`
	// OnMAPEval, if set, is called after every evaluation of the log
	// posterior's gradient while the MAP is sought, for progress reports.
	OnMAPEval func() `json:"-" yaml:"-"`
	// OnAnchorSweep, if set, is called after every sweep of the unanchored
	// chain that draws the anchor values (AnchorValues draw or auto), for
	// progress reports.
	OnAnchorSweep func(sweep int) `json:"-" yaml:"-"`
	// Stdin is read, as an Arrow stream, for Counts or Vocab "-" (default
	// os.Stdin).
	Stdin io.Reader `json:"-" yaml:"-"`

	// Resume continues the Gibbs run checkpointed in Output/checkpoint
	// (refused when the inputs or content settings differ); the outputs are
	// those of an uninterrupted run, but for the wall times in
	// sample_stats' seconds column.
	Resume bool `json:"-" yaml:"-"`
	// CheckpointEvery (sweeps) and CheckpointInterval (wall time) say how
	// often each chain saves its state; either triggers a checkpoint
	// (default DefaultCheckpointInterval when both are zero; NoCheckpoints
	// turns them off). They never change the draws.
	CheckpointEvery    int           `json:"-" yaml:"-"`
	CheckpointInterval time.Duration `json:"-" yaml:"-"`
	// InitFrom names a previous fit's output directory: chain c starts from
	// the last draw of its chain c mod (its chains), matched by token;
	// tokens it lacks start at the MAP, and the anchors are this fit's.
	InitFrom string `json:"init_from,omitempty" yaml:"-"`
}

// WithDefaults fills unset fields.
func (c FitConfig) WithDefaults() FitConfig {
	if c.Method == "" {
		c.Method = "gibbs"
	}
	if c.Laplace == "" {
		c.Laplace = "auto"
	}
	if c.Dim == 0 {
		c.Dim = 20
	}
	if c.MAPStarts == 0 {
		c.MAPStarts = posterior.DefaultMAPStarts
	}
	if c.Chains == 0 {
		c.Chains = 4
	}
	if c.Warmup == nil {
		w := 500
		c.Warmup = &w
	}
	if c.Draws == 0 {
		c.Draws = DefaultDraws
	}
	if c.GroupMoves == nil {
		k := posterior.DefaultGroupMoves
		c.GroupMoves = &k
	}
	if c.Overrelax == nil {
		k := posterior.DefaultOverrelax(c.Dim)
		c.Overrelax = &k
	}
	if c.Thin == 0 {
		c.Thin = 1
	}
	if c.Inner == 0 {
		c.Inner = 1
	}
	if c.Init == "" {
		c.Init = "map"
	}
	if c.AnchorValues == "" {
		c.AnchorValues = posterior.AnchorAtMAP.String()
		if c.Method == "gibbs" {
			c.AnchorValues = posterior.AnchorAuto.String()
		}
	}
	switch {
	case c.AnchorValues == posterior.AnchorAtMAP.String():
		c.AnchorSweeps = 0 // unused, so that it does not enter the checkpoint's key
	case c.AnchorSweeps == 0:
		c.AnchorSweeps = posterior.DefaultAnchorSweeps
	}
	if c.PriorSD == 0 {
		c.PriorSD = 1
	}
	if c.DrawsLayout == "" {
		c.DrawsLayout = "vector"
	}
	if c.SaveDraws == "" {
		c.SaveDraws = "all"
	}
	if c.Memory == 0 {
		c.Memory = DefaultMemory
	}
	if c.TempDir == "" {
		c.TempDir = c.Output
	}
	c.Threads = threadsOrDefault(c.Threads)
	return c
}

// Outputs lists the files the fit writes into Output: the MAP always, the
// draws' files for the sampling methods (gibbs and laplace).
func (c FitConfig) Outputs() []string {
	c = c.WithDefaults()
	names := []string{MapFile}
	if c.Method != "map" {
		names = append(names, SampleStatsFile, SummaryFile)
		if c.SaveDraws != "none" {
			names = append(names, DrawsFile)
		}
	}
	outs := make([]string, len(names))
	for k, n := range names {
		outs[k] = filepath.Join(c.Output, n)
	}
	return outs
}

// Validate reports settings that cannot work.
func (c FitConfig) Validate() error {
	c = c.WithDefaults()
	switch {
	case c.Counts == "":
		return errors.New("no counts: name counts.parquet with --counts")
	case c.Vocab == "":
		return errors.New("no vocabulary: name vocab.parquet with --vocab")
	case c.Output == "":
		return errors.New("no output: name the output directory with -o")
	case c.Counts == StdioPath && c.Vocab == StdioPath:
		return oneStdin([2]string{"--counts", c.Counts}, [2]string{"--vocab", c.Vocab})
	case c.Method != "gibbs" && c.Method != "map" && c.Method != "laplace":
		return fmt.Errorf("method %q, want gibbs, map or laplace", c.Method)
	case c.Dim < 1 || c.Dim > 4096:
		return fmt.Errorf("dim %d, want 1..4096", c.Dim)
	case c.MAPStarts < 1 || c.MAPStarts > 1024:
		return fmt.Errorf("map-starts %d, want 1..1024", c.MAPStarts)
	case c.MAPMaxIter < 0:
		return fmt.Errorf("map-max-iter %d is negative", c.MAPMaxIter)
	case c.Chains < 1 || c.Chains > 1024:
		return fmt.Errorf("chains %d, want 1..1024", c.Chains)
	case *c.Warmup < 0:
		return fmt.Errorf("warmup %d is negative", *c.Warmup)
	case c.Draws < 1:
		return fmt.Errorf("draws %d, want at least 1", c.Draws)
	case c.Thin < 1:
		return fmt.Errorf("thin %d, want at least 1", c.Thin)
	case c.Inner < 1:
		return fmt.Errorf("inner %d, want at least 1", c.Inner)
	case *c.GroupMoves < 0:
		return fmt.Errorf("group-moves %d is negative", *c.GroupMoves)
	case !(*c.Overrelax > -1 && *c.Overrelax < 1):
		return fmt.Errorf("overrelax %v outside (-1, 1)", *c.Overrelax)
	case !(c.PriorSD > 0):
		return fmt.Errorf("prior-sd %v, want a positive number", c.PriorSD)
	case c.DrawsLayout != "vector" && c.DrawsLayout != "long":
		return fmt.Errorf("draws-layout %q, want vector or long", c.DrawsLayout)
	case c.Resume && c.CheckpointInterval == NoCheckpoints:
		return errors.New("resume needs checkpoints; drop --checkpoint-every 0")
	case c.Resume && c.Method != "gibbs":
		return fmt.Errorf("resume continues an interrupted Gibbs fit, and method %s keeps no checkpoint; drop --resume to fit anew", c.Method)
	case c.CheckpointEvery < 0 || c.CheckpointInterval < 0 && c.CheckpointInterval != NoCheckpoints:
		return fmt.Errorf("checkpoint every %d sweeps or %v is negative", c.CheckpointEvery, c.CheckpointInterval)
	case c.Memory < 1<<20:
		return fmt.Errorf("memory budget %s, want at least 1MiB", bytesize.Format(c.Memory))
	}
	if _, err := posterior.ParseInitMode(c.Init); err != nil {
		return err
	}
	values, err := posterior.ParseAnchorValues(c.AnchorValues)
	switch {
	case err != nil:
		return err
	case values != posterior.AnchorAtMAP && c.Method != "gibbs":
		return fmt.Errorf("anchor-values %s needs method gibbs; method %s anchors at the MAP", c.AnchorValues, c.Method)
	case c.AnchorSweeps < 0:
		return fmt.Errorf("anchor-sweeps %d is negative", c.AnchorSweeps)
	}
	if _, err := posterior.ParseLaplaceMode(c.Laplace); err != nil {
		return err
	}
	return nil
}

// FitStats summarise a fit; they are recorded as pwe.stats (MAP and run
// figures) and printed by the command.
type FitStats struct {
	V           int     `json:"vocab_size"`
	Pairs       int     `json:"unique_pairs"`
	Anchors     []int   `json:"anchors"`
	MAPIter     int     `json:"map_iterations"`
	MAPLogPost  float64 `json:"map_log_posterior"`
	MAPGradNorm float64 `json:"map_grad_norm"`
	MAPStatus   string  `json:"map_status"`
	// MAPStarts holds the log posterior each random start of the MAP
	// reached; the highest was kept.
	MAPStarts []float64 `json:"map_start_log_posteriors,omitempty"`
	// AnchorValues says where the anchors' context vectors were fixed:
	// "map", or "draw" (the last state of an unanchored chain of
	// AnchorSweeps sweeps; draws.parquet's anchor rows hold the values).
	// AnchorScaleRatio is the MAP's mean squared context coordinate over
	// that state's (when the chain ran), which "auto" compares with
	// posterior.DegenerateMAPRatio.
	AnchorValues     string   `json:"anchor_values,omitempty"`
	AnchorSweeps     int      `json:"anchor_sweeps,omitempty"`
	AnchorScaleRatio *float64 `json:"anchor_scale_ratio,omitempty"`
	// AnchorVectors are the anchors' fixed context vectors, in the order
	// of Anchors: map.parquet holds the MAP, which differs from them when
	// the anchors were fixed at a draw, and summary.parquet holds only the
	// free coordinates.
	AnchorVectors [][]float32 `json:"anchor_vectors,omitempty"`
	Draws         int         `json:"draws_per_chain,omitempty"`
	// Diagnostics of the free coordinates (Gibbs only).
	MaxRhat    float64  `json:"max_rhat,omitempty"`
	MinESSBulk float64  `json:"min_ess_bulk,omitempty"`
	Warnings   []string `json:"warnings,omitempty"`
	// Removed names the files of an earlier fit in the directory that the
	// fit removed (removeStale).
	Removed []string `json:"-"`
	// Laplace describes the approximation of method "laplace".
	Laplace *LaplaceStats `json:"laplace,omitempty"`

	MAPSeconds    float64 `json:"-"`
	GibbsSeconds  float64 `json:"-"`
	SweepsPerSec  float64 `json:"-"`
	SummarySecond float64 `json:"-"`
}

// Fit runs the fit stage.
func Fit(ctx context.Context, cfg FitConfig) (FitStats, error) {
	cfg = cfg.WithDefaults()
	if err := cfg.Validate(); err != nil {
		return FitStats{}, err
	}
	vocab, _, vfp, err := readVocab(cfg.Vocab, cfg.Stdin, false)
	if err != nil {
		return FitStats{}, err
	}
	data, cfp, err := loadCountsFrom(cfg.Counts, cfg.Stdin, len(vocab))
	if err != nil {
		return FitStats{}, err
	}
	inputs := []input.Fingerprint{cfp, vfp}
	tokens := make([]string, len(vocab))
	for i, v := range vocab {
		tokens[i] = v.Token
	}
	rule, err := anchorRule(cfg.Anchors, tokens)
	if err != nil {
		return FitStats{}, err
	}
	if err := checkLaplaceSize(cfg, len(vocab)); err != nil {
		return FitStats{}, err
	}
	stats := FitStats{V: len(vocab), Pairs: data.Pairs()}
	var prev *lastDraws
	if cfg.InitFrom != "" {
		if prev, err = readLastDraws(cfg.InitFrom, cfg.Dim); err != nil {
			return stats, err
		}
		// A fit of another corpus would start every chain at the MAP, as
		// if --init-from had not been given.
		if !slices.ContainsFunc(tokens, func(t string) bool { return prev.last[0][t] != nil }) {
			return stats, fmt.Errorf("init-from %s: none of its %d tokens is in this fit's vocabulary (%s): is it a fit of another corpus?",
				cfg.InitFrom, len(prev.last[0]), cfg.Vocab)
		}
		inputs = append(inputs, prev.fp)
	}
	run, err := newGibbsRun(cfg, inputs, len(vocab))
	if err != nil {
		return stats, err
	}
	// anchored is where the anchored chains start: the MAP, or the draw
	// whose anchor context vectors are fixed (FitConfig.AnchorValues).
	var m, anchored *posterior.Params
	if run.resuming() {
		m, anchored, err = run.loadMAP(&stats)
	} else {
		m, anchored, err = fitMAP(ctx, cfg, data, rule, &stats)
	}
	if err != nil {
		return stats, err
	}
	anchors := stats.Anchors
	stats.AnchorVectors = make([][]float32, len(anchors))
	for k, a := range anchors {
		stats.AnchorVectors[k] = toFloat32(nil, anchored.Context(a))
	}
	meta := func(schema string) formats.Meta {
		return formats.Meta{Schema: schema, Config: cfg, Inputs: inputs, Stats: stats}
	}
	// map.parquet is written last, with the other outputs, so that an
	// interrupted fit leaves the previous outputs untouched.
	writeMap := func() error {
		return writeVectors(filepath.Join(cfg.Output, MapFile), meta(formats.SchemaMap), m, tokens, anchors)
	}
	if cfg.Method == "map" {
		if err := writeMap(); err != nil {
			return stats, err
		}
		stats.Removed = removeStale(cfg)
		return stats, run.finish()
	}

	keep, err := drawsFilter(cfg.SaveDraws, tokens)
	if err != nil {
		return stats, err
	}
	var starts []*posterior.Params
	if prev != nil {
		starts = prev.starts(tokens, anchored, cfg.Chains)
	}
	var sp *spill
	if cfg.Method == "laplace" {
		sp, err = sampleLaplace(ctx, cfg, data, m, &stats)
	} else {
		sp, err = run.sample(ctx, data, m, anchored, starts, &stats)
	}
	if err != nil {
		return stats, err
	}
	defer run.release(sp)

	// The summary and draws.parquet's rows are written at once (both only
	// read the spill); the summary completes the statistics that
	// draws.parquet, sample_stats.parquet and map.parquet record, so the
	// draws' metadata is taken now and its statistics set at the end.
	start := time.Now()
	free := freeCoordinates(len(vocab), cfg.Dim, anchors)
	drawsMeta := meta(drawsSchema(cfg))
	done := make(chan struct{})
	var summaryErr error
	go func() {
		defer close(done)
		summaryErr = writeSummary(filepath.Join(cfg.Output, SummaryFile), sp, free, tokens, cfg, &stats, meta)
		stats.SummarySecond = time.Since(start).Seconds()
	}()
	summary := func() (FitStats, error) {
		<-done
		return stats, summaryErr
	}
	if keep != nil {
		if err := writeDraws(filepath.Join(cfg.Output, DrawsFile), sp, tokens, keep, cfg, drawsMeta, summary); err != nil {
			<-done
			return stats, err
		}
	}
	if _, err := summary(); err != nil {
		return stats, err
	}
	if err := writeSampleStats(filepath.Join(cfg.Output, SampleStatsFile), sp.stats, meta(formats.SchemaSampleStats)); err != nil {
		return stats, err
	}
	if err := writeMap(); err != nil {
		return stats, err
	}
	stats.Removed = removeStale(cfg)
	return stats, run.finish()
}

// removeStale removes, once a fit's outputs are written, what an earlier
// fit in its directory left that this one does not replace: its draws,
// summary and sample statistics (after a MAP, or --save-draws none), and
// the similarities, neighbours, evaluation and report made from it, which
// summarize, report and evaluate would otherwise take for this fit's, and
// a reader for its report. It returns the names removed.
func removeStale(cfg FitConfig) []string {
	written := cfg.Outputs()
	var gone []string
	for _, name := range []string{DrawsFile, SummaryFile, SampleStatsFile, SimilarityFile, NeighboursFile, EvaluationFile, ReportFile} {
		p := filepath.Join(cfg.Output, name)
		if !slices.Contains(written, p) && os.Remove(p) == nil {
			gone = append(gone, name)
		}
	}
	return gone
}

// fitMAP finds the MAP, the anchors and the start of the anchored chains
// (the MAP, or the draw whose anchor values are fixed), recording them in
// stats.
func fitMAP(ctx context.Context, cfg FitConfig, data *posterior.Data, rule posterior.AnchorRule, stats *FitStats) (m, start *posterior.Params, err error) {
	began := time.Now()
	m, res, err := posterior.MAP(ctx, data, posterior.MAPConfig{
		Dim: cfg.Dim, PriorSD: cfg.PriorSD, Seed: cfg.Seed, Starts: cfg.MAPStarts, MaxIter: cfg.MAPMaxIter, Threads: cfg.Threads,
		OnEval: cfg.OnMAPEval,
	})
	if errors.Is(err, posterior.ErrNotConverged) {
		stats.Warnings = append(stats.Warnings, err.Error()+"; continuing from the best point found")
	} else if err != nil {
		return nil, nil, err
	}
	stats.MAPIter, stats.MAPLogPost, stats.MAPGradNorm, stats.MAPStatus = res.Iterations, res.LogPosterior, res.GradNorm, res.Status
	stats.MAPStarts = res.StartLogPosteriors
	stats.MAPSeconds = time.Since(began).Seconds()
	values, err := posterior.ParseAnchorValues(cfg.AnchorValues)
	if err != nil {
		return nil, nil, err
	}
	as, err := posterior.AnchorState(ctx, data, m, posterior.AnchorStateConfig{
		Rule: rule, Values: values, Sweeps: cfg.AnchorSweeps, PriorSD: cfg.PriorSD, Threads: cfg.Threads, Seed: cfg.Seed,
		OnSweep: cfg.OnAnchorSweep,
	})
	if err != nil {
		return nil, nil, err
	}
	stats.Anchors, stats.AnchorValues, stats.AnchorSweeps = as.Anchors, posterior.AnchorAtMAP.String(), as.Sweeps
	if as.Drawn {
		stats.AnchorValues = posterior.AnchorAtDraw.String()
	}
	if r := as.ScaleRatio; !math.IsNaN(r) {
		stats.AnchorScaleRatio = &r
	}
	return m, as.State, nil
}

// loadCounts streams counts.parquet row group by row group into the
// sampler's compact structures.
func loadCounts(path string, v int) (*posterior.Data, error) {
	d, _, err := loadCountsFrom(path, nil, v)
	return d, err
}

// loadCountsFrom is loadCounts that also reads an Arrow stream from stdin,
// batch by batch, for path "-", and fingerprints what it read.
func loadCountsFrom(path string, stdin io.Reader, v int) (*posterior.Data, input.Fingerprint, error) {
	r, err := openCounts(path, stdin)
	if err != nil {
		return nil, input.Fingerprint{}, err
	}
	defer r.Close()
	b := posterior.NewDataBuilder(v)
	buf := make([]formats.CountRow, 1<<14)
	for {
		n, err := r.Read(buf)
		if n > 0 {
			if err := b.Add(buf[:n]); err != nil {
				return nil, input.Fingerprint{}, fmt.Errorf("%s: %w", r.Path(), err)
			}
		}
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, input.Fingerprint{}, err
		}
	}
	d := b.Build()
	if d.Pairs() == 0 {
		return nil, input.Fingerprint{}, fmt.Errorf("%s: %w", r.Path(), posterior.ErrNoPairs)
	}
	fp, err := r.fingerprint()
	return d, fp, err
}

// anchorRule parses --anchors: a rule name, or comma-separated tokens (or
// token ids) of the vocabulary.
func anchorRule(s string, tokens []string) (posterior.AnchorRule, error) {
	if s == "" {
		return posterior.AnchorRule{}, nil
	}
	if r, err := posterior.ParseAnchorRule(s); err == nil {
		return r, nil
	}
	index := make(map[string]int, len(tokens))
	for i, t := range tokens {
		index[t] = i
	}
	var ids []int
	for _, name := range strings.Split(s, ",") {
		name = strings.TrimSpace(name)
		id, ok := index[name]
		if !ok {
			return posterior.AnchorRule{}, fmt.Errorf("anchors: %q is neither a rule (last, first, ...) nor a token of the vocabulary%s", name, tokenHint(name, index))
		}
		ids = append(ids, id)
	}
	return posterior.AnchorRule{Kind: posterior.AnchorIDs, IDs: ids}, nil
}

// drawsFilter returns which tokens' draws are written: all, none (nil), or
// those listed in a file, one per line.
func drawsFilter(save string, tokens []string) ([]bool, error) {
	keep := make([]bool, len(tokens))
	switch save {
	case "none":
		return nil, nil
	case "all":
		for i := range keep {
			keep[i] = true
		}
		return keep, nil
	}
	names, lines, err := readTokenLines(save)
	if err != nil {
		return nil, fmt.Errorf("save-draws: %w", err)
	}
	index := make(map[string]int, len(tokens))
	for i, t := range tokens {
		index[t] = i
	}
	for n, t := range names {
		id, ok := index[t]
		if !ok {
			return nil, fmt.Errorf("%s:%d: token %q is not in the vocabulary%s", save, lines[n], t, tokenHint(t, index))
		}
		keep[id] = true
	}
	return keep, nil
}

func writeVectors(path string, meta formats.Meta, p *posterior.Params, tokens []string, anchors []int) error {
	isAnchor := make([]bool, p.V)
	for _, a := range anchors {
		isAnchor[a] = true
	}
	rows := make([]formats.VectorRow, 0, 2*p.V)
	for _, param := range []string{formats.ParamRho, formats.ParamAlpha} {
		for i, tok := range tokens {
			v := p.Target(i)
			if param == formats.ParamAlpha {
				v = p.Context(i)
			}
			rows = append(rows, formats.VectorRow{
				Param: param, TokenID: int32(i), Token: tok, Vector: toFloat32(nil, v),
				Anchor: param == formats.ParamAlpha && isAnchor[i],
			})
		}
	}
	return formats.WriteAll(path, rows, meta)
}

func toFloat32(dst []float32, v []float64) []float32 {
	for _, x := range v {
		dst = append(dst, float32(x))
	}
	return dst
}

// freeCoordinates lists the offsets, within a draw record (rho then alpha,
// row-major), of the coordinates that are sampled: every target coordinate
// and the context coordinates of non-anchor tokens.
func freeCoordinates(v, dim int, anchors []int) []int {
	isAnchor := make([]bool, v)
	for _, a := range anchors {
		isAnchor[a] = true
	}
	free := make([]int, 0, 2*v*dim)
	for k := range v * dim {
		free = append(free, k)
	}
	for j := range v {
		if isAnchor[j] {
			continue
		}
		for d := range dim {
			free = append(free, v*dim+j*dim+d)
		}
	}
	return free
}

func writeSampleStats(path string, rows []formats.SampleStatsRow, meta formats.Meta) error {
	sort.Slice(rows, func(a, b int) bool {
		return rows[a].Chain < rows[b].Chain || rows[a].Chain == rows[b].Chain && rows[a].Draw < rows[b].Draw
	})
	return formats.WriteAll(path, rows, meta)
}
