package pipeline

import (
	"context"
	"fmt"
	"sync"

	"github.com/pwe-project/pwe/counts"
	"github.com/pwe-project/pwe/internal/bytesize"
	"github.com/pwe-project/pwe/stages"
)

// The long stages as pwe's commands and Run call them: each reports its
// progress through a Reporter and logs its warnings as the stage's own
// (nil Reporter: silent). The warnings come before the caller's summary.

// Tokenize runs stages.Tokenize, reporting the bytes it reads.
func Tokenize(ctx context.Context, r *Reporter, cfg stages.TokenizeConfig) (stages.TokenizeStats, error) {
	p := r.Progress("tokenize", UnitBytes, 0)
	cfg.Progress = readCounter(p)
	st, err := stages.Tokenize(ctx, cfg)
	p.Done()
	log := r.Stage("tokenize")
	if st.InvalidUTF8 > 0 {
		log.Warn(invalidText(st.InvalidUTF8, st.FirstInvalidUTF8))
	}
	if st.SkippedRecords > 0 {
		log.Warn(fmt.Sprintf("skipped %d records without text", st.SkippedRecords))
	}
	if err == nil && st.Workers < st.Threads {
		log.Warn(fmt.Sprintf("tokenized on %d of %d threads: a memory budget of %s holds no more workers; a larger one would use them all",
			st.Workers, st.Threads, bytesize.Format(cfg.WithDefaults().Memory)))
	}
	return st, err
}

// invalidText is the warning for n bytes of invalid UTF-8 replaced, the
// first in the document at first (path:line).
func invalidText(n int64, first string) string {
	if first == "" {
		return fmt.Sprintf("replaced %d bytes of invalid UTF-8", n)
	}
	return fmt.Sprintf("replaced %d bytes of invalid UTF-8, the first in %s", n, first)
}

// Count runs stages.Count, reporting the bytes it reads. It warns of
// invalid UTF-8 only when it read the text itself: a token stream's count
// comes from the tokenize run that wrote it, which warned already. It warns
// too when no pair formed.
func Count(ctx context.Context, r *Reporter, cfg stages.CountConfig) (stages.CountStats, error) {
	p := r.Progress("count", UnitBytes, 0)
	cfg.Progress = readCounter(p)
	var m *Progress
	cfg.Merge = mergeReport(r, "count", p, &m)
	st, err := stages.Count(ctx, cfg)
	p.Done()
	m.Done()
	if st.InvalidUTF8 > 0 && cfg.Tokens == "" {
		r.Stage("count").Warn(invalidText(st.InvalidUTF8, st.FirstInvalidUTF8))
	}
	if err == nil && st.Workers < st.Threads {
		r.Stage("count").Warn(fewerWorkers(st.Workers, st.Threads, cfg.WithDefaults().Memory))
	}
	if err == nil && st.PositivePairs == 0 {
		// As when the vocabulary comes from another corpus, or every
		// document is a single token: the counts are empty, and the fit
		// would have nothing to fit.
		r.Stage("count").Warn(fmt.Sprintf("no pair formed: no two in-vocabulary tokens of a document lie within the window (%d of %d tokens are out of the vocabulary)",
			st.OOVTokens, st.Tokens))
	}
	return st, err
}

// fewerWorkers is the warning for a count that ran on fewer workers than
// it had threads: the most it uses, or as many as the memory budget holds.
func fewerWorkers(workers, threads int, memory int64) string {
	if workers == counts.MaxWorkers {
		return fmt.Sprintf("counted on %d of %d threads, the most counting uses", workers, threads)
	}
	return fmt.Sprintf("counted on %d of %d threads: a memory budget of %s holds no more workers for this vocabulary; a larger one would use them all",
		workers, threads, bytesize.Format(memory))
}

// mergeReport returns the hook by which a counting stage ends the report of
// its reading, p, and starts that of the merge that writes its rows, which
// it stores in *m for the caller to end: without it the bar would stand at
// 100 % for the merge, a third of count's time or more. It returns nil for
// a nil Reporter.
func mergeReport(r *Reporter, stage string, p *Progress, m **Progress) func() counts.Progress {
	if r == nil {
		return nil
	}
	return func() counts.Progress {
		p.Done()
		*m = r.Progress(stage, MergeParts, 0)
		return *m
	}
}

