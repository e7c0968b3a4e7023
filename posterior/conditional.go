package posterior

import (
	"fmt"
	"math"
	"math/rand/v2"
	"time"

	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/blas64"

	"github.com/pwe-project/pwe/posterior/polyagamma"
)

// workspace is one worker's scratch for conditional draws: the linear
// predictors and gathered PG draws of the largest token, one panel of
// PG-weighted covariates (if the backend wants one at this dimension), the
// D x D precision and vectors. It is sized once, so
// steady-state sweeps do not allocate.
type workspace struct {
	dim   int
	dense dense
	panel []float64           // sqrt(omega_r) c_r for up to panelRows pairs, row-major
	rows  int                 // panel capacity in rows
	psi   []float64           // linear predictors, m
	omega []float64           // PG draws gathered in context order on the alpha side, m
	prec  []float64           // precision, dim x dim (upper triangle)
	b     []float64           // sum kappa * covariate, dim
	y     []float64           // solution, dim
	src   *polyagamma.Xoshiro // the token's random stream, seeded by the caller
	rng   *rand.Rand
	pg    polyagamma.Sampler
	// relax is the overrelaxation of the Gaussian step (GibbsConfig.Overrelax);
	// 0 draws independently of the current value.
	relax float64

	// With wantLogLik set, draw stores in logLik the log-likelihood of the
	// pairs at x as it found it (on the side that draws omega), from the
	// linear predictors it computes anyway: the sampler folds a kept draw's
	// log-likelihood into the next sweep this way.
	wantLogLik bool
	logLik     float64

	profile bool
	phases  PhaseTimes
}

// PhaseTimes accumulates the time spent in each phase of the conditional
// draws, summed over all workers (so over threads, not wall time).
type PhaseTimes struct {
	Gather    time.Duration // reading the covariates: b and the first linear predictors
	PG        time.Duration // Pólya-Gamma draws (and the linear predictors of later inner steps)
	Precision time.Duration // forming P: weighting the covariates and the syrk calls, or smallPrecision
	Cholesky  time.Duration // potrf, the two triangular solves, the normal draws
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
	return newWorkspaceWith(defaultDense, dim, maxDegree, profile)
}

