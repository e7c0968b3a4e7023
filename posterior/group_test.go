package posterior

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"gonum.org/v1/gonum/mat"
	"gonum.org/v1/gonum/stat/distuv"

	"github.com/pwe-project/pwe/formats"
)

// applyFrame returns (rho c, alpha c^-T) with the anchors' context
// vectors left alone, computed with gonum's dense matrices: the naive
// version of groupMover.apply.
func applyFrame(p *Params, c []float64, anchor []bool) *Params {
	dim := p.D
	cm := mat.NewDense(dim, dim, slices.Clone(c))
	var inv mat.Dense
	if err := inv.Inverse(cm); err != nil {
		panic(err)
	}
	q := p.Clone()
	rho := mat.NewDense(p.V, dim, q.Rho)
	rho.Mul(mat.NewDense(p.V, dim, slices.Clone(p.Rho)), cm)
	for j := range p.V {
		if !anchor[j] {
			mat.NewVecDense(dim, q.Context(j)).MulVec(&inv, mat.NewVecDense(dim, slices.Clone(p.Context(j))))
		}
	}
	return q
}

func anchorMask(v int, anchors []int) []bool {
	m := make([]bool, v)
	for _, a := range anchors {
		m[a] = true
	}
	return m
}

// TestCayley compares the mover's Cayley transforms A of X and A^-1 (of
// -X) with gonum's solves, its log |det A| with gonum's determinant, and
// checks A A^-1 = I and that A agrees with exp(X) to second order (the
// curvature that preconditions the proposals is that of exp).
func TestCayley(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 1))
	for _, dim := range []int{1, 2, 5, 12} {
		for _, scale := range []float64{1e-3, 0.1, 1, 4} {
			g := newGroupMover(buildData(t, 1, nil), dim, 1, nil, nil)
			x := make([]float64, dim*dim)
			for k := range x {
				x[k] = scale * r.NormFloat64()
			}
			got, gotInv := make([]float64, dim*dim), make([]float64, dim*dim)
			logDet, ok := g.cayleyPair(got, gotInv, x)
			if !ok {
				t.Fatalf("D=%d scale %v: singular", dim, scale)
			}
			id := mat.NewDiagDense(dim, nil)
			for i := range dim {
				id.SetDiag(i, 1)
			}
			half := mat.NewDense(dim, dim, slices.Clone(x))
			half.Scale(0.5, half)
			var minus, plus, want, wantInv mat.Dense
			minus.Sub(id, half)
			plus.Add(id, half)
			if err := want.Solve(&minus, &plus); err != nil {
				t.Fatal(err)
			}
			if err := wantInv.Solve(&plus, &minus); err != nil {
				t.Fatal(err)
			}
			for name, c := range map[string]struct {
				got  []float64
				want *mat.Dense
			}{"A": {got, &want}, "A^-1": {gotInv, &wantInv}} {
				tol := 1e-12 * mat.Cond(&minus, 1) * mat.Cond(&plus, 1) * math.Max(1, mat.Norm(c.want, math.Inf(1)))
				for k, w := range c.want.RawMatrix().Data {
					if math.Abs(c.got[k]-w) > tol {
						t.Fatalf("D=%d scale %v: %s[%d] = %v, gonum %v", dim, scale, name, k, c.got[k], w)
					}
				}
			}
			wantLD, sign := mat.LogDet(&want)
			if sign == 0 || math.Abs(logDet-wantLD) > 1e-10*math.Max(1, math.Abs(wantLD)) {
				t.Errorf("D=%d scale %v: log |det A| = %v, gonum %v", dim, scale, logDet, wantLD)
			}
			var prod mat.Dense
			prod.Mul(mat.NewDense(dim, dim, got), mat.NewDense(dim, dim, gotInv))
			for i := range dim {
				for j := range dim {
					if math.Abs(prod.At(i, j)-id.At(i, j)) > 1e-12*mat.Cond(&minus, 1)*mat.Cond(&plus, 1) {
						t.Fatalf("D=%d scale %v: A A^-1 [%d,%d] = %v", dim, scale, i, j, prod.At(i, j))
					}
				}
			}
			if scale <= 0.1 {
				// A - exp(X) = X^3/12 + O(X^4): far below the X^2/2 a
				// first-order agreement would leave.
				var e mat.Dense
				e.Exp(mat.NewDense(dim, dim, x))
				e.Sub(&e, mat.NewDense(dim, dim, got))
				nx := mat.Norm(mat.NewDense(dim, dim, x), 2)
				if d := mat.Norm(&e, 2); d > nx*nx*nx/6 {
					t.Errorf("D=%d scale %v: |A - exp(X)| = %v with |X| = %v", dim, scale, d, nx)
				}
			}
		}
	}
}

