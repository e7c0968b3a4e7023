package baskets

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"
)

// Options are the preprocessing settings. A zero limit is no limit;
// DefaultOptions gives the reference paper's settings.
type Options struct {
	// MinRating is the smallest rating, in stars, that marks a movie as
	// liked; lower ratings mark it disliked.
	MinRating float64 `json:"min_rating"`
	// TopMovies keeps the most rated movies after MinMovieRatings (0: all).
	TopMovies int `json:"top_movies"`
	// MinMovieRatings drops movies with fewer distinct raters (0: off).
	MinMovieRatings int64 `json:"min_movie_ratings"`
	// MinUserRatings drops users with fewer ratings of kept movies (0: off).
	MinUserRatings int `json:"min_user_ratings"`
	// MaxPerUser keeps at most this many of a user's ratings of kept
	// movies, chosen at random (0: all).
	MaxPerUser int `json:"max_per_user"`
	// Seed keys the random choice of MaxPerUser.
	Seed uint64 `json:"seed"`
	// IDTokens makes tokens "movie:<id>" instead of titles.
	IDTokens bool `json:"id_tokens"`
}

// Defaults of the reference paper.
const (
	DefaultMinRating  = 3
	DefaultTopMovies  = 600
	DefaultMaxPerUser = 25
)

// DefaultOptions returns the reference paper's settings: liked from 3
// stars, the 600 most rated movies, at most 25 ratings per user.
func DefaultOptions() Options {
	return Options{MinRating: DefaultMinRating, TopMovies: DefaultTopMovies, MaxPerUser: DefaultMaxPerUser}
}

// Validate reports settings that cannot work.
func (o Options) Validate() error {
	switch {
	case !(o.MinRating > 0 && o.MinRating <= 5):
		return fmt.Errorf("baskets: min-rating %v, want a number of stars in (0, 5]", o.MinRating)
	case o.TopMovies < 0:
		return fmt.Errorf("baskets: top-movies %d is negative", o.TopMovies)
	case o.MinMovieRatings < 0:
		return fmt.Errorf("baskets: min-movie-ratings %d is negative", o.MinMovieRatings)
	case o.MinUserRatings < 0:
		return fmt.Errorf("baskets: min-user-ratings %d is negative", o.MinUserRatings)
	case o.MaxPerUser < 0:
		return fmt.Errorf("baskets: max-per-user %d is negative", o.MaxPerUser)
	}
	return nil
}

// ErrNoMovies is returned when the filters leave no rating.
var ErrNoMovies = errors.New("baskets: the filters leave no rating")

// Stats summarise the preprocessing.
type Stats struct {
	Users           int64 `json:"users"`            // distinct users
	Movies          int   `json:"movies"`           // distinct movies
	Duplicates      int64 `json:"duplicates"`       // repeated (user, movie) ratings superseded by a later one
	MoviesSelected  int   `json:"movies_selected"`  // after MinMovieRatings and TopMovies
	UsersDropped    int64 `json:"users_dropped"`    // by MinUserRatings
	Capped          int64 `json:"ratings_capped"`   // dropped by MaxPerUser
	UsersKept       int64 `json:"users_kept"`       // users with at least one kept rating
	KeptRatings     int64 `json:"kept_ratings"`     // = liked + disliked
	Liked           int64 `json:"liked"`            // kept ratings >= MinRating
	Disliked        int64 `json:"disliked"`         // kept ratings < MinRating
	LargestBasket   int   `json:"largest_basket"`   // movies in the largest liked or disliked basket
	VocabSize       int   `json:"vocab_size"`       // movies with a kept rating
	DuplicateTitles int   `json:"duplicate_titles"` // titles shared by several vocabulary movies
	Untitled        int   `json:"untitled"`         // vocabulary movies without a title
}

// Builder runs the passes; see the package documentation.
type Builder struct {
	opt    Options
	movies movieTable
	// Per dense movie index.
	raters   []int64 // distinct raters (pass 1)
	selected []bool
	final    []int64 // kept ratings (pass 2)
	vocabID  []int32 // -1: not in the vocabulary

	stats     Stats
	tallied   bool
	store     basketStore
	storeMax  int64
	halfLiked uint8

	// Scratch for one user.
	stamp []int64 // user sequence number + 1 that last saw the movie
	slot  []int32 // where in cur that user's rating of the movie is
	cur   []rated
	liked []int32
	hated []int32
	keys  []keyed
	seq   int64
}

// rated is a deduplicated rating of the current user.
type rated struct {
	movie int32 // dense index
	half  uint8
	time  uint32
}

type keyed struct {
	key   uint64
	movie int32
	half  uint8
}

