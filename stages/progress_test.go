package stages

import (
	"bytes"
	"context"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"testing"

	"github.com/klauspost/compress/gzip"

	"github.com/pwe-project/pwe/formats/movielens"
	"github.com/pwe-project/pwe/formats/movielens/mltest"
)

// fakeProgress records what a stage reports of its reading.
type fakeProgress struct {
	mu     sync.Mutex
	totals []int64 // every SetTotal, in order
	read   int64   // sum of Add
	// readAtTotal is read at each SetTotal.
	readAtTotal []int64
}

func (f *fakeProgress) SetTotal(n int64) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.totals = append(f.totals, n)
	f.readAtTotal = append(f.readAtTotal, f.read)
}

func (f *fakeProgress) Add(n int64) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if n <= 0 {
		panic("fakeProgress: Add of a non-positive count")
	}
	f.read += n
}

func sizeOf(t *testing.T, paths ...string) int64 {
	t.Helper()
	var n int64
	for _, p := range paths {
		info, err := os.Stat(p)
		if err != nil {
			t.Fatal(err)
		}
		n += info.Size()
	}
	return n
}

// gzipCopy writes a gzip copy of src into dir.
func gzipCopy(t *testing.T, src, dir string) string {
	t.Helper()
	data, err := os.ReadFile(src)
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	w := gzip.NewWriter(&b)
	w.Write(data)
	w.Close()
	path := filepath.Join(dir, filepath.Base(src)+".gz")
	if err := os.WriteFile(path, b.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// TestTextStagesProgress checks that tokenize and count announce the
// inputs' stored size before reading and report exactly that many bytes.
func TestTextStagesProgress(t *testing.T) {
	dir := t.TempDir()
	paths := []string{fixture, gzipCopy(t, fixture, dir)}
	want := sizeOf(t, paths...)
	in := TextInput{Paths: paths, DocSep: "blank"}
	check := func(stage string, p *fakeProgress) {
		t.Helper()
		if !slices.Equal(p.totals, []int64{want}) || p.readAtTotal[0] != 0 {
			t.Errorf("%s: totals %v announced after %v bytes; want %d once, before reading", stage, p.totals, p.readAtTotal, want)
		}
		if p.read != want {
			t.Errorf("%s: %d bytes reported, want the inputs' %d", stage, p.read, want)
		}
	}
	var tp fakeProgress
	vocab := filepath.Join(dir, "vocab.parquet")
	if _, err := Tokenize(context.Background(), TokenizeConfig{Input: in, Output: vocab, Threads: 2, Progress: &tp}); err != nil {
		t.Fatal(err)
	}
	check("tokenize", &tp)
	var cp fakeProgress
	if _, err := Count(context.Background(), CountConfig{Input: in, Vocab: vocab, Output: filepath.Join(dir, "counts.parquet"), Threads: 2, Progress: &cp}); err != nil {
		t.Fatal(err)
	}
	check("count", &cp)

	// Standard input has no size: the total stays unknown.
	if got := rawSize([]string{fixture, StdioPath}); got != 0 {
		t.Errorf("rawSize with standard input = %d, want 0 (unknown)", got)
	}
	if got := rawSize(paths); got != want {
		t.Errorf("rawSize = %d, want %d", got, want)
	}
}

// TestMovieLensProgress checks the movielens stage, which reads its file
// several times: the bytes reported reach the total announced last, a
// whole number of passes for a sorted file, and the total is corrected
// when the file turns out unsorted.
func TestMovieLensProgress(t *testing.T) {
	data := mlData
	data.Duplicates = 0
	ratings := mltest.Collect(data)
	dir := t.TempDir()
	sorted := writeML(t, dir, movielens.FormatCSV, ratings, mltest.Options{}, true)
	size := sizeOf(t, sorted)

	var p fakeProgress
	cfg := MovieLensConfig{Ratings: sorted, Output: filepath.Join(dir, "out"), Threads: 2, Seed: 1, Progress: &p}
	if _, err := MovieLens(context.Background(), cfg); err != nil {
		t.Fatal(err)
	}
	if len(p.totals) == 0 || p.totals[0] != 3*size || p.readAtTotal[0] != 0 {
		t.Errorf("sorted: first total %v after %v bytes; want 3 passes (%d) before reading", p.totals, p.readAtTotal, 3*size)
	}
	last := p.totals[len(p.totals)-1]
	if p.read != last || p.read%size != 0 || p.read/size < 2 {
		t.Errorf("sorted: read %d bytes, last total %d; want equal, and a whole number (2 or 3) of passes over %d bytes", p.read, last, size)
	}

	shuffled := slices.Clone(ratings)
	r := rand.New(rand.NewPCG(1, 2))
	r.Shuffle(len(shuffled), func(i, j int) { shuffled[i], shuffled[j] = shuffled[j], shuffled[i] })
	udir := t.TempDir()
	cfg.Ratings = writeML(t, udir, movielens.FormatCSV, shuffled, mltest.Options{}, false)
	cfg.Output = filepath.Join(udir, "out")
	size = sizeOf(t, cfg.Ratings)
	p = fakeProgress{}
	cfg.Progress = &p
	st, err := MovieLens(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	if !st.Grouped {
		t.Fatal("the shuffled file was not grouped: the test does not cover the correction")
	}
	last = p.totals[len(p.totals)-1]
	// The first pass stops at the first user out of order, but its
	// buffered reads may have taken the whole file.
	if p.read != last || p.read <= 2*size || p.read > 3*size {
		t.Errorf("unsorted: read %d bytes, last total %d; want equal, a partial pass plus two whole ones of %d bytes", p.read, last, size)
	}
}
