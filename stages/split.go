package stages

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"path/filepath"

	"gonum.org/v1/gonum/stat/distuv"

	"github.com/pwe-project/pwe/formats"
)

// Output file names of the split stage inside its output directory.
const (
	TrainFile = "train.parquet"
	TestFile  = "test.parquet"
)

// SplitConfig configures the split stage: counts.parquet divided into
// training and held-out counts by observation.
type SplitConfig struct {
	// Counts is the input counts.parquet.
	Counts string `json:"-" yaml:"-"`
	// TestFraction is the probability p that one observation is held out,
	// strictly between 0 and 1.
	TestFraction float64 `json:"test_fraction" yaml:"test_fraction"`
	Seed         uint64  `json:"seed" yaml:"seed"`
	// Output is the directory that receives train.parquet and test.parquet.
	Output string `json:"-" yaml:"-"`
}

// Validate reports settings that cannot work.
func (c SplitConfig) Validate() error {
	switch {
	case c.Counts == "":
		return errors.New("no counts: name the counts.parquet to split")
	case c.Output == "":
		return errors.New("no output: name the output directory with -o")
	case !(c.TestFraction > 0 && c.TestFraction < 1):
		return fmt.Errorf("test fraction %v, want a number strictly between 0 and 1", c.TestFraction)
	}
	return nil
}

// SplitStats summarise a split: rows and observations (sums of n_pos +
// n_neg) of the input and of each part.
type SplitStats struct {
	Rows      int64   `json:"rows"`
	TrainRows int64   `json:"train_rows"`
	TestRows  int64   `json:"test_rows"`
	Total     float64 `json:"observations"`
	Test      float64 `json:"test_observations"`
}

// Split runs the split stage. Each observation goes to the test part with
// probability TestFraction, independently: n_pos and n_neg of every pair
// are thinned binomially. A count with a fractional part (weighted
// windows, expected negatives) is split as its whole units plus one
// fractional unit that goes, whole, to one part with the same probability,
// so every part keeps the expected share and train + test equals the input
// exactly. The random stream of a pair depends only on the seed and the
// pair's ids, so the split is reproducible however the file is batched.
// Pairs whose part is empty are left out of that part's file.
func Split(ctx context.Context, cfg SplitConfig) (SplitStats, error) {
	if err := cfg.Validate(); err != nil {
		return SplitStats{}, err
	}
	if err := checkOutputs([]string{cfg.Counts}, filepath.Join(cfg.Output, TrainFile), filepath.Join(cfg.Output, TestFile)); err != nil {
		return SplitStats{}, err
	}
	r, err := formats.Open[formats.CountRow](cfg.Counts, formats.SchemaCounts)
	if err != nil {
		return SplitStats{}, err
	}
	defer r.Close()
	fps, err := fingerprintAll(cfg.Counts)
	if err != nil {
		return SplitStats{}, err
	}
	var st SplitStats
	meta := formats.Meta{Config: cfg, Inputs: fps}
	buf := make([]formats.CountRow, 1<<14)
	var train, test *formats.CountsWriter
	defer func() {
		if train != nil {
			train.Abort()
			test.Abort()
		}
	}()
	var trainRows, testRows []formats.CountRow
	var prev formats.CountRow
	th := newThinner(cfg.Seed, cfg.TestFraction)
	for {
		if err := ctx.Err(); err != nil {
			return st, err
		}
		n, err := r.Read(buf)
		if err == io.EOF {
			break
		}
		if err != nil {
			return st, err
		}
		if train == nil {
			// The encoding is chosen from the first batch: fractional
			// counts are seldom mixed with whole ones in one file.
			many := false
			for _, row := range buf[:n] {
				many = many || row.NPos != math.Trunc(row.NPos) || row.NNeg != math.Trunc(row.NNeg)
			}
			if train, err = formats.CreateCounts(filepath.Join(cfg.Output, TrainFile), meta, many); err != nil {
				return st, err
			}
			if test, err = formats.CreateCounts(filepath.Join(cfg.Output, TestFile), meta, many); err != nil {
				train.Abort()
				train = nil
				return st, err
			}
		}
		trainRows, testRows = trainRows[:0], testRows[:0]
		for _, row := range buf[:n] {
			var p *formats.CountRow
			if st.Rows > 0 {
				p = &prev
			}
			if err := formats.CheckCountRow(row, p, math.MaxInt32); err != nil {
				return st, fmt.Errorf("%s: row %d: %w", cfg.Counts, st.Rows, err)
			}
			st.Rows++
			prev = row
			a, b := th.split(row)
			st.Total += row.NPos + row.NNeg
			st.Test += b.NPos + b.NNeg
			if a.NPos+a.NNeg > 0 {
				trainRows = append(trainRows, a)
			}
			if b.NPos+b.NNeg > 0 {
				testRows = append(testRows, b)
			}
		}
		st.TrainRows += int64(len(trainRows))
		st.TestRows += int64(len(testRows))
		if err := train.Write(trainRows); err != nil {
			return st, err
		}
		if err := test.Write(testRows); err != nil {
			return st, err
		}
	}
	if train == nil {
		return st, fmt.Errorf("%s: no rows to split", cfg.Counts)
	}
	for _, w := range []*formats.CountsWriter{train, test} {
		if err := w.SetStats(st); err != nil {
			return st, err
		}
		if err := w.Close(); err != nil {
			return st, err
		}
	}
	return st, nil
}