// NewBuilder returns a builder; storeLimit bounds the bytes it may use to
// keep the baskets between Tally and Emit (beyond it Emit reads the source
// again).
func NewBuilder(opt Options, storeLimit int64) (*Builder, error) {
	if err := opt.Validate(); err != nil {
		return nil, err
	}
	b := &Builder{opt: opt, storeMax: storeLimit, movies: newMovieTable()}
	// A rating r is liked when r >= MinRating, i.e. when 2r >= ceil(2*MinRating).
	b.halfLiked = uint8(math.Ceil(2 * opt.MinRating))
	return b, nil
}

// Stats returns the statistics gathered so far.
func (b *Builder) Stats() Stats { return b.stats }

// dedup fills b.cur with the user's ratings, one per movie: the latest by
// time, the later in file order on a tie. Movies unknown to the table are
// added when add is true and skipped otherwise.
func (b *Builder) dedup(ratings []Entry, add bool) (duplicates int64) {
	b.seq++
	b.cur = b.cur[:0]
	for _, e := range ratings {
		m, ok := b.movies.index(e.Movie(), add)
		if !ok {
			continue
		}
		if int(m) >= len(b.stamp) {
			b.grow(int(m) + 1)
		}
		r := rated{movie: m, half: e.HalfStars(), time: e.Time()}
		if b.stamp[m] == b.seq {
			duplicates++
			if prev := &b.cur[b.slot[m]]; r.time >= prev.time {
				*prev = r
			}
			continue
		}
		b.stamp[m], b.slot[m] = b.seq, int32(len(b.cur))
		b.cur = append(b.cur, r)
	}
	return duplicates
}

func (b *Builder) grow(n int) {
	n = max(n, 2*len(b.stamp))
	b.stamp = append(b.stamp, make([]int64, n-len(b.stamp))...)
	b.slot = append(b.slot, make([]int32, n-len(b.slot))...)
	b.raters = append(b.raters, make([]int64, n-len(b.raters))...)
}

// CountMovies is pass 1: distinct raters per movie.
func (b *Builder) CountMovies(ctx context.Context, src Source) error {
	return src.Users(ctx, func(user int32, ratings []Entry) error {
		b.stats.Duplicates += b.dedup(ratings, true)
		b.stats.Users++
		for _, r := range b.cur {
			b.raters[r.movie]++
		}
		return nil
	})
}

// SelectMovies applies MinMovieRatings and TopMovies to the counts of
// pass 1.
func (b *Builder) SelectMovies() error {
	n := b.movies.len()
	b.stats.Movies = n
	cand := make([]int32, 0, n)
	for m := range int32(n) {
		if b.raters[m] > 0 && b.raters[m] >= b.opt.MinMovieRatings {
			cand = append(cand, m)
		}
	}
	if b.opt.TopMovies > 0 && len(cand) > b.opt.TopMovies {
		slices.SortFunc(cand, func(x, y int32) int {
			if c := cmp.Compare(b.raters[y], b.raters[x]); c != 0 {
				return c
			}
			return cmp.Compare(b.movies.ids[x], b.movies.ids[y])
		})
		cand = cand[:b.opt.TopMovies]
	}
	if len(cand) == 0 {
		return fmt.Errorf("%w: no movie has %d raters (min-movie-ratings)", ErrNoMovies, b.opt.MinMovieRatings)
	}
	b.selected = make([]bool, n)
	for _, m := range cand {
		b.selected[m] = true
	}
	b.stats.MoviesSelected = len(cand)
	return nil
}

// choose fills b.liked and b.hated (dense movie indices, ascending) with
// the current user's kept ratings; it returns false for a user dropped by
// MinUserRatings or left with nothing.
func (b *Builder) choose(user int32) bool {
	b.keys = b.keys[:0]
	for _, r := range b.cur {
		if b.selected[r.movie] {
			b.keys = append(b.keys, keyed{movie: r.movie, half: r.half})
		}
	}
	n := len(b.keys)
	if n == 0 || n < b.opt.MinUserRatings {
		if n > 0 && b.tallying() {
			b.stats.UsersDropped++
		}
		return false
	}
	if k := b.opt.MaxPerUser; k > 0 && n > k {
		// The k smallest of independent uniform keys are a uniformly random
		// k-subset; keying by movie id makes it independent of file order.
		for i := range b.keys {
			b.keys[i].key = choiceKey(b.opt.Seed, user, b.movies.ids[b.keys[i].movie])
		}
		slices.SortFunc(b.keys, func(x, y keyed) int { return cmp.Compare(x.key, y.key) })
		if b.tallying() {
			b.stats.Capped += int64(n - k)
		}
		b.keys = b.keys[:k]
	}
	b.liked, b.hated = b.liked[:0], b.hated[:0]
	for _, k := range b.keys {
		if k.half >= b.halfLiked {
			b.liked = append(b.liked, k.movie)
		} else {
			b.hated = append(b.hated, k.movie)
		}
	}
	slices.Sort(b.liked)
	slices.Sort(b.hated)
	return true
}

