package stages

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"

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
	// last[k] maps token to (rho, alpha) at the last draw of the k-th
	// chain in ascending chain id; either vector may be nil.
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
	type chainLast struct {
		draw   int32
		tokens map[string]*[2][]float32
	}
	byChain := map[int16]*chainLast{}
	add := func(chain int16, draw int32, param, token string, k int, vec []float32, row int64) error {
		cl := byChain[chain]
		if cl == nil || draw > cl.draw {
			cl = &chainLast{draw: draw, tokens: map[string]*[2][]float32{}}
			byChain[chain] = cl
		} else if draw < cl.draw {
			return nil
		}
		side := 0
		if param == formats.ParamAlpha {
			side = 1
		} else if param != formats.ParamRho {
			return fmt.Errorf("%s: row %d: param %q, want rho or alpha", path, row, param)
		}
		v := cl.tokens[token]
		if v == nil {
			v = &[2][]float32{}
			cl.tokens[token] = v
		}
		if k < 0 {
			v[side] = append([]float32(nil), vec...)
			return nil
		}
		if v[side] == nil {
			v[side] = make([]float32, dim)
		}
		v[side][k] = vec[0]
		return nil
	}
	if err := scanDraws(path, dim, add); err != nil {
		return nil, err
	}
	if len(byChain) == 0 {
		return nil, fmt.Errorf("init-from %s: %w: %s has no rows", dir, ErrNoDraws, path)
	}
	ids := make([]int, 0, len(byChain))
	for c := range byChain {
		ids = append(ids, int(c))
	}
	sort.Ints(ids)
	l := &lastDraws{fp: fp}
	for _, c := range ids {
		l.last = append(l.last, byChain[int16(c)].tokens)
	}
	return l, nil
}

// scanDraws passes every row of a draws file to add: the whole vector with
// k = -1 in the vector layout, coordinate k in the long layout.
func scanDraws(path string, dim int, add func(chain int16, draw int32, param, token string, k int, vec []float32, row int64) error) error {
	wrongDim := func(row int64, got int) error {
		return fmt.Errorf("%s: row %d: vectors of dimension %d, this fit has dimension %d", path, row, got, dim)
	}
	r, err := formats.Open[formats.DrawRow](path, formats.SchemaDraws)
	if err == nil {
		defer r.Close()
		buf := make([]formats.DrawRow, 4096)
		var row int64
		for {
			n, err := r.Read(buf)
			for _, d := range buf[:n] {
				if len(d.Vector) != dim {
					return wrongDim(row, len(d.Vector))
				}
				if err := add(d.Chain, d.Draw, d.Param, d.Token, -1, d.Vector, row); err != nil {
					return err
				}
				row++
			}
			if err == io.EOF {
				return nil
			}
			if err != nil {
				return err
			}
		}
	}
	if !errors.Is(err, formats.ErrNotPwe) {
		return err
	}
	lr, lerr := formats.Open[formats.DrawLongRow](path, formats.SchemaDrawsLong)
	if lerr != nil {
		return err
	}
	defer lr.Close()
	buf := make([]formats.DrawLongRow, 4096)
	var row int64
	for {
		n, err := lr.Read(buf)
		for _, d := range buf[:n] {
			if int(d.Dim) < 0 || int(d.Dim) >= dim {
				return wrongDim(row, int(d.Dim)+1)
			}
			if err := add(d.Chain, d.Draw, d.Param, d.Token, int(d.Dim), []float32{d.Value}, row); err != nil {
				return err
			}
			row++
		}
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return err
		}
	}
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
			if v[0] != nil {
				toFloat64(p.Target(i), v[0])
			}
			if v[1] != nil {
				toFloat64(p.Context(i), v[1])
			}
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
