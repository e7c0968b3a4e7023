// Package mltest writes synthetic MovieLens files for tests and benchmarks,
// since the MovieLens data themselves may not be redistributed.
//
// Generate draws users, each rating a number of distinct movies whose
// popularity follows a Zipf law, with occasional repeated (user, movie)
// ratings; WriteRatings and WriteTitles write them in any of the three
// layouts, with optional CRLF line endings and Latin-1 titles.
package mltest

import (
	"bufio"
	"encoding/csv"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"sort"
	"strconv"
	"unicode/utf8"

	"github.com/pwe-project/pwe/formats/movielens"
)

// Config describes a synthetic data set.
type Config struct {
	Users  int // number of users (ids 1..Users)
	Movies int // number of movies (ids 1..Movies, popularity shuffled)
	// MeanRatings is the mean number of distinct movies a user rates; each
	// user rates at least MinRatings. The counts are geometric above the
	// minimum, so a few users rate many movies, as in MovieLens.
	MeanRatings int
	MinRatings  int
	// Zipf is the exponent s > 1 of movie popularity P(rank k) ∝ (1+k)^-s.
	Zipf float64
	// WholeStars draws ratings 1..5 (ml-100k, ml-1m); otherwise 0.5..5 in
	// half stars.
	WholeStars bool
	// Duplicates is the probability that a rating is followed by another
	// rating of the same movie by the same user, with a new timestamp that
	// may be earlier, equal or later.
	Duplicates float64
	Seed       uint64
}

// Generate calls emit for every rating, user by user in increasing id, in
// the order of a file.
func Generate(cfg Config, emit func(movielens.Rating)) {
	r := rand.New(rand.NewPCG(cfg.Seed, 0x6d6c74657374))
	zipf := rand.NewZipf(r, cfg.Zipf, 1, uint64(cfg.Movies-1))
	// Popularity rank to movie id: ids are not in order of popularity.
	ids := r.Perm(cfg.Movies)
	seen := make(map[int32]bool)
	extra := float64(max(cfg.MeanRatings-cfg.MinRatings, 0))
	for u := 1; u <= cfg.Users; u++ {
		n := cfg.MinRatings
		if extra > 0 {
			n += int(math.Floor(math.Log(1-r.Float64()) / math.Log(extra/(extra+1))))
		}
		n = min(n, cfg.Movies/2)
		clear(seen)
		t := int64(9e8 + r.IntN(3e8))
		for len(seen) < n {
			m := int32(ids[zipf.Uint64()] + 1)
			if seen[m] {
				continue
			}
			seen[m] = true
			t += int64(r.IntN(5000))
			emit(movielens.Rating{User: int32(u), Movie: m, HalfStars: stars(r, cfg.WholeStars), Time: t})
			if r.Float64() < cfg.Duplicates {
				dt := int64(r.IntN(3)-1) * int64(1+r.IntN(100))
				emit(movielens.Rating{User: int32(u), Movie: m, HalfStars: stars(r, cfg.WholeStars), Time: t + dt})
			}
		}
	}
}

// stars draws a rating skewed towards 3-4 stars, like MovieLens.
func stars(r *rand.Rand, whole bool) uint8 {
	s := min(max(3.6+1.1*r.NormFloat64(), 0.5), 5)
	if whole {
		return uint8(2 * min(max(math.Round(s), 1), 5))
	}
	return uint8(math.Round(2 * s))
}

// Collect returns the ratings of Generate as a slice.
func Collect(cfg Config) []movielens.Rating {
	var out []movielens.Rating
	Generate(cfg, func(r movielens.Rating) { out = append(out, r) })
	return out
}

// Options control how files are written.
type Options struct {
	CRLF bool // end lines with CR LF
	// Latin1 encodes titles as Latin-1 (u.item always is); otherwise UTF-8.
	Latin1 bool
}

// RatingWriter writes ratings in one layout.
type RatingWriter struct {
	w      *bufio.Writer
	format movielens.Format
	sep    string
	eol    string
	buf    []byte
}

