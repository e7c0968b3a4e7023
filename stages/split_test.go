package stages

import (
	"bytes"
	"context"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/pwe-project/pwe/formats"
)

// writeCounts writes rows as counts.parquet at path.
func writeCounts(t *testing.T, path string, rows []formats.CountRow, many bool) {
	t.Helper()
	w, err := formats.CreateCounts(path, formats.Meta{}, many)
	if err != nil {
		t.Fatal(err)
	}
	defer w.Abort()
	if err := w.Write(rows); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
}

func readCounts(t *testing.T, path string) map[[2]int32]formats.CountRow {
	t.Helper()
	rows, _, err := formats.ReadAll[formats.CountRow](path, formats.SchemaCounts)
	if err != nil {
		t.Fatal(err)
	}
	m := make(map[[2]int32]formats.CountRow, len(rows))
	for k, r := range rows {
		if k > 0 {
			if err := formats.CheckCountRow(r, &rows[k-1], math.MaxInt32); err != nil {
				t.Fatalf("%s: row %d: %v", path, k, err)
			}
		}
		if r.NPos+r.NNeg == 0 {
			t.Fatalf("%s: row %d: empty pair written", path, k)
		}
		m[[2]int32{r.TargetID, r.ContextID}] = r
	}
	return m
}

// splitFixture has whole counts from 0 to 10^6 and, when frac, fractional
// ones.
func splitFixture(frac bool) []formats.CountRow {
	r := rand.New(rand.NewPCG(3, 3))
	var rows []formats.CountRow
	for i := range int32(40) {
		for j := range int32(40) {
			if r.IntN(4) == 0 {
				continue
			}
			scale := math.Pow(10, float64(r.IntN(7)))
			row := formats.CountRow{TargetID: i, ContextID: j, NPos: math.Floor(scale * r.Float64()), NNeg: math.Floor(scale * r.Float64())}
			if frac {
				row.NPos += r.Float64()
				row.NNeg += float64(r.IntN(3)) / 3
			}
			rows = append(rows, row)
		}
	}
	return rows
}

// Train and test add up to the input exactly, pair by pair, and the held-
// out share of the observations is p within 4 binomial standard errors
// (variance p(1-p) per whole unit and f^2 p(1-p) per fractional unit f).
func TestSplitThinsExactly(t *testing.T) {
	for _, frac := range []bool{false, true} {
		dir := t.TempDir()
		in := splitFixture(frac)
		counts := filepath.Join(dir, "counts.parquet")
		writeCounts(t, counts, in, frac)
		const p = 0.3
		st, err := Split(context.Background(), SplitConfig{Counts: counts, TestFraction: p, Seed: 9, Output: dir})
		if err != nil {
			t.Fatal(err)
		}
		train, test := readCounts(t, filepath.Join(dir, TrainFile)), readCounts(t, filepath.Join(dir, TestFile))
		var total, held, variance float64
		for _, r := range in {
			key := [2]int32{r.TargetID, r.ContextID}
			a, b := train[key], test[key]
			if a.NPos+b.NPos != r.NPos || a.NNeg+b.NNeg != r.NNeg || a.NPos < 0 || a.NNeg < 0 || b.NPos < 0 || b.NNeg < 0 {
				t.Fatalf("pair %v: train %v + test %v, input %v", key, a, b, r)
			}
			delete(train, key)
			delete(test, key)
			for _, x := range []float64{r.NPos, r.NNeg} {
				f := x - math.Floor(x)
				variance += (math.Floor(x) + f*f) * p * (1 - p)
			}
			total += r.NPos + r.NNeg
			held += b.NPos + b.NNeg
		}
		if len(train)+len(test) > 0 {
			t.Fatalf("pairs not in the input: %v %v", train, test)
		}
		if z := (held - p*total) / math.Sqrt(variance); math.Abs(z) > 4 {
			t.Errorf("frac %v: held out %v of %v observations, z = %.2f", frac, held, total, z)
		}
		if st.Rows != int64(len(in)) || st.Total != total || st.Test != held {
			t.Errorf("stats %+v, want %d rows, %v observations, %v held out", st, len(in), total, held)
		}
	}
}

