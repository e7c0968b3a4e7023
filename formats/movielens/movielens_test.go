package movielens_test

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/klauspost/compress/gzip"

	"github.com/pwe-project/pwe/formats/input"
	"github.com/pwe-project/pwe/formats/movielens"
	"github.com/pwe-project/pwe/formats/movielens/mltest"
)

var small = mltest.Config{Users: 40, Movies: 60, MeanRatings: 12, MinRatings: 3, Zipf: 1.3, Duplicates: 0.05, Seed: 3}

func ratingsFile(t testing.TB, f movielens.Format, ratings []movielens.Rating, opt mltest.Options) []byte {
	t.Helper()
	var b bytes.Buffer
	w := mltest.NewRatingWriter(&b, f, opt)
	for _, r := range ratings {
		w.Write(r)
	}
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

func readAll(t *testing.T, r *movielens.Reader) []movielens.Rating {
	t.Helper()
	var got []movielens.Rating
	for r.Next() {
		got = append(got, r.Rating())
	}
	if err := r.Err(); err != nil {
		t.Fatal(err)
	}
	return got
}

func TestRoundTrip(t *testing.T) {
	dir := t.TempDir()
	for _, c := range []struct {
		name   string
		format movielens.Format
		whole  bool
		crlf   bool
		gzip   bool
	}{
		{"u.data", movielens.Format100K, true, false, false},
		{"ratings.dat", movielens.FormatDat, false, true, false},
		{"ratings.csv", movielens.FormatCSV, false, false, true},
		{"ratings-crlf.csv", movielens.FormatCSV, false, true, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			cfg := small
			cfg.WholeStars = c.whole
			want := mltest.Collect(cfg)
			data := ratingsFile(t, c.format, want, mltest.Options{CRLF: c.crlf})
			path := filepath.Join(dir, c.name)
			if c.gzip {
				var gz bytes.Buffer
				zw := gzip.NewWriter(&gz)
				zw.Write(data)
				zw.Close()
				data, path = gz.Bytes(), path+".gz"
			}
			if err := os.WriteFile(path, data, 0o644); err != nil {
				t.Fatal(err)
			}
			r, err := movielens.Open(path, movielens.Options{})
			if err != nil {
				t.Fatal(err)
			}
			defer r.Close()
			if r.Format() != c.format {
				t.Errorf("detected %v, want %v", r.Format(), c.format)
			}
			got := readAll(t, r)
			if len(got) != len(want) {
				t.Fatalf("read %d ratings, wrote %d", len(got), len(want))
			}
			halves := 0
			for i := range want {
				if got[i] != want[i] {
					t.Fatalf("rating %d: read %+v, wrote %+v", i, got[i], want[i])
				}
				halves += int(want[i].HalfStars % 2)
			}
			if !c.whole && halves == 0 {
				t.Error("no half-star rating: the test does not cover them")
			}
			fp := r.Fingerprint()
			if fp.Size != int64(len(data)) || len(fp.SHA256) != 64 {
				t.Errorf("fingerprint %+v, want size %d", fp, len(data))
			}
		})
	}
}

func TestDetect(t *testing.T) {
	cases := []struct {
		line   string
		want   movielens.Format
		header bool
	}{
		{"196\t242\t3\t881250949", movielens.Format100K, false},
		{"1::1193::5::978300760\r\n", movielens.FormatDat, false},
		{"userId,movieId,rating,timestamp\r\n", movielens.FormatCSV, true},
		{"\ufeffuserId,movieId,rating,timestamp", movielens.FormatCSV, true},
		{"1,296,5.0,1147880044", movielens.FormatCSV, false},
	}
	for _, c := range cases {
		f, h, err := movielens.Detect([]byte(c.line))
		if err != nil || f != c.want || h != c.header {
			t.Errorf("Detect(%q) = %v, %v, %v; want %v, %v", c.line, f, h, err, c.want, c.header)
		}
	}
	if _, _, err := movielens.Detect([]byte("hello world")); !errors.Is(err, movielens.ErrUnknownFormat) {
		t.Errorf("Detect(prose): %v, want ErrUnknownFormat", err)
	}
}

func TestForcedFormat(t *testing.T) {
	// "1,2,3,4" would be detected as csv; forced to dat it is malformed.
	r, err := movielens.NewReader(strings.NewReader("1::2::3::4\n"), "x", movielens.Options{Format: movielens.FormatDat})
	if err != nil {
		t.Fatal(err)
	}
	if got := readAll(t, r); len(got) != 1 || got[0] != (movielens.Rating{User: 1, Movie: 2, HalfStars: 6, Time: 4}) {
		t.Errorf("forced dat read %+v", got)
	}
	r, err = movielens.NewReader(strings.NewReader("1,2,3,4\n"), "x", movielens.Options{Format: movielens.FormatDat})
	if err != nil {
		t.Fatal(err)
	}
	if r.Next() || !errors.Is(r.Err(), movielens.ErrMalformed) {
		t.Errorf("csv line read as dat: err %v", r.Err())
	}
}

