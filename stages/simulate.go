package stages

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"

	"github.com/pwe-project/pwe/formats"
	"github.com/pwe-project/pwe/posterior"
)

// Output file names of the simulate stage inside its output directory; the
// vocabulary and counts have the names the other stages expect.
const (
	VocabFile  = "vocab.parquet"
	CountsFile = "counts.parquet"
	TruthFile  = "truth.parquet"
)

// SimulateConfig configures the simulate stage: a data set drawn from the
// model, as in the reference paper's simulation, with its true vectors.
type SimulateConfig struct {
	// VocabSize (V, at least 2), Dim (D) and Observations (N) are required.
	VocabSize    int `json:"vocab_size" yaml:"vocab_size"`
	Dim          int `json:"dim" yaml:"dim"`
	Observations int `json:"observations" yaml:"observations"`
	// Pairs is "uniform" (default: uniform over pairs of distinct tokens)
	// or "zipf" (target and context independently Zipf-Mandelbrot over
	// ranks, P(r) proportional to (r + ZipfB)^-ZipfA).
	Pairs string `json:"pairs" yaml:"pairs"`
	// ZipfA and ZipfB default to 1 and 2.7 when ZipfA is zero.
	ZipfA float64 `json:"zipf_a" yaml:"zipf_a"`
	ZipfB float64 `json:"zipf_b" yaml:"zipf_b"`
	// SNR scales the true coordinates, Normal(0, SNR^2 / D) (default 1).
	SNR  float64 `json:"snr" yaml:"snr"`
	Seed uint64  `json:"seed" yaml:"seed"`

	// Output is the directory that receives vocab.parquet, counts.parquet
	// and truth.parquet.
	Output string `json:"-" yaml:"-"`
}

// WithDefaults fills unset fields.
func (c SimulateConfig) WithDefaults() SimulateConfig {
	if c.Pairs == "" {
		c.Pairs = "uniform"
	}
	if c.ZipfA == 0 {
		c.ZipfA, c.ZipfB = posterior.DefaultZipfA, posterior.DefaultZipfB
	}
	if c.SNR == 0 {
		c.SNR = 1
	}
	return c
}

func (c SimulateConfig) sim() (posterior.SimConfig, error) {
	law, err := posterior.ParsePairLaw(c.Pairs)
	if err != nil {
		return posterior.SimConfig{}, err
	}
	return posterior.SimConfig{
		V: c.VocabSize, D: c.Dim, N: c.Observations, Pairs: law,
		ZipfA: c.ZipfA, ZipfB: c.ZipfB, SNR: c.SNR, Seed: c.Seed,
	}, nil
}

// Validate reports settings that cannot work.
func (c SimulateConfig) Validate() error {
	c = c.WithDefaults()
	if c.Output == "" {
		return errors.New("no output: name the output directory with -o")
	}
	s, err := c.sim()
	if err != nil {
		return err
	}
	return s.Validate()
}

// SimulateStats summarise a simulated data set.
type SimulateStats struct {
	Pairs        int     `json:"unique_pairs"`
	Observations int     `json:"observations"`
	Positives    float64 `json:"positives"`
}

// Simulate runs the simulate stage. The vocabulary's tokens are "w0000",
// "w0001", ... in id order, which for Zipf pairs is the order of rank, and
// their counts are the observations they take part in, as target or as
// context. truth.parquet has map.parquet's schema with no anchors.
func Simulate(ctx context.Context, cfg SimulateConfig) (SimulateStats, error) {
	cfg = cfg.WithDefaults()
	if err := cfg.Validate(); err != nil {
		return SimulateStats{}, err
	}
	sc, _ := cfg.sim()
	truth, rows, err := posterior.SimulateContext(ctx, sc)
	if err != nil {
		return SimulateStats{}, err
	}
	if err := ctx.Err(); err != nil {
		return SimulateStats{}, err
	}
	st := SimulateStats{Pairs: len(rows), Observations: cfg.Observations}
	occurs := make([]int64, cfg.VocabSize)
	for _, r := range rows {
		n := int64(r.NPos + r.NNeg)
		occurs[r.TargetID] += n
		occurs[r.ContextID] += n
		st.Positives += r.NPos
	}
	meta := func(schema string) formats.Meta {
		return formats.Meta{Schema: schema, Config: cfg, Stats: st}
	}

	tokens := syntheticTokens(cfg.VocabSize)
	vocab := make([]formats.VocabRow, cfg.VocabSize)
	for i, tok := range tokens {
		vocab[i] = formats.VocabRow{TokenID: int32(i), Token: tok, Count: occurs[i]}
	}
	if err := formats.WriteVocab(filepath.Join(cfg.Output, VocabFile), vocab, meta(formats.SchemaVocab)); err != nil {
		return st, err
	}
	w, err := formats.CreateCounts(filepath.Join(cfg.Output, CountsFile), meta(formats.SchemaCounts), false)
	if err != nil {
		return st, err
	}
	defer w.Abort()
	for lo := 0; lo < len(rows); lo += formats.RowGroupRows {
		if err := w.Write(rows[lo:min(lo+formats.RowGroupRows, len(rows))]); err != nil {
			return st, err
		}
	}
	if err := w.Close(); err != nil {
		return st, err
	}
	return st, writeVectors(filepath.Join(cfg.Output, TruthFile), meta(formats.SchemaMap), truth, tokens, nil)
}

// syntheticTokens returns "w0000", "w0001", ..., zero-padded to at least
// four digits so that they sort in id order.
func syntheticTokens(v int) []string {
	width := max(4, len(fmt.Sprint(v-1)))
	tokens := make([]string, v)
	for i := range tokens {
		tokens[i] = fmt.Sprintf("w%0*d", width, i)
	}
	return tokens
}
