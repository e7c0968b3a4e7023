package stages

import (
	"context"
	"fmt"
	"time"

	"github.com/pwe-project/pwe/posterior"
)

// LaplaceStats describe the Laplace approximation of a fit with method
// "laplace" (FitStats.Laplace).
type LaplaceStats struct {
	// Mode is "dense" or "per-token", as resolved from FitConfig.Laplace.
	Mode string `json:"mode"`
	// Free is the number of free coordinates, (2V - D) D.
	Free int `json:"free_coordinates"`
	// ClippedEigenvalues counts the eigenvalues of the precision raised to
	// the prior precision because it was not positive definite at the MAP;
	// MinEigenvalue is the smallest before clipping (absent when none was
	// clipped).
	ClippedEigenvalues int      `json:"clipped_eigenvalues"`
	MinEigenvalue      *float64 `json:"min_eigenvalue,omitempty"`

	FactorSeconds float64 `json:"-"`
	Seconds       float64 `json:"-"`
}

// checkLaplaceSize refuses a dense Laplace approximation above the size
// limit before the MAP is computed. Every anchor rule but "none" fixes D
// context vectors; with "none" the engine checks again.
func checkLaplaceSize(cfg FitConfig, v int) error {
	if cfg.Method != "laplace" || cfg.Laplace != "dense" {
		return nil
	}
	return posterior.CheckDenseLaplace(v, cfg.Dim, min(cfg.Dim, v))
}

// sampleLaplace draws cfg.Chains x cfg.Draws independent draws from the
// Laplace approximation at the MAP m, identified by stats.Anchors, into a
// new spill, and records the approximation in stats. The spill is removed
// if drawing fails.
func sampleLaplace(ctx context.Context, cfg FitConfig, data *posterior.Data, m *posterior.Params, stats *FitStats) (*spill, error) {
	sp, err := newSpill(cfg.TempDir, cfg.Chains, 2*m.V*m.D)
	if err != nil {
		return nil, err
	}
	if err := fitLaplace(ctx, cfg, data, m, sp, stats); err != nil {
		sp.remove()
		return nil, err
	}
	if err := sp.flush(); err != nil {
		sp.remove()
		return nil, err
	}
	return sp, nil
}

// fitLaplace runs posterior.Laplace into sink.
func fitLaplace(ctx context.Context, cfg FitConfig, data *posterior.Data, m *posterior.Params, sink posterior.Sink, stats *FitStats) error {
	mode, err := posterior.ParseLaplaceMode(cfg.Laplace)
	if err != nil {
		return err
	}
	start := time.Now()
	res, err := posterior.Laplace(ctx, data, m, posterior.LaplaceConfig{
		Mode: mode, Chains: cfg.Chains, Draws: cfg.Draws, PriorSD: cfg.PriorSD, Threads: cfg.Threads, Seed: cfg.Seed,
		Anchors: posterior.AnchorRule{Kind: posterior.AnchorIDs, IDs: stats.Anchors}, Memory: cfg.Memory,
	}, sink)
	if err != nil {
		return err
	}
	ls := &LaplaceStats{
		Mode: res.Mode.String(), Free: res.Free, ClippedEigenvalues: res.Clipped,
		FactorSeconds: res.FactorSeconds, Seconds: time.Since(start).Seconds(),
	}
	if res.Clipped > 0 {
		ls.MinEigenvalue = &res.MinEigen
		stats.Warnings = append(stats.Warnings, fmt.Sprintf(
			"Laplace: the precision at the MAP is not positive definite (smallest eigenvalue %.3g); %d eigenvalues raised to the prior precision."+
				" The MAP is not a strict maximum (not converged, or weakly identified): prefer --method gibbs", res.MinEigen, res.Clipped))
	}
	stats.Laplace = ls
	stats.Draws = cfg.Draws
	return nil
}
