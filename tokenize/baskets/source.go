package baskets

import (
	"context"
	"errors"
	"fmt"
	"slices"

	"github.com/pwe-project/pwe/formats/input"
	"github.com/pwe-project/pwe/formats/movielens"
	"github.com/pwe-project/pwe/internal/bytesize"
)

// Errors; test for them with errors.Is.
var (
	// ErrUnsorted is returned by a FileSource whose file is not sorted by
	// ascending user id.
	ErrUnsorted = errors.New("baskets: ratings are not sorted by user id")
	// ErrTooLarge is returned by LoadMemory when the ratings do not fit in
	// its limit.
	ErrTooLarge = errors.New("baskets: ratings do not fit in the memory limit")
	// ErrOutOfRange is returned for a movie id or timestamp that an Entry
	// cannot hold.
	ErrOutOfRange = errors.New("baskets: value out of range")
	// ErrChanged is returned when a file differs between passes.
	ErrChanged = errors.New("baskets: input changed between passes")
)

// Entry is one rating of a user packed in 8 bytes: the movie id (below
// 2^28) in the top 28 bits, the half stars in the next 4, the timestamp
// (seconds since 1970, below 2^32) in the low 32.
type Entry uint64

// Limits of an Entry, which the ratings reader enforces.
const (
	MaxMovieID = movielens.MaxMovieID
	MaxTime    = movielens.MaxTime
)

func newEntry(r movielens.Rating) (Entry, error) {
	switch {
	case r.Movie < 0 || r.Movie > MaxMovieID:
		return 0, fmt.Errorf("%w: movie id %d, want at most %d", ErrOutOfRange, r.Movie, MaxMovieID)
	case r.Time < 0 || r.Time > MaxTime:
		return 0, fmt.Errorf("%w: timestamp %d, want at most %d (the year 2106)", ErrOutOfRange, r.Time, uint64(MaxTime))
	}
	return Entry(uint64(r.Movie)<<36 | uint64(r.HalfStars&15)<<32 | uint64(r.Time)), nil
}

// Movie returns the movie id.
func (e Entry) Movie() int32 { return int32(e >> 36) }

// HalfStars returns the rating times two.
func (e Entry) HalfStars() uint8 { return uint8(e>>32) & 15 }

// Time returns the timestamp.
func (e Entry) Time() uint32 { return uint32(e) }

// A Source yields every user's ratings, users in ascending id, each user's
// ratings in file order. fn must not keep the slice.
type Source interface {
	Users(ctx context.Context, fn func(user int32, ratings []Entry) error) error
	// ReadStats describes the last complete pass over the file.
	ReadStats() ReadStats
}

// ReadStats describe a pass over a ratings file.
type ReadStats struct {
	Ratings      int64 // ratings read (lines other than blank, header or skipped)
	Skipped      int64 // malformed lines skipped
	FirstSkipped error // the first skipped line's error
	Format       movielens.Format
	Fingerprint  input.Fingerprint
}

// Opener opens the ratings file afresh for a pass.
type Opener func() (*movielens.Reader, error)

// FileSource streams a ratings file sorted by ascending user id, opening it
// again for every pass.
type FileSource struct {
	open  Opener
	stats ReadStats
	done  bool
}

// NewFileSource returns a source over the files that open opens.
func NewFileSource(open Opener) *FileSource { return &FileSource{open: open} }

// ReadStats describes the last complete pass.
func (s *FileSource) ReadStats() ReadStats { return s.stats }

// checkEvery is how many lines pass between checks for cancellation.
const checkEvery = 1 << 16

// Users calls fn for each user; it fails with ErrUnsorted (wrapped in an
// *input.ParseError naming the line) at the first user id smaller than the
// one before.
func (s *FileSource) Users(ctx context.Context, fn func(user int32, ratings []Entry) error) error {
	r, err := s.open()
	if err != nil {
		return err
	}
	defer r.Close()
	var block []Entry
	user := int32(-1)
	var n int64
	for r.Next() {
		rt := r.Rating()
		if n++; n%checkEvery == 0 {
			if err := ctx.Err(); err != nil {
				return err
			}
		}
		e, err := newEntry(rt)
		if err != nil {
			return &input.ParseError{Path: r.Path(), Line: r.Line(), Err: err}
		}
		if rt.User != user {
			if rt.User < user {
				return &input.ParseError{Path: r.Path(), Line: r.Line(),
					Err: fmt.Errorf("%w: user %d follows user %d", ErrUnsorted, rt.User, user)}
			}
			if len(block) > 0 {
				if err := fn(user, block); err != nil {
					return err
				}
			}
			block, user = block[:0], rt.User
		}
		block = append(block, e)
	}
	if err := r.Err(); err != nil {
		return err
	}
	if len(block) > 0 {
		if err := fn(user, block); err != nil {
			return err
		}
	}
	st := ReadStats{Ratings: n, Skipped: r.Skipped(), FirstSkipped: r.FirstSkipped(), Format: r.Format(), Fingerprint: r.Fingerprint()}
	if s.done && st.Fingerprint != s.stats.Fingerprint {
		return fmt.Errorf("%s: %w", r.Path(), ErrChanged)
	}
	s.stats, s.done = st, true
	return nil
}

