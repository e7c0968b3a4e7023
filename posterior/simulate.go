package posterior

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"

	"github.com/pwe-project/pwe/formats"
)

// PairLaw is the law of the (target, context) pair of one simulated
// observation.
type PairLaw int

const (
	// PairsUniform draws (i, j) uniformly over the V (V - 1) ordered pairs
	// of distinct tokens.
	PairsUniform PairLaw = iota
	// PairsZipf draws target and context independently from the
	// Zipf-Mandelbrot law over ranks, P(r) proportional to (r + b)^-a for
	// r = 1..V, token id r - 1: low ids are frequent, as in a vocabulary.
	PairsZipf
)

// ParsePairLaw parses "uniform" or "zipf".
func ParsePairLaw(s string) (PairLaw, error) {
	switch s {
	case "uniform":
		return PairsUniform, nil
	case "zipf":
		return PairsZipf, nil
	}
	return 0, fmt.Errorf("posterior: pair law %q, want uniform or zipf", s)
}

func (l PairLaw) String() string {
	switch l {
	case PairsUniform:
		return "uniform"
	case PairsZipf:
		return "zipf"
	}
	return fmt.Sprintf("PairLaw(%d)", int(l))
}

// Default Zipf-Mandelbrot exponent a and shift b of SimConfig.
const (
	DefaultZipfA = 1
	DefaultZipfB = 2.7
)

// SimConfig describes a simulated data set, as in the reference paper:
// true vectors with independent Normal(0, SNR^2 / D) coordinates, then N
// observations, each a pair drawn from the pair law and labelled positive
// with probability sigmoid(rho_i . alpha_j).
type SimConfig struct {
	V, D int // vocabulary size (at least 2) and dimension; required
	N    int // observations; required
	// Pairs is the pair law; zero is PairsUniform.
	Pairs PairLaw
	// ZipfA and ZipfB are a and b of PairsZipf; ZipfA zero selects the
	// defaults (DefaultZipfA, DefaultZipfB) for both.
	ZipfA, ZipfB float64
	// SNR scales the true vectors (default 1): with D coordinates of
	// variance SNR^2 / D, the logits have standard deviation about SNR^2.
	SNR  float64
	Seed uint64
}

func (c SimConfig) withDefaults() SimConfig {
	if c.ZipfA == 0 {
		c.ZipfA, c.ZipfB = DefaultZipfA, DefaultZipfB
	}
	if c.SNR == 0 {
		c.SNR = 1
	}
	return c
}

// Validate reports the first invalid field, after defaults are applied.
func (c SimConfig) Validate() error {
	c = c.withDefaults()
	switch {
	case c.V < 2 || c.V > math.MaxInt32:
		return fmt.Errorf("posterior: simulated vocabulary size %d, want 2..%d", c.V, math.MaxInt32)
	case c.D < 1:
		return fmt.Errorf("posterior: simulated dimension %d, want at least 1", c.D)
	case c.N < 1:
		return fmt.Errorf("posterior: %d simulated observations, want at least 1", c.N)
	case c.Pairs != PairsUniform && c.Pairs != PairsZipf:
		return fmt.Errorf("posterior: unknown pair law %d", c.Pairs)
	case !(c.ZipfA > 0) || math.IsInf(c.ZipfA, 0):
		return fmt.Errorf("posterior: Zipf exponent a %v, want a positive number", c.ZipfA)
	case !(c.ZipfB > -1) || math.IsInf(c.ZipfB, 0):
		return fmt.Errorf("posterior: Zipf shift b %v, want a number above -1", c.ZipfB)
	case !(c.SNR > 0) || math.IsInf(c.SNR, 0):
		return fmt.Errorf("posterior: signal-to-noise ratio %v, want a positive number", c.SNR)
	}
	return nil
}

// The truth and the observations use separate streams, so data sets with
// the same seed and different pair laws or sizes share their true vectors.
const (
	simStreamTruth = 1
	simStreamPairs = 2
)

// Simulate draws the true vectors and the observations of cfg and returns
// them with the observations aggregated into count rows, sorted by
// (target, context) and unique, as in counts.parquet. The result depends
// only on cfg.
func Simulate(cfg SimConfig) (*Params, []formats.CountRow, error) {
	return SimulateContext(context.Background(), cfg)
}

// SimulateContext is Simulate, which stops with ctx's error when ctx is
// done.
func SimulateContext(ctx context.Context, cfg SimConfig) (*Params, []formats.CountRow, error) {
	if err := cfg.Validate(); err != nil {
		return nil, nil, err
	}
	cfg = cfg.withDefaults()
	r := rand.New(rand.NewPCG(cfg.Seed, simStreamTruth))
	truth := NewParams(cfg.V, cfg.D)
	sd := cfg.SNR / math.Sqrt(float64(cfg.D))
	for _, x := range [][]float64{truth.Rho, truth.Alpha} {
		for k := range x {
			x[k] = sd * r.NormFloat64()
		}
	}
	rows, err := simulateCounts(ctx, truth, cfg)
	return truth, rows, err
}