func TestMalformedLines(t *testing.T) {
	head := "userId,movieId,rating,timestamp\n1,10,4.0,100\n"
	cases := []struct {
		line string
		want string // in the error message
	}{
		{"1,10,4.0", "want 4 fields"},
		{"1,10,4.0,100,7", "found more"},
		{"x,10,4.0,100", "user id"},
		{"1,-3,4.0,100", "movie id"},
		{"1,10,5.5,100", "rating"},
		{"1,10,4.25,100", "rating"},
		{"1,10,four,100", "rating"},
		{"1,10,4.0,", "timestamp"},
		{"1,10,4.0,1e9", "timestamp"},
		{"99999999999,10,4.0,100", "user id"},
		// Beyond what pwe packs in a rating: malformed, so skippable.
		{"1,268435456,4.0,100", "movie id \"268435456\": want an integer from 0 to 268435455"},
		{"1,10,4.0,4294967296", "want seconds since 1970, from 0 to 4294967295"},
		{"1,10,4.0," + strings.Repeat("9", 70000), "longer than"},
	}
	for _, c := range cases {
		data := head + c.line + "\r\n2,11,3.5,200\n"
		r, err := movielens.NewReader(strings.NewReader(data), "ratings.csv", movielens.Options{})
		if err != nil {
			t.Fatal(err)
		}
		n := 0
		for r.Next() {
			n++
		}
		var pe *input.ParseError
		err = r.Err()
		if !errors.As(err, &pe) || pe.Line != 3 || pe.Path != "ratings.csv" || !errors.Is(err, movielens.ErrMalformed) {
			t.Errorf("%q: error %v, want *input.ParseError at ratings.csv:3 wrapping ErrMalformed", c.line, err)
			continue
		}
		if !strings.Contains(err.Error(), "ratings.csv:3: ") || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%q: error %q lacks %q", c.line, err, c.want)
		}
		if n != 1 {
			t.Errorf("%q: %d ratings before the error, want 1", c.line, n)
		}

		r, _ = movielens.NewReader(strings.NewReader(data), "ratings.csv", movielens.Options{SkipBadLines: true})
		got := readAll(t, r)
		if len(got) != 2 || got[1] != (movielens.Rating{User: 2, Movie: 11, HalfStars: 7, Time: 200}) || r.Skipped() != 1 {
			t.Errorf("%q skipped: read %+v, skipped %d; want 2 ratings, 1 skipped", c.line, got, r.Skipped())
		}
		if r.FirstSkipped() == nil || !strings.Contains(r.FirstSkipped().Error(), c.want) {
			t.Errorf("%q: first skipped %v", c.line, r.FirstSkipped())
		}
	}
}

func TestEmptyAndUnknown(t *testing.T) {
	for _, data := range []string{"", "\n\n", "userId,movieId,rating,timestamp\n"} {
		r, err := movielens.NewReader(strings.NewReader(data), "e.csv", movielens.Options{})
		if err == nil {
			if r.Next() || r.Err() != nil {
				t.Errorf("%q: Next %v, err %v", data, true, r.Err())
			}
			continue
		}
		if !errors.Is(err, movielens.ErrEmpty) {
			t.Errorf("%q: %v, want ErrEmpty", data, err)
		}
	}
	_, err := movielens.NewReader(strings.NewReader("\nsome text\n"), "t.txt", movielens.Options{})
	var pe *input.ParseError
	if !errors.As(err, &pe) || pe.Line != 2 || !errors.Is(err, movielens.ErrUnknownFormat) {
		t.Errorf("prose: %v, want ErrUnknownFormat at line 2", err)
	}
}

func TestTitles(t *testing.T) {
	dir := t.TempDir()
	titles := map[int32]string{}
	for id := int32(1); id <= 30; id++ {
		titles[id] = mltest.Title(id)
	}
	titles[8] = "Cité des enfants perdus, La (1995)"
	titles[9] = "Shawshank Redemption, The (1994)"
	for _, c := range []struct {
		name   string
		format movielens.Format
		opt    mltest.Options
		latin1 bool
	}{
		{"u.item", movielens.Format100K, mltest.Options{}, true},
		{"movies-1m.dat", movielens.FormatDat, mltest.Options{Latin1: true, CRLF: true}, true},
		{"movies-10m.dat", movielens.FormatDat, mltest.Options{}, false},
		{"movies.csv", movielens.FormatCSV, mltest.Options{CRLF: true}, false},
	} {
		var b bytes.Buffer
		if err := mltest.WriteTitles(&b, c.format, titles, c.opt); err != nil {
			t.Fatal(err)
		}
		if c.latin1 && !bytes.Contains(b.Bytes(), []byte("Cit\xe9 des")) {
			t.Fatalf("%s: the file does not hold Latin-1 bytes", c.name)
		}
		if c.format == movielens.FormatCSV && !bytes.Contains(b.Bytes(), []byte(`"Shawshank Redemption, The (1994)"`)) {
			t.Fatalf("%s: the title with a comma is not quoted", c.name)
		}
		path := filepath.Join(dir, c.name)
		os.WriteFile(path, b.Bytes(), 0o644)
		for _, f := range []movielens.Format{movielens.Auto, c.format} {
			got, err := movielens.ReadTitles(path, movielens.Options{Format: f})
			if err != nil {
				t.Fatalf("%s: %v", c.name, err)
			}
			if got.Latin1 != c.latin1 || len(got.ByID) != len(titles) {
				t.Errorf("%s: Latin1 %v, %d titles; want %v, %d", c.name, got.Latin1, len(got.ByID), c.latin1, len(titles))
			}
			for id, want := range titles {
				if got.ByID[id] != want {
					t.Errorf("%s: title %d = %q, want %q", c.name, id, got.ByID[id], want)
				}
			}
		}
	}
}