func (b *Builder) tallying() bool { return !b.tallied }

// choiceKey hashes (seed, user, movie) with splitmix64 finalisers.
func choiceKey(seed uint64, user, movie int32) uint64 {
	z := mix64(seed ^ 0x6261736b65747321)
	z = mix64(z + uint64(uint32(user))*0x9e3779b97f4a7c15)
	return mix64(z + uint64(uint32(movie))*0xd1b54a32d192ed03)
}

func mix64(z uint64) uint64 {
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9
	z = (z ^ (z >> 27)) * 0x94d049bb133111eb
	return z ^ (z >> 31)
}

// Tally is pass 2: it applies the user filter and MaxPerUser and counts
// each movie's kept ratings; it keeps the baskets for Emit while they fit
// in the store limit.
func (b *Builder) Tally(ctx context.Context, src Source) error {
	if b.selected == nil {
		return errors.New("baskets: Tally before SelectMovies")
	}
	b.final = make([]int64, b.movies.len())
	b.store = basketStore{}
	keep := true
	var seq int64
	err := src.Users(ctx, func(user int32, ratings []Entry) error {
		defer func() { seq++ }()
		b.dedup(ratings, false)
		if !b.choose(user) {
			return nil
		}
		b.stats.UsersKept++
		b.stats.Liked += int64(len(b.liked))
		b.stats.Disliked += int64(len(b.hated))
		b.stats.LargestBasket = max(b.stats.LargestBasket, len(b.liked), len(b.hated))
		for _, m := range b.liked {
			b.final[m]++
		}
		for _, m := range b.hated {
			b.final[m]++
		}
		if keep {
			b.store.add(seq, b.liked, b.hated)
			if keep = b.store.bytes() <= b.storeMax; !keep {
				b.store = basketStore{}
			}
		}
		return nil
	})
	if err != nil {
		return err
	}
	b.store.complete = keep
	b.stats.KeptRatings = b.stats.Liked + b.stats.Disliked
	b.tallied = true
	if b.stats.KeptRatings == 0 {
		return fmt.Errorf("%w: %d users, none with %d ratings of the %d selected movies (min-user-ratings)",
			ErrNoMovies, b.stats.Users, b.opt.MinUserRatings, b.stats.MoviesSelected)
	}
	return nil
}

// StoredBaskets reports whether Emit will replay baskets kept in memory
// rather than read the source again.
func (b *Builder) StoredBaskets() bool { return b.store.complete }

// basketStore keeps the baskets between Tally and Emit: per kept user its
// sequence number and where its liked and disliked movies end.
type basketStore struct {
	seqs     []int64
	ends     []int32 // 2 per user: end of liked, end of disliked in movies
	movies   []int32
	complete bool
}

func (s *basketStore) add(seq int64, liked, hated []int32) {
	s.seqs = append(s.seqs, seq)
	s.movies = append(s.movies, liked...)
	s.ends = append(s.ends, int32(len(s.movies)))
	s.movies = append(s.movies, hated...)
	s.ends = append(s.ends, int32(len(s.movies)))
}

func (s *basketStore) bytes() int64 {
	return int64(8*cap(s.seqs) + 4*cap(s.ends) + 4*cap(s.movies))
}

// Item is one movie of the vocabulary.
type Item struct {
	Token   string
	Count   int64 // kept ratings
	MovieID int32
}

// Vocabulary returns the movies with a kept rating, by descending count
// with ties by token bytes; an item's index is its token id. titles maps
// movie ids to titles (nil or missing: "movie:<id>").
func (b *Builder) Vocabulary(titles map[int32]string) ([]Item, error) {
	if !b.tallied {
		return nil, errors.New("baskets: Vocabulary before Tally")
	}
	var items []Item
	var dense []int32
	for m, c := range b.final {
		if c > 0 {
			id := b.movies.ids[m]
			items = append(items, Item{Token: titles[id], Count: c, MovieID: id})
			dense = append(dense, int32(m))
		}
	}
	b.stats.DuplicateTitles, b.stats.Untitled = uniqueTokens(items, b.opt.IDTokens)
	order := make([]int, len(items))
	for i := range order {
		order[i] = i
	}
	slices.SortFunc(order, func(x, y int) int {
		if c := cmp.Compare(items[y].Count, items[x].Count); c != 0 {
			return c
		}
		return cmp.Compare(items[x].Token, items[y].Token)
	})
	b.vocabID = make([]int32, len(b.final))
	for i := range b.vocabID {
		b.vocabID[i] = -1
	}
	sorted := make([]Item, len(items))
	for id, i := range order {
		sorted[id] = items[i]
		b.vocabID[dense[i]] = int32(id)
	}
	b.stats.VocabSize = len(sorted)
	return sorted, nil
}

