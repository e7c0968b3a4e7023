package posterior

import (
	"fmt"
	"math"
	"math/rand/v2"
	"time"

	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/blas64"
	"gonum.org/v1/gonum/lapack/lapack64"

	"github.com/pwe-project/pwe/posterior/polyagamma"
)

// workspace is one worker's scratch for conditional draws: the gathered
// covariates, their PG-weighted copy, the D x D precision and vectors. It
// is sized once for the largest token, so steady-state sweeps do not
// allocate.
type workspace struct {
	dim   int
	a     []float64 // gathered covariates, m x dim
	g     []float64 // sqrt(omega) * a, m x dim
	psi   []float64 // linear predictors, m
	omega []float64 // PG draws, m
	prec  []float64 // precision, dim x dim (upper triangle)
	b     []float64 // sum kappa * covariate, dim
	y     []float64 // solution, dim
	pcg   *rand.PCG
	rng   *rand.Rand
	pg    polyagamma.Sampler

	profile bool
	phases  PhaseTimes
}

// PhaseTimes accumulates the time spent in each phase of the conditional
// draws, summed over all workers (so over threads, not wall time).
type PhaseTimes struct {
	Gather    time.Duration // copying the covariates and forming b
	PG        time.Duration // linear predictors and Pólya-Gamma draws
	Precision time.Duration // weighting and Dsyrk
	Cholesky  time.Duration // Dpotrf, the two triangular solves, normal draws
}

// Total returns the sum of the phases.
func (t PhaseTimes) Total() time.Duration { return t.Gather + t.PG + t.Precision + t.Cholesky }

func (t *PhaseTimes) add(u PhaseTimes) {
	t.Gather += u.Gather
	t.PG += u.PG
	t.Precision += u.Precision
	t.Cholesky += u.Cholesky
}

func newWorkspace(dim, maxDegree int, profile bool) *workspace {
	m := max(maxDegree, 1)
	pcg := rand.NewPCG(0, 0)
	return &workspace{
		dim:     dim,
		a:       make([]float64, m*dim),
		g:       make([]float64, m*dim),
		psi:     make([]float64, m),
		omega:   make([]float64, m),
		prec:    make([]float64, dim*dim),
		b:       make([]float64, dim),
		y:       make([]float64, dim),
		pcg:     pcg,
		rng:     rand.New(pcg),
		pg:      polyagamma.Sampler{Src: pcg},
		profile: profile,
	}
}

// clock returns the time if profiling, for the phase timers.
func (w *workspace) clock() time.Time {
	if w.profile {
		return time.Now()
	}
	return time.Time{}
}

// tick adds the time since *t to *acc and restarts *t.
func (w *workspace) tick(acc *time.Duration, t *time.Time) {
	if w.profile {
		now := time.Now()
		*acc += now.Sub(*t)
		*t = now
	}
}

// draw replaces x by draws from the conditional of a Bayesian logistic
// regression with the covariates other[idx[r]], n[r] trials,
// kappa[r] = successes - n[r]/2 and a Normal(0, I/prec0) prior, using the
// Pólya-Gamma augmentation: inner times, omega_r ~ PG(n_r, x . c_r), then
// x ~ N(P^-1 b, P^-1) with P = sum omega_r c_r c_r^T + prec0 I and
// b = sum kappa_r c_r. The random stream must have been seeded by the
// caller.
func (w *workspace) draw(x []float64, idx []int32, n, kappa, other []float64, prec0 float64, inner int) error {
	dim := w.dim
	m := len(idx)
	if m == 0 {
		sd := 1 / math.Sqrt(prec0)
		for k := range x {
			x[k] = sd * w.rng.NormFloat64()
		}
		return nil
	}
	t := w.clock()
	a := w.a[:m*dim]
	for r, j := range idx {
		copy(a[r*dim:(r+1)*dim], other[int(j)*dim:(int(j)+1)*dim])
	}
	A := blas64.General{Rows: m, Cols: dim, Stride: dim, Data: a}
	G := blas64.General{Rows: m, Cols: dim, Stride: dim, Data: w.g[:m*dim]}
	psi := blas64.Vector{N: m, Inc: 1, Data: w.psi[:m]}
	b := blas64.Vector{N: dim, Inc: 1, Data: w.b}
	blas64.Gemv(blas.Trans, 1, A, blas64.Vector{N: m, Inc: 1, Data: kappa}, 0, b)
	w.tick(&w.phases.Gather, &t)
	P := blas64.Symmetric{Uplo: blas.Upper, N: dim, Stride: dim, Data: w.prec}
	y := blas64.Vector{N: dim, Inc: 1, Data: w.y}
	omega := w.omega[:m]
	for range inner {
		blas64.Gemv(blas.NoTrans, 1, A, blas64.Vector{N: dim, Inc: 1, Data: x}, 0, psi)
		w.pg.Fill(omega, n, psi.Data)
		w.tick(&w.phases.PG, &t)

		for r, om := range omega {
			s := math.Sqrt(om)
			row := a[r*dim : (r+1)*dim]
			grow := G.Data[r*dim : (r+1)*dim]
			for k, v := range row {
				grow[k] = s * v
			}
		}
		blas64.Syrk(blas.Trans, 1, G, 0, P)
		for k := range dim {
			P.Data[k*dim+k] += prec0
		}
		w.tick(&w.phases.Precision, &t)

		U, ok := lapack64.Potrf(P)
		if !ok {
			return fmt.Errorf("posterior: conditional precision not positive definite (non-finite vectors or counts?)")
		}
		// P = U^T U: solve U^T y = b, add z, solve U x = y, so that
		// x = U^-1 (U^-T b + z) ~ N(P^-1 b, P^-1).
		copy(y.Data, b.Data)
		blas64.Trsv(blas.Trans, U, y)
		for k := range y.Data {
			y.Data[k] += w.rng.NormFloat64()
		}
		blas64.Trsv(blas.NoTrans, U, y)
		copy(x, y.Data)
		w.tick(&w.phases.Cholesky, &t)
	}
	return nil
}
