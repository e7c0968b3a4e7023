package posterior

import (
	"context"
	"fmt"
	"math"
	"testing"

	"github.com/pwe-project/pwe/formats"
	"github.com/pwe-project/pwe/posterior/diag"
)

// marginal is a density known on a uniform grid of cell midpoints.
type marginal struct {
	lo, h float64
	w     []float64 // unnormalised mass of each cell
}

func (m marginal) x(k int) float64 { return m.lo + (float64(k)+0.5)*m.h }

func (m marginal) moments() (mean, sd float64) {
	var z, s1, s2 float64
	for k, w := range m.w {
		z += w
		s1 += w * m.x(k)
	}
	mean = s1 / z
	for k, w := range m.w {
		s2 += w * (m.x(k) - mean) * (m.x(k) - mean)
	}
	return mean, math.Sqrt(s2 / z)
}

// quantile inverts the piecewise-linear CDF through the cell edges.
func (m marginal) quantile(p float64) float64 {
	var z float64
	for _, w := range m.w {
		z += w
	}
	var c float64
	for k, w := range m.w {
		if c+w >= p*z {
			return m.lo + m.h*(float64(k)+(p*z-c)/w)
		}
		c += w
	}
	return m.lo + m.h*float64(len(m.w))
}

// checkAgainst compares draws (per chain) with the exact marginal: the
// mean and the standard deviation through their Monte Carlo standard
// errors (from the ESS), and the 5% and 95% quantiles through the CDF: at
// the exact quantile q_p the indicator x <= q_p has mean p, and the MCSE of
// its average follows from the indicator's own ESS, which accounts for the
// autocorrelation that a binomial bound would ignore. The exact values come
// from quadrature whose error is far below the Monte Carlo error, so
// |z| <= 4.5 fails by chance with probability below 1e-5 per statistic.
func checkAgainst(t *testing.T, name string, chains [][]float64, m marginal) {
	t.Helper()
	const zmax = 4.5
	mean, sd := m.moments()
	var all []float64
	for _, c := range chains {
		all = append(all, c...)
	}
	var s1, s2 float64
	for _, v := range all {
		s1 += v
	}
	gotMean := s1 / float64(len(all))
	for _, v := range all {
		s2 += (v - gotMean) * (v - gotMean)
	}
	gotSD := math.Sqrt(s2 / float64(len(all)-1))
	if z := (gotMean - mean) / diag.MCSEMean(chains); !(math.Abs(z) <= zmax) {
		t.Errorf("%s: mean %.5f, exact %.5f, z = %.2f", name, gotMean, mean, z)
	}
	if z := (gotSD - sd) / diag.MCSESD(chains); !(math.Abs(z) <= zmax) {
		t.Errorf("%s: sd %.5f, exact %.5f, z = %.2f", name, gotSD, sd, z)
	}
	for _, p := range []float64{0.05, 0.95} {
		q := m.quantile(p)
		ind := make([][]float64, len(chains))
		var hits float64
		for c, ch := range chains {
			ind[c] = make([]float64, len(ch))
			for k, v := range ch {
				if v <= q {
					ind[c][k] = 1
					hits++
				}
			}
		}
		frac := hits / float64(len(all))
		if z := (frac - p) / diag.MCSEMean(ind); !(math.Abs(z) <= zmax) {
			t.Errorf("%s: P(x <= exact q%.0f = %.4f) = %.4f, want %.2f, z = %.2f", name, 100*p, q, frac, p, z)
		}
	}
	t.Logf("%s: mean %.4f (exact %.4f), sd %.4f (exact %.4f), ESS bulk %.0f", name, gotMean, mean, gotSD, sd, diag.ESSBulk(chains))
}

// The quadratures evaluate log sigmoid naively, as math.Log of the
// sigmoid: independent of logSigmoid and accurate for the |x| < 60 they
// meet.

