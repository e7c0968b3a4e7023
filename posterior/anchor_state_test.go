package posterior

import (
	"context"
	"math"
	"slices"
	"testing"

	"gonum.org/v1/gonum/stat/distuv"

	"github.com/pwe-project/pwe/formats"
	"github.com/pwe-project/pwe/posterior/diag"
)

// lastState runs the unanchored chain AnchorState documents in another
// shape (every sweep kept, no warmup) and returns its state after the
// given sweeps: the random streams are keyed by sweep, so the state must
// be the same.
func lastState(t *testing.T, d *Data, m *Params, sweeps int, priorSD float64, seed uint64) *Params {
	t.Helper()
	var last *Params
	_, err := Gibbs(context.Background(), d, m, GibbsConfig{
		Chains: 1, Warmup: NoWarmup, Draws: sweeps, PriorSD: priorSD, Threads: 1, Seed: AnchorSeed(seed),
		Anchors: AnchorRule{Kind: AnchorNone}, GroupMoves: NoGroupMoves,
	}, SinkFunc(func(_, draw int, p *Params, _ DrawStats) error {
		if draw == sweeps-1 {
			last = p.Clone()
		}
		return nil
	}))
	if err != nil {
		t.Fatal(err)
	}
	return last
}

func TestAnchorStateIsTheChainsLastState(t *testing.T) {
	d, _ := simulate(t, 30, 3, 3000, 5)
	m := mapFor(t, d, 3)
	const sweeps, seed = 7, 11
	want := lastState(t, d, m, sweeps, 1, seed)
	wantAnchors, err := ChooseAnchors(d, want, AnchorRule{})
	if err != nil {
		t.Fatal(err)
	}
	var ref AnchorStateResult
	for _, threads := range []int{1, 2, 3} {
		var seen []int // OnSweep's calls, in order
		res, err := AnchorState(context.Background(), d, m, AnchorStateConfig{Values: AnchorAtDraw, Sweeps: sweeps, Threads: threads, Seed: seed,
			OnSweep: func(sweep int) { seen = append(seen, sweep) }})
		if err != nil {
			t.Fatal(err)
		}
		if len(seen) != sweeps || seen[0] != 0 || seen[sweeps-1] != sweeps-1 {
			t.Fatalf("threads %d: OnSweep saw sweeps %v, want 0..%d", threads, seen, sweeps-1)
		}
		if !res.Drawn || res.Sweeps != sweeps || res.State == m {
			t.Fatalf("threads %d: drawn %v after %d sweeps, state is the MAP: %v", threads, res.Drawn, res.Sweeps, res.State == m)
		}
		if !slices.Equal(res.Anchors, wantAnchors) {
			t.Fatalf("threads %d: anchors %v, want %v (the rule at the chain's last state)", threads, res.Anchors, wantAnchors)
		}
		if !slices.Equal(res.State.Rho, want.Rho) || !slices.Equal(res.State.Alpha, want.Alpha) {
			t.Fatalf("threads %d: state differs from the unanchored chain's after %d sweeps", threads, sweeps)
		}
		for _, a := range res.Anchors {
			if slices.Equal(res.State.Context(a), m.Context(a)) {
				t.Fatalf("anchor %d's context vector is the MAP's", a)
			}
		}
		if threads == 1 {
			ref = res
		} else if res.ScaleRatio != ref.ScaleRatio {
			t.Fatalf("threads %d: scale ratio %v, with 1 thread %v", threads, res.ScaleRatio, ref.ScaleRatio)
		}
	}
	other, err := AnchorState(context.Background(), d, m, AnchorStateConfig{Values: AnchorAtDraw, Sweeps: sweeps, Seed: seed + 1})
	if err != nil {
		t.Fatal(err)
	}
	if slices.Equal(other.State.Alpha, want.Alpha) {
		t.Fatal("another seed gave the same state")
	}
}

func TestAnchorStateAtMAP(t *testing.T) {
	d, _ := simulate(t, 30, 3, 3000, 5)
	m := mapFor(t, d, 3)
	res, err := AnchorState(context.Background(), d, m, AnchorStateConfig{Values: AnchorAtMAP, Rule: AnchorRule{Kind: AnchorFirst}})
	if err != nil {
		t.Fatal(err)
	}
	if res.State != m || res.Drawn || res.Sweeps != 0 || !slices.Equal(res.Anchors, []int{0, 1, 2}) || !math.IsNaN(res.ScaleRatio) {
		t.Fatalf("got %+v, want the MAP itself with anchors 0,1,2 and no chain", res)
	}
	res, err = AnchorState(context.Background(), d, m, AnchorStateConfig{Rule: AnchorRule{Kind: AnchorNone}})
	if err != nil || res.State != m || res.Anchors != nil || res.Drawn {
		t.Fatalf("anchors none: got %+v, %v; want the MAP and no anchors", res, err)
	}
	if _, err := AnchorState(context.Background(), d, m, AnchorStateConfig{Sweeps: -1}); err == nil {
		t.Fatal("negative sweeps accepted")
	}
}

