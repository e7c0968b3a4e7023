package posterior

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"runtime"
	"time"

	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/blas64"
	"gonum.org/v1/gonum/lapack"
	"gonum.org/v1/gonum/lapack/lapack64"
	"gonum.org/v1/gonum/mat"
)

// LaplaceMode selects how the precision of the Laplace approximation is
// factorised.
type LaplaceMode int

const (
	// LaplaceAuto is LaplaceDense up to AutoDenseLaplace free coordinates
	// and LaplacePerToken above.
	LaplaceAuto LaplaceMode = iota
	// LaplaceDense factorises the negative Hessian over all free
	// coordinates: draws keep the posterior correlations between vectors.
	LaplaceDense
	// LaplacePerToken, the reference paper's variant for large
	// vocabularies, takes each free vector's D x D block of the negative
	// Hessian (its conditional given every other vector at the MAP) and
	// draws the vectors independently. It understates the marginal
	// variances wherever vectors are correlated a posteriori.
	LaplacePerToken
)

// ParseLaplaceMode reads "auto", "dense" or "per-token".
func ParseLaplaceMode(s string) (LaplaceMode, error) {
	switch s {
	case "auto":
		return LaplaceAuto, nil
	case "dense":
		return LaplaceDense, nil
	case "per-token":
		return LaplacePerToken, nil
	}
	return 0, fmt.Errorf("posterior: laplace %q: want auto, dense or per-token", s)
}

// String returns the form ParseLaplaceMode reads.
func (m LaplaceMode) String() string {
	switch m {
	case LaplaceDense:
		return "dense"
	case LaplacePerToken:
		return "per-token"
	}
	return "auto"
}

// Size limits of the dense Laplace approximation, in free coordinates
// N = (2V - D) D (V D without anchors). The precision takes 8 N^2 bytes
// and its Cholesky factorisation N^3/3 flops on one core: at the limit
// 800 MB and about 70 CPU-seconds with gonum (4.6 GFLOP/s measured at
// N = 4000), and the eigen-decomposition that replaces a failed
// factorisation needs as much again in memory and several times the time.
const (
	MaxDenseLaplace  = 10000
	AutoDenseLaplace = 4000
)

// ErrLaplaceTooLarge is returned (wrapped, with advice) when a dense
// Laplace approximation is asked for above MaxDenseLaplace free
// coordinates.
var ErrLaplaceTooLarge = errors.New("posterior: too many free coordinates for a dense Laplace approximation")

// CheckDenseLaplace returns an error wrapping ErrLaplaceTooLarge, with
// advice, when the dense Laplace approximation of v tokens in dim
// dimensions with the given number of anchors has more than
// MaxDenseLaplace free coordinates.
func CheckDenseLaplace(v, dim, anchors int) error {
	free := (2*v - anchors) * dim
	if free <= MaxDenseLaplace {
		return nil
	}
	return fmt.Errorf("%w: %d free coordinates ((2V - anchors) D with V = %d, D = %d), the limit is %d (%.1f GB of precision matrix);"+
		" use the per-token approximation (--laplace per-token), Gibbs sampling (--method gibbs), or a smaller vocabulary or dimension",
		ErrLaplaceTooLarge, free, v, dim, MaxDenseLaplace, 8*float64(free)*float64(free)/1e9)
}

// LaplaceConfig configures Laplace. Zero fields take the defaults given.
type LaplaceConfig struct {
	Mode    LaplaceMode
	Chains  int     // groups of draws, numbered like Gibbs chains; default 4
	Draws   int     // independent draws per chain; default 500
	PriorSD float64 // prior standard deviation s; default 1
	Threads int     // goroutines; default GOMAXPROCS
	Seed    uint64
	Anchors AnchorRule
	// Memory bounds the draws held at once (each 16 V D bytes; default
	// 256 MiB; dense mode holds as much again of standard normals): they
	// are made in batches that fit, and in per-token mode every batch
	// recomputes the D x D blocks rather than keeping all of them.
	Memory int64
}

func (c LaplaceConfig) withDefaults() LaplaceConfig {
	if c.Chains == 0 {
		c.Chains = 4
	}
	if c.Draws == 0 {
		c.Draws = 500
	}
	if c.PriorSD == 0 {
		c.PriorSD = 1
	}
	if c.Threads == 0 {
		c.Threads = runtime.GOMAXPROCS(0)
	}
	if c.Memory == 0 {
		c.Memory = 256 << 20
	}
	return c
}

