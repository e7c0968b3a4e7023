package posterior

import (
	"math"
	"math/rand/v2"

	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/blas64"
	"gonum.org/v1/gonum/lapack/lapack64"
)

// DefaultGroupMoves is the number of frame-change moves per sweep when
// GibbsConfig.GroupMoves is zero; see BENCHMARKS.md for the measurements
// behind it.
const DefaultGroupMoves = 20

// NoGroupMoves as GibbsConfig.GroupMoves turns the frame-change moves off.
const NoGroupMoves = -1

// maxPrecondDim is the largest dimension for which the frame-change
// proposals are preconditioned: the curvature matrix has D^4 entries and
// its Cholesky factorisation costs D^6/3.
const maxPrecondDim = 32

// groupAcceptTarget is the acceptance probability that warmup tunes the
// frame-change step size toward.
const groupAcceptTarget = 0.3

// groupMover makes the Metropolis moves of one chain along the frame
// changes that leave the anchors alone: with X = eps M, M a D x D matrix
// of standard normals (preconditioned, see precondition), and A the
// Cayley transform (I - X/2)^-1 (I + X/2), every rho_i becomes rho_i A and
// every free alpha_j becomes alpha_j A^-T. The logits of pairs with a free
// context do not change, so only the prior and the pairs whose context is
// an anchor enter the acceptance ratio. The map scales the V target
// vectors by det A and the free context vectors by det A^-1, so its
// Jacobian is |det A|^(number of anchors); A and A^-1 have the same law
// (A^-1 is the transform of -X, and X and -X have the same law), so the
// acceptance ratio is the target ratio times that Jacobian. The Cayley
// transform agrees with exp(X) to second order (I + X + X^2/2 + X^3/4 +
// ...), so the proposals' scale and the curvature that preconditions them
// are those of exp(X), and it costs two small LU factorisations instead
// of a matrix exponential's dozen products.
//
// The target is the Pólya-Gamma augmented posterior p(rho, alpha | omega),
// in which a pair contributes kappa psi - omega psi^2 / 2 to the log
// density, psi its logit: the sweep ends with a draw of (rho, alpha, omega)
// from the augmented joint (every step of the sweep draws, or leaves
// invariant, a conditional of p(rho, alpha, omega): see sampler.sweep), so
// moves that keep p(rho, alpha | omega) invariant keep the joint, and so
// the posterior, invariant. The anchors' pairs' omegas, which the alpha
// side (skipping the anchors) never touches, are the rho side's draws.
// Unlike the log-sigmoids of the posterior itself, the augmented terms of
// anchor a sum to k_a . w - w^T M_a w / 2 with w = C alpha_a, k_a = sum_i
// kappa_ia rho_i and M_a = sum_i omega_ia rho_i^T rho_i, formed once per
// run of moves, so a proposal costs O(anchors D^2 + D^3) whatever the
// number of pairs.
//
// Within a run of moves the state is not touched: the mover keeps the
// cumulative frame change C (and C^-1) of the accepted moves and the Gram
// matrices R = sum_i rho_i^T rho_i and Q = sum_free alpha_j^T alpha_j of the
// state at the start, so that the prior's sums of squares are
// tr(C^T R C) and tr(C^-1 Q C^-T). The state is changed once, at the end.
type groupMover struct {
	d       *Data
	dim     int
	prec0   float64
	anchors []int
	anchor  []bool

	groupAdapt

	p *Params // the state, unchanged until the end of a run

	// D x D matrices, row-major.
	r, q      []float64 // Gram matrices of the state at the start of a run
	c, cInv   []float64 // cumulative accepted frame change and its inverse
	cNew, inv []float64 // proposed cumulative change and its inverse
	m, a, aIn []float64 // proposal generator X = eps M, its Cayley transform A, and A^-1
	tmp       []float64
	cay       cayleyScratch
	w, row    []float64
	current   float64 // logTarget at (c, cInv)

	// omega holds the chain's Pólya-Gamma draw of every pair in the order
	// of the by-target arrays (the sampler's buffer, filled by each
	// sweep); the anchors' are read through Data's context-to-target
	// positions.
	omega []float64
	// k and mA are the per-anchor statistics of the run's start, k_a
	// (D) and the upper triangle of M_a (D x D), anchor after anchor;
	// anchorOmega holds omega_ia for the pairs of one anchor, and panel
	// sqrt(omega_ia) rho_i where the precision kernel does not serve.
	k, mA, anchorOmega, panel []float64
	mw                        []float64

	pcg *rand.PCG
	rng *rand.Rand
}