// augmentedLogDensity is the log of the Pólya-Gamma augmented posterior
// p(rho, alpha | omega) up to a constant, evaluated naively: the prior plus
// kappa psi - omega psi^2 / 2 over every pair, omega[i][j] the pair's draw.
func augmentedLogDensity(d *Data, p *Params, sd float64, omega map[[2]int]float64) float64 {
	lp := LogPrior(p, sd)
	for i := range d.V() {
		ctx, _, kappa := d.TargetPairs(i)
		for k, j := range ctx {
			psi := p.Logit(i, int(j))
			lp += kappa[k]*psi - omega[[2]int{i, int(j)}]*psi*psi/2
		}
	}
	return lp
}

// TestGroupShortcutMatchesBruteForce: the change of the log augmented
// posterior under a frame change, computed from the Gram matrices and the
// anchors' statistics k_a and M_a, equals the naive augmented log density
// (every pair, not only the anchors') after the change minus before,
// computed from scratch on the transformed state; with counts, and with
// the likelihood switched off (no pairs), where only the prior changes.
// The applied state equals the naive (rho c, alpha c^-T).
func TestGroupShortcutMatchesBruteForce(t *testing.T) {
	const v, dim = 9, 3
	withCounts, _ := simulate(t, v, dim, 900, 11)
	noCounts := buildData(t, v, nil)
	anchors := []int{0, 4, 7} // runs of free tokens before, between and after
	anchor := anchorMask(v, anchors)
	r := rand.New(rand.NewPCG(2, 2))
	for name, d := range map[string]*Data{"counts": withCounts, "prior only": noCounts} {
		for trial := range 20 {
			p := randomParams(v, dim, 0.8)
			for k := range p.Rho {
				p.Rho[k] = r.NormFloat64()
				p.Alpha[k] = r.NormFloat64()
			}
			sd := 0.5 + r.Float64()
			g := newGroupMover(d, dim, 1/(sd*sd), anchors, anchor)
			// Any positive omegas will do for the identity; the mover
			// reads them in target order, as the sampler stores them.
			omega := map[[2]int]float64{}
			for i := range v {
				ctx, _, _ := d.TargetPairs(i)
				for _, j := range ctx {
					w := 0.05 + 2*r.Float64()
					omega[[2]int{i, int(j)}] = w
					g.omega = append(g.omega, w)
				}
			}
			x := make([]float64, dim*dim)
			for k := range x {
				x[k] = 0.4 * r.NormFloat64()
			}
			c, cInv := make([]float64, dim*dim), make([]float64, dim*dim)
			if _, ok := g.cayleyPair(c, cInv, x); !ok {
				t.Fatal("singular frame change")
			}
			g.begin(p)
			before := augmentedLogDensity(d, p, sd, omega)
			got := g.logTarget(c, cInv) - g.current
			q := applyFrame(p, c, anchor)
			want := augmentedLogDensity(d, q, sd, omega) - before
			if math.Abs(got-want) > 1e-10*math.Max(1, math.Abs(before)) {
				t.Errorf("%s trial %d: shortcut %.12g, brute force %.12g", name, trial, got, want)
			}
			// Accept the move and apply it.
			g.c, g.cInv = c, cInv
			g.apply()
			for k := range q.Rho {
				if math.Abs(q.Rho[k]-p.Rho[k]) > 1e-12 || math.Abs(q.Alpha[k]-p.Alpha[k]) > 1e-12 {
					t.Fatalf("%s trial %d: applied state differs from the naive one at %d", name, trial, k)
				}
			}
		}
	}
}

