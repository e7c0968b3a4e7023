package counts

import (
	"errors"
	"fmt"
	"math"
	"strings"

	"github.com/pwe-project/pwe/internal/bytesize"
)

// Weighting says how much a positive pair counts as a function of the
// distance d = |p - q| between its tokens.
type Weighting int

const (
	// Uniform counts every pair in the window once.
	Uniform Weighting = iota
	// Linear weights a pair by max(0, 1 - (d-1)/W): the expected count under
	// word2vec's randomly shrunk window.
	Linear
	// Harmonic weights a pair by 1/d, as GloVe does.
	Harmonic
)

var weightingNames = [...]string{Uniform: "uniform", Linear: "linear", Harmonic: "harmonic"}

func (w Weighting) String() string {
	if w >= 0 && int(w) < len(weightingNames) {
		return weightingNames[w]
	}
	return fmt.Sprintf("Weighting(%d)", int(w))
}

// ParseWeighting reads "uniform", "linear" or "harmonic"; "" means uniform.
func ParseWeighting(s string) (Weighting, error) {
	if s == "" {
		return Uniform, nil
	}
	for w, name := range weightingNames {
		if strings.EqualFold(s, name) {
			return Weighting(w), nil
		}
	}
	return 0, fmt.Errorf("counts: weighting %q, want uniform, linear or harmonic", s)
}

// NegMode says how negative counts are produced.
type NegMode int

const (
	// Sampled draws K negatives per positive pair (an exact multinomial per
	// target).
	Sampled NegMode = iota
	// Expected writes the expected negative counts K * W_i * P(j) for every
	// context j: V rows per target.
	Expected
)

var negModeNames = [...]string{Sampled: "sampled", Expected: "expected"}

func (m NegMode) String() string {
	if m >= 0 && int(m) < len(negModeNames) {
		return negModeNames[m]
	}
	return fmt.Sprintf("NegMode(%d)", int(m))
}

// ParseNegMode reads "sampled" or "expected"; "" means sampled.
func ParseNegMode(s string) (NegMode, error) {
	if s == "" {
		return Sampled, nil
	}
	for m, name := range negModeNames {
		if strings.EqualFold(s, name) {
			return NegMode(m), nil
		}
	}
	return 0, fmt.Errorf("counts: negatives mode %q, want sampled or expected", s)
}

// Defaults and limits.
const (
	DefaultWindow    = 5
	DefaultNegatives = 1
	DefaultNegPower  = 0.75
	DefaultMemory    = 1 << 30
	// MinMemory is the smallest budget accepted; budgets this small spill
	// constantly and are meant for tests.
	MinMemory = 256 << 10
	// MaxWindow bounds the window; the hot loop costs W steps per token.
	MaxWindow = 1000
	// MaxWorkers bounds the workers: the merge's partitions, 1024, are
	// its units of work.
	MaxWorkers = partitionsParallel
	// MaxExpectedVocab is the largest vocabulary for which Expected
	// negatives are written without ForceExpected.
	MaxExpectedVocab = 10000
	// maxScale bounds the integer scale of weighted counts (lcm(1..W) for
	// harmonic windows), leaving 2^36 of uint64 headroom for the counts.
	maxScale = 1 << 28
)

// ErrEmptyVocabulary is returned by New for a vocabulary without tokens.
var ErrEmptyVocabulary = errors.New("counts: empty vocabulary")

// Config holds the counting settings. Zero values mean the defaults noted;
// WithDefaults fills them in.
type Config struct {
	// Window is the half-width W of the symmetric window: tokens at
	// distance 1..W form pairs. Default 5.
	Window int
	// Weighting of a pair by its distance. Default Uniform.
	Weighting Weighting
	// Subsample is word2vec's threshold t for discarding frequent tokens
	// before windowing; 0 keeps every token.
	Subsample float64
	// Negatives is K, the negatives drawn per positive pair; 0 means none.
	// A negative value means "not set" and WithDefaults makes it 1 (an int
	// cannot tell an explicit 0 from an unset field).
	Negatives int
	// NegPower is the power applied to the vocabulary counts to form the
	// negative distribution: default (nil) 0.75; 1 is the plain unigram,
	// 0 the uniform law over the tokens seen.
	NegPower *float64
	// NegMode chooses sampled or expected negatives. Default Sampled.
	NegMode NegMode
	// ForceExpected allows Expected negatives for vocabularies larger than
	// MaxExpectedVocab.
	ForceExpected bool
	// Memory is the budget in bytes for every table, buffer and merge
	// buffer the counter allocates. Default 1 GiB.
	Memory int64
	// Workers is the most accumulators that run concurrently; Finish
	// merges with as many goroutines. Default 1. A budget too small for
	// them all serves fewer, and there are at most MaxWorkers
	// (Counter.Workers).
	Workers int
	// WorkerBytes is the memory each worker holds outside the counter,
	// such as its input in flight. It comes off Memory for every worker but
	// the first, whose share the caller counts with its own: the budget is
	// the same for one worker whatever it is.
	WorkerBytes int64
	// TempDir holds the spill files; "" means os.TempDir().
	TempDir string
	// Seed keys every random choice.
	Seed uint64
}

