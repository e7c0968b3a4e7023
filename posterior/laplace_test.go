package posterior

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"gonum.org/v1/gonum/mat"
	"gonum.org/v1/gonum/stat/distuv"

	"github.com/pwe-project/pwe/posterior/diag"

	"github.com/pwe-project/pwe/formats"
)

// fullPrecision returns the dense negative Hessian at p over lay's free
// coordinates as a symmetric matrix.
func fullPrecision(d *Data, p *Params, anchors []int, priorSD float64) (*mat.SymDense, freeLayout) {
	lay := newFreeLayout(d.V(), p.D, anchors)
	pl := startPool(context.Background(), 2, nil)
	defer pl.stop()
	h := densePrecision(pl, d, p, lay, 1/(priorSD*priorSD), 2)
	return mat.NewSymDense(lay.n, h), lay
}

// freeVector returns p's free coordinates in lay's order.
func freeVector(p *Params, lay freeLayout) []float64 {
	x := slices.Clone(p.Rho)
	for j, off := range lay.alphaOff {
		if off >= 0 {
			x = append(x, p.Context(j)...)
		}
	}
	return x[:lay.n]
}

func TestLaplaceHessianMatchesGradient(t *testing.T) {
	d, truth := simulate(t, 6, 3, 600, 3)
	// Away from the MAP, so that the score terms r I are not small.
	p := truth.Clone()
	for k := range p.Rho {
		p.Rho[k] *= 0.6
		p.Alpha[k] *= 1.3
	}
	const sd = 1.4
	for _, anchors := range [][]int{nil, {1, 2, 5}} {
		h, lay := fullPrecision(d, p, anchors, sd)
		// Central differences of the gradient: truncation about h^2 f''''
		// ~ 1e-8 relative, rounding eps |grad| / h ~ 1e-10.
		const step = 1e-5
		gp, gm := NewParams(p.V, p.D), NewParams(p.V, p.D)
		coords := func(q *Params) []*float64 {
			var c []*float64
			for k := range q.Rho {
				c = append(c, &q.Rho[k])
			}
			for j, off := range lay.alphaOff {
				if off >= 0 {
					for a := range q.D {
						c = append(c, &q.Alpha[j*q.D+a])
					}
				}
			}
			return c
		}
		x := coords(p)
		for col := range lay.n {
			old := *x[col]
			*x[col] = old + step
			Gradient(d, p, sd, gp)
			*x[col] = old - step
			Gradient(d, p, sd, gm)
			*x[col] = old
			up, dn := freeVector(gp, lay), freeVector(gm, lay)
			for row := range lay.n {
				want := -(up[row] - dn[row]) / (2 * step)
				got := h.At(row, col)
				if math.Abs(got-want) > 1e-6*math.Max(1, math.Abs(want)) {
					t.Fatalf("anchors %v: H[%d,%d] = %.10g, finite differences of the gradient %.10g", anchors, row, col, got, want)
				}
			}
		}
	}
}

// blockRows builds data from (target, context, n_pos, n_neg) rows.
func blockRows(t *testing.T, v int, rows [][4]float64) *Data {
	t.Helper()
	var cr []formats.CountRow
	for _, r := range rows {
		cr = append(cr, formats.CountRow{TargetID: int32(r[0]), ContextID: int32(r[1]), NPos: r[2], NNeg: r[3]})
	}
	return buildData(t, v, cr)
}

// perTokenCovariance returns the block-diagonal covariance of the
// per-token approximation: the inverse of every D x D diagonal block of h.
func perTokenCovariance(t *testing.T, h *mat.SymDense, dim int) *mat.Dense {
	n := h.SymmetricDim()
	cov := mat.NewDense(n, n, nil)
	for lo := 0; lo < n; lo += dim {
		var inv mat.Dense
		if err := inv.Inverse(h.SliceSym(lo, lo+dim)); err != nil {
			t.Fatal(err)
		}
		cov.Slice(lo, lo+dim, lo, lo+dim).(*mat.Dense).Copy(&inv)
	}
	return cov
}