// TestSweepSharesOmegas checks the one-draw scan, on 2 threads with 1 and
// 2 inner steps: redoing each target's conditional draw alone from the
// state before the sweep with the same random stream gives the new rho_i
// bit for bit; redoing each free context's draw alone from its old vector,
// given the new rho and the omegas of the redone target draws (looked up
// by a linear search of each target's contexts, not through Data's
// positions), gives the new alpha_j bit for bit, so the alpha side read
// exactly the omegas the rho side drew. The sweep's buffer, which the
// frame-change moves read, must hold the rho side's draws for the
// anchors' pairs and the last draws of whichever side drew last for the
// others.
func TestSweepSharesOmegas(t *testing.T) {
	const v, dim, seed, chain, sw = 12, 3, 9, 1, 4
	d, truth := simulate(t, v, dim, 3000, 13)
	anchors := []int{2, 5, 11}
	anchor := anchorMask(v, anchors)
	for _, inner := range []int{1, 2} {
		cfg := GibbsConfig{Dim: dim, Threads: 2, Inner: inner, Seed: seed, Chains: 2}.withDefaults()
		s := newSampler(context.Background(), d, cfg, anchors)
		before := truth.Clone()
		p := truth.Clone()
		if err := s.sweep(chain, sw, p, nil); err != nil {
			t.Fatal(err)
		}
		s.close()
		buf := s.omega[chain]
		if len(buf) != d.Pairs() {
			t.Fatalf("inner %d: buffer of %d for %d pairs", inner, len(buf), d.Pairs())
		}
		ws := newWorkspace(dim, d.maxDegree(), false)
		ws.relax = cfg.Overrelax
		rhoOmega := make([][]float64, v) // the redone rho side's draws, by target
		for i := range v {
			ws.src.Seed(streamSeeds(seed, chain, sw, sideRho, i))
			x := slices.Clone(before.Target(i))
			ctx, n, kappa := d.TargetPairs(i)
			rhoOmega[i] = make([]float64, len(ctx))
			if err := ws.draw(x, ctx, n, kappa, before.Alpha, s.prec0, rhoOmega[i], false, inner); err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(x, p.Target(i)) {
				t.Fatalf("inner %d, target %d: redone draw %v, sweep's %v", inner, i, x, p.Target(i))
			}
		}
		stored := 0
		for j := range v {
			tgt, n, kappa := d.ContextPairs(j)
			given := make([]float64, len(tgt))
			for r, i := range tgt {
				ctx, _, _ := d.TargetPairs(int(i))
				given[r] = rhoOmega[i][slices.Index(ctx, int32(j))]
			}
			last := slices.Clone(given)
			if !anchor[j] {
				ws.src.Seed(streamSeeds(seed, chain, sw, sideAlpha, j))
				x := slices.Clone(before.Context(j))
				if err := ws.draw(x, tgt, n, kappa, p.Rho, s.prec0, last, true, inner); err != nil {
					t.Fatal(err)
				}
				if !slices.Equal(x, p.Context(j)) {
					t.Fatalf("inner %d, context %d: redone draw %v, sweep's %v", inner, j, x, p.Context(j))
				}
				if inner == 1 && !slices.Equal(last, given) {
					t.Fatalf("inner 1, context %d: a single step changed the given omegas", j)
				}
			} else if !slices.Equal(p.Context(j), before.Context(j)) {
				t.Fatalf("inner %d: anchor %d moved", inner, j)
			}
			for r, i := range tgt {
				ctx, _, _ := d.TargetPairs(int(i))
				q := d.tOff[i] + int64(slices.Index(ctx, int32(j)))
				if buf[q] != last[r] || !(buf[q] > 0) {
					t.Errorf("inner %d, pair (%d, %d): buffer %v, redone draw %v", inner, i, j, buf[q], last[r])
				}
				stored++
			}
		}
		if stored != d.Pairs() {
			t.Errorf("inner %d: checked %d of %d pairs", inner, stored, d.Pairs())
		}
	}
}