// Validate reports the first invalid field, after defaults are applied.
func (c LaplaceConfig) Validate() error {
	c = c.withDefaults()
	switch {
	case c.Mode < LaplaceAuto || c.Mode > LaplacePerToken:
		return fmt.Errorf("posterior: unknown Laplace mode %d", c.Mode)
	case c.Chains < 1 || c.Chains > 1<<15:
		return fmt.Errorf("posterior: chains %d outside 1..32768", c.Chains)
	case c.Draws < 0 || int64(c.Draws) >= 1<<32:
		return fmt.Errorf("posterior: draws %d outside 0..2^32-1", c.Draws)
	case !(c.PriorSD > 0) || math.IsInf(c.PriorSD, 0):
		return fmt.Errorf("posterior: prior sd %v must be positive and finite", c.PriorSD)
	case c.Threads < 0:
		return fmt.Errorf("posterior: threads %d is negative", c.Threads)
	case c.Memory < 0:
		return fmt.Errorf("posterior: memory %d is negative", c.Memory)
	}
	return nil
}

// LaplaceResult reports a finished Laplace approximation.
type LaplaceResult struct {
	Anchors []int       // anchor token ids, ascending (nil without anchors)
	Mode    LaplaceMode // LaplaceDense or LaplacePerToken, as resolved
	Free    int         // free coordinates
	// Clipped counts the eigenvalues raised to the prior precision 1/s^2
	// because the precision (dense) or a token's block (per-token) was
	// not numerically positive definite; MinEigen is the smallest
	// eigenvalue found there (NaN when nothing was clipped). Clipping
	// means the MAP is not a strict maximum of the conditional posterior
	// (not converged, or not identified): the draws are then finite but
	// the approximation is poor in those directions.
	Clipped       int
	MinEigen      float64
	FactorSeconds float64 // assembling and factorising the dense precision
	Seconds       float64
}

// Random streams of the Laplace draws: one per draw (dense) or per draw
// and vector (per-token), apart from those of MAP and Gibbs.
const (
	sideLaplaceRho   = 4
	sideLaplaceAlpha = 5
	sideLaplaceDense = 6
)

