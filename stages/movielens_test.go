package stages

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/klauspost/compress/gzip"

	"github.com/pwe-project/pwe/formats"
	"github.com/pwe-project/pwe/formats/input"
	"github.com/pwe-project/pwe/formats/movielens"
	"github.com/pwe-project/pwe/formats/movielens/mltest"
	"github.com/pwe-project/pwe/internal/bytesize"
	"github.com/pwe-project/pwe/tokenize/baskets"
)

var mlData = mltest.Config{Users: 150, Movies: 70, MeanRatings: 20, MinRatings: 2, Zipf: 1.15, Duplicates: 0.08, Seed: 4}

// writeML writes a synthetic data set in one layout: ratings (optionally
// with extra raw lines after the first rating, CRLF or gzip) and titles.
func writeML(t *testing.T, dir string, f movielens.Format, ratings []movielens.Rating, opt mltest.Options, gz bool, extra ...string) string {
	t.Helper()
	names := map[movielens.Format][2]string{
		movielens.Format100K: {"u.data", "u.item"},
		movielens.FormatDat:  {"ratings.dat", "movies.dat"},
		movielens.FormatCSV:  {"ratings.csv", "movies.csv"},
	}[f]
	var b bytes.Buffer
	w := mltest.NewRatingWriter(&b, f, opt)
	for i, r := range ratings {
		w.Write(r)
		if i == 0 {
			for _, l := range extra {
				w.WriteLine(l)
			}
		}
	}
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, names[0])
	data := b.Bytes()
	if gz {
		var z bytes.Buffer
		zw := gzip.NewWriter(&z)
		zw.Write(data)
		zw.Close()
		path, data = path+".gz", z.Bytes()
	}
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	titles := map[int32]string{}
	for _, r := range ratings {
		titles[r.Movie] = mltest.Title(r.Movie)
	}
	var tb bytes.Buffer
	if err := mltest.WriteTitles(&tb, f, titles, opt); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, names[1]), tb.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// naiveML applies the documented rules with maps, without the cap (whose
// random choice the baskets tests check): it returns each kept movie's
// count and the positive counts of ordered movie-id pairs.
func naiveML(ratings []movielens.Rating, minRating float64, top int, minMovie int64, minUser int) (map[int32]int64, map[[2]int32]float64, int64) {
	type um struct{ u, m int32 }
	latest := map[um]movielens.Rating{}
	var dups int64
	for _, r := range ratings {
		k := um{r.User, r.Movie}
		if old, ok := latest[k]; ok {
			dups++
			if r.Time < old.Time {
				continue
			}
		}
		latest[k] = r
	}
	raters := map[int32]int64{}
	for k := range latest {
		raters[k.m]++
	}
	var movies []int32
	for m, n := range raters {
		if n >= minMovie {
			movies = append(movies, m)
		}
	}
	slices.SortFunc(movies, func(a, b int32) int {
		return cmp.Or(cmp.Compare(raters[b], raters[a]), cmp.Compare(a, b))
	})
	if top > 0 && len(movies) > top {
		movies = movies[:top]
	}
	kept := map[int32]bool{}
	for _, m := range movies {
		kept[m] = true
	}
	liked, disliked := map[int32][]int32{}, map[int32][]int32{}
	perUser := map[int32]int{}
	for k := range latest {
		if kept[k.m] {
			perUser[k.u]++
		}
	}
	counts := map[int32]int64{}
	for k, r := range latest {
		if !kept[k.m] || perUser[k.u] < minUser {
			continue
		}
		counts[k.m]++
		if r.Stars() >= minRating {
			liked[k.u] = append(liked[k.u], k.m)
		} else {
			disliked[k.u] = append(disliked[k.u], k.m)
		}
	}
	pos := map[[2]int32]float64{}
	for _, sets := range []map[int32][]int32{liked, disliked} {
		for _, set := range sets {
			for _, a := range set {
				for _, b := range set {
					if a != b {
						pos[[2]int32{a, b}]++
					}
				}
			}
		}
	}
	return counts, pos, dups
}

func readML(t *testing.T, dir string) ([]formats.VocabRow, []formats.CountRow) {
	t.Helper()
	vocab, _, err := formats.ReadVocab(filepath.Join(dir, "vocab.parquet"))
	if err != nil {
		t.Fatal(err)
	}
	rows, _, err := formats.ReadAll[formats.CountRow](filepath.Join(dir, "counts.parquet"), formats.SchemaCounts)
	if err != nil {
		t.Fatal(err)
	}
	return vocab, rows
}