// groupAdapt is what the moves learn about the target: all of a mover's
// state that outlives a run of moves (the rest is set up anew by every
// run). backup copies it by value; state and restore carry it through a
// checkpoint.
type groupAdapt struct {
	logEps float64 // log of the step size eps
	steps  int     // proposals made while adapting
	// precond, when set, is the upper Cholesky factor U of the D^2 x D^2
	// curvature H = U^T U of the log target in the generator X = log A
	// (row-major vec), so that proposals X = eps U^-1 z have covariance
	// eps^2 H^-1. It is replaced, never changed in place, so copies of a
	// groupAdapt may share it.
	precond []float64
}

func newGroupMover(d *Data, dim int, prec0 float64, anchors []int, anchor []bool) *groupMover {
	nd := func() []float64 { return make([]float64, dim*dim) }
	pcg := rand.NewPCG(0, 0)
	maxDeg := 0
	for _, a := range anchors {
		maxDeg = max(maxDeg, d.degree(sideAlpha, a))
	}
	var panel []float64
	if !usePrecisionKernel(dim) {
		panel = make([]float64, maxDeg*dim)
	}
	return &groupMover{
		d: d, dim: dim, prec0: prec0, anchors: anchors, anchor: anchor,
		// A step that moves each coordinate by about 5% at first; warmup
		// adapts it.
		groupAdapt: groupAdapt{logEps: math.Log(0.05 / math.Sqrt(float64(dim)))},
		r:          nd(), q: nd(), c: nd(), cInv: nd(), cNew: nd(), inv: nd(),
		m: nd(), a: nd(), aIn: nd(), tmp: nd(),
		cay:         cayleyScratch{minus: nd(), plus: nd(), ipiv: make([]int, dim)},
		w:           make([]float64, dim),
		row:         make([]float64, dim),
		k:           make([]float64, len(anchors)*dim),
		mA:          make([]float64, len(anchors)*dim*dim),
		anchorOmega: make([]float64, maxDeg),
		panel:       panel,
		mw:          make([]float64, dim),
		pcg:         pcg,
		rng:         rand.New(pcg),
	}
}

// eps returns the current step size.
func (g *groupMover) eps() float64 { return math.Exp(g.logEps) }

// run makes k moves on p from the random stream the caller seeded and
// returns how many were accepted. With adapt set, each move's acceptance
// probability nudges log eps toward groupAcceptTarget (Robbins-Monro
// with steps 1/(t+10)^0.6); otherwise eps stays as it is, so that the
// kept draws come from one fixed Markov kernel.
func (g *groupMover) run(p *Params, k int, adapt bool) int {
	g.begin(p)
	accepted := 0
	for range k {
		prob, ok := g.propose()
		if ok {
			accepted++
		}
		if adapt {
			g.steps++
			g.logEps += (prob - groupAcceptTarget) * math.Pow(float64(g.steps)+10, -0.6)
		}
	}
	if accepted > 0 {
		g.apply()
	}
	g.p = nil
	return accepted
}

// general views a row-major D x D matrix for BLAS.
func (g *groupMover) general(x []float64) blas64.General {
	return blas64.General{Rows: g.dim, Cols: g.dim, Stride: g.dim, Data: x}
}

// mul stores x y in dst; dst must not alias x or y. Below 16 x 16 a
// plain loop beats the BLAS call's set-up.
func (g *groupMover) mul(dst, x, y []float64) {
	dim := g.dim
	if dim >= 16 {
		blas64.Gemm(blas.NoTrans, blas.NoTrans, 1, g.general(x), g.general(y), 0, g.general(dst))
		return
	}
	for i := range dim {
		out := dst[i*dim : (i+1)*dim]
		clear(out)
		for k, xik := range x[i*dim : (i+1)*dim] {
			axpy(xik, y[k*dim:(k+1)*dim], out)
		}
	}
}

