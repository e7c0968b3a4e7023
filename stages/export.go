package stages

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"unicode"

	"github.com/pwe-project/pwe/formats"
	"github.com/pwe-project/pwe/internal/atomicfile"
	"github.com/pwe-project/pwe/posterior"
)

// ExportConfig configures pwe export: one point estimate of every vector,
// as word2vec text or in map.parquet's schema.
type ExportConfig struct {
	// Fit is the fit stage's output directory.
	Fit string `json:"-"`
	// Format is "word2vec" (default) or "parquet".
	Format string `json:"format"`
	// Estimate is "mean" (default: posterior means from summary.parquet,
	// with the anchors' context vectors at the values the draws held them
	// at) or "map".
	Estimate string `json:"estimate"`
	// Vectors chooses what word2vec gets per token: "rho" (default),
	// "alpha" or "sum"; the parquet format always holds both kinds.
	Vectors string `json:"vectors"`
	// Output is the file to write; "-" writes word2vec text to Stdout.
	Output string    `json:"-"`
	Stdout io.Writer `json:"-"`
}

// WithDefaults fills unset fields.
func (c ExportConfig) WithDefaults() ExportConfig {
	if c.Format == "" {
		c.Format = "word2vec"
	}
	if c.Estimate == "" {
		c.Estimate = "mean"
	}
	if c.Vectors == "" {
		c.Vectors = "rho"
	}
	return c
}

// Validate reports settings that cannot work.
func (c ExportConfig) Validate() error {
	c = c.WithDefaults()
	switch {
	case c.Fit == "":
		return errors.New("no fit directory: name the directory written by pwe fit")
	case c.Output == "":
		return errors.New("no output: name the file with -o")
	case c.Format != "word2vec" && c.Format != "parquet":
		return fmt.Errorf("format %q, want word2vec or parquet", c.Format)
	case c.Estimate != "mean" && c.Estimate != "map":
		return fmt.Errorf("estimate %q, want mean or map", c.Estimate)
	case c.Format == "parquet" && c.Output == "-":
		return errors.New("the parquet format needs a file, not standard output")
	}
	_, err := posterior.ParseVectorKind(c.Vectors)
	return err
}

// ExportStats describe an export.
type ExportStats struct {
	V int `json:"tokens"`
	D int `json:"dim"`
	// Renamed counts the tokens whose white space word2vec's format made
	// into underscores.
	Renamed int `json:"renamed"`
}

// Export writes the point estimate.
func Export(ctx context.Context, cfg ExportConfig) (ExportStats, error) {
	cfg = cfg.WithDefaults()
	if err := cfg.Validate(); err != nil {
		return ExportStats{}, err
	}
	est, err := LoadEstimate(cfg.Fit, cfg.Estimate)
	if err != nil {
		return ExportStats{}, err
	}
	if err := checkOutputs(est.Sources, cfg.Output); err != nil {
		return ExportStats{}, err
	}
	st := ExportStats{V: est.Params.V, D: est.Params.D}
	if cfg.Format == "parquet" {
		fps, err := fingerprintAll(est.Sources...)
		if err != nil {
			return st, err
		}
		meta := formats.Meta{Schema: formats.SchemaMap, Config: cfg, Inputs: fps}
		return st, writeVectors(cfg.Output, meta, est.Params, est.Tokens, est.Anchors)
	}
	kind, _ := posterior.ParseVectorKind(cfg.Vectors)
	if cfg.Output == "-" {
		st.Renamed, err = WriteWord2Vec(cfg.Stdout, est.Params, kind, est.Tokens)
		return st, err
	}
	f, err := atomicfile.Create(cfg.Output)
	if err != nil {
		return st, err
	}
	defer f.Abort()
	if st.Renamed, err = WriteWord2Vec(f, est.Params, kind, est.Tokens); err != nil {
		return st, fmt.Errorf("%s: %w", cfg.Output, err)
	}
	return st, f.Commit()
}

// Estimate is a point estimate of every vector of a fit.
type Estimate struct {
	Params  *posterior.Params
	Tokens  []string
	Anchors []int // tokens whose context vectors are fixed
	// Sources are the files it was read from.
	Sources []string
}