func TestMovieLensMatchesNaive(t *testing.T) {
	ratings := mltest.Collect(mlData)
	whole := mlData
	whole.WholeStars = true
	wholeRatings := mltest.Collect(whole)
	cases := []struct {
		name    string
		format  movielens.Format
		ratings []movielens.Rating
		opt     mltest.Options
		gz      bool
	}{
		{"ml-100k", movielens.Format100K, wholeRatings, mltest.Options{}, false},
		{"ml-1m latin1 crlf", movielens.FormatDat, wholeRatings, mltest.Options{Latin1: true, CRLF: true}, false},
		{"ml-10m", movielens.FormatDat, ratings, mltest.Options{}, false},
		{"ml-25m gzip", movielens.FormatCSV, ratings, mltest.Options{}, true},
	}
	const top, minMovie, minUser, k = 40, 3, 4, 2
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			path := writeML(t, dir, c.format, c.ratings, c.opt, c.gz)
			out := filepath.Join(dir, "out")
			st, err := MovieLens(context.Background(), MovieLensConfig{
				Ratings: path, Output: out, MinRating: 3.5, TopMovies: intp(top), MinMovieRatings: minMovie,
				MinUserRatings: minUser, MaxPerUser: intp(0), Negatives: intp(k), Seed: 3, Threads: 2,
			})
			if err != nil {
				t.Fatal(err)
			}
			wantCounts, wantPos, dups := naiveML(c.ratings, 3.5, top, minMovie, minUser)
			if st.Duplicates != dups || dups == 0 {
				t.Errorf("%d duplicates, want %d (> 0)", st.Duplicates, dups)
			}
			if st.Format != c.format.String() || !st.TitlesFile {
				t.Errorf("format %s, titles file %v", st.Format, st.TitlesFile)
			}
			vocab, rows := readML(t, out)
			if len(vocab) != len(wantCounts) {
				t.Fatalf("vocabulary of %d movies, want %d", len(vocab), len(wantCounts))
			}
			movie := make([]int32, len(vocab))
			titles := 0
			for i, v := range vocab {
				movie[i] = int32(*v.ExternalID)
				if v.Count != wantCounts[movie[i]] {
					t.Errorf("movie %d: count %d, want %d", movie[i], v.Count, wantCounts[movie[i]])
				}
				title := mltest.Title(movie[i])
				switch {
				case v.Token == title:
					titles++
				case v.Token == fmt.Sprintf("%s (id %d)", title, movie[i]) && title == "Emma (1996)":
				default:
					t.Errorf("movie %d: token %q, want %q", movie[i], v.Token, title)
				}
			}
			if titles == 0 {
				t.Error("no token is a title")
			}
			var posTotal, negTotal float64
			posBy, negBy := map[int32]float64{}, map[int32]float64{}
			gotPos := map[[2]int32]float64{}
			for i, r := range rows {
				var prev *formats.CountRow
				if i > 0 {
					prev = &rows[i-1]
				}
				if err := formats.CheckCountRow(r, prev, len(vocab)); err != nil {
					t.Fatalf("row %d: %v", i, err)
				}
				if r.NPos > 0 {
					gotPos[[2]int32{movie[r.TargetID], movie[r.ContextID]}] = r.NPos
				}
				posTotal += r.NPos
				negTotal += r.NNeg
				posBy[r.TargetID] += r.NPos
				negBy[r.TargetID] += r.NNeg
			}
			if len(gotPos) != len(wantPos) {
				t.Errorf("%d pairs with n_pos > 0, want %d", len(gotPos), len(wantPos))
			}
			for p, n := range wantPos {
				if gotPos[p] != n {
					t.Errorf("pair %v: n_pos %v, want %v", p, gotPos[p], n)
				}
			}
			if negTotal != k*posTotal || int64(posTotal) != st.PositivePairs {
				t.Errorf("n_neg total %v, n_pos total %v (stats %d); want n_neg = %d * n_pos", negTotal, posTotal, st.PositivePairs, k)
			}
			for id, n := range posBy {
				if negBy[id] != k*n {
					t.Errorf("target %d: n_neg %v, want %d * %v", id, negBy[id], k, n)
				}
			}
		})
	}
}