// With a handful of observations and a narrow prior the MAP is the origin;
// the draw's context vectors then have the posterior's scale, which is
// about the prior's: the mean of n squared coordinates is s^2 within
// 5 sd of a chi-square mean, s^2 sqrt(2/n). With much data the MAP is
// not degenerate and auto keeps it; the scale ratio it reports is then
// checked against the law of the ratio over draws of the same chain
// (strongScaleRatio).
func TestAnchorStateAuto(t *testing.T) {
	const v, dim, s = 100, 2, 0.3
	var rows []formats.CountRow
	for k := range 10 {
		rows = append(rows, formats.CountRow{TargetID: int32(k), ContextID: int32(k + 1), NPos: 1})
	}
	for j := range v {
		rows = append(rows, formats.CountRow{TargetID: int32((j + 50) % v), ContextID: int32(j), NNeg: 1})
	}
	slices.SortFunc(rows, func(a, b formats.CountRow) int {
		if a.TargetID != b.TargetID {
			return int(a.TargetID - b.TargetID)
		}
		return int(a.ContextID - b.ContextID)
	})
	weak := buildData(t, v, rows)
	m, _, err := MAP(context.Background(), weak, MAPConfig{Dim: dim, PriorSD: s, Seed: 1, GradTol: 1e-6})
	if err != nil {
		t.Fatal(err)
	}
	if n := math.Sqrt(sumSquares(m.Alpha) + sumSquares(m.Rho)); n > 1e-3 {
		t.Fatalf("weak data's MAP has norm %v, want the origin", n)
	}
	res, err := AnchorState(context.Background(), weak, m, AnchorStateConfig{Values: AnchorAuto, PriorSD: s, Seed: 3})
	if err != nil {
		t.Fatal(err)
	}
	if !res.Drawn || !res.MAPDegenerate() || !(res.ScaleRatio < 1e-3) {
		t.Fatalf("weak data: drawn %v, scale ratio %v; want the draw", res.Drawn, res.ScaleRatio)
	}
	n := float64(v * dim)
	ms := sumSquares(res.State.Alpha) / n
	if z := (ms - s*s) / (s * s * math.Sqrt(2/n)); math.Abs(z) > 5 {
		t.Fatalf("draw's mean squared context coordinate %v, prior's %v (z = %.1f)", ms, s*s, z)
	}

	strong, _ := simulate(t, 30, 3, 30000, 5)
	m = mapFor(t, strong, 3)
	res, err = AnchorState(context.Background(), strong, m, AnchorStateConfig{Values: AnchorAuto, Seed: 3})
	if err != nil {
		t.Fatal(err)
	}
	if res.Drawn || res.State != m || res.MAPDegenerate() {
		t.Fatalf("strong data: drawn %v, scale ratio %v; want the MAP", res.Drawn, res.ScaleRatio)
	}
	want, err := ChooseAnchors(strong, m, AnchorRule{})
	if err != nil || !slices.Equal(res.Anchors, want) {
		t.Fatalf("strong data: anchors %v, want the MAP's %v (%v)", res.Anchors, want, err)
	}
	strongScaleRatio(t, strong, m, res.ScaleRatio, lastState(t, strong, m, DefaultAnchorSweeps, 1, 3))
}

// strongScaleRatio checks got, AnchorState's scale ratio: the MAP's
// context sum of squares (over the tokens with context counts) over that
// of last, the chain's last state, to rounding. That is one draw, so got
// is checked against the ratio's law too: chains x draws reference draws
// of the same chain (unanchored, from the MAP, no frame-change moves,
// another seed), from the sweep whose state AnchorState keeps on, give a
// mean, an sd (the spread of one draw) and the mean's Monte Carlo error
// (sd over the root of the ESS). got must lie within the two-sided 10^-3
// normal bound of that mean, the two errors combined as its standard
// error, and DegenerateMAPRatio below the bound, so that auto keeping the
// MAP does not depend on the seed.
func strongScaleRatio(t *testing.T, d *Data, m *Params, got float64, last *Params) {
	t.Helper()
	const chains, draws = 4, 100
	contextSS := func(p *Params) float64 {
		var ss float64
		for j := range d.v {
			if d.degree(sideAlpha, j) > 0 {
				ss += sumSquares(p.Context(j))
			}
		}
		return ss
	}
	mapSS := contextSS(m)
	if want := mapSS / contextSS(last); math.Abs(got-want) > 1e-14*want {
		t.Fatalf("strong data: scale ratio %v, the chain's last state gives %v", got, want)
	}
	ref := newCollector(chains, func(p *Params) float64 { return mapSS / contextSS(p) })
	_, err := Gibbs(context.Background(), d, m, GibbsConfig{
		Chains: chains, Warmup: DefaultAnchorSweeps - 1, Draws: draws, Init: InitMAP, Threads: 1, Seed: 17,
		Anchors: AnchorRule{Kind: AnchorNone}, GroupMoves: NoGroupMoves,
	}, ref)
	if err != nil {
		t.Fatal(err)
	}
	ratios := ref.draws[0]
	mean, sd, mcse := flatMean(ratios), flatSD(ratios), diag.MCSEMean(ratios)
	crit := distuv.UnitNormal.Quantile(1 - 1e-3/2)
	z := (got - mean) / math.Hypot(sd, mcse)
	t.Logf("strong data: scale ratio %.4f; reference draws %.4f, sd %.4f, MCSE %.4f (ESS %.0f); z = %.2f (critical %.2f)",
		got, mean, sd, mcse, diag.ESSBasic(ratios), z, crit)
	if math.Abs(z) > crit {
		t.Errorf("strong data: scale ratio %.4f is not a draw of the ratio's law, mean %.4f, sd %.4f (z = %.2f)", got, mean, sd, z)
	}
	if mean-crit*math.Hypot(sd, mcse) <= DegenerateMAPRatio {
		t.Errorf("strong data: the ratio's law, mean %.4f, sd %.4f, does not clear DegenerateMAPRatio %v", mean, sd, DegenerateMAPRatio)
	}
}

func TestParseAnchorValues(t *testing.T) {
	for _, v := range []AnchorValues{AnchorAtDraw, AnchorAtMAP, AnchorAuto} {
		got, err := ParseAnchorValues(v.String())
		if err != nil || got != v {
			t.Errorf("%v: parsed as %v, %v", v, got, err)
		}
	}
	if _, err := ParseAnchorValues("mode"); err == nil {
		t.Error("mode accepted")
	}
}