func TestLaplacePerTokenMatchesDenseOnlyWithoutCrossTerms(t *testing.T) {
	// V = 4, D = 2, anchors 2 and 3. When every pair has an anchor as its
	// context, no free context vector meets a target vector in the
	// likelihood, so the negative Hessian is block diagonal over the free
	// vectors and the dense marginals equal the per-token conditionals.
	// A pair with a free context adds a cross block C, and the dense
	// marginal covariance of rho_0 exceeds the per-token one by
	// A^-1 C S^-1 C^T A^-1 (S the Schur complement), a non-zero PSD matrix.
	const dim = 2
	anchors := []int{2, 3}
	base := [][4]float64{
		{0, 2, 30, 10}, {0, 3, 5, 25}, {1, 2, 12, 12}, {1, 3, 40, 3},
		{2, 2, 8, 20}, {2, 3, 17, 9}, {3, 2, 22, 6}, {3, 3, 4, 4},
	}
	for _, tc := range []struct {
		name  string
		extra [][4]float64
		same  bool
	}{
		{"anchor contexts only", nil, true},
		{"with free contexts", [][4]float64{{0, 0, 9, 3}, {1, 1, 2, 14}, {0, 1, 6, 6}}, false},
	} {
		rows := append(slices.Clone(base), tc.extra...)
		slices.SortFunc(rows, func(a, b [4]float64) int {
			if a[0] != b[0] {
				return int(a[0] - b[0])
			}
			return int(a[1] - b[1])
		})
		d := blockRows(t, 4, rows)
		// At the MAP the precision is positive definite, which the
		// inequality between marginal and conditional needs.
		m := mapFor(t, d, dim)
		h, _ := fullPrecision(d, m, anchors, 1)
		var cov mat.Dense
		if err := cov.Inverse(h); err != nil {
			t.Fatal(err)
		}
		per := perTokenCovariance(t, h, dim)
		// The per-token engine's blocks are the dense diagonal blocks.
		lay := newFreeLayout(4, dim, anchors)
		for i := range 4 {
			block := make([]float64, dim*dim)
			tokenBlock(block, dim, d, m, sideRho, i, 1)
			for a := range dim {
				for b := a; b < dim; b++ {
					if got, want := block[a*dim+b], h.At(i*dim+a, i*dim+b); math.Abs(got-want) > 1e-12*math.Abs(want) {
						t.Fatalf("%s: rho_%d block[%d,%d] = %v, dense %v", tc.name, i, a, b, got, want)
					}
				}
			}
		}
		var diff mat.Dense
		diff.Sub(&cov, per)
		var maxDiag float64
		for lo := 0; lo < lay.n; lo += dim {
			for a := range dim {
				for b := range dim {
					if !tc.same {
						continue
					}
					if e := diff.At(lo+a, lo+b); math.Abs(e) > 1e-12 {
						t.Fatalf("%s: marginal covariance differs from per-token by %g at (%d,%d)", tc.name, e, lo+a, lo+b)
					}
				}
				maxDiag = max(maxDiag, diff.At(lo+a, lo+a)/per.At(lo+a, lo+a))
			}
		}
		if !tc.same {
			// rho_0's dense marginal exceeds the per-token conditional by a
			// PSD matrix: check both its sign and that it is not rounding.
			var ev mat.EigenSym
			sub := mat.NewSymDense(dim, nil)
			for a := range dim {
				for b := range dim {
					sub.SetSym(a, b, diff.At(a, b))
				}
			}
			if !ev.Factorize(sub, false) {
				t.Fatal("eigen-decomposition failed")
			}
			vals := ev.Values(nil)
			if vals[0] < -1e-12 || maxDiag < 1e-3 {
				t.Fatalf("%s: dense minus per-token covariance of rho_0 has eigenvalues %v; largest relative excess of a variance %g", tc.name, vals, maxDiag)
			}
			t.Logf("%s: largest relative excess of a dense marginal variance over per-token: %.3g", tc.name, maxDiag)
		}
	}
}

// momentSink accumulates the free coordinates' sums and cross-products.
type momentSink struct {
	lay         freeLayout
	n           int
	sum         []float64
	cross       *mat.SymDense
	d           *Data
	sd          float64
	statsErr    error
	chainsDraws map[int]int
}