// MovieLens runs stages.MovieLens, reporting the bytes it reads, then its
// merge.
func MovieLens(ctx context.Context, r *Reporter, cfg stages.MovieLensConfig) (stages.MovieLensStats, error) {
	p := r.Progress("movielens", UnitBytes, 0)
	cfg.Progress = readCounter(p)
	var m *Progress
	cfg.Merge = mergeReport(r, "movielens", p, &m)
	st, err := stages.MovieLens(ctx, cfg)
	m.Done()
	p.Done()
	if err == nil && st.Workers < st.Threads {
		r.Stage("movielens").Warn(fewerWorkers(st.Workers, st.Threads, cfg.WithDefaults().Memory))
	}
	if st.SkippedLines+st.SkippedTitleLines > 0 {
		r.Stage("movielens").Warn(fmt.Sprintf("skipped %d malformed rating lines and %d title lines; the first: %v",
			st.SkippedLines, st.SkippedTitleLines, st.FirstSkipped))
	}
	return st, err
}

// Fit runs stages.Fit, reporting the MAP's gradient evaluations, the
// sweeps of the chain that draws the anchor values, and then the sweeps (a
// resumed fit starts at the sweeps already done; the sweeps' report begins
// with the first, so that the earlier steps' time does not enter their
// rate); cfg.OnSweep, cfg.OnAnchorSweep and cfg.OnMAPEval, if set, are
// called too. The warnings are logged even when the fit fails.
func Fit(ctx context.Context, r *Reporter, cfg stages.FitConfig) (stages.FitStats, error) {
	mp := r.Progress("fit", "MAP evaluations", 0)
	onEval := cfg.OnMAPEval
	cfg.OnMAPEval = func() {
		mp.Add(1)
		if onEval != nil {
			onEval()
		}
	}
	// The unanchored chain that draws the anchor values runs between the
	// MAP and the sweeps (unless a resumed fit skips it).
	var ap *Progress
	var anchorOnce sync.Once
	onAnchor := cfg.OnAnchorSweep
	cfg.OnAnchorSweep = func(sweep int) {
		anchorOnce.Do(func() {
			mp.Done()
			ap = r.Progress("fit", "anchor sweeps", int64(cfg.WithDefaults().AnchorSweeps))
		})
		ap.Add(1)
		if onAnchor != nil {
			onAnchor(sweep)
		}
	}
	var sp *Progress
	var count func(chain, sweep int)
	var once sync.Once
	cfg.OnSweep = chainSweeps(func(chain, sweep int) {
		once.Do(func() {
			mp.Done()
			ap.Done()
			sp = r.Progress("fit", "sweeps", fitSweeps(cfg))
			count = sweepCounter(sp)
		})
		if count != nil {
			count(chain, sweep)
		}
	}, cfg.OnSweep)
	// The summary reads the draws back after the sweeps.
	var summ *Progress
	cfg.OnSummarized = reportCount(&summ, func(total int) *Progress {
		mp.Done()
		ap.Done()
		sp.Done()
		return r.Progress("fit", "coordinates summarized", int64(total))
	}, cfg.OnSummarized)
	st, err := stages.Fit(ctx, cfg)
	mp.Done()
	ap.Done()
	sp.Done()
	summ.Done()
	log := r.Stage("fit")
	for _, w := range st.Warnings {
		log.Warn(w)
	}
	return st, err
}

// Summarize runs stages.Summarize, reporting the draws it reads.
func Summarize(ctx context.Context, r *Reporter, cfg stages.SummarizeConfig) (stages.SummarizeStats, error) {
	var p *Progress
	cfg.OnDraw = reportCount(&p, func(total int) *Progress {
		return r.Progress("summarize", "draws", int64(total))
	}, cfg.OnDraw)
	st, err := stages.Summarize(ctx, cfg)
	p.Done()
	return st, err
}

// reportCount returns a hook that reports done of total through *p, which
// start makes at the first call, and calls next, a library caller's hook,
// too.
func reportCount(p **Progress, start func(total int) *Progress, next func(done, total int)) func(done, total int) {
	return func(done, total int) {
		if *p == nil {
			*p = start(total)
		}
		(*p).Add(int64(done) - (*p).Count())
		if next != nil {
			next(done, total)
		}
	}
}

// chainSweeps calls both sweep hooks: a library caller's Fit.OnSweep
// survives the progress report's.
func chainSweeps(a, b func(chain, sweep int)) func(chain, sweep int) {
	switch {
	case a == nil:
		return b
	case b == nil:
		return a
	}
	return func(chain, sweep int) { a(chain, sweep); b(chain, sweep) }
}