// TestMovieLensTitles checks the decoded Latin-1 and quoted titles, and
// the ids without a titles file.
func TestMovieLensTitles(t *testing.T) {
	ratings := []movielens.Rating{
		{User: 1, Movie: 8, HalfStars: 8, Time: 1}, {User: 1, Movie: 9, HalfStars: 8, Time: 2},
		{User: 1, Movie: 4, HalfStars: 8, Time: 3}, {User: 1, Movie: 11, HalfStars: 8, Time: 4},
		{User: 2, Movie: 8, HalfStars: 8, Time: 1}, {User: 2, Movie: 9, HalfStars: 2, Time: 2},
	}
	for _, c := range []struct {
		format movielens.Format
		opt    mltest.Options
	}{{movielens.Format100K, mltest.Options{}}, {movielens.FormatDat, mltest.Options{Latin1: true}}, {movielens.FormatCSV, mltest.Options{CRLF: true}}} {
		dir := t.TempDir()
		path := writeML(t, dir, c.format, ratings, c.opt, false)
		out := filepath.Join(dir, "out")
		if _, err := MovieLens(context.Background(), MovieLensConfig{Ratings: path, Output: out}); err != nil {
			t.Fatal(err)
		}
		vocab, _ := readML(t, out)
		tokens := map[int64]string{}
		for _, v := range vocab {
			tokens[*v.ExternalID] = v.Token
		}
		// Titles 4 and 11 are both "Emma (1996)".
		want := map[int64]string{
			8: "Cité des enfants perdus 8, La (1995)", 9: "Shawshank Redemption 9, The (1994)",
			4: "Emma (1996) (id 4)", 11: "Emma (1996) (id 11)",
		}
		for id, w := range want {
			if tokens[id] != w {
				t.Errorf("%v: movie %d token %q, want %q", c.format, id, tokens[id], w)
			}
		}
		for _, name := range []string{"u.item", "movies.dat", "movies.csv"} {
			os.Remove(filepath.Join(dir, name))
		}
		st, err := MovieLens(context.Background(), MovieLensConfig{Ratings: path, Output: out})
		if err != nil {
			t.Fatal(err)
		}
		vocab, _ = readML(t, out)
		if st.TitlesFile || vocab[0].Token != "movie:8" {
			t.Errorf("%v without titles: titles file %v, first token %q; want movie:8", c.format, st.TitlesFile, vocab[0].Token)
		}
	}
}