func TestTitlesMalformed(t *testing.T) {
	dir := t.TempDir()
	cases := []struct {
		name, data string
		line       int64
		want       string
	}{
		{"u.item", "1|Toy Story (1995)|x\nno pipes here\n", 2, "want id|title"},
		{"movies.dat", "1::Toy Story (1995)::Comedy\r\nx::Heat (1995)::Action\r\n", 2, `movie id "x"`},
		{"movies.csv", "movieId,title,genres\n1,Toy Story (1995),Comedy\n2,\"Heat, unclosed,Action\n", 3, "quote"},
		{"dup.csv", "movieId,title,genres\n1,A,x\n1,B,y\n", 3, "already given on line 2"},
	}
	for _, c := range cases {
		path := filepath.Join(dir, c.name)
		os.WriteFile(path, []byte(c.data), 0o644)
		_, err := movielens.ReadTitles(path, movielens.Options{})
		var pe *input.ParseError
		if !errors.As(err, &pe) || pe.Line != c.line || !errors.Is(err, movielens.ErrMalformed) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want a malformed-line error at line %d mentioning %q", c.name, err, c.line, c.want)
		}
		got, err := movielens.ReadTitles(path, movielens.Options{SkipBadLines: true})
		if err != nil || got.Skipped != 1 || got.ByID[1] == "" {
			t.Errorf("%s skipping: %v, %+v", c.name, err, got)
		}
	}
}

func TestTitlesPath(t *testing.T) {
	dir := t.TempDir()
	ratings := filepath.Join(dir, "ratings.csv.gz")
	if got := movielens.TitlesPath(ratings, movielens.FormatCSV); got != "" {
		t.Errorf("no movies file: got %q", got)
	}
	os.WriteFile(filepath.Join(dir, "movies.csv.zst"), nil, 0o644)
	if got := movielens.TitlesPath(ratings, movielens.FormatCSV); got != filepath.Join(dir, "movies.csv.zst") {
		t.Errorf("got %q, want movies.csv.zst", got)
	}
	os.WriteFile(filepath.Join(dir, "u.item"), nil, 0o644)
	if got := movielens.TitlesPath(filepath.Join(dir, "u.data"), movielens.Format100K); got != filepath.Join(dir, "u.item") {
		t.Errorf("got %q, want u.item", got)
	}
}

// FuzzReader checks that no input panics the parser and that every rating
// it accepts reads back the same after writing it out again.
func FuzzReader(f *testing.F) {
	f.Add([]byte("userId,movieId,rating,timestamp\n1,2,3.5,4\n"))
	f.Add([]byte("1::2::3::4\r\n5::6::0.5::7\n"))
	f.Add([]byte("1\t2\t3\t4\n\n1\t2\t3"))
	f.Fuzz(func(t *testing.T, data []byte) {
		r, err := movielens.NewReader(bytes.NewReader(data), "fuzz", movielens.Options{SkipBadLines: true})
		if err != nil {
			return
		}
		var got []movielens.Rating
		for r.Next() {
			got = append(got, r.Rating())
		}
		if r.Err() != nil {
			t.Fatalf("error while skipping bad lines: %v", r.Err())
		}
		if len(got) == 0 {
			return
		}
		again, err := movielens.NewReader(bytes.NewReader(ratingsFile(t, r.Format(), got, mltest.Options{})), "again", movielens.Options{})
		if err != nil {
			t.Fatal(err)
		}
		for i := 0; again.Next(); i++ {
			if again.Rating() != got[i] {
				t.Fatalf("rating %d: %+v reads back as %+v", i, got[i], again.Rating())
			}
		}
		if again.Err() != nil {
			t.Fatal(again.Err())
		}
	})
}

func BenchmarkReader(b *testing.B) {
	cfg := mltest.Config{Users: 2000, Movies: 5000, MeanRatings: 150, MinRatings: 20, Zipf: 1.1, Seed: 1}
	data := ratingsFile(b, movielens.FormatCSV, mltest.Collect(cfg), mltest.Options{})
	b.SetBytes(int64(len(data)))
	b.ResetTimer()
	n := 0
	for range b.N {
		r, err := movielens.NewReader(bytes.NewReader(data), "bench.csv", movielens.Options{})
		if err != nil {
			b.Fatal(err)
		}
		for r.Next() {
			n++
		}
		if r.Err() != nil {
			b.Fatal(r.Err())
		}
	}
	b.ReportMetric(float64(n)/b.Elapsed().Seconds()/1e6, "Mratings/s")
}