// Laplace draws from the Laplace approximation of the posterior identified
// by cfg.Anchors: the Gaussian centred at the MAP values m whose precision
// is the negative Hessian of the log posterior in the free coordinates,
// the anchors' context vectors being fixed at m's. m maximises the
// unanchored posterior, so it is a stationary point of the anchored one
// too. Every draw goes to sink as chain c = 0..Chains-1, draw 0..Draws-1
// (all draws are independent), with its log posterior and log-likelihood;
// GroupAccept is NaN. The draws are the same for every Threads.
//
// The negative Hessian has, per pair (i, j) with x = rho_i . alpha_j,
// w = n sig(x) sig(-x) and r = n sig(x) - n_pos, the blocks
//
//	rho_i rho_i:     w alpha_j alpha_j^T     (plus I/s^2 once per vector)
//	alpha_j alpha_j: w rho_i rho_i^T
//	rho_i alpha_j:   w alpha_j rho_i^T + r I
//
// where r I comes from differentiating the score's factor alpha_j in
// alpha_j. With the factor P = U^T U, a draw is m + U^-1 z, z ~ N(0, I).
// A factorisation that fails or whose reciprocal condition number is
// below N eps is replaced by an eigen-decomposition with every eigenvalue
// under 1/s^2 raised to 1/s^2 (a direction the log posterior curves less
// in than the prior alone is given the prior's curvature), reported in
// LaplaceResult.Clipped.
func Laplace(ctx context.Context, d *Data, m *Params, cfg LaplaceConfig, sink Sink) (LaplaceResult, error) {
	if err := cfg.Validate(); err != nil {
		return LaplaceResult{}, err
	}
	cfg = cfg.withDefaults()
	if d.Pairs() == 0 {
		return LaplaceResult{}, ErrNoPairs
	}
	if m == nil {
		return LaplaceResult{}, fmt.Errorf("%w: the Laplace approximation is centred at the MAP", ErrAnchorsRequired)
	}
	if m.V != d.v {
		return LaplaceResult{}, fmt.Errorf("posterior: MAP has %d tokens, the counts %d", m.V, d.v)
	}
	began := time.Now()
	var anchors []int
	if cfg.Anchors.Kind != AnchorNone {
		var err error
		if anchors, err = ChooseAnchors(d, m, cfg.Anchors); err != nil {
			return LaplaceResult{}, err
		}
	}
	lay := newFreeLayout(d.v, m.D, anchors)
	res := LaplaceResult{Anchors: anchors, Mode: cfg.Mode, Free: lay.n, MinEigen: math.NaN()}
	if res.Mode == LaplaceAuto {
		res.Mode = LaplacePerToken
		if lay.n <= AutoDenseLaplace {
			res.Mode = LaplaceDense
		}
	}
	if res.Mode == LaplaceDense {
		if err := CheckDenseLaplace(d.v, m.D, len(anchors)); err != nil {
			return res, err
		}
	}

	pl := startPool(ctx, cfg.Threads, nil)
	defer pl.stop()
	prec0 := 1 / (cfg.PriorSD * cfg.PriorSD)
	l := &laplaceRun{d: d, m: m, cfg: cfg, lay: lay, prec0: prec0, pool: pl}
	if res.Mode == LaplaceDense {
		t := time.Now()
		h := densePrecision(pl, d, m, lay, prec0, cfg.Threads)
		if err := ctx.Err(); err != nil {
			return res, err
		}
		f, err := factorPrecision(lay.n, h, prec0)
		if err != nil {
			return res, fmt.Errorf("posterior: Laplace precision: %w", err)
		}
		l.dense = f
		res.Clipped, res.MinEigen = f.clipped, f.minEigen
		res.FactorSeconds = time.Since(t).Seconds()
	}
	if err := l.run(ctx, sink); err != nil {
		return res, err
	}
	if res.Mode == LaplacePerToken {
		res.Clipped, res.MinEigen = l.clipped, l.minEigen
	}
	res.Seconds = time.Since(began).Seconds()
	return res, nil
}

// freeLayout numbers the free coordinates: rho_i at i D, then the
// non-anchor alpha_j in id order from V D.
type freeLayout struct {
	v, dim, n int
	alphaOff  []int // offset of alpha_j's coordinates, -1 for anchors
}

func newFreeLayout(v, dim int, anchors []int) freeLayout {
	isAnchor := make([]bool, v)
	for _, a := range anchors {
		isAnchor[a] = true
	}
	lay := freeLayout{v: v, dim: dim, alphaOff: make([]int, v)}
	next := v * dim
	for j := range v {
		if isAnchor[j] {
			lay.alphaOff[j] = -1
			continue
		}
		lay.alphaOff[j] = next
		next += dim
	}
	lay.n = next
	return lay
}

// pairCurvature returns w = n sig(x) sig(-x), minus the second derivative
// of the pair's log-likelihood in x, and r = n sig(x) - n_pos, minus its
// first derivative.
func pairCurvature(x, n, kappa float64) (w, r float64) {
	return n * logistic(x) * logistic(-x), -pairScore(x, n, kappa)
}

// densePrecision returns the negative Hessian of the log posterior at m in
// the free coordinates of lay, row-major N x N with its upper triangle set
// and the lower left zero. Rows of a vector are written by one task, so
// the matrix does not depend on threads.
func densePrecision(pl *pool, d *Data, m *Params, lay freeLayout, prec0 float64, threads int) []float64 {
	n, dim := lay.n, m.D
	h := make([]float64, n*n)
	cost := func(s int) func(int) float64 {
		return func(i int) float64 { return float64(d.degree(s, i)*dim*dim + dim) }
	}
	pl.forEach(partition(d.v, threads, cost(sideRho)), func(_ *workspace, c chunk) {
		for i := c.lo; i < c.hi; i++ {
			row := i * dim
			rho := m.Target(i)
			ctx, ns, kappa := d.TargetPairs(i)
			for k, j := range ctx {
				alpha := m.Context(int(j))
				w, r := pairCurvature(dot(rho, alpha), ns[k], kappa[k])
				col := lay.alphaOff[j]
				for a := range dim {
					hr := h[(row+a)*n : (row+a+1)*n]
					wa := w * alpha[a]
					axpy(wa, alpha[a:], hr[row+a:row+dim])
					if col >= 0 {
						axpy(wa, rho, hr[col:col+dim])
						hr[col+a] += r
					}
				}
			}
			for a := range dim {
				h[(row+a)*n+row+a] += prec0
			}
		}
	})
	pl.forEach(partition(d.v, threads, cost(sideAlpha)), func(_ *workspace, c chunk) {
		for j := c.lo; j < c.hi; j++ {
			row := lay.alphaOff[j]
			if row < 0 {
				continue
			}
			tokenBlock(h[row*n+row:], n, d, m, sideAlpha, j, prec0)
		}
	})
	return h
}