// TestGibbsMatchesQuadrature checks the whole sampler, both sides and the
// anchoring, on V = 2, D = 1 with token 1 the anchor: the free scalars are
// rho_0, rho_1 and alpha_0. Given alpha_0 the posterior factorises into
// h_0(rho_0) h_1(rho_1), so the 3-D integrals reduce exactly to sums over a
// 2-D grid (alpha_0, rho).
func TestGibbsMatchesQuadrature(t *testing.T) {
	rows := []formats.CountRow{
		{TargetID: 0, ContextID: 0, NPos: 3, NNeg: 5},
		{TargetID: 0, ContextID: 1, NPos: 6, NNeg: 2},
		{TargetID: 1, ContextID: 0, NPos: 2, NNeg: 7},
		{TargetID: 1, ContextID: 1, NPos: 4, NNeg: 4},
	}
	d := buildData(t, 2, rows)
	const anchor, sd = 0.8, 1.2
	start := NewParams(2, 1)
	start.Alpha[1] = anchor
	start.Alpha[0] = -0.3
	start.Rho[0], start.Rho[1] = 0.5, -0.5

	// Quadrature: midpoint rule on [-L, L]^2 with the prior sd 1.2 putting
	// the edges 6.7 sd out.
	const L, N = 8.0, 1000
	h := 2 * L / N
	grid := func(k int) float64 { return -L + (float64(k)+0.5)*h }
	logPrior := func(x float64) float64 { return -x * x / (2 * sd * sd) }
	ll := func(x, npos, nneg float64) float64 {
		return npos*math.Log(sigmoid(x)) + nneg*math.Log(sigmoid(-x))
	}
	// H_i[a][r] = log h_i(r; alpha_0 = grid(a)).
	H := [2][]float64{make([]float64, N*N), make([]float64, N*N)}
	maxH := [2]float64{math.Inf(-1), math.Inf(-1)}
	for a := range N {
		for r := range N {
			for i := range 2 {
				ra, rb := rows[2*i], rows[2*i+1] // (i, 0) and (i, 1)
				v := logPrior(grid(r)) + ll(grid(r)*grid(a), ra.NPos, ra.NNeg) + ll(grid(r)*anchor, rb.NPos, rb.NNeg)
				H[i][a*N+r] = v
				maxH[i] = math.Max(maxH[i], v)
			}
		}
	}
	var Z [2][]float64
	for i := range 2 {
		Z[i] = make([]float64, N)
		for a := range N {
			for r := range N {
				H[i][a*N+r] = math.Exp(H[i][a*N+r] - maxH[i])
				Z[i][a] += H[i][a*N+r]
			}
		}
	}
	margAlpha := marginal{lo: -L, h: h, w: make([]float64, N)}
	margRho := [2]marginal{{lo: -L, h: h, w: make([]float64, N)}, {lo: -L, h: h, w: make([]float64, N)}}
	for a := range N {
		pa := math.Exp(logPrior(grid(a)))
		margAlpha.w[a] = pa * Z[0][a] * Z[1][a]
		for i := range 2 {
			wa := pa * Z[1-i][a]
			for r := range N {
				margRho[i].w[r] += wa * H[i][a*N+r]
			}
		}
	}

	for _, moves := range []int{NoGroupMoves, DefaultGroupMoves} {
		for _, relax := range []float64{NoOverrelax, -maxDefaultOverrelax} {
			t.Run(fmt.Sprintf("group moves %d overrelax %g", max(moves, 0), relax), func(t *testing.T) {
				gibbsVersusQuadrature(t, d, start, anchor, sd, margRho, margAlpha, moves, relax, 1)
			})
		}
	}
	// Inner > 1: the alpha side's later steps redraw the stored omegas and
	// write them back before the moves read them.
	t.Run("inner 3", func(t *testing.T) {
		gibbsVersusQuadrature(t, d, start, anchor, sd, margRho, margAlpha, DefaultGroupMoves, -maxDefaultOverrelax, 3)
	})
}

// gibbsVersusQuadrature runs the sampler on TestGibbsMatchesQuadrature's
// problem and compares the draws with the exact marginals.
func gibbsVersusQuadrature(t *testing.T, d *Data, start *Params, anchor, sd float64, margRho [2]marginal, margAlpha marginal, moves int, relax float64, inner int) {
	const chains = 4
	col := newCollector(chains,
		func(p *Params) float64 { return p.Rho[0] },
		func(p *Params) float64 { return p.Rho[1] },
		func(p *Params) float64 { return p.Alpha[0] },
		func(p *Params) float64 { return p.Alpha[1] },
	)
	res, err := Gibbs(context.Background(), d, start, GibbsConfig{
		Chains: chains, Warmup: 200, Draws: 6000, PriorSD: sd, Seed: 2024, Anchors: AnchorRule{Kind: AnchorLast}, Jitter: 0.5,
		GroupMoves: moves, Overrelax: relax, Inner: inner,
	}, col)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Anchors) != 1 || res.Anchors[0] != 1 {
		t.Fatalf("anchors %v, want [1]", res.Anchors)
	}
	for c := range chains {
		for _, v := range col.draws[3][c] {
			if v != anchor {
				t.Fatalf("anchor alpha_1 moved to %v", v)
			}
		}
	}
	checkAgainst(t, "rho_0", col.draws[0], margRho[0])
	checkAgainst(t, "rho_1", col.draws[1], margRho[1])
	checkAgainst(t, "alpha_0", col.draws[2], margAlpha)
}