func newWorkspaceWith(be dense, dim, maxDegree int, profile bool) *workspace {
	m := max(maxDegree, 1)
	rows := min(m, be.panelRows(dim))
	src := polyagamma.NewXoshiro(0, 0)
	return &workspace{
		dim:     dim,
		dense:   be,
		panel:   make([]float64, rows*dim),
		rows:    rows,
		psi:     make([]float64, m),
		omega:   make([]float64, m),
		prec:    make([]float64, dim*dim),
		b:       make([]float64, dim),
		y:       make([]float64, dim),
		src:     src,
		rng:     rand.New(src),
		pg:      polyagamma.Sampler{Src: src},
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

// draw replaces x by a draw from the conditional of a Bayesian logistic
// regression with the covariates other[idx[r]], n[r] trials,
// kappa[r] = successes - n[r]/2 and a Normal(0, I/prec0) prior, using the
// Pólya-Gamma augmentation, whose variables omega (len(idx)) it reads and
// writes: inner times, omega_r ~ PG(n_r, x . c_r), then
// x ~ N(P^-1 b, P^-1) (overrelaxed by w.relax) with
// P = sum omega_r c_r c_r^T + prec0 I and b = sum kappa_r c_r. With given,
// the first step keeps omega as passed instead of drawing it, which is
// how the alpha side reuses the rho side's draws. On return omega holds
// the draws that went with x's last step, so that with x they are a draw
// of the augmented conditional. The random stream must have been seeded
// by the caller.
func (w *workspace) draw(x []float64, idx []int32, n, kappa, other []float64, prec0 float64, omega []float64, given bool, inner int) error {
	dim := w.dim
	m := len(idx)
	w.logLik = 0
	if m == 0 {
		sd := 1 / math.Sqrt(prec0)
		for k := range x {
			x[k] = sd * w.rng.NormFloat64()
		}
		return nil
	}
	t := w.clock()
	b := w.b
	clear(b)
	psi := w.psi[:m]
	omega = omega[:m]
	// One pass over the covariates forms b and, when the first step draws
	// omega, the linear predictors: the rows come from all over other,
	// and reading them costs more than the arithmetic.
	if given {
		gatherB(dim, idx, kappa, other, b)
	} else {
		gatherPsiB(x, idx, kappa, other, psi, b)
		if w.wantLogLik {
			w.logLik = pairsLogLik(psi, n, kappa)
		}
	}
	w.tick(&w.phases.Gather, &t)
	P := blas64.Triangular{Uplo: blas.Upper, Diag: blas.NonUnit, N: dim, Stride: dim, Data: w.prec}
	y := blas64.Vector{N: dim, Inc: 1, Data: w.y}
	for step := range inner {
		if step > 0 {
			for r, j := range idx {
				psi[r] = dot4(x, other[int(j)*dim:(int(j)+1)*dim])
			}
		}
		if step > 0 || !given {
			w.pg.Fill(omega, n, psi)
			w.tick(&w.phases.PG, &t)
		}

		if !w.dense.factor(w, idx, omega, other, prec0, &t) {
			return fmt.Errorf("posterior: conditional precision not positive definite (non-finite vectors or counts?)")
		}
		// P = U^T U: solve U^T y = b, add z, solve U x = y, so that
		// x = U^-1 (U^-T b + z) ~ N(P^-1 b, P^-1).
		copy(y.Data, b)
		blas64.Trsv(blas.Trans, P, y)
		// Overrelaxed (Adler 1981): x' = mu + relax (x - mu) + sqrt(1 -
		// relax^2) U^-1 z with mu = P^-1 b leaves N(mu, P^-1) invariant;
		// relax 0 is the plain draw mu + U^-1 z.
		sd := math.Sqrt(1 - w.relax*w.relax)
		for k := range y.Data {
			y.Data[k] = (1-w.relax)*y.Data[k] + sd*w.rng.NormFloat64()
		}
		blas64.Trsv(blas.NoTrans, P, y)
		for k := range x {
			x[k] = w.relax*x[k] + y.Data[k]
		}
		w.tick(&w.phases.Cholesky, &t)
	}
	return nil
}

// accumulate sets w.prec's upper triangle to sum_r omega_r c_r c_r^T +
// shift I, c_r = other[idx[r]], one panel of weighted covariates per syrk
// call.
func (w *workspace) accumulate(idx []int32, omega, other []float64, shift float64, syrk func(n, k int, g []float64, beta float64, c []float64)) {
	dim := w.dim
	beta := 0.0
	for lo := 0; lo < len(idx); lo += w.rows {
		hi := min(len(idx), lo+w.rows)
		for r := lo; r < hi; r++ {
			s := math.Sqrt(omega[r])
			j := int(idx[r])
			dst := w.panel[(r-lo)*dim : (r-lo+1)*dim]
			for k, v := range other[j*dim : (j+1)*dim] {
				dst[k] = s * v
			}
		}
		syrk(dim, hi-lo, w.panel, beta, w.prec)
		beta = 1
	}
	for k := range dim {
		w.prec[k*dim+k] += shift
	}
}

// dot4 returns x . y for len(y) >= len(x). Four partial sums break the
// chain of dependent additions, which otherwise sets the pace of the
// linear predictors (one dot product per pair and inner step).
func dot4(x, y []float64) float64 {
	y = y[:len(x)]
	var s0, s1, s2, s3 float64
	k := 0
	for ; k+4 <= len(x); k += 4 {
		s0 += x[k] * y[k]
		s1 += x[k+1] * y[k+1]
		s2 += x[k+2] * y[k+2]
		s3 += x[k+3] * y[k+3]
	}
	for ; k < len(x); k++ {
		s0 += x[k] * y[k]
	}
	return (s0 + s1) + (s2 + s3)
}

// gatherB adds sum_r kappa_r c_r, c_r = other[idx[r]], to b. Four rows
// share each pass over b, so that each load and store of b serves four
// multiply-adds rather than one: with one row per pass the adds to each
// b[k] form a chain through memory.
func gatherB(dim int, idx []int32, kappa, other, b []float64) {
	b = b[:dim]
	kappa = kappa[:len(idx)]
	r := 0
	for ; r+4 <= len(idx); r += 4 {
		c0, c1 := covariate(other, idx[r], dim), covariate(other, idx[r+1], dim)
		c2, c3 := covariate(other, idx[r+2], dim), covariate(other, idx[r+3], dim)
		k0, k1, k2, k3 := kappa[r], kappa[r+1], kappa[r+2], kappa[r+3]
		c0, c1, c2, c3 = c0[:len(b)], c1[:len(b)], c2[:len(b)], c3[:len(b)]
		for k := range b {
			b[k] += (k0*c0[k] + k1*c1[k]) + (k2*c2[k] + k3*c3[k])
		}
	}
	for ; r < len(idx); r++ {
		axpy(kappa[r], covariate(other, idx[r], dim), b)
	}
}

// gatherPsiB sets psi[r] = x . c_r and adds sum_r kappa_r c_r to b,
// c_r = other[idx[r]], four rows per pass as gatherB, whose four dot
// products are independent chains of additions.
func gatherPsiB(x []float64, idx []int32, kappa, other, psi, b []float64) {
	dim := len(x)
	b = b[:dim]
	kappa, psi = kappa[:len(idx)], psi[:len(idx)]
	r := 0
	for ; r+4 <= len(idx); r += 4 {
		c0, c1 := covariate(other, idx[r], dim), covariate(other, idx[r+1], dim)
		c2, c3 := covariate(other, idx[r+2], dim), covariate(other, idx[r+3], dim)
		k0, k1, k2, k3 := kappa[r], kappa[r+1], kappa[r+2], kappa[r+3]
		c0, c1, c2, c3 = c0[:len(b)], c1[:len(b)], c2[:len(b)], c3[:len(b)]
		var s0, s1, s2, s3 float64
		for k, xk := range x {
			e0, e1, e2, e3 := c0[k], c1[k], c2[k], c3[k]
			s0 += xk * e0
			s1 += xk * e1
			s2 += xk * e2
			s3 += xk * e3
			b[k] += (k0*e0 + k1*e1) + (k2*e2 + k3*e3)
		}
		psi[r], psi[r+1], psi[r+2], psi[r+3] = s0, s1, s2, s3
	}
	for ; r < len(idx); r++ {
		c := covariate(other, idx[r], dim)
		psi[r] = dot(x, c)
		axpy(kappa[r], c, b)
	}
}