// TestCurvature compares the preconditioner's curvature with its
// definition summed naively over the anchors' pairs, u = vec(rho_i^T
// alpha_a) one pair at a time, plus the prior's quadratic form evaluated
// through tr(X^T R X) + tr(X Q X^T) on unit matrices.
func TestCurvature(t *testing.T) {
	const v, dim, sd = 9, 3, 0.8
	d, _ := simulate(t, v, dim, 2000, 12)
	anchors := []int{2, 5, 6}
	anchor := anchorMask(v, anchors)
	p := randomParams(v, dim, 0.9)
	g := newGroupMover(d, dim, 1/(sd*sd), anchors, anchor)
	got := g.curvature(p)
	n := dim * dim
	want := make([]float64, n*n)
	// Prior: the quadratic form q(X) = tr(X^T R X) + tr(X Q X^T) has
	// matrix K with q(e_a + e_b) - q(e_a) - q(e_b) = 2 K_ab.
	q := func(x []float64) float64 {
		var s float64
		for i := range v {
			rho := p.Target(i)
			for c := range dim { // ||rho_i X||^2
				var y float64
				for r := range dim {
					y += rho[r] * x[r*dim+c]
				}
				s += y * y
			}
			if !anchor[i] {
				alpha := p.Context(i)
				for r := range dim { // ||X alpha_i^T||^2
					var y float64
					for c := range dim {
						y += x[r*dim+c] * alpha[c]
					}
					s += y * y
				}
			}
		}
		return s / (sd * sd)
	}
	unit := func(ks ...int) []float64 {
		x := make([]float64, n)
		for _, k := range ks {
			x[k]++
		}
		return x
	}
	for a := range n {
		for b := range n {
			want[a*n+b] = (q(unit(a, b)) - q(unit(a)) - q(unit(b))) / 2
		}
	}
	for _, a := range anchors {
		tgt, cnt, _ := d.ContextPairs(a)
		for k, i := range tgt {
			x := p.Logit(int(i), a)
			w := cnt[k] * sigmoid(x) * sigmoid(-x)
			u := make([]float64, n)
			for r := range dim {
				for c := range dim {
					u[r*dim+c] = p.Target(int(i))[r] * p.Context(a)[c]
				}
			}
			for x1 := range n {
				for x2 := range n {
					want[x1*n+x2] += w * u[x1] * u[x2]
				}
			}
		}
	}
	for a := range n {
		for b := a; b < n; b++ {
			if math.Abs(got[a*n+b]-want[a*n+b]) > 1e-10*math.Max(1, math.Abs(want[a*n+b])) {
				t.Fatalf("H[%d,%d] = %v, naive %v", a, b, got[a*n+b], want[a*n+b])
			}
		}
	}
}

// TestGroupMovesKeepPrior: with no counts the anchored posterior is the
// prior (free vectors iid Normal(0, s^2), anchors fixed). Started from
// exact prior draws, a kernel that leaves the prior invariant keeps the
// draws distributed as the prior, however far it moves them; a wrong
// Jacobian or acceptance ratio shifts the scale of the vectors. Checked on
// independent replicates: the sums of squares of the targets and the free
// contexts (chi-square with V D and (V-D) D degrees of freedom, times
// s^2) and the log |det| of the first D target vectors, against their
// exact means, with z-scores from the replicates' spread.
func TestGroupMovesKeepPrior(t *testing.T) {
	for _, precond := range []bool{false, true} {
		t.Run(fmt.Sprintf("preconditioned=%v", precond), func(t *testing.T) { groupMovesKeepPrior(t, precond) })
	}
}