// thinner splits count rows with a random stream per pair.
type thinner struct {
	seed uint64
	p    float64
	src  *rand.PCG
	rnd  *rand.Rand
}

func newThinner(seed uint64, p float64) *thinner {
	src := rand.NewPCG(0, 0)
	return &thinner{seed: splitmix64(seed), p: p, src: src, rnd: rand.New(src)}
}

// split returns the training and held-out parts of row.
func (t *thinner) split(row formats.CountRow) (train, test formats.CountRow) {
	t.src.Seed(t.seed, splitmix64(uint64(uint32(row.TargetID))<<32|uint64(uint32(row.ContextID))))
	train, test = row, row
	test.NPos = t.thin(row.NPos)
	test.NNeg = t.thin(row.NNeg)
	train.NPos -= test.NPos
	train.NNeg -= test.NNeg
	return train, test
}

// thin returns the held-out part of a count x: Binomial(floor(x), p) whole
// units, plus the fractional part of x with probability p. Both x - test
// and test are then exact in float64 (for x < 2^53), so they add up to x.
// From 2^53 on, where a count is no longer exact, the binomial is drawn by
// its normal approximation, whose error in distribution (of the order of
// 1/sqrt(x p (1-p)), below 1e-7 there) is less than the count's rounding:
// gonum's draw never returned for counts near 1e300.
func (t *thinner) thin(x float64) float64 {
	whole := math.Floor(x)
	var test float64
	switch {
	case whole >= 1<<53:
		z := t.rnd.NormFloat64()
		test = min(max(math.Round(whole*t.p+z*math.Sqrt(whole*t.p*(1-t.p))), 0), whole)
	case whole > 0:
		test = distuv.Binomial{N: whole, P: t.p, Src: t.src}.Rand()
	}
	if frac := x - whole; frac > 0 && t.rnd.Float64() < t.p {
		test += frac
	}
	return test
}

// splitmix64 is the finaliser of Steele, Lea and Flood's SplitMix64, which
// spreads the bits of the seed and of the pair ids over a PCG seed.
func splitmix64(x uint64) uint64 {
	x += 0x9e3779b97f4a7c15
	x = (x ^ x>>30) * 0xbf58476d1ce4e5b9
	x = (x ^ x>>27) * 0x94d049bb133111eb
	return x ^ x>>31
}
