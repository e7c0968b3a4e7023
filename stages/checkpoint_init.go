package stages

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/pwe-project/pwe/formats"
	"github.com/pwe-project/pwe/formats/input"
	"github.com/pwe-project/pwe/posterior"
)

// ErrNoDraws is returned by --init-from when the directory holds no
// draws.parquet.
var ErrNoDraws = errors.New("stages: no draws to start from")

// lastDraws holds the last draw of every chain of a previous fit.
type lastDraws struct {
	fp input.Fingerprint
	// last[c] maps token to (rho, alpha) at the last draw of chain c.
	last []map[string]*[2][]float32
}

// readLastDraws reads dir/draws.parquet (either layout) and keeps each
// chain's last draw.
func readLastDraws(dir string, dim int) (*lastDraws, error) {
	path := filepath.Join(dir, DrawsFile)
	if _, err := os.Stat(path); errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("init-from %s: %w: %s does not exist (was that fit run with --save-draws none, or not finished?)", dir, ErrNoDraws, path)
	}
	fp, err := input.FingerprintFile(path)
	if err != nil {
		return nil, err
	}
	r, err := formats.OpenDraws(path)
	if errors.Is(err, formats.ErrNoDraws) {
		return nil, fmt.Errorf("init-from %s: %w: %s has no rows", dir, ErrNoDraws, path)
	}
	if err != nil {
		return nil, err
	}
	defer r.Close()
	if r.Dim() != dim {
		return nil, fmt.Errorf("%s: row 0: vectors of dimension %d, this fit has dimension %d", path, r.Dim(), dim)
	}
	// The reader checks that chains come in order from 0, so the last
	// draw of chain c is the one read before chain c+1 starts.
	var last [][]float32
	for r.Next() {
		if r.Chain() == len(last) {
			last = append(last, nil)
		}
		last[r.Chain()] = append(last[r.Chain()][:0], r.Values()...)
	}
	if err := r.Err(); err != nil {
		return nil, err
	}
	l := &lastDraws{fp: fp}
	v := len(r.Tokens())
	for _, vals := range last {
		tokens := make(map[string]*[2][]float32, v)
		for k, tok := range r.Tokens() {
			tokens[tok] = &[2][]float32{vals[k*dim : (k+1)*dim], vals[(v+k)*dim : (v+k+1)*dim]}
		}
		l.last = append(l.last, tokens)
	}
	return l, nil
}

// starts returns the chains' starting points: the MAP m, overwritten by
// chain c mod (previous chains)'s last draw for every token of tokens it
// holds. The anchors' context vectors are reset to the MAP's by Gibbs.
func (l *lastDraws) starts(tokens []string, m *posterior.Params, chains int) []*posterior.Params {
	out := make([]*posterior.Params, chains)
	for c := range out {
		prev := l.last[c%len(l.last)]
		p := m.Clone()
		for i, tok := range tokens {
			v := prev[tok]
			if v == nil {
				continue
			}
			toFloat64(p.Target(i), v[0])
			toFloat64(p.Context(i), v[1])
		}
		out[c] = p
	}
	return out
}

func toFloat64(dst []float64, src []float32) {
	for k, x := range src {
		dst[k] = float64(x)
	}
}
