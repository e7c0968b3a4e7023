//go:build openblas

package posterior

import (
	"context"
	"fmt"
	"math"
	"testing"

	"github.com/pwe-project/pwe/posterior/diag"
)

// TestOpenBLASMatchesGonum checks that the two backends give the same
// token update and the same sweep, given the same random streams, up to
// rounding.
func TestOpenBLASMatchesGonum(t *testing.T) {
	for _, tc := range []struct{ dim, m int }{{3, 20}, {50, 700}, {100, 300}} {
		c := newConditionalCase(tc.dim, tc.m, 5)
		var got [2][]float64
		for k, be := range []dense{gonumDense, openblasDense} {
			ws := newWorkspaceWith(be, tc.dim, tc.m, false)
			ws.src.Seed(3, 4)
			got[k] = append([]float64(nil), c.x...)
			if err := ws.draw(got[k], c.idx, c.n, c.kappa, c.other, 1, ws.omega[:tc.m], false, 2); err != nil {
				t.Fatal(err)
			}
		}
		if d := maxRelDiff(got[1], got[0]); !(d < 1e-12) {
			t.Errorf("D=%d m=%d: openblas update differs from gonum's by %g", tc.dim, tc.m, d)
		}
	}

	d := zipfData(t, 300, 20_000)
	const dim = 30
	var sweeps [2]*Params
	for k, be := range []dense{gonumDense, openblasDense} {
		defaultDense = be
		s := newSampler(context.Background(), d, GibbsConfig{Dim: dim, Threads: 2}.withDefaults(), nil)
		p := randomParams(d.V(), dim, 0.3)
		err := s.sweep(0, 0, p, nil)
		s.close()
		if err != nil {
			t.Fatal(err)
		}
		sweeps[k] = p
	}
	defaultDense = openblasDense
	if dr, da := maxRelDiff(sweeps[1].Rho, sweeps[0].Rho), maxRelDiff(sweeps[1].Alpha, sweeps[0].Alpha); !(dr < 1e-10 && da < 1e-10) {
		t.Errorf("openblas sweep differs from gonum's by %g (targets), %g (contexts)", dr, da)
	}
}

// TestOpenBLASPosteriorMatchesGonum runs the sampler with each backend and
// different seeds and compares the posterior means and standard deviations
// of a few logits, with z-scores from the chains' Monte Carlo errors.
func TestOpenBLASPosteriorMatchesGonum(t *testing.T) {
	d, _ := simulate(t, 12, 3, 3000, 21)
	pairs := [][2]int{{0, 0}, {1, 5}, {4, 2}, {7, 7}, {11, 3}}
	var fns []func(p *Params) float64
	for _, ij := range pairs {
		fns = append(fns, func(p *Params) float64 { return p.Logit(ij[0], ij[1]) })
	}
	var runs [2]*collector
	for k, be := range []dense{gonumDense, openblasDense} {
		defaultDense = be
		runs[k] = newCollector(4, fns...)
		cfg := GibbsConfig{Dim: 3, Chains: 4, Warmup: 200, Draws: 500, Init: InitPrior, Anchors: AnchorRule{Kind: AnchorNone}, GroupMoves: NoGroupMoves, Threads: 2, Seed: uint64(100 + k)}
		_, err := Gibbs(context.Background(), d, nil, cfg, runs[k])
		defaultDense = openblasDense
		if err != nil {
			t.Fatal(err)
		}
	}
	const zmax = 4 // five pairs, two statistics: P(any |z| > 4) is about 6e-4
	for q, ij := range pairs {
		name := fmt.Sprintf("logit(%d, %d)", ij[0], ij[1])
		a, b := runs[0].draws[q], runs[1].draws[q]
		meanA, sdA := meanSD(a)
		meanB, sdB := meanSD(b)
		t.Logf("%s: mean %.4f against %.4f, sd %.4f against %.4f, ESS %.0f and %.0f", name, meanA, meanB, sdA, sdB, diag.ESSBulk(a), diag.ESSBulk(b))
		if z := (meanA - meanB) / math.Hypot(diag.MCSEMean(a), diag.MCSEMean(b)); !(math.Abs(z) <= zmax) {
			t.Errorf("%s: mean %.4f (gonum) against %.4f (openblas), z = %.2f", name, meanA, meanB, z)
		}
		if z := (sdA - sdB) / math.Hypot(diag.MCSESD(a), diag.MCSESD(b)); !(math.Abs(z) <= zmax) {
			t.Errorf("%s: sd %.4f (gonum) against %.4f (openblas), z = %.2f", name, sdA, sdB, z)
		}
	}
}

// meanSD returns the mean and standard deviation of all chains' draws.
func meanSD(chains [][]float64) (mean, sd float64) {
	var n, s1, s2 float64
	for _, c := range chains {
		for _, v := range c {
			n++
			s1 += v
		}
	}
	mean = s1 / n
	for _, c := range chains {
		for _, v := range c {
			s2 += (v - mean) * (v - mean)
		}
	}
	return mean, math.Sqrt(s2 / (n - 1))
}
