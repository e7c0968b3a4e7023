package stages

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"slices"

	"github.com/pwe-project/pwe/formats"
	"github.com/pwe-project/pwe/posterior"
)

// EvaluationFile is the evaluate stage's output name inside the fit
// directory.
const EvaluationFile = "evaluation.parquet"

// EvaluateConfig configures the evaluate stage: a fit's MAP and draws
// measured against true vectors (a simulation's truth.parquet) and
// held-out counts (split's test.parquet).
type EvaluateConfig struct {
	// Fit is the fit stage's output directory: map.parquet, and
	// draws.parquet unless the fit was MAP only.
	Fit string `json:"-" yaml:"-"`
	// Truth is truth.parquet (map.parquet's schema); HeldOut is a counts
	// file of held-out observations. At least one is required.
	Truth   string `json:"-" yaml:"-"`
	HeldOut string `json:"-" yaml:"-"`
	// Output is the evaluation file (default Fit/evaluation.parquet).
	Output string `json:"-" yaml:"-"`
}

// WithDefaults fills unset fields.
func (c EvaluateConfig) WithDefaults() EvaluateConfig {
	if c.Output == "" && c.Fit != "" {
		c.Output = filepath.Join(c.Fit, EvaluationFile)
	}
	return c
}

// Validate reports settings that cannot work.
func (c EvaluateConfig) Validate() error {
	switch {
	case c.Fit == "":
		return errors.New("no fit: name the fit's output directory")
	case c.Truth == "" && c.HeldOut == "":
		return errors.New("nothing to evaluate against: name --truth, --heldout or both")
	case c.Output == StdioPath:
		return errors.New("-o -: the evaluation is a Parquet file and needs a file name (its table is printed on standard output)")
	}
	return nil
}

// Evaluate runs the evaluate stage and returns its figures, in the order
// of posterior.Evaluator.Metrics. It reads draws.parquet once, one draw at
// a time; its memory is that of posterior.Evaluator (with a truth, about
// (8 chains + 16) V^2 bytes). Without draws.parquet only the MAP is
// measured; draws saved for some tokens only are refused, as the metrics
// cover every pair.
func Evaluate(ctx context.Context, cfg EvaluateConfig) ([]posterior.Metric, error) {
	cfg = cfg.WithDefaults()
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	mapPath := filepath.Join(cfg.Fit, MapFile)
	drawsPath := filepath.Join(cfg.Fit, DrawsFile)
	if err := checkOutputs([]string{mapPath, drawsPath, cfg.Truth, cfg.HeldOut}, cfg.Output); err != nil {
		return nil, err
	}
	m, tokens, _, err := readVectors(mapPath)
	if err != nil {
		return nil, err
	}
	var truth *posterior.Params
	if cfg.Truth != "" {
		var truthTokens []string
		if truth, truthTokens, _, err = readVectors(cfg.Truth); err != nil {
			return nil, err
		}
		if truth.V != m.V || truth.D != m.D {
			return nil, fmt.Errorf("%s: V=%d, D=%d, but %s has V=%d, D=%d", cfg.Truth, truth.V, truth.D, mapPath, m.V, m.D)
		}
		for i, tok := range truthTokens {
			if tok != tokens[i] {
				return nil, fmt.Errorf("%s: token %d is %q, but %s has %q: the truth belongs to another vocabulary", cfg.Truth, i, tok, mapPath, tokens[i])
			}
		}
	}
	var test *posterior.Data
	if cfg.HeldOut != "" {
		if test, err = loadCounts(cfg.HeldOut, m.V); err != nil {
			return nil, err
		}
	}
	ev := posterior.NewEvaluator(m.V, m.D, truth, test)
	inputs := []string{mapPath, cfg.Truth, cfg.HeldOut}
	if _, err := os.Stat(drawsPath); err == nil {
		inputs = append(inputs, drawsPath)
		if err := evaluateDraws(ctx, drawsPath, m, ev); err != nil {
			return nil, err
		}
	} else if !errors.Is(err, fs.ErrNotExist) {
		return nil, err
	}
	metrics := ev.Metrics(m)
	fps, err := fingerprintAll(inputs...)
	if err != nil {
		return nil, err
	}
	rows := make([]formats.EvaluationRow, len(metrics))
	for k, x := range metrics {
		rows[k] = formats.EvaluationRow{Metric: x.Name, Estimator: x.Estimator, Value: x.Value, N: x.N, Draws: int64(x.Draws)}
	}
	meta := formats.Meta{Schema: formats.SchemaEvaluation, Config: cfg, Inputs: fps}
	return metrics, formats.WriteAll(cfg.Output, rows, meta)
}