// begin loads the Gram matrices of p and the anchors' statistics and
// resets the cumulative change.
func (g *groupMover) begin(p *Params) {
	g.gram(p)
	g.anchorStats(p)
	setIdentity(g.c, g.dim)
	setIdentity(g.cInv, g.dim)
	g.p = p
	g.current = g.logTarget(g.c, g.cInv)
}

// gram loads the Gram matrices R and Q of p.
func (g *groupMover) gram(p *Params) {
	dim := g.dim
	gram := func(dst []float64, x []float64, lo, hi int) {
		if hi <= lo {
			return
		}
		blas64.Syrk(blas.Trans, 1,
			blas64.General{Rows: hi - lo, Cols: dim, Stride: dim, Data: x[lo*dim : hi*dim]},
			1, blas64.Symmetric{Uplo: blas.Upper, N: dim, Stride: dim, Data: dst})
	}
	clear(g.r)
	gram(g.r, p.Rho, 0, g.d.v)
	// The free context vectors are the runs between the (ascending)
	// anchors.
	clear(g.q)
	lo := 0
	for _, a := range g.anchors {
		gram(g.q, p.Alpha, lo, a)
		lo = a + 1
	}
	gram(g.q, p.Alpha, lo, g.d.v)
	for _, s := range [2][]float64{g.r, g.q} {
		for i := range dim {
			for j := range i {
				s[i*dim+j] = s[j*dim+i]
			}
		}
	}
}

// anchorStats forms k_a = sum_i kappa_ia rho_i and (the upper triangle
// of) M_a = sum_i omega_ia rho_i^T rho_i of every anchor from p and
// g.omega, M_a by the kernel that forms the sweep's precisions (or, above
// its dimensions, by a syrk of the sqrt(omega)-weighted rows).
func (g *groupMover) anchorStats(p *Params) {
	dim := g.dim
	for l, a := range g.anchors {
		tgt, _, kappa := g.d.ContextPairs(a)
		pos := g.d.contextPairPos(a)
		k := g.k[l*dim : (l+1)*dim]
		clear(k)
		om := g.anchorOmega[:len(tgt)]
		for r, i := range tgt {
			axpy(kappa[r], p.Target(int(i)), k)
			om[r] = g.omega[pos[r]]
		}
		m := g.mA[l*dim*dim : (l+1)*dim*dim]
		if usePrecisionKernel(dim) {
			smallPrecision(dim, tgt, om, p.Rho, 0, m)
			continue
		}
		for r, i := range tgt {
			s := math.Sqrt(om[r])
			dst := g.panel[r*dim : (r+1)*dim]
			for c, x := range p.Target(int(i)) {
				dst[c] = s * x
			}
		}
		clear(m)
		if len(tgt) > 0 {
			blas64.Syrk(blas.Trans, 1,
				blas64.General{Rows: len(tgt), Cols: dim, Stride: dim, Data: g.panel[:len(tgt)*dim]},
				0, blas64.Symmetric{Uplo: blas.Upper, N: dim, Stride: dim, Data: m})
		}
	}
}

func setIdentity(x []float64, dim int) {
	clear(x)
	for i := range dim {
		x[i*dim+i] = 1
	}
}

