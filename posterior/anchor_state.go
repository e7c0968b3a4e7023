package posterior

import (
	"context"
	"fmt"
	"math"
)

// AnchorValues says where the anchors' context vectors are fixed.
type AnchorValues int

const (
	// AnchorAuto, the default, uses the draw (AnchorAtDraw) when the MAP
	// is degenerate (AnchorStateResult.MAPDegenerate) and the MAP
	// otherwise. Anchors fixed at a draw mix much more slowly: at V = 200,
	// D = 10 (simulated, 4 x 500 draws, ten seeds) raw R-hat max was
	// 1.017-1.23 at the draw against 1.008-1.097 at the MAP, with 40-50 %
	// less raw ESS (BENCHMARKS.md), presumably because the block carries
	// a draw's noise, which the other vectors must follow. Where the MAP is not degenerate
	// the two cover alike within the simulation study's standard errors;
	// the draw predicts held-out data a little better with a prior wider
	// than the truth's at N = 1e4 (2-5e-3 nats, EXPERIMENTS.md).
	AnchorAuto AnchorValues = iota
	// AnchorAtDraw fixes them at a draw of the unanchored posterior (see
	// AnchorState): the likelihood is invariant under every change of
	// frame and the prior only under rotations, so what the anchored
	// posterior needs is an anchor block whose Gram matrix is typical of
	// the posterior. When the data are weak, the MAP's is far too small
	// (at the extreme the MAP is the origin) and pins every logit with an
	// anchor context near zero; a draw's is typical. In the simulation
	// study (EXPERIMENTS.md) it restores 90% coverage where the MAP is
	// degenerate (81-87% at the MAP).
	AnchorAtDraw
	// AnchorAtMAP fixes them at the MAP's values.
	AnchorAtMAP
)

// ParseAnchorValues reads "draw", "map" or "auto".
func ParseAnchorValues(s string) (AnchorValues, error) {
	switch s {
	case "draw":
		return AnchorAtDraw, nil
	case "map":
		return AnchorAtMAP, nil
	case "auto":
		return AnchorAuto, nil
	}
	return 0, fmt.Errorf("posterior: anchor values %q: want draw, map or auto", s)
}

// String returns the form ParseAnchorValues reads.
func (v AnchorValues) String() string {
	switch v {
	case AnchorAtDraw:
		return "draw"
	case AnchorAtMAP:
		return "map"
	}
	return "auto"
}

// DefaultAnchorSweeps is the length of the unanchored chain whose last
// state gives the anchor values. The chain starts at the MAP, and the
// quantity it must bring to its posterior law is the scale of the context
// vectors, which the Gibbs updates reach in a few sweeps even from the
// origin (given near-zero contexts, every rho_i is drawn from about its
// prior, and then every alpha_j from about its posterior); 100 sweeps
// cost a few percent of a default fit (4 chains x 1000 sweeps).
const DefaultAnchorSweeps = 100

// DegenerateMAPRatio is the threshold of MAPDegenerate: the MAP is
// degenerate when the mean squared coordinate of its context vectors is
// below this fraction of the posterior draw's. A draw is about the MAP
// plus posterior noise, so its mean square is about the MAP's plus the
// noise's variance, and the ratio is below 1/2 when the noise is larger
// than the MAP's own size: the data then do not determine the vectors
// beyond their noise (at the extreme the MAP is the origin, ratio 0).
// With much data the ratio is near 1. In the simulation study
// (EXPERIMENTS.md) it is 0.00-0.15 where anchoring at the MAP
// under-covers and 0.7-1.0 where it does not.
const DegenerateMAPRatio = 0.5

// AnchorStateConfig configures AnchorState. Zero fields take the defaults
// given.
type AnchorStateConfig struct {
	Rule   AnchorRule   // which tokens anchor; AnchorNone fixes nothing
	Values AnchorValues // where their context vectors are fixed
	// Sweeps is the length K of the unanchored chain; default
	// DefaultAnchorSweeps.
	Sweeps  int
	Jitter  float64 // sd of the jitter on the chain's start, the MAP; default GibbsConfig's
	PriorSD float64 // prior standard deviation s; default 1
	Threads int     // default GOMAXPROCS; the result does not depend on it
	// Seed is the fit's seed; the chain's is derived from it
	// (AnchorSeed), so that its random streams are not those of the
	// anchored chains that follow.
	Seed uint64
	// OnSweep, if not nil, is called after each sweep of the unanchored
	// chain, with the sweep counted from 0, for progress reports.
	OnSweep func(sweep int)
}