// MemorySource holds every rating grouped by user, 8 bytes per rating.
type MemorySource struct {
	users   []int32 // ascending
	offsets []int64 // ratings of users[i] are entries[offsets[i]:offsets[i+1]]
	entries []Entry
	stats   ReadStats
}

// MemoryBytes returns the memory needed to hold the given numbers of
// ratings and users.
func MemoryBytes(ratings, users int64) int64 { return 8*ratings + 12*users }

// LoadMemory reads the ratings file twice, first counting each user's
// ratings and then placing them, so that each user's ratings keep their
// file order. It fails with ErrTooLarge before allocating more than limit
// bytes.
func LoadMemory(ctx context.Context, open Opener, limit int64) (*MemorySource, error) {
	perUser := make(map[int32]int64)
	var first ReadStats
	err := readAll(ctx, open, &first, func(rt movielens.Rating, _ Entry) {
		perUser[rt.User]++
	})
	if err != nil {
		return nil, err
	}
	need := MemoryBytes(first.Ratings, int64(len(perUser)))
	if need > limit {
		return nil, fmt.Errorf("%w: %d ratings of %d users need %s to be grouped by user in memory, over the limit of %s",
			ErrTooLarge, first.Ratings, len(perUser), bytesize.Format(need), bytesize.Format(limit))
	}
	s := &MemorySource{users: make([]int32, 0, len(perUser)), offsets: make([]int64, 1, len(perUser)+1), entries: make([]Entry, first.Ratings)}
	for u := range perUser {
		s.users = append(s.users, u)
	}
	slices.Sort(s.users)
	// perUser now holds where the user's next rating goes.
	for _, u := range s.users {
		n := perUser[u]
		perUser[u] = s.offsets[len(s.offsets)-1]
		s.offsets = append(s.offsets, s.offsets[len(s.offsets)-1]+n)
	}
	var placed int64
	err = readAll(ctx, open, &s.stats, func(rt movielens.Rating, e Entry) {
		if pos, ok := perUser[rt.User]; ok && placed < first.Ratings {
			s.entries[pos] = e
			perUser[rt.User] = pos + 1
		}
		placed++
	})
	if err != nil {
		return nil, err
	}
	if s.stats.Fingerprint != first.Fingerprint || placed != first.Ratings {
		return nil, fmt.Errorf("%s: %w", first.Fingerprint.Path, ErrChanged)
	}
	return s, nil
}

// readAll reads every rating of a file, calling fn with it and its Entry.
func readAll(ctx context.Context, open Opener, st *ReadStats, fn func(movielens.Rating, Entry)) error {
	r, err := open()
	if err != nil {
		return err
	}
	defer r.Close()
	var n int64
	for r.Next() {
		if n++; n%checkEvery == 0 {
			if err := ctx.Err(); err != nil {
				return err
			}
		}
		e, err := newEntry(r.Rating())
		if err != nil {
			return &input.ParseError{Path: r.Path(), Line: r.Line(), Err: err}
		}
		fn(r.Rating(), e)
	}
	if err := r.Err(); err != nil {
		return err
	}
	*st = ReadStats{Ratings: n, Skipped: r.Skipped(), FirstSkipped: r.FirstSkipped(), Format: r.Format(), Fingerprint: r.Fingerprint()}
	return nil
}

// Users calls fn for each user in ascending id.
func (s *MemorySource) Users(ctx context.Context, fn func(user int32, ratings []Entry) error) error {
	for i, u := range s.users {
		if i%checkEvery == 0 {
			if err := ctx.Err(); err != nil {
				return err
			}
		}
		if err := fn(u, s.entries[s.offsets[i]:s.offsets[i+1]]); err != nil {
			return err
		}
	}
	return nil
}

// ReadStats describes the pass that filled the source.
func (s *MemorySource) ReadStats() ReadStats { return s.stats }

// MemoryBytes returns the memory the source holds.
func (s *MemorySource) MemoryBytes() int64 {
	return MemoryBytes(int64(len(s.entries)), int64(len(s.users)))
}