// uniqueTokens turns titles into distinct tokens: "movie:<id>" for a movie
// without a title (or for every movie with idTokens), and " (id N)" appended
// to every title that several movies share. Appending repeats until no two
// tokens are equal; a token with a suffix ends in its own movie id, so two
// suffixed tokens never collide and the loop ends.
func uniqueTokens(items []Item, idTokens bool) (shared, untitled int) {
	suffixed := make([]bool, len(items))
	for i := range items {
		if idTokens || items[i].Token == "" {
			if !idTokens {
				untitled++
			}
			items[i].Token = "movie:" + strconv.FormatInt(int64(items[i].MovieID), 10)
			suffixed[i] = true
		}
	}
	first := true
	for {
		byToken := make(map[string][]int, len(items))
		for i, it := range items {
			byToken[it.Token] = append(byToken[it.Token], i)
		}
		changed := false
		for _, group := range byToken {
			if len(group) < 2 {
				continue
			}
			if first {
				shared++
			}
			for _, i := range group {
				if !suffixed[i] {
					items[i].Token += " (id " + strconv.FormatInt(int64(items[i].MovieID), 10) + ")"
					suffixed[i], changed = true, true
				}
			}
		}
		first = false
		if !changed {
			return shared, untitled
		}
	}
}

// Emit is pass 3: for each kept user, in ascending user id, fn receives the
// user's sequence number among all users and the vocabulary ids of the
// liked and disliked movies, each ascending. fn must not keep the slices.
func (b *Builder) Emit(ctx context.Context, src Source, fn func(seq int64, liked, disliked []int32) error) error {
	if b.vocabID == nil {
		return errors.New("baskets: Emit before Vocabulary")
	}
	var liked, hated []int32
	send := func(seq int64, l, h []int32) error {
		liked, hated = b.toVocab(liked[:0], l), b.toVocab(hated[:0], h)
		return fn(seq, liked, hated)
	}
	if s := &b.store; s.complete {
		start := int32(0)
		for i, seq := range s.seqs {
			if i%checkEvery == 0 {
				if err := ctx.Err(); err != nil {
					return err
				}
			}
			mid, end := s.ends[2*i], s.ends[2*i+1]
			if err := send(seq, s.movies[start:mid], s.movies[mid:end]); err != nil {
				return err
			}
			start = end
		}
		return nil
	}
	var seq int64
	return src.Users(ctx, func(user int32, ratings []Entry) error {
		defer func() { seq++ }()
		b.dedup(ratings, false)
		if !b.choose(user) {
			return nil
		}
		return send(seq, b.liked, b.hated)
	})
}

// toVocab maps dense movie indices to vocabulary ids, keeping them
// ascending (the vocabulary order differs from the dense order).
func (b *Builder) toVocab(dst, movies []int32) []int32 {
	for _, m := range movies {
		dst = append(dst, b.vocabID[m])
	}
	slices.Sort(dst)
	return dst
}

// movieTable gives movie ids dense indices in order of first appearance: a
// direct lookup table for the small ids of MovieLens, a map beyond.
type movieTable struct {
	direct []int32 // index + 1; 0 = unseen
	far    map[int32]int32
	ids    []int32 // dense index -> movie id
}

// directMax bounds the direct table (16 MiB of int32).
const directMax = 1 << 22

func newMovieTable() movieTable { return movieTable{far: make(map[int32]int32)} }

func (t *movieTable) len() int { return len(t.ids) }

func (t *movieTable) index(id int32, add bool) (int32, bool) {
	if id < directMax {
		if int(id) < len(t.direct) && t.direct[id] > 0 {
			return t.direct[id] - 1, true
		}
		if !add {
			return 0, false
		}
		if int(id) >= len(t.direct) {
			n := min(max(int(id)+1, 2*len(t.direct)), directMax)
			t.direct = append(t.direct, make([]int32, n-len(t.direct))...)
		}
		t.direct[id] = int32(len(t.ids)) + 1
	} else {
		if m, ok := t.far[id]; ok {
			return m, true
		}
		if !add {
			return 0, false
		}
		t.far[id] = int32(len(t.ids))
	}
	t.ids = append(t.ids, id)
	return int32(len(t.ids)) - 1, true
}

// MemoryBytes estimates the memory the builder holds: its per-movie tables
// and the stored baskets.
func (b *Builder) MemoryBytes() int64 {
	perMovie := int64(cap(b.movies.ids))*4 + int64(cap(b.raters)+cap(b.stamp)+cap(b.final))*8 +
		int64(cap(b.slot)+cap(b.vocabID))*4 + int64(cap(b.selected)) + int64(len(b.movies.far))*48
	return int64(cap(b.movies.direct))*4 + perMovie + b.store.bytes()
}