func newMomentSink(d *Data, lay freeLayout, sd float64) *momentSink {
	return &momentSink{lay: lay, sum: make([]float64, lay.n), cross: mat.NewSymDense(lay.n, nil), d: d, sd: sd, chainsDraws: map[int]int{}}
}

func (s *momentSink) Draw(chain, draw int, p *Params, st DrawStats) error {
	if s.chainsDraws[chain] != draw {
		return errors.New("draws out of order")
	}
	s.chainsDraws[chain]++
	x := freeVector(p, s.lay)
	s.n++
	for k, v := range x {
		s.sum[k] += v
	}
	s.cross.SymRankOne(s.cross, 1, mat.NewVecDense(len(x), x))
	if ll, lp := LogLik(s.d, p), LogPosterior(s.d, p, s.sd); s.statsErr == nil &&
		(math.Abs(st.LogLik-ll) > 1e-9*math.Abs(ll) || math.Abs(st.LogPosterior-lp) > 1e-9*math.Abs(lp) || !math.IsNaN(st.GroupAccept)) {
		s.statsErr = errors.New("draw statistics do not match LogLik and LogPosterior")
	}
	return nil
}

func TestLaplaceDrawsMatchGaussian(t *testing.T) {
	d, _ := simulate(t, 5, 2, 3000, 8)
	const sd = 1.2
	m, _, err := MAP(context.Background(), d, MAPConfig{Dim: 2, PriorSD: sd, Seed: 1, GradTol: 1e-6})
	if err != nil {
		t.Fatal(err)
	}
	const chains, draws = 4, 1500
	for _, mode := range []LaplaceMode{LaplaceDense, LaplacePerToken} {
		anchors, err := ChooseAnchors(d, m, AnchorRule{})
		if err != nil {
			t.Fatal(err)
		}
		h, lay := fullPrecision(d, m, anchors, sd)
		var cov mat.Dense
		if mode == LaplaceDense {
			if err := cov.Inverse(h); err != nil {
				t.Fatal(err)
			}
		} else {
			cov.CloneFrom(perTokenCovariance(t, h, 2))
		}
		sink := newMomentSink(d, lay, sd)
		res, err := Laplace(context.Background(), d, m, LaplaceConfig{
			Mode: mode, Chains: chains, Draws: draws, PriorSD: sd, Seed: 3, Memory: 16 * 5 * 2 * 700, Anchors: AnchorRule{Kind: AnchorIDs, IDs: anchors},
		}, sink)
		if err != nil {
			t.Fatal(err)
		}
		if sink.statsErr != nil {
			t.Fatal(sink.statsErr)
		}
		if res.Mode != mode || res.Free != lay.n || res.Clipped != 0 || sink.n != chains*draws {
			t.Fatalf("%v: result %+v, %d draws", mode, res, sink.n)
		}
		n := float64(sink.n)
		mode0 := freeVector(m, lay)
		mean := make([]float64, lay.n)
		for k := range mean {
			mean[k] = sink.sum[k] / n
		}
		// n (mean - mode)^T Sigma^-1 (mean - mode) ~ chi-square(N).
		dev := make([]float64, lay.n)
		for k := range dev {
			dev[k] = mean[k] - mode0[k]
		}
		var chol mat.Cholesky
		if !chol.Factorize(symFrom(&cov)) {
			t.Fatal("covariance not positive definite")
		}
		var w mat.VecDense
		if err := chol.SolveVecTo(&w, mat.NewVecDense(lay.n, dev)); err != nil {
			t.Fatal(err)
		}
		chi2 := n * mat.Dot(&w, mat.NewVecDense(lay.n, dev))
		crit := distuv.ChiSquared{K: float64(lay.n)}.Quantile(1 - 1e-4)
		if chi2 > crit {
			t.Errorf("%v: mean of %d draws: chi-square %.1f above the 1e-4 critical value %.1f (%d dof)", mode, sink.n, chi2, crit, lay.n)
		}
		// Sample covariances: for Gaussian draws the variance of the
		// estimate of Sigma_ab is (Sigma_ab^2 + Sigma_aa Sigma_bb)/n.
		entries := lay.n * (lay.n + 1) / 2
		zcrit := distuv.UnitNormal.Quantile(1 - 1e-4/float64(2*entries))
		worst := 0.0
		for a := range lay.n {
			for b := a; b < lay.n; b++ {
				s := sink.cross.At(a, b)/n - mean[a]*mean[b]
				want := cov.At(a, b)
				z := (s - want) / math.Sqrt((want*want+cov.At(a, a)*cov.At(b, b))/n)
				worst = max(worst, math.Abs(z))
			}
		}
		if worst > zcrit {
			t.Errorf("%v: a sample covariance is %.2f standard errors from the inverse precision (critical %.2f over %d entries)", mode, worst, zcrit, entries)
		}
		t.Logf("%v: chi-square of the mean %.1f (critical %.1f); largest covariance z %.2f (critical %.2f)", mode, chi2, crit, worst, zcrit)
	}
}