// LoadEstimate reads the MAP ("map") or the posterior mean ("mean") of a
// fit: the means of summary.parquet for the sampled coordinates and, for
// the anchors' context vectors, which the draws hold fixed, their values
// there (fixedAnchors; map.parquet's where summary.parquet records none).
func LoadEstimate(fit, estimate string) (Estimate, error) {
	mapPath := filepath.Join(fit, MapFile)
	p, tokens, anchors, err := readVectors(mapPath)
	if err != nil {
		return Estimate{}, err
	}
	v, d := p.V, p.D
	est := Estimate{Params: p, Tokens: tokens, Anchors: anchors, Sources: []string{mapPath}}
	isAnchor := make([]bool, v)
	for _, a := range anchors {
		isAnchor[a] = true
	}
	if estimate == "map" {
		return est, nil
	}
	sumPath := filepath.Join(fit, SummaryFile)
	sr, err := formats.Open[formats.SummaryRow](sumPath, formats.SchemaSummary)
	if errors.Is(err, os.ErrNotExist) {
		return Estimate{}, fmt.Errorf("%s is missing: a MAP-only fit has no posterior mean (use the map estimate): %w", sumPath, err)
	}
	if err != nil {
		return Estimate{}, err
	}
	defer sr.Close()
	est.Sources = append(est.Sources, sumPath)
	filled := make([]bool, 2*v*d)
	buf := make([]formats.SummaryRow, 4096)
	for {
		n, err := sr.Read(buf)
		for k, r := range buf[:n] {
			row := sr.Row() - int64(n-k)
			if r.TokenID < 0 || int(r.TokenID) >= v || r.Dim < 0 || int(r.Dim) >= d || r.Param != formats.ParamRho && r.Param != formats.ParamAlpha {
				return Estimate{}, fmt.Errorf("%s: row %d: %s of token %d coordinate %d is not a coordinate of %s", sumPath, row, r.Param, r.TokenID, r.Dim, mapPath)
			}
			if math.IsNaN(r.Mean) || math.IsInf(r.Mean, 0) {
				return Estimate{}, fmt.Errorf("%s: row %d: the mean of %s of token %d coordinate %d is %v", sumPath, row, r.Param, r.TokenID, r.Dim, r.Mean)
			}
			off := int(r.TokenID)*d + int(r.Dim)
			dst, at := est.Params.Rho, off
			if r.Param == formats.ParamAlpha {
				dst, at = est.Params.Alpha, v*d+off
			}
			if filled[at] {
				return Estimate{}, fmt.Errorf("%s: row %d: a second mean of %s of token %d coordinate %d", sumPath, row, r.Param, r.TokenID, r.Dim)
			}
			filled[at] = true
			dst[off] = r.Mean
		}
		if err == io.EOF {
			break
		}
		if err != nil {
			return Estimate{}, err
		}
	}
	if err := fixedAnchors(&est, sr.Meta(), sumPath); err != nil {
		return Estimate{}, err
	}
	for k, ok := range filled {
		tok, param := (k%(v*d))/d, formats.ParamRho
		if k >= v*d {
			param = formats.ParamAlpha
		}
		if !ok && !(param == formats.ParamAlpha && isAnchor[tok]) {
			return Estimate{}, fmt.Errorf("%s: no mean of %s of token %d (%q) coordinate %d", sumPath, param, tok, est.Tokens[tok], k%d)
		}
	}
	return est, nil
}

// fixedAnchors sets the anchors' context vectors to the values the chains
// held fixed, recorded in the fit's pwe.stats: they are the MAP's only when
// the anchors were fixed at the MAP (fits written before the values were
// recorded did that).
func fixedAnchors(est *Estimate, meta formats.Meta, path string) error {
	raw, ok := meta.Stats.(json.RawMessage)
	if !ok {
		return nil
	}
	var st struct {
		Anchors       []int       `json:"anchors"`
		AnchorVectors [][]float32 `json:"anchor_vectors"`
	}
	if err := json.Unmarshal(raw, &st); err != nil {
		return fmt.Errorf("%s: metadata pwe.stats: %w", path, err)
	}
	if st.AnchorVectors == nil {
		return nil
	}
	if !slices.Equal(slices.Sorted(slices.Values(st.Anchors)), slices.Sorted(slices.Values(est.Anchors))) || len(st.AnchorVectors) != len(st.Anchors) {
		return fmt.Errorf("%s: pwe.stats names anchors %v with %d vectors, map.parquet anchors %v", path, st.Anchors, len(st.AnchorVectors), est.Anchors)
	}
	for k, a := range st.Anchors {
		dst := est.Params.Context(a)
		if len(st.AnchorVectors[k]) != len(dst) {
			return fmt.Errorf("%s: pwe.stats: anchor %d has %d coordinates, want %d", path, a, len(st.AnchorVectors[k]), len(dst))
		}
		for j, x := range st.AnchorVectors[k] {
			dst[j] = float64(x)
		}
	}
	return nil
}

// WriteWord2Vec writes the vectors of kind k in word2vec's text format: a
// header "V D", then per line a token and its D values separated by single
// spaces, each value the shortest decimal that reads back as the same
// float32. The format splits lines on spaces, so every white-space
// character inside a token becomes an underscore; it returns how many
// tokens changed, and refuses an empty token or two tokens that become
// the same.
func WriteWord2Vec(w io.Writer, p *posterior.Params, k posterior.VectorKind, tokens []string) (renamed int, err error) {
	bw := bufio.NewWriterSize(w, 1<<16)
	fmt.Fprintf(bw, "%d %d\n", p.V, p.D)
	seen := make(map[string]int, len(tokens))
	vec := make([]float64, p.D)
	var line []byte
	for i, tok := range tokens {
		name := strings.Map(func(r rune) rune {
			if unicode.IsSpace(r) {
				return '_'
			}
			return r
		}, tok)
		if name == "" {
			return renamed, fmt.Errorf("token %d is empty, which word2vec's format cannot hold", i)
		}
		if j, dup := seen[name]; dup {
			return renamed, fmt.Errorf("tokens %q and %q are both %q once their spaces are underscores; word2vec's format cannot tell them apart", tokens[j], tok, name)
		}
		seen[name] = i
		if name != tok {
			renamed++
		}
		line = append(line[:0], name...)
		for _, x := range k.Vector(vec, p, i) {
			line = append(line, ' ')
			line = strconv.AppendFloat(line, float64(float32(x)), 'g', -1, 32)
		}
		line = append(line, '\n')
		if _, err := bw.Write(line); err != nil {
			return renamed, err
		}
	}
	return renamed, bw.Flush()
}
