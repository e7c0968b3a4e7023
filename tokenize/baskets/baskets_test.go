package baskets

import (
	"bytes"
	"cmp"
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/pwe-project/pwe/formats/movielens"
	"github.com/pwe-project/pwe/formats/movielens/mltest"
)

var ctx = context.Background()

// fileOf writes ratings as a csv file held in memory and returns an opener.
func fileOf(t testing.TB, ratings []movielens.Rating) Opener {
	t.Helper()
	var b bytes.Buffer
	w := mltest.NewRatingWriter(&b, movielens.FormatCSV, mltest.Options{})
	for _, r := range ratings {
		w.Write(r)
	}
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	data := b.Bytes()
	return func() (*movielens.Reader, error) {
		return movielens.NewReader(bytes.NewReader(data), "ratings.csv", movielens.Options{})
	}
}

// basket is what Emit gives for one user, as movie ids.
type basket struct {
	seq             int64
	liked, disliked []int32
}

type result struct {
	vocab   []Item
	baskets []basket
	stats   Stats
}

func run(t *testing.T, src Source, opt Options, storeLimit int64) result {
	t.Helper()
	b, err := NewBuilder(opt, storeLimit)
	if err != nil {
		t.Fatal(err)
	}
	if err := b.CountMovies(ctx, src); err != nil {
		t.Fatal(err)
	}
	if err := b.SelectMovies(); err != nil {
		t.Fatal(err)
	}
	if err := b.Tally(ctx, src); err != nil {
		t.Fatal(err)
	}
	vocab, err := b.Vocabulary(nil)
	if err != nil {
		t.Fatal(err)
	}
	var out []basket
	toMovies := func(ids []int32) []int32 {
		var ms []int32
		for i, id := range ids {
			if i > 0 && id <= ids[i-1] {
				t.Fatalf("vocabulary ids %v not ascending", ids)
			}
			ms = append(ms, vocab[id].MovieID)
		}
		slices.Sort(ms)
		return ms
	}
	err = b.Emit(ctx, src, func(seq int64, liked, disliked []int32) error {
		out = append(out, basket{seq, toMovies(liked), toMovies(disliked)})
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return result{vocab, out, b.Stats()}
}

// naive applies the documented rules with maps over the whole data set.
func naive(ratings []movielens.Rating, opt Options) (baskets []basket, counts map[int32]int64, duplicates int64) {
	type um struct{ u, m int32 }
	latest := map[um]movielens.Rating{}
	for _, r := range ratings {
		k := um{r.User, r.Movie}
		if old, ok := latest[k]; ok {
			duplicates++
			if r.Time < old.Time {
				continue
			}
		}
		latest[k] = r
	}
	raters := map[int32]int64{}
	byUser := map[int32][]movielens.Rating{}
	for k, r := range latest {
		raters[k.m]++
		byUser[k.u] = append(byUser[k.u], r)
	}
	var movies []int32
	for m, n := range raters {
		if n >= opt.MinMovieRatings {
			movies = append(movies, m)
		}
	}
	slices.SortFunc(movies, func(a, b int32) int {
		if c := cmp.Compare(raters[b], raters[a]); c != 0 {
			return c
		}
		return cmp.Compare(a, b)
	})
	if opt.TopMovies > 0 && len(movies) > opt.TopMovies {
		movies = movies[:opt.TopMovies]
	}
	kept := map[int32]bool{}
	for _, m := range movies {
		kept[m] = true
	}
	var users []int32
	for u := range byUser {
		users = append(users, u)
	}
	slices.Sort(users)
	counts = map[int32]int64{}
	for seq, u := range users {
		var rs []movielens.Rating
		for _, r := range byUser[u] {
			if kept[r.Movie] {
				rs = append(rs, r)
			}
		}
		if len(rs) == 0 || len(rs) < opt.MinUserRatings {
			continue
		}
		if opt.MaxPerUser > 0 && len(rs) > opt.MaxPerUser {
			slices.SortFunc(rs, func(a, b movielens.Rating) int {
				return cmp.Compare(choiceKey(opt.Seed, u, a.Movie), choiceKey(opt.Seed, u, b.Movie))
			})
			rs = rs[:opt.MaxPerUser]
		}
		bk := basket{seq: int64(seq)}
		for _, r := range rs {
			counts[r.Movie]++
			if r.Stars() >= opt.MinRating {
				bk.liked = append(bk.liked, r.Movie)
			} else {
				bk.disliked = append(bk.disliked, r.Movie)
			}
		}
		slices.Sort(bk.liked)
		slices.Sort(bk.disliked)
		baskets = append(baskets, bk)
	}
	return baskets, counts, duplicates
}

func compare(t *testing.T, name string, got result, ratings []movielens.Rating, opt Options) {
	t.Helper()
	want, counts, dups := naive(ratings, opt)
	if got.stats.Duplicates != dups {
		t.Errorf("%s: %d duplicates, want %d", name, got.stats.Duplicates, dups)
	}
	if len(got.vocab) != len(counts) {
		t.Errorf("%s: vocabulary of %d movies, want %d", name, len(got.vocab), len(counts))
	}
	for i, it := range got.vocab {
		if it.Count != counts[it.MovieID] {
			t.Errorf("%s: movie %d count %d, want %d", name, it.MovieID, it.Count, counts[it.MovieID])
		}
		if i > 0 && (got.vocab[i-1].Count < it.Count || got.vocab[i-1].Count == it.Count && got.vocab[i-1].Token >= it.Token) {
			t.Errorf("%s: vocabulary rows %d and %d out of order", name, i-1, i)
		}
	}
	if len(got.baskets) != len(want) {
		t.Fatalf("%s: %d users kept, want %d", name, len(got.baskets), len(want))
	}
	for i := range want {
		g, w := got.baskets[i], want[i]
		if g.seq != w.seq || !slices.Equal(g.liked, w.liked) || !slices.Equal(g.disliked, w.disliked) {
			t.Fatalf("%s: user %d: got %+v, want %+v", name, i, g, w)
		}
	}
}

var optionSets = []Options{
	DefaultOptions(),
	{MinRating: 3, TopMovies: 15, MaxPerUser: 6, Seed: 5},
	{MinRating: 3.5, TopMovies: 0, MinMovieRatings: 8, MinUserRatings: 5, MaxPerUser: 0},
	{MinRating: 4, TopMovies: 30, MinMovieRatings: 2, MinUserRatings: 10, MaxPerUser: 12, Seed: 9},
}

func testData() []movielens.Rating {
	return mltest.Collect(mltest.Config{Users: 120, Movies: 80, MeanRatings: 18, MinRatings: 2, Zipf: 1.2, Duplicates: 0.1, Seed: 21})
}

func TestMatchesNaive(t *testing.T) {
	ratings := testData()
	// The data must exercise every rule.
	_, _, dups := naive(ratings, DefaultOptions())
	if dups < 50 {
		t.Fatalf("only %d duplicates in the test data", dups)
	}
	for i, opt := range optionSets {
		name := fmt.Sprintf("options %d", i)
		got := run(t, NewFileSource(fileOf(t, ratings)), opt, 1<<30)
		compare(t, name, got, ratings, opt)
		if got.stats.Capped == 0 && opt.MaxPerUser > 0 {
			t.Errorf("%s: no rating capped; the test does not cover max-per-user", name)
		}
		if got.stats.UsersDropped == 0 && opt.MinUserRatings > 0 {
			t.Errorf("%s: no user dropped; the test does not cover min-user-ratings", name)
		}
	}
}

// TestUnsortedAndReplay checks that a shuffled file (grouped in memory)
// and a run that re-reads the source instead of storing the baskets give
// the same baskets as the sorted file.
func TestUnsortedAndReplay(t *testing.T) {
	ratings := testData()
	opt := optionSets[1]
	sorted := run(t, NewFileSource(fileOf(t, ratings)), opt, 1<<30)
	compare(t, "sorted", sorted, ratings, opt)

	replay := run(t, NewFileSource(fileOf(t, ratings)), opt, 0)
	compare(t, "re-read", replay, ratings, opt)

	shuffled := slices.Clone(ratings)
	r := rand.New(rand.NewPCG(1, 2))
	r.Shuffle(len(shuffled), func(i, j int) { shuffled[i], shuffled[j] = shuffled[j], shuffled[i] })
	// Shuffling loses the file order of a user's equal-time duplicates,
	// which decides the winner; compare with the naive result on the
	// shuffled order.
	open := fileOf(t, shuffled)
	b, _ := NewBuilder(opt, 1<<30)
	err := b.CountMovies(ctx, NewFileSource(open))
	if !errors.Is(err, ErrUnsorted) {
		t.Fatalf("shuffled file: %v, want ErrUnsorted", err)
	}
	mem, err := LoadMemory(ctx, open, 1<<30)
	if err != nil {
		t.Fatal(err)
	}
	compare(t, "in memory", run(t, mem, opt, 1<<30), shuffled, opt)
	if st := mem.ReadStats(); st.Ratings != int64(len(ratings)) || st.Fingerprint.Size == 0 && st.Fingerprint.Path == "" {
		t.Errorf("read stats %+v", st)
	}
	need := MemoryBytes(int64(len(ratings)), 120)
	if _, err := LoadMemory(ctx, open, need-1); !errors.Is(err, ErrTooLarge) {
		t.Errorf("limit below %d bytes: %v, want ErrTooLarge", need, err)
	}
}

func TestDuplicateRules(t *testing.T) {
	ratings := []movielens.Rating{
		{User: 1, Movie: 5, HalfStars: 4, Time: 10},
		{User: 1, Movie: 6, HalfStars: 8, Time: 20},
		{User: 1, Movie: 5, HalfStars: 10, Time: 10}, // same time: the later line wins (liked)
		{User: 1, Movie: 6, HalfStars: 2, Time: 15},  // earlier: ignored (stays liked)
		{User: 1, Movie: 7, HalfStars: 9, Time: 30},
		{User: 1, Movie: 7, HalfStars: 3, Time: 31}, // later: disliked
		{User: 2, Movie: 7, HalfStars: 6, Time: 1},
		{User: 2, Movie: 5, HalfStars: 5, Time: 1},
	}
	got := run(t, NewFileSource(fileOf(t, ratings)), DefaultOptions(), 1<<30)
	want := []basket{{0, []int32{5, 6}, []int32{7}}, {1, []int32{7}, []int32{5}}}
	if !slices.EqualFunc(got.baskets, want, func(a, b basket) bool {
		return a.seq == b.seq && slices.Equal(a.liked, b.liked) && slices.Equal(a.disliked, b.disliked)
	}) {
		t.Errorf("baskets %+v, want %+v", got.baskets, want)
	}
	if got.stats.Duplicates != 3 {
		t.Errorf("%d duplicates, want 3", got.stats.Duplicates)
	}
}

// TestCapUniform checks that MaxPerUser keeps each of a user's n ratings
// with probability k/n across seeds: every movie's keep count over S seeds
// is Binomial(S, k/n).
func TestCapUniform(t *testing.T) {
	const n, k, seeds = 10, 3, 1000
	var ratings []movielens.Rating
	for m := range int32(n) {
		ratings = append(ratings, movielens.Rating{User: 77, Movie: 100 + m, HalfStars: 8, Time: int64(m)})
	}
	open := fileOf(t, ratings)
	kept := make(map[int32]int)
	for seed := range uint64(seeds) {
		got := run(t, NewFileSource(open), Options{MinRating: 3, MaxPerUser: k, Seed: seed}, 1<<30)
		if len(got.baskets) != 1 || len(got.baskets[0].liked) != k {
			t.Fatalf("seed %d: %+v", seed, got.baskets)
		}
		for _, m := range got.baskets[0].liked {
			kept[m]++
		}
	}
	p := float64(k) / n
	sd := math.Sqrt(seeds * p * (1 - p))
	for m := range int32(n) {
		// |z| > 4 has probability 6e-5 per movie under uniform choice.
		if z := (float64(kept[100+m]) - seeds*p) / sd; math.Abs(z) > 4 {
			t.Errorf("movie %d kept %d times in %d seeds: z = %.1f", 100+m, kept[100+m], seeds, z)
		}
	}
}

func TestUniqueTokens(t *testing.T) {
	items := []Item{
		{Token: "Emma (1996)", MovieID: 4},
		{Token: "Emma (1996)", MovieID: 9},
		{Token: "Heat (1995)", MovieID: 6},
		{Token: "", MovieID: 8},
		{Token: "Emma (1996) (id 4)", MovieID: 12}, // collides with a disambiguated title
		{Token: "movie:8", MovieID: 13},            // collides with an untitled movie
	}
	shared, untitled := uniqueTokens(items, false)
	want := []string{"Emma (1996) (id 4)", "Emma (1996) (id 9)", "Heat (1995)", "movie:8", "Emma (1996) (id 4) (id 12)", "movie:8 (id 13)"}
	for i, it := range items {
		if it.Token != want[i] {
			t.Errorf("item %d: token %q, want %q", i, it.Token, want[i])
		}
	}
	if shared != 2 || untitled != 1 {
		t.Errorf("shared %d, untitled %d; want 2, 1", shared, untitled)
	}
	ids := []Item{{Token: "A", MovieID: 1}, {Token: "A", MovieID: 2}}
	uniqueTokens(ids, true)
	if ids[0].Token != "movie:1" || ids[1].Token != "movie:2" {
		t.Errorf("id tokens: %+v", ids)
	}
}

func TestEntryLimits(t *testing.T) {
	e, err := newEntry(movielens.Rating{Movie: MaxMovieID, HalfStars: 9, Time: MaxTime})
	if err != nil || e.Movie() != MaxMovieID || e.HalfStars() != 9 || e.Time() != MaxTime {
		t.Errorf("entry %v: %d %d %d", err, e.Movie(), e.HalfStars(), e.Time())
	}
	for _, r := range []movielens.Rating{{Movie: MaxMovieID + 1}, {Time: MaxTime + 1}} {
		if _, err := newEntry(r); !errors.Is(err, ErrOutOfRange) {
			t.Errorf("%+v: %v, want ErrOutOfRange", r, err)
		}
	}
}

func TestFiltersLeaveNothing(t *testing.T) {
	ratings := testData()
	b, _ := NewBuilder(Options{MinRating: 3, MinMovieRatings: 1 << 40}, 1<<30)
	src := NewFileSource(fileOf(t, ratings))
	if err := b.CountMovies(ctx, src); err != nil {
		t.Fatal(err)
	}
	if err := b.SelectMovies(); !errors.Is(err, ErrNoMovies) {
		t.Errorf("min-movie-ratings beyond every movie: %v, want ErrNoMovies", err)
	}
	b, _ = NewBuilder(Options{MinRating: 3, MinUserRatings: 1 << 30}, 1<<30)
	b.CountMovies(ctx, src)
	b.SelectMovies()
	if err := b.Tally(ctx, src); !errors.Is(err, ErrNoMovies) {
		t.Errorf("min-user-ratings beyond every user: %v, want ErrNoMovies", err)
	}
}

// TestTopMoviesTies checks that movies tied in raters at the TopMovies
// boundary are chosen by smaller movie id, whatever the file order.
func TestTopMoviesTies(t *testing.T) {
	ratings := []movielens.Rating{
		{User: 1, Movie: 30, HalfStars: 8}, {User: 1, Movie: 20, HalfStars: 8}, {User: 1, Movie: 10, HalfStars: 8},
		{User: 2, Movie: 30, HalfStars: 8}, {User: 2, Movie: 20, HalfStars: 8}, {User: 2, Movie: 40, HalfStars: 8},
		{User: 3, Movie: 40, HalfStars: 8}, {User: 3, Movie: 10, HalfStars: 2},
	}
	// Raters: 30, 20, 10 and 40 two each. The top 3 are 10, 20, 30.
	got := run(t, NewFileSource(fileOf(t, ratings)), Options{MinRating: 3, TopMovies: 3}, 1<<30)
	var movies []int32
	for _, it := range got.vocab {
		movies = append(movies, it.MovieID)
	}
	slices.Sort(movies)
	if !slices.Equal(movies, []int32{10, 20, 30}) {
		t.Errorf("kept movies %v, want [10 20 30]", movies)
	}
}