// symFrom returns the symmetric matrix in a's upper triangle.
func symFrom(a *mat.Dense) *mat.SymDense {
	n, _ := a.Dims()
	s := mat.NewSymDense(n, nil)
	for i := range n {
		for j := i; j < n; j++ {
			s.SetSym(i, j, a.At(i, j))
		}
	}
	return s
}

func TestFactorPrecisionClipsIndefinite(t *testing.T) {
	// P = Q diag(lam) Q^T with a random orthogonal Q: one negative, one
	// zero (numerically singular) and one small positive eigenvalue below
	// the floor 1, which the clipping must all raise to 1.
	lam := []float64{4, 2.5, 0.3, 0, -0.7, 9}
	n := len(lam)
	r := rand.New(rand.NewPCG(6, 6))
	g := mat.NewDense(n, n, nil)
	for i := range n {
		for j := range n {
			g.Set(i, j, r.NormFloat64())
		}
	}
	var qr mat.QR
	qr.Factorize(g)
	var q mat.Dense
	qr.QTo(&q)
	p := make([]float64, n*n)
	for i := range n {
		for j := range n {
			for k := range n {
				p[i*n+j] += q.At(i, k) * lam[k] * q.At(j, k)
			}
		}
	}
	f, err := factorPrecision(n, slices.Clone(p), 1)
	if err != nil {
		t.Fatal(err)
	}
	if f.clipped != 3 || math.Abs(f.minEigen+0.7) > 1e-12 {
		t.Fatalf("clipped %d eigenvalues, smallest %v; want 3 and -0.7", f.clipped, f.minEigen)
	}
	// Applying the factor to the identity gives W with W W^T the
	// covariance, which must be Q diag(1/max(lam, 1)) Q^T.
	w := make([]float64, n*n)
	for k := range n {
		w[k*n+k] = 1
	}
	f.apply(w, n, n, make([]float64, n))
	for i := range n {
		for j := range n {
			var got, want float64
			for k := range n {
				got += w[i*n+k] * w[j*n+k]
				want += q.At(i, k) * q.At(j, k) / math.Max(lam[k], 1)
			}
			if math.IsNaN(got) || math.Abs(got-want) > 1e-12 {
				t.Fatalf("covariance[%d,%d] = %v, want %v", i, j, got, want)
			}
		}
	}
	// A positive definite matrix is factorised by Cholesky, unchanged.
	for k := range lam {
		lam[k] = float64(k + 1)
	}
	p = make([]float64, n*n)
	for i := range n {
		for j := range n {
			for k := range n {
				p[i*n+j] += q.At(i, k) * lam[k] * q.At(j, k)
			}
		}
	}
	if f, err := factorPrecision(n, p, 1); err != nil || f.u == nil || f.clipped != 0 || !math.IsNaN(f.minEigen) {
		t.Fatalf("positive definite: factor %+v, error %v", f, err)
	}
	p[1] = math.NaN()
	if _, err := factorPrecision(n, p, 1); err == nil {
		t.Fatal("NaN entry accepted")
	}
}

