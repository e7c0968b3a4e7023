package stages

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync/atomic"
	"time"

	"golang.org/x/sync/errgroup"

	"github.com/pwe-project/pwe/counts"
	"github.com/pwe-project/pwe/formats"
	"github.com/pwe-project/pwe/formats/input"
	"github.com/pwe-project/pwe/formats/movielens"
	"github.com/pwe-project/pwe/internal/bytesize"
	"github.com/pwe-project/pwe/tokenize/baskets"
)

// MovieLensConfig configures the movielens stage: a MovieLens ratings file
// to vocab.parquet and counts.parquet, movies taking the place of words and
// each user's liked and disliked movies the place of documents.
type MovieLensConfig struct {
	// Ratings is the ratings file: u.data, ratings.dat or ratings.csv,
	// possibly compressed. It is read two or three times, so it cannot be
	// standard input.
	Ratings string `json:"-" yaml:"ratings"`
	// Movies is the titles file; "" looks for u.item, movies.dat or
	// movies.csv beside Ratings and goes without titles when there is none.
	Movies string `json:"-" yaml:"movies"`
	// Format forces the layout: "100k", "dat" or "csv" ("": recognised from
	// the first line).
	Format string `json:"format" yaml:"format"`
	// SkipBadLines skips malformed lines, counting them, instead of failing.
	SkipBadLines bool `json:"skip_bad_lines" yaml:"skip_bad_lines"`
	// Token is "title" (default: titles, made unique with " (id N)") or
	// "id" ("movie:<id>").
	Token string `json:"token" yaml:"token"`

	// MinRating in stars marks a movie as liked (default 3).
	MinRating float64 `json:"min_rating" yaml:"min_rating"`
	// TopMovies keeps the most rated movies (default 600 when nil; 0: all).
	TopMovies *int `json:"top_movies" yaml:"top_movies"`
	// MinMovieRatings drops movies with fewer distinct raters (0: off).
	MinMovieRatings int64 `json:"min_movie_ratings" yaml:"min_movie_ratings"`
	// MinUserRatings drops users with fewer ratings of kept movies (0: off).
	MinUserRatings int `json:"min_user_ratings" yaml:"min_user_ratings"`
	// MaxPerUser keeps at most this many ratings per user, at random
	// (default 25 when nil; 0: all).
	MaxPerUser *int `json:"max_per_user" yaml:"max_per_user"`
	// Negatives is K, the negatives per positive pair (default 1 when nil).
	Negatives *int `json:"negatives" yaml:"negatives"`
	// NegPower raises the movie counts of the negative distribution
	// (default 0.75 when nil; 0: uniform over the movies).
	NegPower *float64 `json:"neg_power" yaml:"neg_power"`
	// Seed drives the choice of MaxPerUser ratings and the negatives.
	Seed uint64 `json:"seed" yaml:"seed"`

	// Output is the directory that receives vocab.parquet and
	// counts.parquet.
	Output  string `json:"-" yaml:"-"`
	Threads int    `json:"-" yaml:"-"`
	// Memory bounds the whole stage (default 1 GiB): the grouping of an
	// unsorted file, the stored baskets and the pair counting.
	Memory  int64  `json:"-" yaml:"-"`
	TempDir string `json:"-" yaml:"-"`
	// Progress, if set, follows the reading of the ratings file over all
	// its passes (two or three).
	Progress ReadProgress `json:"-" yaml:"-"`
	// Merge, if set, is called when the reading ends and the merge that
	// writes the counts begins, as CountConfig.Merge.
	Merge func() counts.Progress `json:"-" yaml:"-"`
}

// WithDefaults fills unset fields.
func (c MovieLensConfig) WithDefaults() MovieLensConfig {
	if c.Token == "" {
		c.Token = "title"
	}
	if c.MinRating == 0 {
		c.MinRating = baskets.DefaultMinRating
	}
	if c.TopMovies == nil {
		n := baskets.DefaultTopMovies
		c.TopMovies = &n
	}
	if c.MaxPerUser == nil {
		n := baskets.DefaultMaxPerUser
		c.MaxPerUser = &n
	}
	if c.Negatives == nil {
		k := counts.DefaultNegatives
		c.Negatives = &k
	}
	if c.NegPower == nil {
		p := counts.DefaultNegPower
		c.NegPower = &p
	}
	if c.Memory == 0 {
		c.Memory = DefaultMemory
	}
	if c.TempDir == "" {
		c.TempDir = os.TempDir()
	}
	c.Threads = threadsOrDefault(c.Threads)
	return c
}

func (c MovieLensConfig) options() baskets.Options {
	return baskets.Options{
		MinRating: c.MinRating, TopMovies: *c.TopMovies, MinMovieRatings: c.MinMovieRatings,
		MinUserRatings: c.MinUserRatings, MaxPerUser: *c.MaxPerUser, Seed: c.Seed, IDTokens: c.Token == "id",
	}
}

