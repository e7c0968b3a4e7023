package stages

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"gonum.org/v1/gonum/mat"

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

// starts returns the chains' starting points: base, overwritten for every
// token of tokens that chain c mod (previous chains)'s last draw holds by
// that draw carried into base's frame (see alignFrame). The anchors'
// context vectors are reset to base's by Gibbs.
func (l *lastDraws) starts(tokens []string, base *posterior.Params, chains int) []*posterior.Params {
	out := make([]*posterior.Params, chains)
	dim := base.D
	for c := range out {
		prev := l.last[c%len(l.last)]
		var shared []int
		var rho, alpha, baseRho []float64
		for i, tok := range tokens {
			v := prev[tok]
			if v == nil {
				continue
			}
			shared = append(shared, i)
			rho = appendFloat64(rho, v[0])
			alpha = appendFloat64(alpha, v[1])
			baseRho = append(baseRho, base.Target(i)...)
		}
		alignFrame(rho, alpha, baseRho, dim)
		p := base.Clone()
		for k, i := range shared {
			copy(p.Target(i), rho[k*dim:(k+1)*dim])
			copy(p.Context(i), alpha[k*dim:(k+1)*dim])
		}
		out[c] = p
	}
	return out
}

// alignFrame carries a previous fit's vectors (rows of rho and alpha, n x
// dim, row-major) into the frame of this fit's start, in place. The
// likelihood sees only the logits rho_i . alpha_j, so (rho A, alpha A^-T)
// is the same state for any invertible A; the fixed anchors of this fit
// single out one frame, which a previous fit with other anchors, or whose
// MAP converged to another frame, does not share. A is the least-squares
// fit of rho A to baseRho, this start's target vectors for the same
// tokens; the logits of the previous state are unchanged. With fewer
// tokens than dimensions, or an A too ill-conditioned to invert
// accurately, the vectors are left as they are.
func alignFrame(rho, alpha, baseRho []float64, dim int) {
	n := len(rho) / dim
	if n < dim {
		return
	}
	var a mat.Dense
	if err := a.Solve(mat.NewDense(n, dim, rho), mat.NewDense(n, dim, baseRho)); err != nil {
		return
	}
	var inv mat.Dense
	if err := inv.Inverse(&a); err != nil {
		return
	}
	var out mat.Dense
	out.Mul(mat.NewDense(n, dim, rho), &a)
	copy(rho, out.RawMatrix().Data)
	out.Reset()
	// alpha A^-T: rows of alpha times the transposed inverse.
	out.Mul(mat.NewDense(n, dim, alpha), inv.T())
	copy(alpha, out.RawMatrix().Data)
}

func appendFloat64(dst []float64, src []float32) []float64 {
	for _, x := range src {
		dst = append(dst, float64(x))
	}
	return dst
}