func TestLaplaceAtSaddleClipsAndStaysFinite(t *testing.T) {
	// The origin is a stationary point of every such posterior (the
	// gradient is zero there), and with |kappa| above the prior precision
	// it is a saddle: the negative Hessian [[I, -K], [-K^T, I]] (per
	// dimension) has eigenvalues 1 - sigma(K) < 0. A Laplace approximation
	// "at the MAP" from an optimiser stuck there must clip, report it, and
	// still give finite draws.
	d, _ := simulate(t, 4, 2, 2000, 12)
	m := NewParams(4, 2)
	for _, mode := range []LaplaceMode{LaplaceDense, LaplacePerToken} {
		var bad int
		sink := SinkFunc(func(_, _ int, p *Params, st DrawStats) error {
			for _, v := range append(append([]float64{st.LogPosterior}, p.Rho...), p.Alpha...) {
				if math.IsNaN(v) || math.IsInf(v, 0) {
					bad++
				}
			}
			return nil
		})
		res, err := Laplace(context.Background(), d, m, LaplaceConfig{Mode: mode, Chains: 2, Draws: 50, Anchors: AnchorRule{Kind: AnchorNone}}, sink)
		if err != nil {
			t.Fatal(err)
		}
		if bad > 0 {
			t.Fatalf("%v: %d non-finite values in the draws", mode, bad)
		}
		// Per-token blocks are at least the prior precision and never
		// need clipping; the dense precision has a negative eigenvalue.
		if mode == LaplaceDense && (res.Clipped == 0 || !(res.MinEigen < 0)) {
			t.Fatalf("dense: %d eigenvalues clipped, smallest %v; want a negative one clipped", res.Clipped, res.MinEigen)
		}
		if mode == LaplacePerToken && res.Clipped != 0 {
			t.Fatalf("per-token: %d eigenvalues clipped", res.Clipped)
		}
		t.Logf("%v: %d eigenvalues clipped, smallest %.3g", mode, res.Clipped, res.MinEigen)
	}
}

func TestLaplaceDeterministicAcrossThreads(t *testing.T) {
	d, _ := simulate(t, 12, 3, 3000, 5)
	m := mapFor(t, d, 3)
	for _, mode := range []LaplaceMode{LaplaceDense, LaplacePerToken} {
		var ref rawSink
		for _, threads := range []int{1, 3} {
			for _, memory := range []int64{0, 16 * 12 * 3 * 5} {
				s := rawSink{}
				_, err := Laplace(context.Background(), d, m, LaplaceConfig{Mode: mode, Chains: 3, Draws: 7, Threads: threads, Seed: 4, Memory: memory}, s)
				if err != nil {
					t.Fatal(err)
				}
				if len(s) != 21 {
					t.Fatalf("%d draws, want 21", len(s))
				}
				if ref == nil {
					ref = s
					continue
				}
				for k, bits := range ref {
					if !slices.Equal(bits, s[k]) {
						t.Fatalf("%v, threads %d, memory %d: chain %d draw %d differs", mode, threads, memory, k[0], k[1])
					}
				}
			}
		}
	}
}

func TestLaplaceRefusesLargeDense(t *testing.T) {
	const v = MaxDenseLaplace/4 + 1 // 2 V D free coordinates without anchors, D = 2
	d := buildData(t, v, []formats.CountRow{{TargetID: 0, ContextID: 1, NPos: 3, NNeg: 1}})
	m := NewParams(v, 2)
	_, err := Laplace(context.Background(), d, m, LaplaceConfig{Mode: LaplaceDense, Anchors: AnchorRule{Kind: AnchorNone}}, SinkFunc(func(int, int, *Params, DrawStats) error { return nil }))
	if !errors.Is(err, ErrLaplaceTooLarge) {
		t.Fatalf("error %v, want ErrLaplaceTooLarge", err)
	}
	res, err := Laplace(context.Background(), d, m, LaplaceConfig{Chains: 1, Draws: 2, Anchors: AnchorRule{Kind: AnchorNone}}, SinkFunc(func(int, int, *Params, DrawStats) error { return nil }))
	if err != nil || res.Mode != LaplacePerToken {
		t.Fatalf("auto mode: %v, error %v; want per-token", res.Mode, err)
	}
}