// minMovieLensMemory leaves room for the read buffers, the movie tables
// and the smallest pair counter.
const minMovieLensMemory = 16 << 20

// Validate reports settings that cannot work.
func (c MovieLensConfig) Validate() error {
	d := c.WithDefaults()
	switch {
	case c.Ratings == "":
		return errors.New("no input: name the ratings file (u.data, ratings.dat or ratings.csv)")
	case c.Ratings == "-":
		return errors.New("the ratings are read more than once, so they cannot come from standard input: write them to a file")
	case c.Output == "":
		return errors.New("no output: name the output directory with -o")
	case d.Token != "title" && d.Token != "id":
		return fmt.Errorf("token %q, want title or id", c.Token)
	case *d.Negatives < 0:
		return fmt.Errorf("negatives %d is negative", *d.Negatives)
	case d.Memory < minMovieLensMemory:
		return fmt.Errorf("memory budget %s, want at least %s", bytesize.Format(d.Memory), bytesize.Format(minMovieLensMemory))
	}
	if _, err := movielens.ParseFormat(c.Format); err != nil {
		return err
	}
	if err := d.options().Validate(); err != nil {
		return err
	}
	cc := counts.Config{Negatives: *d.Negatives, NegPower: d.NegPower, Memory: counts.MinMemory, Workers: d.Threads, Window: 1}
	return cc.Validate()
}

// MovieLensStats summarise a movielens run; they are recorded as
// pwe.stats in both outputs.
type MovieLensStats struct {
	Format       string `json:"format"`
	Ratings      int64  `json:"ratings"`       // ratings read
	SkippedLines int64  `json:"skipped_lines"` // malformed lines skipped
	// FirstSkipped is the first skipped line's error, for the message.
	FirstSkipped      error `json:"-"`
	TitlesFile        bool  `json:"titles_file"`
	TitlesLatin1      bool  `json:"titles_latin1"`
	SkippedTitleLines int64 `json:"skipped_title_lines"`
	baskets.Stats
	Window        int   `json:"window"` // largest basket - 1
	PositivePairs int64 `json:"positive_pairs"`
	UniquePairs   int64 `json:"unique_pairs"`
	// Grouped reports that the ratings were not sorted by user and were
	// grouped in memory; the outputs are the same either way.
	Grouped      bool    `json:"-"`
	Spills       int     `json:"-"`
	SpilledBytes int64   `json:"-"`
	Seconds      float64 `json:"-"`
	// Threads is the threads the run could use and Workers those that
	// counted pairs: fewer when the memory budget holds no more.
	Threads int `json:"-"`
	Workers int `json:"-"`
}