// AnchorStateResult is where anchored chains start.
type AnchorStateResult struct {
	// State is the start of the anchored chains: the anchors' context
	// vectors are fixed at its values. It is the MAP itself (not a copy)
	// when the MAP's values are used.
	State   *Params
	Anchors []int // chosen by the rule at State, ascending; nil for AnchorNone
	Drawn   bool  // State is the unanchored chain's last state
	// Sweeps is the length of the unanchored chain (0 when none ran).
	Sweeps int
	// ScaleRatio is the mean squared coordinate of the MAP's context
	// vectors over the draw's, for tokens with context counts (NaN when
	// no chain ran); AnchorAuto compares it with DegenerateMAPRatio.
	ScaleRatio float64
}

// AnchorSeed returns the seed of AnchorState's unanchored chain for a fit
// with the given seed.
func AnchorSeed(seed uint64) uint64 {
	const anchorStream = 0x616e63686f72 // "anchor"
	return splitmix64(seed ^ anchorStream)
}

// AnchorState chooses the anchors and the values their context vectors
// are fixed at, from the MAP m. For AnchorAtMAP it is ChooseAnchors at m.
// Otherwise one chain of the unanchored posterior (no frame-change moves)
// runs cfg.Sweeps sweeps from m with Gibbs' InitMAP jitter, the anchors
// are chosen by cfg.Rule at its last state, and that state is returned
// (for AnchorAuto only when MAPDegenerate says the MAP's values are too
// small). The result depends on the seed only, not on the threads.
func AnchorState(ctx context.Context, d *Data, m *Params, cfg AnchorStateConfig) (AnchorStateResult, error) {
	res := AnchorStateResult{State: m, ScaleRatio: math.NaN()}
	if cfg.Rule.Kind == AnchorNone || cfg.Values == AnchorAtMAP {
		var err error
		res.Anchors, err = ChooseAnchors(d, m, cfg.Rule)
		return res, err
	}
	if cfg.Sweeps == 0 {
		cfg.Sweeps = DefaultAnchorSweeps
	}
	if cfg.Sweeps < 1 {
		return res, fmt.Errorf("posterior: anchor sweeps %d, want at least 1", cfg.Sweeps)
	}
	warmup := cfg.Sweeps - 1
	if warmup == 0 {
		warmup = NoWarmup
	}
	var last *Params
	_, err := Gibbs(ctx, d, m, GibbsConfig{
		Chains: 1, Warmup: warmup, Draws: 1, Init: InitMAP, Jitter: cfg.Jitter, PriorSD: cfg.PriorSD,
		Threads: cfg.Threads, Seed: AnchorSeed(cfg.Seed), Anchors: AnchorRule{Kind: AnchorNone}, GroupMoves: NoGroupMoves,
		OnSweep: onAnchorSweep(cfg.OnSweep),
	}, SinkFunc(func(_, _ int, p *Params, _ DrawStats) error {
		last = p.Clone()
		return nil
	}))
	if err != nil {
		return res, fmt.Errorf("posterior: unanchored chain for the anchor values: %w", err)
	}
	res.Sweeps, res.ScaleRatio = cfg.Sweeps, contextScaleRatio(d, m, last)
	if cfg.Values == AnchorAuto && !res.MAPDegenerate() {
		res.Anchors, err = ChooseAnchors(d, m, cfg.Rule)
		return res, err
	}
	res.State, res.Drawn = last, true
	res.Anchors, err = ChooseAnchors(d, last, cfg.Rule)
	return res, err
}

// onAnchorSweep adapts AnchorStateConfig.OnSweep to the one chain's hook.
func onAnchorSweep(f func(sweep int)) func(chain, sweep int) {
	if f == nil {
		return nil
	}
	return func(_, sweep int) { f(sweep) }
}

// MAPDegenerate reports whether res says the MAP's context vectors are
// too small to anchor at: their mean squared coordinate is below
// DegenerateMAPRatio times a posterior draw's.
func (res AnchorStateResult) MAPDegenerate() bool {
	return res.ScaleRatio < DegenerateMAPRatio
}

// contextScaleRatio returns sum |alpha_j|^2 at m over the same at p, over
// the tokens with context counts (the others are only prior draws).
func contextScaleRatio(d *Data, m, p *Params) float64 {
	var sm, sp float64
	for j := range d.v {
		if d.degree(sideAlpha, j) > 0 {
			sm += sumSquares(m.Context(j))
			sp += sumSquares(p.Context(j))
		}
	}
	return sm / sp
}