// logitDraws runs Gibbs and the dense Laplace approximation on d with the
// same anchors and returns both's draws of every logit rho_i . alpha_j,
// [logit][chain][draw].
func logitDraws(t *testing.T, d *Data, dim int) (gibbs, laplace [][][]float64) {
	t.Helper()
	m := mapFor(t, d, dim)
	anchors, err := ChooseAnchors(d, m, AnchorRule{})
	if err != nil {
		t.Fatal(err)
	}
	rule := AnchorRule{Kind: AnchorIDs, IDs: anchors}
	v := d.V()
	var fns []func(*Params) float64
	for i := range v {
		for j := range v {
			fns = append(fns, func(p *Params) float64 { return p.Logit(i, j) })
		}
	}
	const chains, draws = 4, 1000
	gc := newCollector(chains, fns...)
	if _, err := Gibbs(context.Background(), d, m, GibbsConfig{Chains: chains, Warmup: 300, Draws: draws, Seed: 2, Anchors: rule}, gc); err != nil {
		t.Fatal(err)
	}
	lc := newCollector(chains, fns...)
	if _, err := Laplace(context.Background(), d, m, LaplaceConfig{Mode: LaplaceDense, Chains: chains, Draws: draws, Seed: 2, Anchors: rule}, lc); err != nil {
		t.Fatal(err)
	}
	return gc.draws, lc.draws
}

// worstDiscrepancy returns, over the logits, the largest z-score of the
// difference between Gibbs's and Laplace's posterior means and sds, the
// standard errors being both methods' Monte Carlo errors (from their ESS),
// and names where it is.
func worstDiscrepancy(gibbs, laplace [][][]float64, v int) (z float64, where string) {
	for q := range gibbs {
		g, l := gibbs[q], laplace[q]
		zm := (flatMean(g) - flatMean(l)) / math.Hypot(diag.MCSEMean(g), diag.MCSEMean(l))
		zs := (flatSD(g) - flatSD(l)) / math.Hypot(diag.MCSESD(g), diag.MCSESD(l))
		if math.Abs(zm) > z {
			z, where = math.Abs(zm), fmt.Sprintf("mean of logit (%d,%d): Gibbs %.4g, Laplace %.4g", q/v, q%v, flatMean(g), flatMean(l))
		}
		if math.Abs(zs) > z {
			z, where = math.Abs(zs), fmt.Sprintf("sd of logit (%d,%d): Gibbs %.4g, Laplace %.4g", q/v, q%v, flatSD(g), flatSD(l))
		}
	}
	return z, where
}

func flatMean(chains [][]float64) float64 {
	var s float64
	var n int
	for _, c := range chains {
		for _, x := range c {
			s += x
			n++
		}
	}
	return s / float64(n)
}

func flatSD(chains [][]float64) float64 {
	mu := flatMean(chains)
	var s float64
	var n int
	for _, c := range chains {
		for _, x := range c {
			s += (x - mu) * (x - mu)
			n++
		}
	}
	return math.Sqrt(s / float64(n-1))
}

func TestLaplaceBernsteinVonMises(t *testing.T) {
	// The same statistic at two sample sizes: with about 10^4 trials per
	// pair the posterior is Gaussian to within the Monte Carlo error, so
	// no logit's mean or sd may differ by more than the two-sided 10^-3
	// Bonferroni bound; with about 4 trials per pair (prior-dominated, the
	// MAP shrunk toward the origin) some must differ by more.
	const v, dim = 5, 2
	crit := distuv.UnitNormal.Quantile(1 - 1e-3/float64(2*2*v*v))
	d, _ := simulate(t, v, dim, 250000, 21)
	g, l := logitDraws(t, d, dim)
	z, where := worstDiscrepancy(g, l, v)
	t.Logf("N = 250000: largest |z| %.2f (critical %.2f) at %s", z, crit, where)
	if z > crit {
		t.Errorf("large N: Laplace and Gibbs disagree beyond Monte Carlo error: |z| = %.2f > %.2f at %s", z, crit, where)
	}
	d, _ = simulate(t, v, dim, 100, 21)
	g, l = logitDraws(t, d, dim)
	z, where = worstDiscrepancy(g, l, v)
	t.Logf("N = 100: largest |z| %.2f (critical %.2f) at %s", z, crit, where)
	if z <= crit {
		t.Errorf("small N: Laplace and Gibbs agree within Monte Carlo error (largest |z| %.2f at %s); the test cannot tell them apart", z, where)
	}
}