// MovieLens reads the ratings, builds the per-user baskets and writes
// DIR/vocab.parquet (external_id = movieId) and DIR/counts.parquet.
func MovieLens(ctx context.Context, cfg MovieLensConfig) (MovieLensStats, error) {
	start := time.Now()
	cfg = cfg.WithDefaults()
	if err := cfg.Validate(); err != nil {
		return MovieLensStats{}, err
	}
	// A pipe (<(zcat ratings.csv.gz), /dev/stdin) would be empty when read
	// again, and the run would say there are no ratings.
	if info, err := os.Stat(cfg.Ratings); err == nil && !info.Mode().IsRegular() {
		return MovieLensStats{}, fmt.Errorf("%s is not a regular file (a pipe?): the ratings are read more than once, so they must be in a file", cfg.Ratings)
	}
	format, _ := movielens.ParseFormat(cfg.Format)
	ropt := movielens.Options{Format: format, SkipBadLines: cfg.SkipBadLines}
	passes := newPassProgress(cfg.Progress, cfg.Ratings)
	ropt.OnRead = passes.onRead()
	open := func() (*movielens.Reader, error) { return movielens.Open(cfg.Ratings, ropt) }
	// A file sorted by user is read three times (movie counts, tally,
	// baskets), unless the baskets fit in memory after the tally.
	passes.expect(3)

	defer limitMemory(cfg.Memory)()

	// The stored baskets may take a quarter of the budget, the grouping of
	// an unsorted file half; the pair counter gets what is left.
	var stats MovieLensStats
	b, src, err := countMovies(ctx, cfg, open, passes, &stats)
	if err != nil {
		return stats, err
	}
	if rs := src.ReadStats(); rs.Ratings == 0 {
		// Not the filters' doing: a header alone, or every line skipped.
		err := fmt.Errorf("%s: %w", cfg.Ratings, movielens.ErrEmpty)
		if rs.Skipped > 0 {
			err = fmt.Errorf("%w: all %d lines were malformed and skipped, the first: %v", err, rs.Skipped, rs.FirstSkipped)
		}
		return stats, err
	}
	if err := b.SelectMovies(); err != nil {
		return stats, err
	}
	if err := b.Tally(ctx, src); err != nil {
		return stats, err
	}
	if _, inMemory := src.(*baskets.MemorySource); inMemory || b.StoredBaskets() {
		passes.expect(0)
	} else {
		passes.expect(1)
	}
	rs := src.ReadStats()
	stats.Format, stats.Ratings = rs.Format.String(), rs.Ratings
	stats.SkippedLines, stats.FirstSkipped = rs.Skipped, rs.FirstSkipped
	inputs := []input.Fingerprint{rs.Fingerprint}

	titles, tfp, err := readTitles(cfg, rs.Format, &stats)
	if err != nil {
		return stats, err
	}
	if tfp != nil {
		inputs = append(inputs, *tfp)
	}
	items, err := b.Vocabulary(titles)
	if err != nil {
		return stats, err
	}
	stats.Stats = b.Stats()
	stats.Window = max(1, stats.LargestBasket-1)
	if stats.Window > counts.MaxWindow {
		return stats, fmt.Errorf("a user's basket holds %d movies, more than the %d that pair counting allows: set max-per-user or top-movies",
			stats.LargestBasket, counts.MaxWindow+1)
	}

	rows := make([]formats.VocabRow, len(items))
	freq := make([]int64, len(items))
	for i, it := range items {
		ext := int64(it.MovieID)
		rows[i] = formats.VocabRow{TokenID: int32(i), Token: it.Token, Count: it.Count, ExternalID: &ext}
		freq[i] = it.Count
	}
	held := b.MemoryBytes()
	if m, ok := src.(*baskets.MemorySource); ok {
		held += m.MemoryBytes()
	}
	cc := counts.Config{
		Window: stats.Window, Weighting: counts.Uniform, Negatives: *cfg.Negatives, NegPower: cfg.NegPower,
		Memory: max(cfg.Memory-held-minMovieLensMemory/2, counts.MinMemory), Workers: cfg.Threads,
		TempDir: cfg.TempDir, Seed: cfg.Seed,
	}
	counter, err := counts.New(cc, freq)
	if err != nil {
		return stats, err
	}
	defer counter.Close()
	stats.Threads, stats.Workers = cfg.Threads, counter.Workers()
	if err := countBaskets(ctx, b, src, counter, counter.Workers()); err != nil {
		return stats, err
	}

	if err := os.MkdirAll(cfg.Output, 0o755); err != nil {
		return stats, err
	}
	meta := formats.Meta{Config: cfg, Inputs: inputs}
	out, err := formats.CreateCounts(filepath.Join(cfg.Output, "counts.parquet"), meta, false)
	if err != nil {
		return stats, err
	}
	defer out.Abort()
	if cfg.Merge != nil {
		counter.SetProgress(cfg.Merge())
	}
	cs, err := counter.Finish(ctx, out.TakeColumns)
	if err != nil {
		return stats, err
	}
	stats.PositivePairs, stats.UniquePairs = cs.PositivePairs, cs.UniquePairs
	stats.Spills, stats.SpilledBytes = cs.Spills, cs.SpilledBytes
	if err := out.SetStats(stats); err != nil {
		return stats, err
	}
	if err := out.Close(); err != nil {
		return stats, err
	}
	meta.Stats = stats
	if err := formats.WriteVocab(filepath.Join(cfg.Output, "vocab.parquet"), rows, meta); err != nil {
		return stats, err
	}
	stats.Seconds = time.Since(start).Seconds()
	return stats, nil
}

// countMovies runs the first pass over the file as it is, sorted by user;
// if it is not, it groups the ratings in memory and runs the pass there.
func countMovies(ctx context.Context, cfg MovieLensConfig, open baskets.Opener, passes *passProgress, stats *MovieLensStats) (*baskets.Builder, baskets.Source, error) {
	b, err := baskets.NewBuilder(cfg.options(), cfg.Memory/4)
	if err != nil {
		return nil, nil, err
	}
	var src baskets.Source = baskets.NewFileSource(open)
	err = b.CountMovies(ctx, src)
	if !errors.Is(err, baskets.ErrUnsorted) {
		return b, src, err
	}
	stats.Grouped = true
	passes.expect(2) // LoadMemory reads the file twice more, then works in memory
	mem, err := baskets.LoadMemory(ctx, open, cfg.Memory/2)
	if errors.Is(err, baskets.ErrTooLarge) {
		return nil, nil, fmt.Errorf("%s is not sorted by user and %w (half of --memory %s): raise --memory or sort it by user id first",
			cfg.Ratings, err, bytesize.Format(cfg.Memory))
	}
	if err != nil {
		return nil, nil, err
	}
	if b, err = baskets.NewBuilder(cfg.options(), cfg.Memory/4); err != nil {
		return nil, nil, err
	}
	return b, mem, b.CountMovies(ctx, mem)
}