func groupMovesKeepPrior(t *testing.T, precond bool) {
	const v, dim, sd = 5, 2, 0.7
	reps := 20000
	if testing.Short() {
		reps = 6000
	}
	anchors := []int{1, 3}
	anchor := anchorMask(v, anchors)
	d := buildData(t, v, nil)
	g := newGroupMover(d, dim, 1/(sd*sd), anchors, anchor)
	r := rand.New(rand.NewPCG(3, 3))
	p := NewParams(v, dim)
	copy(p.Context(1), []float64{1.3, -0.2})
	copy(p.Context(3), []float64{0.4, 0.9})
	if precond {
		// A preconditioner from one prior draw, then fixed.
		for k := range p.Rho {
			p.Rho[k] = sd * r.NormFloat64()
			if !anchor[k/dim] {
				p.Alpha[k] = sd * r.NormFloat64()
			}
		}
		g.precondition(p)
		if g.precond == nil {
			t.Fatal("no preconditioner")
		}
		g.logEps = math.Log(1.5)
	} else {
		g.logEps = math.Log(0.6) // a bold step: about a third accepted
	}
	stats := make([][]float64, 3)
	accepted := 0
	for rep := range reps {
		for i := range v {
			for k := range dim {
				p.Rho[i*dim+k] = sd * r.NormFloat64()
				if !anchor[i] {
					p.Alpha[i*dim+k] = sd * r.NormFloat64()
				}
			}
		}
		g.pcg.Seed(streamSeeds(5, 0, rep, sideGroup, 0))
		accepted += g.run(p, 10, false)
		var free float64
		for i := range v {
			if !anchor[i] {
				free += sumSquares(p.Context(i))
			}
		}
		det := p.Rho[0]*p.Rho[3] - p.Rho[1]*p.Rho[2]
		stats[0] = append(stats[0], sumSquares(p.Rho)/(sd*sd))
		stats[1] = append(stats[1], free/(sd*sd))
		stats[2] = append(stats[2], math.Log(math.Abs(det)/(sd*sd)))
	}
	// E log|det| of a 2 x 2 standard normal matrix: det = x1 y2 - x2 y1
	// is the product of two independent variables, |det| ~ chi_2 * |N(0,1)|
	// by rotation invariance, so E log|det| = (log 2 - gamma)/2 +
	// (-gamma - log 2)/2 = -gamma.
	want := []float64{v * dim, float64((v - len(anchors)) * dim), -0.5772156649015329}
	names := []string{"sum rho^2", "sum free alpha^2", "log|det rho_0:2|"}
	rate := float64(accepted) / float64(10*reps)
	if rate < 0.1 {
		t.Fatalf("acceptance %.3f: the moves hardly move", rate)
	}
	for k, xs := range stats {
		var m, ss float64
		for _, x := range xs {
			m += x / float64(len(xs))
		}
		for _, x := range xs {
			ss += (x - m) * (x - m)
		}
		z := (m - want[k]) / math.Sqrt(ss/float64(len(xs)-1)/float64(len(xs)))
		t.Logf("%s: mean %.4f, exact %.4f, z = %.2f (acceptance %.3f)", names[k], m, want[k], z, rate)
		if !(math.Abs(z) <= 4.5) {
			t.Errorf("%s: mean %.4f, exact %.4f, z = %.2f", names[k], m, want[k], z)
		}
	}
}