// tokenBlock adds to dst (stride ld, upper triangle) the D x D block of
// the negative Hessian for token i's vector on side s, plus prec0 I: the
// precision of that vector given every other vector.
func tokenBlock(dst []float64, ld int, d *Data, m *Params, s, i int, prec0 float64) {
	dim := m.D
	idx, ns, kappa := d.side(s, i)
	own, other := m.Target(i), m.Alpha
	if s == sideAlpha {
		own, other = m.Context(i), m.Rho
	}
	for k, j := range idx {
		c := other[int(j)*dim : (int(j)+1)*dim]
		w, _ := pairCurvature(dot(own, c), ns[k], kappa[k])
		for a := range dim {
			axpy(w*c[a], c[a:], dst[a*ld+a:a*ld+dim])
		}
	}
	for a := range dim {
		dst[a*ld+a] += prec0
	}
}

// precisionFactor turns standard normal vectors z into draws of
// N(0, P^-1): z -> U^-1 z with P = U^T U, or, after clipping, z -> Q z
// with Q's columns the eigenvectors of P divided by the square roots of
// the clipped eigenvalues.
type precisionFactor struct {
	n        int
	u        []float64 // upper Cholesky factor, row-major; nil after clipping
	q        []float64 // scaled eigenvectors, row-major, when u is nil
	clipped  int
	minEigen float64
}

// factorPrecision factorises the precision whose upper triangle is in p
// (row-major n x n; p is overwritten). If the Cholesky factorisation
// fails or is numerically singular, the eigenvalues below floor are raised
// to floor instead. It fails only for non-finite entries.
func factorPrecision(n int, p []float64, floor float64) (precisionFactor, error) {
	f := precisionFactor{n: n, minEigen: math.NaN()}
	// Keep the matrix in the strict lower triangle, which Potrf does not
	// touch, and its diagonal, for the eigen-decomposition if the
	// factorisation fails.
	diag := make([]float64, n)
	for r := range n {
		diag[r] = p[r*n+r]
		for c := r + 1; c < n; c++ {
			p[c*n+r] = p[r*n+c]
		}
	}
	sym := blas64.Symmetric{Uplo: blas.Upper, N: n, Stride: n, Data: p}
	work := make([]float64, 3*n)
	anorm := lapack64.Lansy(lapack.MaxColumnSum, sym, work)
	if math.IsNaN(anorm) || math.IsInf(anorm, 0) {
		return f, errors.New("non-finite entries (non-finite MAP values or counts?)")
	}
	if _, ok := lapack64.Potrf(sym); ok {
		rcond := lapack64.Pocon(sym, anorm, work, make([]int, n))
		if rcond >= float64(n)*0x1p-52 {
			f.u = p
			return f, nil
		}
	}
	for r := range n {
		p[r*n+r] = diag[r]
		for c := r + 1; c < n; c++ {
			p[r*n+c] = p[c*n+r]
		}
	}
	var eig mat.EigenSym
	if !eig.Factorize(mat.NewSymDense(n, p), true) {
		return f, errors.New("eigen-decomposition did not converge")
	}
	vals := eig.Values(nil)
	var q mat.Dense
	eig.VectorsTo(&q)
	f.q = q.RawMatrix().Data
	f.minEigen = vals[0]
	for k, lam := range vals {
		if lam < floor {
			lam = floor
			f.clipped++
		}
		s := 1 / math.Sqrt(lam)
		for r := range n {
			f.q[r*n+k] *= s
		}
	}
	if f.clipped == 0 {
		f.minEigen = math.NaN()
	}
	return f, nil
}