// passProgress reports the reading of a file read several times: the
// total is what was read so far plus the size times the passes still to
// come, corrected as the stage learns how many there are.
type passProgress struct {
	p    ReadProgress // nil: no report
	size int64        // 0: unknown
	read atomic.Int64
}

func newPassProgress(p ReadProgress, path string) *passProgress {
	pp := &passProgress{p: p}
	if p != nil {
		pp.size = rawSize([]string{path})
	}
	return pp
}

// onRead returns the hook for movielens.Options.OnRead (nil without a
// report).
func (pp *passProgress) onRead() func(int64) {
	if pp.p == nil {
		return nil
	}
	return func(n int64) {
		pp.read.Add(n)
		pp.p.Add(n)
	}
}

// expect announces, between passes, that the file will be read passes
// more times.
func (pp *passProgress) expect(passes int) {
	if pp.p != nil && pp.size > 0 {
		pp.p.SetTotal(pp.read.Load() + int64(passes)*pp.size)
	}
}

// readTitles reads the movies file named in cfg or found beside the
// ratings; without one it returns nil titles (tokens "movie:<id>").
func readTitles(cfg MovieLensConfig, format movielens.Format, stats *MovieLensStats) (map[int32]string, *input.Fingerprint, error) {
	if cfg.Token == "id" {
		return nil, nil, nil
	}
	path, tformat := cfg.Movies, movielens.Auto
	if path == "" {
		path, tformat = movielens.TitlesPath(cfg.Ratings, format), format
		if path == "" {
			return nil, nil, nil
		}
	}
	t, err := movielens.ReadTitles(path, movielens.Options{Format: tformat, SkipBadLines: cfg.SkipBadLines})
	if err != nil {
		return nil, nil, err
	}
	stats.TitlesFile, stats.TitlesLatin1, stats.SkippedTitleLines = true, t.Latin1, t.Skipped
	if stats.FirstSkipped == nil {
		stats.FirstSkipped = t.FirstSkipped
	}
	return t.ByID, &t.Fingerprint, nil
}

// basketBatch carries the baskets of a run of users to a worker.
type basketBatch struct {
	seqs []int64 // document sequence numbers, one per basket
	ends []int   // end of each basket in ids
	ids  []int32
}

// basketsPerBatch amortises channel traffic over many small baskets.
const basketsPerBatch = 4096

// countBaskets hands each kept user's liked and disliked baskets, as two
// documents numbered 2*seq and 2*seq+1, to one accumulator per thread.
// Every movie of a basket is within the window of every other, so each
// ordered pair of distinct movies counts once.
func countBaskets(ctx context.Context, b *baskets.Builder, src baskets.Source, counter *counts.Counter, threads int) error {
	g, ctx := errgroup.WithContext(ctx)
	full := make(chan *basketBatch, 2*threads)
	free := make(chan *basketBatch, 2*threads+1)
	for range cap(free) {
		free <- new(basketBatch)
	}
	for range threads {
		acc := counter.NewAccumulator()
		g.Go(func() error {
			for bt := range full {
				start := 0
				for i, end := range bt.ends {
					if err := acc.Add(bt.ids[start:end], bt.seqs[i]); err != nil {
						return err
					}
					start = end
				}
				free <- bt
			}
			return nil
		})
	}
	g.Go(func() error {
		defer close(full)
		cur := <-free
		reset := func() { cur.seqs, cur.ends, cur.ids = cur.seqs[:0], cur.ends[:0], cur.ids[:0] }
		reset()
		add := func(seq int64, ids []int32) {
			if len(ids) > 1 {
				cur.seqs = append(cur.seqs, seq)
				cur.ids = append(cur.ids, ids...)
				cur.ends = append(cur.ends, len(cur.ids))
			}
		}
		err := b.Emit(ctx, src, func(seq int64, liked, disliked []int32) error {
			add(2*seq, liked)
			add(2*seq+1, disliked)
			if len(cur.seqs) < basketsPerBatch {
				return nil
			}
			select {
			case full <- cur:
			case <-ctx.Done():
				return ctx.Err()
			}
			select {
			case cur = <-free:
			case <-ctx.Done():
				return ctx.Err()
			}
			reset()
			return nil
		})
		if err != nil || len(cur.seqs) == 0 {
			return err
		}
		select {
		case full <- cur:
			return nil
		case <-ctx.Done():
			return ctx.Err()
		}
	})
	return g.Wait()
}