// evaluateDraws feeds every draw of draws.parquet to ev, after checking
// that they hold every token of the MAP in id order.
func evaluateDraws(ctx context.Context, path string, m *posterior.Params, ev *posterior.Evaluator) error {
	ds, err := openDraws(path)
	if err != nil {
		return err
	}
	defer ds.Close()
	if len(ds.ids) != m.V || ds.dim != m.D {
		return fmt.Errorf("%s: draws of %d tokens in %d dimensions, the MAP has %d tokens in %d: evaluation needs every token's draws (fit with --save-draws all)",
			path, len(ds.ids), ds.dim, m.V, m.D)
	}
	for i, id := range ds.ids {
		if int(id) != i {
			return fmt.Errorf("%s: the draws' token %d has id %d: want ids 0..%d in order", path, i, id, m.V-1)
		}
	}
	for ds.Next() {
		if err := ctx.Err(); err != nil {
			return err
		}
		if err := ev.Draw(ds.Chain(), ds.Draw(), ds.Params(), posterior.DrawStats{}); err != nil {
			return fmt.Errorf("%s: %w", path, err)
		}
	}
	return ds.Err()
}

// readVectors reads a file of map.parquet's schema (the MAP, a
// simulation's truth) into Params, with the tokens by id and the anchors
// (the tokens whose context vector is marked anchor) ascending. Every token
// must have one target and one context vector, all of one length.
func readVectors(path string) (*posterior.Params, []string, []int, error) {
	rows, _, err := formats.ReadAll[formats.VectorRow](path, formats.SchemaMap)
	if err != nil {
		return nil, nil, nil, err
	}
	if len(rows) == 0 || len(rows)%2 != 0 || len(rows[0].Vector) == 0 {
		return nil, nil, nil, fmt.Errorf("%s: %d rows, want a target and a context vector of positive length per token", path, len(rows))
	}
	v, dim := len(rows)/2, len(rows[0].Vector)
	p := posterior.NewParams(v, dim)
	tokens := make([]string, v)
	seen := make([]bool, 2*v)
	var anchors []int
	for k, r := range rows {
		side := 0
		switch r.Param {
		case formats.ParamRho:
		case formats.ParamAlpha:
			side = 1
		default:
			return nil, nil, nil, fmt.Errorf("%s: row %d: param %q, want rho or alpha", path, k, r.Param)
		}
		id := int(r.TokenID)
		switch {
		case id < 0 || id >= v:
			return nil, nil, nil, fmt.Errorf("%s: row %d: token_id %d outside 0..%d", path, k, id, v-1)
		case len(r.Vector) != dim:
			return nil, nil, nil, fmt.Errorf("%s: row %d: vector of length %d, want %d", path, k, len(r.Vector), dim)
		case seen[side*v+id]:
			return nil, nil, nil, fmt.Errorf("%s: row %d: second %s vector of token %d", path, k, r.Param, id)
		case tokens[id] != "" && tokens[id] != r.Token:
			return nil, nil, nil, fmt.Errorf("%s: row %d: token %d is %q here and %q elsewhere", path, k, id, r.Token, tokens[id])
		}
		seen[side*v+id] = true
		tokens[id] = r.Token
		dst := p.Target(id)
		if side == 1 {
			dst = p.Context(id)
			if r.Anchor {
				anchors = append(anchors, id)
			}
		}
		for d, x := range r.Vector {
			if math.IsNaN(float64(x)) || math.IsInf(float64(x), 0) {
				return nil, nil, nil, fmt.Errorf("%s: row %d: %s of token %d (%q) has %v at coordinate %d", path, k, r.Param, id, r.Token, x, d)
			}
			dst[d] = float64(x)
		}
	}
	slices.Sort(anchors)
	return p, tokens, anchors, nil
}