// logTarget returns the part of the log augmented posterior that the
// frame change c can alter, at the state (rho c, alpha c^-T) with (rho,
// alpha) the state at begin: the prior of all target and free context
// vectors and the augmented terms kappa psi - omega psi^2 / 2 of the pairs
// whose context is an anchor, psi = rho_i c alpha_a^T.
func (g *groupMover) logTarget(c, cInv []float64) float64 {
	dim := g.dim
	g.mul(g.tmp, g.r, c)
	ss := dot(g.tmp, c)
	g.mul(g.tmp, cInv, g.q)
	ss += dot(g.tmp, cInv)
	lp := -g.prec0 / 2 * ss
	w := blas64.Vector{N: dim, Inc: 1, Data: g.w}
	mw := blas64.Vector{N: dim, Inc: 1, Data: g.mw}
	for l, a := range g.anchors {
		blas64.Gemv(blas.NoTrans, 1, g.general(c), blas64.Vector{N: dim, Inc: 1, Data: g.p.Context(a)}, 0, w)
		blas64.Symv(1, blas64.Symmetric{Uplo: blas.Upper, N: dim, Stride: dim, Data: g.mA[l*dim*dim : (l+1)*dim*dim]}, w, 0, mw)
		lp += dot(g.k[l*dim:(l+1)*dim], g.w) - dot(g.w, g.mw)/2
	}
	return lp
}

// propose draws one move, accepts or rejects it, and returns its
// acceptance probability and whether it was accepted.
func (g *groupMover) propose() (float64, bool) {
	eps := g.eps()
	for k := range g.m {
		g.m[k] = eps * g.rng.NormFloat64()
	}
	if g.precond != nil {
		n := g.dim * g.dim
		blas64.Trsv(blas.NoTrans, blas64.Triangular{Uplo: blas.Upper, Diag: blas.NonUnit, N: n, Stride: n, Data: g.precond},
			blas64.Vector{N: n, Inc: 1, Data: g.m})
	}
	logDet, ok := g.cayleyPair(g.a, g.aIn, g.m)
	if !ok {
		return 0, false // A singular: a proposal of probability zero
	}
	g.mul(g.cNew, g.c, g.a)
	g.mul(g.inv, g.aIn, g.cInv)
	return g.decide(g.logTarget(g.cNew, g.inv), logDet)
}

// precondition sets the proposal covariance to the inverse of the
// curvature approximation H of the log target at the frame of p (see
// curvature), so that the directions the data pin down hard get small
// steps and the loose ones large steps. It resets eps to 2.38/D, the
// random-walk optimum for a Gaussian target in D^2 dimensions, and
// restarts its adaptation. When H is not positive definite the proposals
// stay isotropic, as they do above maxPrecondDim.
func (g *groupMover) precondition(p *Params) {
	if g.dim > maxPrecondDim {
		return
	}
	n := g.dim * g.dim
	h := g.curvature(p)
	if _, ok := lapack64.Potrf(blas64.Symmetric{Uplo: blas.Upper, N: n, Stride: n, Data: h}); !ok {
		g.precond = nil
		return
	}
	g.precond = h
	g.logEps = math.Log(2.38 / float64(g.dim))
	g.steps = 0
}

// curvature returns (the upper triangle of) a positive semi-definite
// approximation H of minus the Hessian of the log target in X = log A at
// X = 0 and state p, indexed by the row-major vec of X: the prior's terms
// tr(X^T R X) and tr(X Q X^T) (the second-order terms of tr(C^T R C) and
// tr(C^-1 Q C^-T) without tr(R X^2) and tr(X^2 Q), which can be negative)
// times 1/s^2, plus the Gauss-Newton term of the anchors' pairs,
// sum_ia w_ia u u^T with u = vec(rho_i^T alpha_a) = rho_i (x) alpha_a and
// w_ia = n sig(x) sig(-x) the pair's curvature in its logit x. Summed per
// anchor as S_a (x) alpha_a^T alpha_a with S_a = sum_i w_ia rho_i^T rho_i,
// it costs O(anchor pairs D^2 + D^5).
func (g *groupMover) curvature(p *Params) []float64 {
	dim := g.dim
	n := dim * dim
	g.gram(p)
	h := make([]float64, n*n)
	for k := range dim {
		for l := range dim {
			for m := range dim {
				h[(k*dim+l)*n+m*dim+l] += g.prec0 * g.r[k*dim+m]
				h[(k*dim+l)*n+k*dim+m] += g.prec0 * g.q[l*dim+m]
			}
		}
	}
	sa := make([]float64, n)
	S := blas64.Symmetric{Uplo: blas.Upper, N: dim, Stride: dim, Data: sa}
	for _, a := range g.anchors {
		alpha := p.Context(a)
		tgt, cnt, _ := g.d.ContextPairs(a)
		clear(sa)
		for k, i := range tgt {
			rho := p.Target(int(i))
			s := 1 / (1 + math.Exp(-dot(rho, alpha)))
			blas64.Syr(cnt[k]*s*(1-s), blas64.Vector{N: dim, Inc: 1, Data: rho}, S)
		}
		for r := range dim {
			for r2 := r; r2 < dim; r2++ {
				srr := sa[r*dim+r2]
				for c, ac := range alpha {
					row := h[(r*dim+c)*n:]
					lo := 0
					if r2 == r {
						lo = c // the upper triangle only
					}
					for c2 := lo; c2 < dim; c2++ {
						row[r2*dim+c2] += srr * ac * alpha[c2]
					}
				}
			}
		}
	}
	return h
}