// apply replaces the n x cols block z (row-major, stride ld) of standard
// normal columns by draws of N(0, P^-1); tmp holds at least n values.
// Every column's result depends only on that column.
func (f *precisionFactor) apply(z []float64, ld, cols int, tmp []float64) {
	n := f.n
	if f.u != nil {
		blas64.Trsm(blas.Left, blas.NoTrans, 1,
			blas64.Triangular{Uplo: blas.Upper, Diag: blas.NonUnit, N: n, Stride: n, Data: f.u},
			blas64.General{Rows: n, Cols: cols, Stride: ld, Data: z[:(n-1)*ld+cols]})
		return
	}
	tmp = tmp[:n]
	for c := range cols {
		for r := range n {
			tmp[r] = z[r*ld+c]
		}
		for r := range n {
			z[r*ld+c] = dot(f.q[r*n:(r+1)*n], tmp)
		}
	}
}

// laplaceRun makes the draws of one Laplace call in batches.
type laplaceRun struct {
	d     *Data
	m     *Params
	cfg   LaplaceConfig
	lay   freeLayout
	prec0 float64
	pool  *pool
	dense precisionFactor // dense mode only (n > 0)

	clipped  int // per-token mode: eigenvalues clipped over all blocks
	minEigen float64
}

// denseColumns is the number of draws per triangular-solve task: a fixed
// split, so the arithmetic of a draw does not depend on threads.
const denseColumns = 16

func (l *laplaceRun) run(ctx context.Context, sink Sink) error {
	v, dim := l.d.v, l.m.D
	total := l.cfg.Chains * l.cfg.Draws
	if total == 0 {
		return nil
	}
	batch := int(min(int64(total), max(1, l.cfg.Memory/int64(16*v*dim))))
	draws := make([]*Params, batch)
	for b := range draws {
		draws[b] = NewParams(v, dim)
	}
	var z []float64
	if l.dense.n > 0 {
		z = make([]float64, l.dense.n*batch)
	}
	l.minEigen = math.NaN()
	eval := newEvaluator(l.d, dim, l.cfg.Threads)
	for first := 0; first < total; first += batch {
		nb := min(batch, total-first)
		t := time.Now()
		if l.dense.n > 0 {
			l.denseBatch(z, batch, first, draws[:nb])
		} else if err := l.perTokenBatch(first, draws[:nb], first == 0); err != nil {
			return err
		}
		if err := ctx.Err(); err != nil {
			return err
		}
		share := time.Since(t).Seconds() / float64(nb)
		for b, p := range draws[:nb] {
			t := time.Now()
			ll := eval.logLik(l.pool, p)
			if err := ctx.Err(); err != nil {
				return err
			}
			chain, k := l.chainDraw(first + b)
			st := DrawStats{LogLik: ll, LogPosterior: ll + LogPrior(p, l.cfg.PriorSD),
				Seconds: share + time.Since(t).Seconds(), GroupAccept: math.NaN()}
			if err := sink.Draw(chain, k, p, st); err != nil {
				return fmt.Errorf("posterior: chain %d draw %d: %w", chain, k, err)
			}
		}
	}
	return nil
}

// chainDraw returns the chain and draw numbers of the g-th draw overall.
func (l *laplaceRun) chainDraw(g int) (int, int) { return g / l.cfg.Draws, g % l.cfg.Draws }

// denseBatch fills draws with the draws first, first+1, ...: z (stride ld)
// receives one column of standard normals per draw from the draw's own
// stream, which the factor turns into the free coordinates.
func (l *laplaceRun) denseBatch(z []float64, ld, first int, draws []*Params) {
	n, nb := l.dense.n, len(draws)
	var tasks []chunk
	for lo := 0; lo < nb; lo += denseColumns {
		tasks = append(tasks, chunk{lo, min(nb, lo+denseColumns)})
	}
	l.pool.forEach(tasks, func(_ *workspace, c chunk) {
		pcg := rand.NewPCG(0, 0)
		rng := rand.New(pcg)
		for b := c.lo; b < c.hi; b++ {
			chain, k := l.chainDraw(first + b)
			pcg.Seed(streamSeeds(l.cfg.Seed, chain, k, sideLaplaceDense, 0))
			for r := range n {
				z[r*ld+b] = rng.NormFloat64()
			}
		}
		var tmp []float64
		if l.dense.u == nil {
			tmp = make([]float64, n)
		}
		l.dense.apply(z[c.lo:], ld, c.hi-c.lo, tmp)
		for b := c.lo; b < c.hi; b++ {
			l.scatter(draws[b], z[b:], ld)
		}
	})
}