// TestGibbsWithGroupMovesMatchesQuadrature checks the whole sampler with
// frame-change moves in D = 2, V = 3, anchors 1 and 2: the free vectors
// are rho_0..2 and alpha_0 (8 scalars). Given alpha_0 the rho_i are
// independent, so every marginal is an integral over alpha_0 (2-D) of
// products of 2-D integrals over rho_i: 4-D midpoint sums, on boxes found
// by a coarse pass.
func TestGibbsWithGroupMovesMatchesQuadrature(t *testing.T) {
	if testing.Short() {
		t.Skip("4-D quadrature")
	}
	const v, dim, sd = 3, 2, 1.0
	npos := [v][v]float64{{3, 5, 1}, {2, 1, 6}, {4, 2, 2}}
	nneg := [v][v]float64{{4, 1, 5}, {6, 3, 2}, {1, 5, 3}}
	var rows []formats.CountRow
	for i := range v {
		for j := range v {
			rows = append(rows, formats.CountRow{TargetID: int32(i), ContextID: int32(j), NPos: npos[i][j], NNeg: nneg[i][j]})
		}
	}
	d := buildData(t, v, rows)
	anch := [v][dim]float64{1: {0.9, -0.4}, 2: {0.3, 1.1}}
	ll := func(x, p, n float64) float64 { return p*math.Log(sigmoid(x)) + n*math.Log(sigmoid(-x)) }

	// Marginals of alpha_0[0..1] and rho_i[0..1] on boxes [lo, lo + N h).
	type box struct{ lo, h [2]float64 }
	const coarse, fine = 40, 56
	alphaBox := box{lo: [2]float64{-6, -6}, h: [2]float64{12.0 / coarse, 12.0 / coarse}}
	rhoBox := [v]box{alphaBox, alphaBox, alphaBox}
	var margA [2]marginal
	var margR [v][2]marginal
	for pass, n := range []int{coarse, fine} {
		at := func(b box, k, a int) float64 { return b.lo[k] + (float64(a)+0.5)*b.h[k] }
		// Two sweeps over the 4-D grid, so that the conditional densities
		// of rho_i given alpha_0 need not be stored: the first finds
		// log Z_i(alpha_0) = log of the integral over rho_i, which gives
		// the weights of alpha_0; the second adds the normalised
		// conditionals, weighted, into the marginals of rho_i.
		na := n * n
		fixed := make([][]float64, v) // [i][r]: prior and anchor terms of rho_i
		for i := range v {
			fixed[i] = make([]float64, na)
			for r := range na {
				x0, x1 := at(rhoBox[i], 0, r/n), at(rhoBox[i], 1, r%n)
				f := -(x0*x0 + x1*x1) / (2 * sd * sd)
				for j := 1; j < v; j++ {
					f += ll(x0*anch[j][0]+x1*anch[j][1], npos[i][j], nneg[i][j])
				}
				fixed[i][r] = f
			}
		}
		vals := make([]float64, na)
		// conditional fills vals with exp(log h_i(rho; alpha_a) - max)
		// and returns the max and the sum.
		conditional := func(i, a int) (float64, float64) {
			a0, a1 := at(alphaBox, 0, a/n), at(alphaBox, 1, a%n)
			mx := math.Inf(-1)
			for r := range na {
				x0, x1 := at(rhoBox[i], 0, r/n), at(rhoBox[i], 1, r%n)
				vals[r] = fixed[i][r] + ll(x0*a0+x1*a1, npos[i][0], nneg[i][0])
				mx = math.Max(mx, vals[r])
			}
			var z float64
			for r := range vals {
				vals[r] = math.Exp(vals[r] - mx)
				z += vals[r]
			}
			return mx, z
		}
		wa := make([]float64, na)
		mx := math.Inf(-1)
		for a := range na {
			a0, a1 := at(alphaBox, 0, a/n), at(alphaBox, 1, a%n)
			wa[a] = -(a0*a0 + a1*a1) / (2 * sd * sd)
			for i := range v {
				m, z := conditional(i, a)
				wa[a] += m + math.Log(z*rhoBox[i].h[0]*rhoBox[i].h[1])
			}
			mx = math.Max(mx, wa[a])
		}
		newMarg := func(b box, k int) marginal { return marginal{lo: b.lo[k], h: b.h[k], w: make([]float64, n)} }
		margA = [2]marginal{newMarg(alphaBox, 0), newMarg(alphaBox, 1)}
		for i := range v {
			margR[i] = [2]marginal{newMarg(rhoBox[i], 0), newMarg(rhoBox[i], 1)}
		}
		for a := range na {
			w := math.Exp(wa[a] - mx)
			margA[0].w[a/n] += w
			margA[1].w[a%n] += w
			for i := range v {
				_, z := conditional(i, a)
				for r, c := range vals {
					margR[i][0].w[r/n] += w * c / z
					margR[i][1].w[r%n] += w * c / z
				}
			}
		}
		if pass == 0 {
			shrink := func(m [2]marginal) box {
				var b box
				for k := range 2 {
					mean, s := m[k].moments()
					b.lo[k], b.h[k] = mean-8*s, 16*s/fine
				}
				return b
			}
			alphaBox = shrink(margA)
			for i := range v {
				rhoBox[i] = shrink(margR[i])
			}
		}
	}

	start := NewParams(v, dim)
	for j := 1; j < v; j++ {
		copy(start.Context(j), anch[j][:])
	}
	const chains = 4
	var fns []func(*Params) float64
	for k := range dim {
		fns = append(fns, func(p *Params) float64 { return p.Alpha[k] })
	}
	for i := range v {
		for k := range dim {
			fns = append(fns, func(p *Params) float64 { return p.Rho[i*dim+k] })
		}
	}
	col := newCollector(chains, fns...)
	res, err := Gibbs(context.Background(), d, start, GibbsConfig{
		Chains: chains, Warmup: 300, Draws: 5000, PriorSD: sd, Seed: 77, Init: InitPrior,
		Anchors: AnchorRule{Kind: AnchorIDs, IDs: []int{1, 2}},
	}, col)
	if err != nil {
		t.Fatal(err)
	}
	var acc float64
	for _, st := range col.stats {
		for _, s := range st {
			acc += s.GroupAccept / float64(chains*len(st))
		}
	}
	t.Logf("group moves: acceptance %.3f, steps %.3v", acc, res.GroupStep)
	if !(acc > 0.15 && acc < 0.45) {
		t.Errorf("acceptance %.3f, adapted toward %.2f", acc, groupAcceptTarget)
	}
	for k := range dim {
		checkAgainst(t, fmt.Sprintf("alpha_0[%d]", k), col.draws[k], margA[k])
	}
	for i := range v {
		for k := range dim {
			checkAgainst(t, fmt.Sprintf("rho_%d[%d]", i, k), col.draws[dim+i*dim+k], margR[i][k])
		}
	}
}