// decide is the Metropolis step for a proposal whose logTarget is lt and
// whose frame change A has log |det A| logDet.
func (g *groupMover) decide(lt, logDet float64) (float64, bool) {
	logRatio := lt - g.current + float64(len(g.anchors))*logDet
	if math.IsNaN(logRatio) {
		return 0, false
	}
	prob := math.Exp(min(logRatio, 0))
	if logRatio < 0 && !(g.rng.Float64() < prob) {
		return prob, false
	}
	g.c, g.cNew = g.cNew, g.c
	g.cInv, g.inv = g.inv, g.cInv
	g.current = lt
	return prob, true
}

// apply changes the state by the cumulative frame change: rho_i c and,
// for free j, alpha_j c^-T.
func (g *groupMover) apply() {
	p, dim := g.p, g.dim
	out := blas64.Vector{N: dim, Inc: 1, Data: g.row}
	for i := range g.d.v {
		x := p.Target(i)
		blas64.Gemv(blas.Trans, 1, g.general(g.c), blas64.Vector{N: dim, Inc: 1, Data: x}, 0, out)
		copy(x, g.row)
		if !g.anchor[i] {
			x = p.Context(i)
			blas64.Gemv(blas.NoTrans, 1, g.general(g.cInv), blas64.Vector{N: dim, Inc: 1, Data: x}, 0, out)
			copy(x, g.row)
		}
	}
}

// cayleyScratch is the scratch of cayleyPair.
type cayleyScratch struct {
	minus, plus []float64
	ipiv        []int
}

// cayleyPair stores the Cayley transform A = (I - x/2)^-1 (I + x/2) in
// dst and A^-1 = (I + x/2)^-1 (I - x/2) (the transform of -x) in inv, and
// returns log |det A|; ok is false if I - x/2 or I + x/2 is singular.
// (I - x/2 and I + x/2 commute, so the order of the factors is free.)
func (g *groupMover) cayleyPair(dst, inv, x []float64) (logDet float64, ok bool) {
	dim := g.dim
	minus, plus := g.cay.minus, g.cay.plus
	for k, v := range x {
		minus[k], plus[k] = -v/2, v/2
	}
	for i := range dim {
		minus[i*dim+i]++
		plus[i*dim+i]++
	}
	copy(dst, plus)
	copy(inv, minus)
	ldMinus, ok1 := g.solveLU(minus, dst)
	ldPlus, ok2 := g.solveLU(plus, inv)
	return ldPlus - ldMinus, ok1 && ok2
}

// solveLU overwrites b with a^-1 b, factoring a in place with partial
// pivoting, and returns log |det a|; ok is false if a is singular.
func (g *groupMover) solveLU(a, b []float64) (logDet float64, ok bool) {
	dim := g.dim
	ga := blas64.General{Rows: dim, Cols: dim, Stride: dim, Data: a}
	if !lapack64.Getrf(ga, g.cay.ipiv) {
		return 0, false
	}
	lapack64.Getrs(blas.NoTrans, ga, blas64.General{Rows: dim, Cols: dim, Stride: dim, Data: b}, g.cay.ipiv)
	for i := range dim {
		logDet += math.Log(math.Abs(a[i*dim+i]))
	}
	return logDet, true
}
