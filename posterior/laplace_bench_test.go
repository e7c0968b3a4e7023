package posterior

import (
	"context"
	"fmt"
	"testing"
)

// BenchmarkLaplace times one Laplace approximation with 4 x 250 draws
// (factorisation, draws and their log-likelihoods) on simulated data, per
// mode and size, and reports the process CPU time per run.
func BenchmarkLaplace(b *testing.B) {
	for _, sz := range []struct{ v, dim, n int }{{100, 10, 100_000}, {200, 10, 200_000}, {1000, 20, 1_000_000}} {
		d, _ := simulate(b, sz.v, sz.dim, sz.n, 1)
		m, _, err := MAP(context.Background(), d, MAPConfig{Dim: sz.dim, Seed: 1})
		if err != nil {
			b.Fatal(err)
		}
		for _, mode := range []LaplaceMode{LaplaceDense, LaplacePerToken} {
			if mode == LaplaceDense && CheckDenseLaplace(sz.v, sz.dim, sz.dim) != nil {
				continue
			}
			b.Run(fmt.Sprintf("%v/V=%d/D=%d", mode, sz.v, sz.dim), func(b *testing.B) {
				sink := SinkFunc(func(int, int, *Params, DrawStats) error { return nil })
				cpu := cpuTime()
				for b.Loop() {
					if _, err := Laplace(context.Background(), d, m, LaplaceConfig{Mode: mode, Chains: 4, Draws: 250, Seed: 1}, sink); err != nil {
						b.Fatal(err)
					}
				}
				b.ReportMetric((cpuTime()-cpu).Seconds()/float64(b.N), "cpu-s/op")
			})
		}
	}
}