// SimulateCounts draws cfg.N observations from cfg's pair law (cfg.V and
// cfg.D must match truth), labels them under truth and aggregates them into
// sorted, unique count rows. Held-out data for a simulated truth are a
// second call with another seed.
func SimulateCounts(truth *Params, cfg SimConfig) ([]formats.CountRow, error) {
	return simulateCounts(context.Background(), truth, cfg)
}

// simulateCounts is SimulateCounts, which stops with ctx's error when ctx
// is done: a simulation of 10^10 observations or more runs for minutes.
func simulateCounts(ctx context.Context, truth *Params, cfg SimConfig) ([]formats.CountRow, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	cfg = cfg.withDefaults()
	if truth.V != cfg.V || truth.D != cfg.D {
		return nil, fmt.Errorf("posterior: truth has V=%d, D=%d, config V=%d, D=%d", truth.V, truth.D, cfg.V, cfg.D)
	}
	r := rand.New(rand.NewPCG(cfg.Seed, simStreamPairs))
	draw := pairSampler(cfg, r)
	agg := newPairAggregator(cfg.V, cfg.N)
	for k := range cfg.N {
		if k%(1<<16) == 0 {
			if err := ctx.Err(); err != nil {
				return nil, err
			}
		}
		i, j := draw()
		agg.add(i, j, r.Float64() < sigmoid(truth.Logit(i, j)))
	}
	return agg.rows(), nil
}

// pairSampler returns a function drawing one pair of cfg's law from r.
func pairSampler(cfg SimConfig, r *rand.Rand) func() (int, int) {
	v := cfg.V
	if cfg.Pairs == PairsUniform {
		return func() (int, int) {
			i, j := r.IntN(v), r.IntN(v-1)
			if j >= i {
				j++
			}
			return i, j
		}
	}
	cdf := make([]float64, v)
	var acc float64
	for k := range v {
		acc += math.Pow(float64(k+1)+cfg.ZipfB, -cfg.ZipfA)
		cdf[k] = acc
	}
	pick := func() int {
		k, _ := slices.BinarySearch(cdf, r.Float64()*acc)
		return min(k, v-1)
	}
	return func() (int, int) {
		i := pick()
		return i, pick()
	}
}

// denseLimit bounds the vocabulary squared below which observations are
// aggregated in V x V arrays (at most 64 MiB) rather than a map.
const denseLimit = 1 << 22

// pairAggregator sums labelled observations per pair.
type pairAggregator struct {
	v        int
	pos, neg []float64              // dense: index i*V + j
	sparse   map[uint64]*[2]float64 // otherwise
}

func newPairAggregator(v, n int) *pairAggregator {
	a := &pairAggregator{v: v}
	if v*v <= denseLimit {
		a.pos, a.neg = make([]float64, v*v), make([]float64, v*v)
	} else {
		a.sparse = make(map[uint64]*[2]float64, min(n, 1<<20))
	}
	return a
}

func (a *pairAggregator) add(i, j int, positive bool) {
	k := i*a.v + j
	if a.sparse == nil {
		if positive {
			a.pos[k]++
		} else {
			a.neg[k]++
		}
		return
	}
	c := a.sparse[uint64(k)]
	if c == nil {
		c = new([2]float64)
		a.sparse[uint64(k)] = c
	}
	if positive {
		c[0]++
	} else {
		c[1]++
	}
}

func (a *pairAggregator) rows() []formats.CountRow {
	row := func(k int, pos, neg float64) formats.CountRow {
		return formats.CountRow{TargetID: int32(k / a.v), ContextID: int32(k % a.v), NPos: pos, NNeg: neg}
	}
	var rows []formats.CountRow
	if a.sparse == nil {
		for k := range a.pos {
			if a.pos[k]+a.neg[k] > 0 {
				rows = append(rows, row(k, a.pos[k], a.neg[k]))
			}
		}
		return rows
	}
	keys := make([]uint64, 0, len(a.sparse))
	for k := range a.sparse {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	rows = make([]formats.CountRow, 0, len(keys))
	for _, k := range keys {
		c := a.sparse[k]
		rows = append(rows, row(int(k), c[0], c[1]))
	}
	return rows
}

func sigmoid(x float64) float64 { return 1 / (1 + math.Exp(-x)) }

// NewData builds a Data from count rows sorted by (target, context) and
// unique, such as Simulate returns.
func NewData(v int, rows []formats.CountRow) (*Data, error) {
	b := NewDataBuilder(v)
	if err := b.Add(rows); err != nil {
		return nil, err
	}
	return b.Build(), nil
}