// TestConditionalDrawMatchesQuadrature checks one token's conditional in
// D = 2, every other vector fixed: the (PG, Gaussian) steps of
// workspace.draw iterated form a Markov chain whose stationary law must be
// the conditional posterior of rho_i, computed by 2-D quadrature. Two
// cases: small counts with a wide prior, and large counts (PG(b, c) with b
// in the hundreds) with a narrow one.
func TestConditionalDrawMatchesQuadrature(t *testing.T) {
	cases := []struct {
		name    string
		others  []float64 // context vectors, row-major m x 2
		npos    []float64
		nneg    []float64
		priorSD float64
		inner   int
	}{
		{"small counts", []float64{1, 0.2, -0.5, 1.1, 0.3, -0.8, 1.5, 1.5}, []float64{2, 0, 3, 1}, []float64{1, 2, 0, 2}, 2, 1},
		{"large counts", []float64{0.9, -0.4, 0.2, 1.3, -1.1, 0.6}, []float64{420, 35, 260.5}, []float64{180, 610, 99.5}, 0.5, 3},
	}
	for _, tc := range cases {
		for _, relax := range []float64{0, -maxDefaultOverrelax} {
			t.Run(fmt.Sprintf("%s overrelax %g", tc.name, relax), func(t *testing.T) {
				conditionalVersusQuadrature(t, tc.others, tc.npos, tc.nneg, tc.priorSD, tc.inner, relax)
			})
		}
	}
}

// conditionalVersusQuadrature runs TestConditionalDrawMatchesQuadrature's
// chains for one case with the given overrelaxation of the Gaussian step.
func conditionalVersusQuadrature(t *testing.T, others, npos, nneg []float64, priorSD float64, inner int, relax float64) {
	m := len(npos)
	idx := make([]int32, m)
	n := make([]float64, m)
	kappa := make([]float64, m)
	for r := range m {
		idx[r] = int32(r)
		n[r] = npos[r] + nneg[r]
		kappa[r] = npos[r] - n[r]/2
	}
	logDens := func(x0, x1 float64) float64 {
		v := -(x0*x0 + x1*x1) / (2 * priorSD * priorSD)
		for r := range m {
			x := x0*others[2*r] + x1*others[2*r+1]
			v += npos[r]*math.Log(sigmoid(x)) + nneg[r]*math.Log(sigmoid(-x))
		}
		return v
	}
	// Two passes: a coarse grid over the prior's range locates the
	// posterior, a fine one over its mean +- 12 sd integrates it.
	box := [2][2]float64{{-7 * priorSD, 7 * priorSD}, {-7 * priorSD, 7 * priorSD}}
	var marg [2]marginal
	for pass, N := range []int{300, 900} {
		hx := (box[0][1] - box[0][0]) / float64(N)
		hy := (box[1][1] - box[1][0]) / float64(N)
		vals := make([]float64, N*N)
		mx := math.Inf(-1)
		for a := range N {
			for b := range N {
				v := logDens(box[0][0]+(float64(a)+0.5)*hx, box[1][0]+(float64(b)+0.5)*hy)
				vals[a*N+b] = v
				mx = math.Max(mx, v)
			}
		}
		marg = [2]marginal{{lo: box[0][0], h: hx, w: make([]float64, N)}, {lo: box[1][0], h: hy, w: make([]float64, N)}}
		for a := range N {
			for b := range N {
				w := math.Exp(vals[a*N+b] - mx)
				marg[0].w[a] += w
				marg[1].w[b] += w
			}
		}
		if pass == 0 {
			for k := range 2 {
				mean, sd := marg[k].moments()
				box[k] = [2]float64{mean - 12*sd, mean + 12*sd}
			}
		}
	}

	const chains, draws = 4, 8000
	ws := newWorkspace(2, m, false)
	ws.relax = relax
	rho := make([][][]float64, 2)
	for k := range 2 {
		rho[k] = make([][]float64, chains)
	}
	for c := range chains {
		x := []float64{float64(c) - 1.5, 1 - float64(c)*0.5}
		for it := range draws + 100 {
			ws.src.Seed(streamSeeds(77, c, it, sideRho, 0))
			if err := ws.draw(x, idx, n, kappa, others, 1/(priorSD*priorSD), ws.omega[:len(idx)], false, inner); err != nil {
				t.Fatal(err)
			}
			if it >= 100 {
				rho[0][c] = append(rho[0][c], x[0])
				rho[1][c] = append(rho[1][c], x[1])
			}
		}
	}
	checkAgainst(t, "rho[0]", rho[0], marg[0])
	checkAgainst(t, "rho[1]", rho[1], marg[1])
}