// TestMovieLensDeterministic checks that the outputs are the same bytes
// whatever the threads, and that an unsorted file, grouped in memory, gives
// the same rows as the sorted one.
func TestMovieLensDeterministic(t *testing.T) {
	t.Setenv("SOURCE_DATE_EPOCH", "0")
	data := mlData
	data.Duplicates = 0 // shuffling would reorder equal-time duplicates
	ratings := mltest.Collect(data)
	dir := t.TempDir()
	path := writeML(t, dir, movielens.FormatCSV, ratings, mltest.Options{}, false)
	cfg := MovieLensConfig{Ratings: path, TopMovies: intp(30), MaxPerUser: intp(8), Negatives: intp(3), Seed: 17}
	var first [2][]byte
	for _, threads := range []int{1, 2, 3} {
		cfg.Threads, cfg.Output = threads, filepath.Join(dir, fmt.Sprint("out", threads))
		st, err := MovieLens(context.Background(), cfg)
		if err != nil {
			t.Fatal(err)
		}
		if st.Capped == 0 {
			t.Fatal("no rating capped: the test does not cover the random choice")
		}
		for i, name := range []string{"vocab.parquet", "counts.parquet"} {
			got, err := os.ReadFile(filepath.Join(cfg.Output, name))
			if err != nil {
				t.Fatal(err)
			}
			if threads == 1 {
				first[i] = got
			} else if !bytes.Equal(got, first[i]) {
				t.Errorf("threads %d: %s differs from threads 1", threads, name)
			}
		}
	}
	sortedVocab, sortedRows := readML(t, filepath.Join(dir, "out1"))

	shuffled := slices.Clone(ratings)
	r := rand.New(rand.NewPCG(5, 6))
	r.Shuffle(len(shuffled), func(i, j int) { shuffled[i], shuffled[j] = shuffled[j], shuffled[i] })
	sdir := t.TempDir()
	cfg.Ratings = writeML(t, sdir, movielens.FormatCSV, shuffled, mltest.Options{}, false)
	cfg.Output, cfg.Threads = filepath.Join(sdir, "out"), 2
	st, err := MovieLens(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	if !st.Grouped {
		t.Error("the shuffled file was not grouped in memory")
	}
	vocab, rows := readML(t, cfg.Output)
	if !slices.EqualFunc(vocab, sortedVocab, func(a, b formats.VocabRow) bool {
		return a.Token == b.Token && a.Count == b.Count && *a.ExternalID == *b.ExternalID
	}) || !slices.Equal(rows, sortedRows) {
		t.Error("the unsorted file gives other outputs than the sorted one")
	}

	cfg.Memory = 16 << 20
	big := make([]movielens.Rating, 0, 1100000)
	for i := range cap(big) {
		big = append(big, movielens.Rating{User: int32(i % 1000), Movie: int32(i / 1000), HalfStars: 8})
	}
	cfg.Ratings = writeML(t, t.TempDir(), movielens.FormatCSV, big, mltest.Options{}, false)
	_, err = MovieLens(context.Background(), cfg)
	if !errors.Is(err, baskets.ErrTooLarge) {
		t.Fatalf("unsorted file over half the budget: %v, want ErrTooLarge", err)
	}
	// 8 bytes a rating and 12 a user (baskets.MemoryBytes), against half
	// the budget.
	want := fmt.Sprintf("1100000 ratings of 1000 users need %s to be grouped by user in memory, over the limit of 8MiB (half of --memory 16MiB)",
		bytesize.Format(8*1100000+12*1000))
	if !strings.Contains(err.Error(), want) {
		t.Errorf("unsorted file over half the budget: %q, want it to say %q", err, want)
	}
}

func TestMovieLensBadLines(t *testing.T) {
	ratings := mltest.Collect(mlData)
	dir := t.TempDir()
	path := writeML(t, dir, movielens.FormatDat, ratings, mltest.Options{CRLF: true}, false, "7::12::4", "7::x::4::100")
	out := filepath.Join(dir, "out")
	_, err := MovieLens(context.Background(), MovieLensConfig{Ratings: path, Output: out})
	var pe *input.ParseError
	if !errors.As(err, &pe) || pe.Line != 2 || !strings.Contains(err.Error(), "ratings.dat:2: ") || !strings.Contains(err.Error(), "want 4 fields") {
		t.Errorf("error %v, want one at ratings.dat:2 expecting 4 fields", err)
	}
	assertNoOutput(t, out)
	st, err := MovieLens(context.Background(), MovieLensConfig{Ratings: path, Output: out, SkipBadLines: true})
	if err != nil {
		t.Fatal(err)
	}
	if st.SkippedLines != 2 || st.Ratings != int64(len(ratings)) || st.FirstSkipped == nil || !strings.Contains(st.FirstSkipped.Error(), ":2: ") {
		t.Errorf("skipped %d lines (first %v), read %d ratings; want 2 skipped, %d read", st.SkippedLines, st.FirstSkipped, st.Ratings, len(ratings))
	}
	_, meta, err := formats.ReadVocab(filepath.Join(out, "vocab.parquet"))
	if err != nil || !strings.Contains(string(meta.Stats.(json.RawMessage)), `"skipped_lines":2`) {
		t.Errorf("pwe.stats %s (%v) does not record the skipped lines", meta.Stats, err)
	}
}

// TestMovieLensNoRatings: a file with no rating to read (a header alone,
// or every line skipped, here for a movie id beyond what a rating packs)
// says so, not that the filters left none.
func TestMovieLensNoRatings(t *testing.T) {
	dir := t.TempDir()
	for name, c := range map[string]struct{ text, want string }{
		"header.csv":  {"userId,movieId,rating,timestamp\n", "header.csv: movielens: no ratings"},
		"skipped.csv": {"userId,movieId,rating,timestamp\n1,268435456,4,100\n1,x,4,100\n", "all 2 lines were malformed and skipped"},
	} {
		path := filepath.Join(dir, name)
		if err := os.WriteFile(path, []byte(c.text), 0o644); err != nil {
			t.Fatal(err)
		}
		_, err := MovieLens(context.Background(), MovieLensConfig{Ratings: path, Output: filepath.Join(dir, "out"), SkipBadLines: true})
		if !errors.Is(err, movielens.ErrEmpty) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want ErrEmpty saying %q", name, err, c.want)
		}
	}
}

// BenchmarkMovieLens runs the stage on a synthetic csv of about a million
// ratings (1/25 of ml-25m).
func BenchmarkMovieLens(b *testing.B) {
	dir := b.TempDir()
	path := filepath.Join(dir, "ratings.csv")
	f, err := os.Create(path)
	if err != nil {
		b.Fatal(err)
	}
	w := mltest.NewRatingWriter(f, movielens.FormatCSV, mltest.Options{})
	var n int64
	mltest.Generate(mltest.Config{Users: 6500, Movies: 20000, MeanRatings: 154, MinRatings: 20, Zipf: 1.05, Duplicates: 0.001, Seed: 1},
		func(r movielens.Rating) { w.Write(r); n++ })
	if err := w.Flush(); err != nil {
		b.Fatal(err)
	}
	f.Close()
	b.ResetTimer()
	for range b.N {
		if _, err := MovieLens(context.Background(), MovieLensConfig{Ratings: path, Output: filepath.Join(dir, "out"), Memory: 256 << 20}); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(n)*float64(b.N)/b.Elapsed().Seconds()/1e6, "Mratings/s")
}