// NewRatingWriter starts a ratings file, writing the csv header if the
// layout has one.
func NewRatingWriter(w io.Writer, f movielens.Format, opt Options) *RatingWriter {
	rw := &RatingWriter{w: bufio.NewWriterSize(w, 1<<20), format: f, eol: "\n"}
	rw.sep = map[movielens.Format]string{movielens.Format100K: "\t", movielens.FormatDat: "::", movielens.FormatCSV: ","}[f]
	if opt.CRLF {
		rw.eol = "\r\n"
	}
	if f == movielens.FormatCSV {
		rw.w.WriteString("userId,movieId,rating,timestamp" + rw.eol)
	}
	return rw
}

// Write writes one rating.
func (rw *RatingWriter) Write(r movielens.Rating) {
	sep := rw.sep
	b := rw.buf[:0]
	b = strconv.AppendInt(b, int64(r.User), 10)
	b = append(b, sep...)
	b = strconv.AppendInt(b, int64(r.Movie), 10)
	b = append(b, sep...)
	b = strconv.AppendInt(b, int64(r.HalfStars/2), 10)
	switch {
	case r.HalfStars%2 == 1:
		b = append(b, ".5"...)
	case rw.format == movielens.FormatCSV:
		b = append(b, ".0"...)
	}
	b = append(b, sep...)
	b = strconv.AppendInt(b, r.Time, 10)
	b = append(b, rw.eol...)
	rw.buf = b
	rw.w.Write(b)
}

// WriteLine writes a raw line, such as a malformed one.
func (rw *RatingWriter) WriteLine(s string) { rw.w.WriteString(s + rw.eol) }

// Flush writes out what is buffered.
func (rw *RatingWriter) Flush() error { return rw.w.Flush() }

// Title is the synthetic title of movie id: plain ASCII for most, with
// Latin-1 letters, commas and quotes for some, and a title shared by two
// movies, to exercise decoding, quoting and disambiguation.
func Title(id int32) string {
	switch id % 7 {
	case 1:
		return fmt.Sprintf("Cité des enfants perdus %d, La (1995)", id)
	case 2:
		return fmt.Sprintf("Shawshank Redemption %d, The (1994)", id)
	case 3:
		return fmt.Sprintf("\"Quoted\" Movie %d (2001)", id)
	case 4:
		if id < 20 {
			return "Emma (1996)"
		}
	}
	return fmt.Sprintf("Movie %d (19%02d)", id, id%100)
}

// WriteTitles writes a movies file for the given titles in increasing id.
func WriteTitles(w io.Writer, f movielens.Format, titles map[int32]string, opt Options) error {
	ids := make([]int32, 0, len(titles))
	for id := range titles {
		ids = append(ids, id)
	}
	sort.Slice(ids, func(i, j int) bool { return ids[i] < ids[j] })
	eol := "\n"
	if opt.CRLF {
		eol = "\r\n"
	}
	bw := bufio.NewWriter(w)
	if f == movielens.FormatCSV {
		cw := csv.NewWriter(bw)
		cw.UseCRLF = opt.CRLF
		cw.Write([]string{"movieId", "title", "genres"})
		for _, id := range ids {
			cw.Write([]string{strconv.Itoa(int(id)), encode(titles[id], opt.Latin1), "Comedy|Drama"})
		}
		cw.Flush()
		if err := cw.Error(); err != nil {
			return err
		}
		return bw.Flush()
	}
	for _, id := range ids {
		switch f {
		case movielens.Format100K:
			fmt.Fprintf(bw, "%d|%s|01-Jan-1995||http://us.imdb.com/M/title-exact?x|0|0|1|0%s", id, encode(titles[id], true), eol)
		default:
			fmt.Fprintf(bw, "%d::%s::Comedy|Drama%s", id, encode(titles[id], opt.Latin1), eol)
		}
	}
	return bw.Flush()
}

// encode returns s in Latin-1 bytes (runes above U+00FF become '?') or
// unchanged.
func encode(s string, latin1 bool) string {
	if !latin1 {
		return s
	}
	b := make([]byte, 0, len(s))
	for _, r := range s {
		if r >= 256 || r == utf8.RuneError {
			r = '?'
		}
		b = append(b, byte(r))
	}
	return string(b)
}
