package main

import (
	"context"
	"flag"
	"fmt"
	"log/slog"
	"path/filepath"

	"github.com/pwe-project/pwe/counts"
	"github.com/pwe-project/pwe/pipeline"
	"github.com/pwe-project/pwe/stages"
)

func init() {
	register(&command{
		name: "movielens",
		args: "RATINGS -o DIR",
		summary: `Turn MovieLens ratings into a movie vocabulary and pair counts.
RATINGS is ml-100k's u.data, ml-1m/ml-10m's ratings.dat or a later release's
ratings.csv, possibly compressed; the layout is recognised from the first
line. Titles come from u.item, movies.dat or movies.csv beside it (or
--movies). A user's movies rated at least --min-rating are liked, the others
disliked; every ordered pair of distinct movies within a user's liked set,
and within the disliked set, is a positive pair. Filters, in order: repeated
ratings keep the latest, --min-movie-ratings, --top-movies, then
--min-user-ratings and --max-per-user on the remaining ratings. Writes
DIR/vocab.parquet (external_id = movieId) and DIR/counts.parquet.`,
		example: `  pwe movielens ml-25m/ratings.csv -o ml25m --seed 1
  pwe movielens ml-100k/u.data -o ml100k --top-movies 0 --max-per-user 0 --token id`,
		setup: func(fs *flag.FlagSet, e *env) func(context.Context, []string) error {
			var cfg stages.MovieLensConfig
			memory := pipeline.Bytes(stages.DefaultMemory)
			top, perUser, negatives := 600, 25, 1
			fs.StringVar(&cfg.Output, "o", "", "output `directory` for vocab.parquet and counts.parquet")
			fs.StringVar(&cfg.Movies, "movies", "", "titles `file` (default: u.item, movies.dat or movies.csv beside RATINGS, if present)")
			fs.StringVar(&cfg.Format, "format", "", "force the ratings `layout`: 100k, dat or csv (default: from the first line)")
			fs.BoolVar(&cfg.SkipBadLines, "skip-bad-lines", false, "skip and count malformed lines instead of failing")
			fs.StringVar(&cfg.Token, "token", "title", "vocabulary tokens: `title` (made unique with \" (id N)\") or id (movie:<id>)")
			fs.Float64Var(&cfg.MinRating, "min-rating", 3, "a rating of at least this many `stars` marks a movie liked")
			fs.IntVar(&top, "top-movies", top, "keep the `n` most rated movies (0: all)")
			fs.Int64Var(&cfg.MinMovieRatings, "min-movie-ratings", 0, "drop movies with fewer than `n` raters (0: off)")
			fs.IntVar(&cfg.MinUserRatings, "min-user-ratings", 0, "drop users with fewer than `n` ratings of kept movies (0: off)")
			fs.IntVar(&perUser, "max-per-user", perUser, "keep at most `n` random ratings per user (0: all)")
			fs.IntVar(&negatives, "negatives", negatives, "negative samples `K` per positive pair")
			negPower := counts.DefaultNegPower
			fs.Float64Var(&negPower, "neg-power", negPower, "negatives follow movie counts to this `power` (0: uniform)")
			fs.Uint64Var(&cfg.Seed, "seed", 1, "random `seed` for --max-per-user and negatives")
			fs.Var(&memory, "memory", "memory `budget` for the whole stage, e.g. 512MiB")
			fs.StringVar(&cfg.TempDir, "temp-dir", "", "`directory` for spilled runs (default: the system's)")
			fs.IntVar(&cfg.Threads, "threads", 0, "`threads`: cores used (0: every core), as many as --memory holds; the output does not depend on it")
			return func(ctx context.Context, args []string) error {
				if len(args) != 1 {
					return usagef("movielens: want one ratings file, got %d arguments", len(args))
				}
				cfg.Ratings = args[0]
				limitThreads(cfg.Threads)
				cfg.TopMovies, cfg.MaxPerUser, cfg.Negatives, cfg.NegPower = &top, &perUser, &negatives, &negPower
				cfg.Memory = int64(memory)
				if err := cfg.WithDefaults().Validate(); err != nil {
					return usagef("movielens: %v", err)
				}
				release, err := e.lockOutput("movielens", cfg.Output)
				if err != nil {
					return fmt.Errorf("movielens: %w", err)
				}
				defer release()
				st, err := pipeline.MovieLens(ctx, e.rep, cfg)
				if err != nil {
					return fmt.Errorf("movielens: %w", err)
				}
				how := "sorted by user, streamed"
				if st.Grouped {
					how = "not sorted by user, grouped in memory"
				}
				log := e.stage("movielens")
				log.Info(fmt.Sprintf("%d ratings (%s layout, %s) of %d users and %d movies; %d repeated ratings superseded",
					st.Ratings, st.Format, how, st.Users, st.Movies, st.Duplicates))
				log.Info(fmt.Sprintf("kept %d movies, %d users (%d dropped by --min-user-ratings), %d ratings (%d liked, %d disliked; %d over --max-per-user)",
					st.VocabSize, st.UsersKept, st.UsersDropped, st.KeptRatings, st.Liked, st.Disliked, st.Capped))
				log.Info(fmt.Sprintf("%d positive pairs, %d unique pairs, %d spills, %.2fs -> %s, %s",
					st.PositivePairs, st.UniquePairs, st.Spills, st.Seconds,
					filepath.Join(cfg.Output, "vocab.parquet"), filepath.Join(cfg.Output, "counts.parquet")),
					slog.Any(pipeline.StatsKey, st), slog.Float64(pipeline.SecondsKey, st.Seconds))
				switch {
				case cfg.Token == "id":
				case !st.TitlesFile:
					log.Info("no titles file found (--movies); tokens are movie:<id>")
				case st.Untitled > 0 || st.DuplicateTitles > 0:
					log.Info(fmt.Sprintf("%d movies without a title (movie:<id>), %d titles shared by several movies (\" (id N)\" appended)",
						st.Untitled, st.DuplicateTitles))
				}
				return nil
			}
		},
	})
}