// WithDefaults returns c with unset fields set to their defaults.
func (c Config) WithDefaults() Config {
	if c.Window == 0 {
		c.Window = DefaultWindow
	}
	if c.Negatives < 0 {
		c.Negatives = DefaultNegatives
	}
	if c.NegPower == nil {
		p := DefaultNegPower
		c.NegPower = &p
	}
	if c.Memory == 0 {
		c.Memory = DefaultMemory
	}
	if c.Workers == 0 {
		c.Workers = 1
	}
	return c
}

// Validate reports settings that cannot work; unset fields count as their
// defaults. Checks that need the vocabulary are made by New.
func (c Config) Validate() error {
	c = c.WithDefaults()
	switch {
	case c.Window < 1 || c.Window > MaxWindow:
		return fmt.Errorf("counts: window %d, want 1..%d", c.Window, MaxWindow)
	case c.Weighting < Uniform || c.Weighting > Harmonic:
		return fmt.Errorf("counts: unknown weighting %d", int(c.Weighting))
	case c.NegMode < Sampled || c.NegMode > Expected:
		return fmt.Errorf("counts: unknown negatives mode %d", int(c.NegMode))
	case !(c.Subsample >= 0) || math.IsInf(c.Subsample, 0):
		return fmt.Errorf("counts: subsample threshold %v, want a finite number >= 0 (0 = off)", c.Subsample)
	case !(*c.NegPower >= 0) || math.IsInf(*c.NegPower, 0):
		return fmt.Errorf("counts: negative power %v, want a finite number >= 0 (0: uniform)", *c.NegPower)
	case c.Memory < MinMemory:
		return fmt.Errorf("counts: memory budget %s, want at least %s", bytesize.Format(c.Memory), bytesize.Format(MinMemory))
	case c.WorkerBytes < 0:
		return fmt.Errorf("counts: %d bytes held per worker, want at least 0", c.WorkerBytes)
	case c.Workers < 1:
		return fmt.Errorf("counts: %d workers, want at least 1", c.Workers)
	}
	if _, err := windowScale(c.Window, c.Weighting); err != nil {
		return err
	}
	return nil
}

// windowScale returns the integer weight of a pair at each distance
// (index 1..W) and the common scale they are divided by, so that sums are
// exact integers and independent of the order of accumulation.
func windowScale(w int, wt Weighting) ([]uint64, error) {
	weights := make([]uint64, w+1)
	switch wt {
	case Uniform:
		for d := 1; d <= w; d++ {
			weights[d] = 1
		}
		weights[0] = 1
	case Linear:
		// 1 - (d-1)/W = (W - d + 1)/W.
		for d := 1; d <= w; d++ {
			weights[d] = uint64(w - d + 1)
		}
		weights[0] = uint64(w)
	case Harmonic:
		l := uint64(1)
		for d := 2; d <= w; d++ {
			l = l / gcd(l, uint64(d)) * uint64(d)
			if l > maxScale {
				return nil, fmt.Errorf("counts: harmonic window %d needs the integer scale lcm(1..%d) > 2^28, "+
					"which leaves too little overflow headroom; use a window of at most 22", w, w)
			}
		}
		for d := 1; d <= w; d++ {
			weights[d] = l / uint64(d)
		}
		weights[0] = l
	}
	return weights, nil
}

func gcd(a, b uint64) uint64 {
	for b != 0 {
		a, b = b, a%b
	}
	return a
}