// TestSimulationBasedCalibration: truth drawn from the prior with the
// anchors' context vectors known, data drawn from the model given the
// truth, the sampler run on the data with the anchors fixed at their true
// values. The sampler then targets the exact posterior, so the rank of the
// true value of any scalar among L near-independent draws is uniform on
// 0..L (Talts et al. 2018). Ranks of raw coordinates, logits with a free
// and with an anchor context, and a cosine, binned in 10 bins over the
// replications, must pass a chi-square test at level 0.001/quantities.
func TestSimulationBasedCalibration(t *testing.T) {
	const v, dim, n = 5, 2, 150
	const draws, thin = 99, 4 // bulk ESS per kept draw 0.8-1.0 on the first replicates
	reps := 600
	if testing.Short() {
		reps = 60 // six expected per bin
	}
	anchors := []int{3, 4}
	quantities := []struct {
		name string
		f    func(p *Params) float64
	}{
		{"rho_0[0]", func(p *Params) float64 { return p.Rho[0] }},
		{"rho_4[1]", func(p *Params) float64 { return p.Rho[9] }},
		{"alpha_1[0]", func(p *Params) float64 { return p.Alpha[2] }},
		{"alpha_2[1]", func(p *Params) float64 { return p.Alpha[5] }},
		{"logit(1,2)", func(p *Params) float64 { return p.Logit(1, 2) }},
		{"logit(2,4)", func(p *Params) float64 { return p.Logit(2, 4) }},
		{"cos(rho_0,rho_1)", func(p *Params) float64 { return cosine(p.Target(0), p.Target(1)) }},
	}
	ranks := make([][]int, len(quantities))
	for rep := range reps {
		seed := uint64(1000 + rep)
		d, truth := simulate(t, v, dim, n, seed)
		start := NewParams(v, dim)
		for _, a := range anchors {
			copy(start.Context(a), truth.Context(a))
		}
		count := make([]int, len(quantities))
		_, err := Gibbs(context.Background(), d, start, GibbsConfig{
			Chains: 1, Warmup: 100, Draws: draws, Thin: thin, Init: InitPrior, Seed: seed, Threads: 1,
			Anchors: AnchorRule{Kind: AnchorIDs, IDs: anchors},
		}, SinkFunc(func(_, _ int, p *Params, _ DrawStats) error {
			for q, qt := range quantities {
				if qt.f(p) < qt.f(truth) {
					count[q]++
				}
			}
			return nil
		}))
		if err != nil {
			t.Fatal(err)
		}
		for q := range quantities {
			ranks[q] = append(ranks[q], count[q])
		}
	}
	const bins = 10
	alpha := 0.001 / float64(len(quantities))
	crit := distuv.ChiSquared{K: bins - 1}.Quantile(1 - alpha)
	for q, qt := range quantities {
		hist := make([]float64, bins)
		for _, r := range ranks[q] {
			hist[r*bins/(draws+1)]++
		}
		exp := float64(reps) / bins
		var chi2 float64
		for _, h := range hist {
			chi2 += (h - exp) * (h - exp) / exp
		}
		t.Logf("%s: chi2 %.1f (critical %.1f), histogram %v", qt.name, chi2, crit, hist)
		if !(chi2 <= crit) {
			t.Errorf("%s: rank histogram %v not uniform: chi2 %.1f > %.1f", qt.name, hist, chi2, crit)
		}
	}
}