// scatter sets p to the MAP plus the free coordinates x[r*ld], r < N.
func (l *laplaceRun) scatter(p *Params, x []float64, ld int) {
	dim := l.m.D
	for k, m := range l.m.Rho {
		p.Rho[k] = m + x[k*ld]
	}
	copy(p.Alpha, l.m.Alpha)
	for j, off := range l.lay.alphaOff {
		if off < 0 {
			continue
		}
		for a := range dim {
			p.Alpha[j*dim+a] += x[(off+a)*ld]
		}
	}
}

// perTokenBatch fills draws with the draws first, first+1, ...: every free
// vector is drawn from the Gaussian with its own block of the negative
// Hessian as precision, one stream per draw and vector. The blocks are
// recomputed per batch; clipping is counted in the first batch only.
func (l *laplaceRun) perTokenBatch(first int, draws []*Params, count bool) error {
	d, dim, nb := l.d, l.m.D, len(draws)
	type tally struct {
		clipped  int
		minEigen float64
		err      error
	}
	for _, side := range [2]int{sideRho, sideAlpha} {
		chunks := partition(d.v, l.cfg.Threads, func(i int) float64 {
			return float64(d.degree(side, i)*dim*dim + nb*dim*dim + dim*dim*dim/3)
		})
		tallies := make([]tally, len(chunks))
		tasks := make([]chunk, len(chunks))
		for c := range chunks {
			tasks[c] = chunk{c, c + 1}
		}
		l.pool.forEach(tasks, func(_ *workspace, task chunk) {
			ch := chunks[task.lo]
			tl := tally{minEigen: math.NaN()}
			block := make([]float64, dim*dim)
			z := make([]float64, dim*nb)
			tmp := make([]float64, dim)
			pcg := rand.NewPCG(0, 0)
			rng := rand.New(pcg)
			for i := ch.lo; i < ch.hi; i++ {
				if side == sideAlpha && l.lay.alphaOff[i] < 0 {
					for _, p := range draws {
						copy(p.Context(i), l.m.Context(i))
					}
					continue
				}
				clear(block)
				tokenBlock(block, dim, d, l.m, side, i, l.prec0)
				// The blocks are at least prec0 I, so only non-finite
				// MAP values or counts make this fail.
				f, err := factorPrecision(dim, block, l.prec0)
				if err != nil {
					tl.err = fmt.Errorf("posterior: Laplace block of %s %d: %w", sideName(side), i, err)
					break
				}
				if f.clipped > 0 {
					tl.clipped += f.clipped
					if !(tl.minEigen <= f.minEigen) {
						tl.minEigen = f.minEigen
					}
				}
				streamSide := sideLaplaceRho
				if side == sideAlpha {
					streamSide = sideLaplaceAlpha
				}
				for b := range nb {
					chain, k := l.chainDraw(first + b)
					pcg.Seed(streamSeeds(l.cfg.Seed, chain, k, streamSide, i))
					for a := range dim {
						z[a*nb+b] = rng.NormFloat64()
					}
				}
				f.apply(z, nb, nb, tmp)
				mode := l.m.Target(i)
				if side == sideAlpha {
					mode = l.m.Context(i)
				}
				for b, p := range draws {
					dst := p.Target(i)
					if side == sideAlpha {
						dst = p.Context(i)
					}
					for a := range dim {
						dst[a] = mode[a] + z[a*nb+b]
					}
				}
			}
			tallies[task.lo] = tl
		})
		for _, tl := range tallies {
			if tl.err != nil {
				return tl.err
			}
		}
		if count {
			for _, tl := range tallies {
				l.clipped += tl.clipped
				if tl.clipped > 0 && !(l.minEigen <= tl.minEigen) {
					l.minEigen = tl.minEigen
				}
			}
		}
	}
	return nil
}

func sideName(side int) string {
	if side == sideAlpha {
		return "context"
	}
	return "target"
}