// The split depends on the seed only: a second run, or the same pairs
// read in another batching (a file of half the rows), gives the same parts.
func TestSplitDeterministic(t *testing.T) {
	in := splitFixture(true)
	run := func(rows []formats.CountRow, seed uint64) map[[2]int32]formats.CountRow {
		dir := t.TempDir()
		counts := filepath.Join(dir, "counts.parquet")
		writeCounts(t, counts, rows, true)
		if _, err := Split(context.Background(), SplitConfig{Counts: counts, TestFraction: 0.5, Seed: seed, Output: dir}); err != nil {
			t.Fatal(err)
		}
		return readCounts(t, filepath.Join(dir, TestFile))
	}
	a, b, c := run(in, 1), run(in, 1), run(in, 2)
	half := run(in[len(in)/2:], 1)
	if len(a) == 0 || len(a) != len(b) {
		t.Fatalf("two runs: %d and %d test pairs", len(a), len(b))
	}
	same := 0
	for k, r := range a {
		if b[k] != r {
			t.Fatalf("pair %v: %v then %v", k, r, b[k])
		}
		if c[k] == r {
			same++
		}
		if h, ok := half[k]; ok && h != r {
			t.Fatalf("pair %v: %v, %v in the half file", k, r, h)
		}
	}
	if same == len(a) {
		t.Error("seeds 1 and 2 split alike")
	}
}

func TestSplitRejects(t *testing.T) {
	dir := t.TempDir()
	counts := filepath.Join(dir, "counts.parquet")
	writeCounts(t, counts, []formats.CountRow{{TargetID: 2, ContextID: 1, NPos: 1}, {TargetID: 1, ContextID: 5, NPos: 2}}, false)
	_, err := Split(context.Background(), SplitConfig{Counts: counts, TestFraction: 0.5, Output: filepath.Join(dir, "out")})
	if err == nil || !strings.Contains(err.Error(), "counts.parquet: row 1") {
		t.Errorf("unsorted counts: %v, want an error naming the file and row 1", err)
	}
	if m, _ := filepath.Glob(filepath.Join(dir, "out", "*")); len(m) > 0 {
		t.Errorf("failed split left %v", m)
	}
	// The counts named train.parquet in the output directory.
	train := filepath.Join(dir, TrainFile)
	writeCounts(t, train, []formats.CountRow{{TargetID: 1, ContextID: 5, NPos: 2}}, false)
	before, _ := os.ReadFile(train)
	_, err = Split(context.Background(), SplitConfig{Counts: train, TestFraction: 0.5, Output: dir})
	if after, _ := os.ReadFile(train); err == nil || !strings.Contains(err.Error(), "is the input") || !bytes.Equal(before, after) {
		t.Errorf("split into its own input: %v", err)
	}
	for _, p := range []float64{0, 1, -0.1, math.NaN()} {
		if err := (SplitConfig{Counts: counts, TestFraction: p, Output: dir}).Validate(); err == nil {
			t.Errorf("test fraction %v accepted", p)
		}
	}
}

// TestThinHugeCounts: counts beyond exact integers (2^53 on) are thinned
// at once, by the binomial's normal law: within [0, x], with the mean and
// variance of Binomial(x, p) (z-scores of the mean and the variance of
// 4000 draws) where float64 can tell them apart, and at the mean, to the
// float, where the deviation is below its precision (up to the largest
// float).
func TestThinHugeCounts(t *testing.T) {
	th := newThinner(5, 0.3)
	for _, x := range []float64{1 << 53, 1e20, 1e300, math.MaxFloat64} {
		const n = 4000
		mean, sd := x*0.3, math.Sqrt(x*0.3*0.7)
		if ulp := math.Nextafter(mean, math.Inf(1)) - mean; sd < 1e3*ulp {
			th.src.Seed(1, 1)
			if test := th.thin(x); math.Abs(test-mean) > 4*ulp || test > x {
				t.Errorf("x = %g: held out %g, want %g to the float", x, test, mean)
			}
			continue
		}
		var sum, sumSq float64
		for i := range n {
			th.src.Seed(uint64(i), 1)
			test := th.thin(x)
			if !(test >= 0 && test <= x) {
				t.Fatalf("x = %g: held out %g", x, test)
			}
			z := (test - mean) / sd
			sum += z
			sumSq += z * z
		}
		m := sum / n
		v := sumSq/n - m*m
		if zm, zv := m*math.Sqrt(n), (v-1)/math.Sqrt(2.0/n); math.Abs(zm) > 4.5 || math.Abs(zv) > 4.5 {
			t.Errorf("x = %g: the held-out z-scores have mean %.3g (z = %.2f) and variance %.3g (z = %.2f)", x, m, zm, v, zv)
		}
	}
}