func cosine(x, y []float64) float64 {
	return dot(x, y) / math.Sqrt(sumSquares(x)*sumSquares(y))
}

// BenchmarkGroupMove times one frame-change proposal (the matrix
// exponentials, the prior's traces and the anchors' augmented terms) on
// simulated data, and reports the once-per-run cost of the anchors'
// statistics k_a and M_a in ns/begin.
func BenchmarkGroupMove(b *testing.B) {
	for _, c := range []struct{ v, dim, n int }{{50, 2, 50_000}, {50, 5, 50_000}, {200, 10, 100_000}} {
		b.Run(fmt.Sprintf("V=%d/D=%d", c.v, c.dim), func(b *testing.B) {
			d, truth := simulate(b, c.v, c.dim, c.n, 1)
			anchors := make([]int, c.dim)
			for k := range anchors {
				anchors[k] = c.v - c.dim + k
			}
			g := newGroupMover(d, c.dim, 1, anchors, anchorMask(c.v, anchors))
			// E omega = n/4 at logit 0; the values do not change the cost.
			g.omega = make([]float64, d.Pairs())
			for k := range g.omega {
				g.omega[k] = 0.25
			}
			const begins = 100
			t0 := time.Now()
			for range begins {
				g.begin(truth)
			}
			perBegin := float64(time.Since(t0).Nanoseconds()) / begins
			b.ResetTimer()
			for range b.N {
				g.propose()
			}
			b.ReportMetric(perBegin, "ns/begin")
		})
	}
}
