package posterior

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/pwe-project/pwe/formats"
)

// zipfData builds synthetic counts with Zipf-like structure: target i
// pairs with the deg_i most frequent contexts, deg_i = min(v, a/(i+1)^0.6)
// with a chosen for about `pairs` pairs in all, and n_ij falls off with
// the product of the ranks.
func zipfData(b testing.TB, v, pairs int) *Data {
	b.Helper()
	var h float64
	for i := range v {
		h += math.Pow(float64(i+1), -0.6)
	}
	a := float64(pairs) / h
	r := rand.New(rand.NewPCG(1, 2))
	db := NewDataBuilder(v)
	batch := make([]formats.CountRow, 0, 4096)
	for i := range v {
		deg := min(v, max(1, int(a*math.Pow(float64(i+1), -0.6))))
		for j := range deg {
			n := 1 + math.Floor(5e4*math.Pow(float64(i+1)*float64(j+1), -0.8))
			pos := math.Round(n * r.Float64() * 0.5)
			batch = append(batch, formats.CountRow{TargetID: int32(i), ContextID: int32(j), NPos: pos, NNeg: n - pos})
			if len(batch) == cap(batch) {
				if err := db.Add(batch); err != nil {
					b.Fatal(err)
				}
				batch = batch[:0]
			}
		}
	}
	if err := db.Add(batch); err != nil {
		b.Fatal(err)
	}
	return db.Build()
}

func randomParams(v, dim int, sd float64) *Params {
	return gaussianParams(rand.New(rand.NewPCG(3, 4)), v, dim, sd)
}

// benchSweep times full sweeps (both sides, no anchors) on 1 and 2
// threads and reports seconds per sweep (wall and process CPU), the share
// of each phase in the summed worker time and, on 2 threads, the balance
// of the workers (mean over max of their busy times). On 1 thread it also
// times one pass of the bare dense calls for the same shapes (bareDense)
// and reports the ratio of the precision and Cholesky phases to it: the
// overhead of the sweep around the dense algebra.
func benchSweep(b *testing.B, v, dim, pairs int) {
	d := zipfData(b, v, pairs)
	for _, threads := range []int{1, 2} {
		b.Run(fmt.Sprintf("%s/V=%d/D=%d/pairs=%d/threads=%d", defaultDense.name, v, dim, d.Pairs(), threads), func(b *testing.B) {
			cfg := GibbsConfig{Dim: dim, Threads: threads, Profile: true}.withDefaults()
			s := newSampler(context.Background(), d, cfg, nil)
			defer s.close()
			p := randomParams(v, dim, 0.3)
			b.ResetTimer()
			cpu := cpuTime()
			for sw := range b.N {
				if err := s.sweep(0, sw, p, nil); err != nil {
					b.Fatal(err)
				}
			}
			cpu = cpuTime() - cpu
			b.StopTimer()
			s.close()
			ph := s.phases()
			tot := float64(ph.Total())
			b.ReportMetric(b.Elapsed().Seconds()/float64(b.N), "s/sweep")
			if cpu > 0 {
				b.ReportMetric(cpu.Seconds()/float64(b.N), "cpu-s/sweep")
			}
			b.ReportMetric(100*float64(ph.PG)/tot, "%pg")
			b.ReportMetric(100*float64(ph.Precision)/tot, "%syrk")
			b.ReportMetric(100*float64(ph.Cholesky)/tot, "%chol")
			b.ReportMetric(100*float64(ph.Gather)/tot, "%gather")
			if threads == 1 {
				bare := bareDense(b, d, dim, defaultDense)
				b.ReportMetric(float64(ph.Precision+ph.Cholesky)/float64(b.N)/float64(bare), "dense/bare")
			} else {
				var sum, most time.Duration
				for _, ws := range s.workspaces {
					sum += ws.phases.Total()
					most = max(most, ws.phases.Total())
				}
				b.ReportMetric(float64(sum)/float64(len(s.workspaces))/float64(most), "balance")
			}
		})
	}
}

// bareDense returns the time of what the dense backend alone does in one
// sweep of d: for every token and side, one syrk of the token's whole
// m x dim matrix and one potrf of the result, on one thread.
func bareDense(b *testing.B, d *Data, dim int, be dense) time.Duration {
	m := d.maxDegree()
	g := make([]float64, m*dim)
	r := rand.New(rand.NewPCG(5, 6))
	for k := range g {
		g[k] = r.NormFloat64()
	}
	prec := make([]float64, dim*dim)
	began := time.Now()
	for side := range 2 {
		for i := range d.v {
			deg := d.degree(side, i)
			if deg == 0 {
				continue
			}
			be.syrk(dim, deg, g, 0, prec)
			for k := range dim {
				prec[k*dim+k] += 1
			}
			if !be.potrf(dim, prec) {
				b.Fatal("not positive definite")
			}
		}
	}
	return time.Since(began)
}

// BenchmarkSweep is the D = 100 workload of the design: V = 5000 and about
// 3 M unique pairs, the reference paper's US Congress setting.
func BenchmarkSweep(b *testing.B) {
	if testing.Short() {
		b.Skip("large benchmark")
	}
	benchSweep(b, 5000, 100, 3_000_000)
}

func BenchmarkSweepSmall(b *testing.B) { benchSweep(b, 500, 20, 60_000) }

// BenchmarkSweepTiny is the shape of the V = 200, D = 10 mixing case
// (about 22 k unique pairs), where the Pólya-Gamma draws and the per-pair
// overheads rather than the dense algebra set the pace.
func BenchmarkSweepTiny(b *testing.B) { benchSweep(b, 200, 10, 28_000) }

// BenchmarkBareDense times bareDense alone, for every backend compiled in.
func BenchmarkBareDense(b *testing.B) {
	if testing.Short() {
		b.Skip("large benchmark")
	}
	for _, c := range []struct{ v, dim, pairs int }{{5000, 100, 3_000_000}, {500, 20, 60_000}} {
		d := zipfData(b, c.v, c.pairs)
		for _, be := range denseBackends() {
			b.Run(fmt.Sprintf("%s/V=%d/D=%d", be.name, c.v, c.dim), func(b *testing.B) {
				var total time.Duration
				for range b.N {
					total += bareDense(b, d, c.dim, be)
				}
				b.ReportMetric(total.Seconds()/float64(b.N), "s/sweep")
			})
		}
	}
}

// BenchmarkDrawLogLik compares the log-likelihood of a kept draw
// (drawLogLik, one product per token) with targetLogLik (one log1p per
// pair) at the shape of the V = 200, D = 10 mixing case.
func BenchmarkDrawLogLik(b *testing.B) {
	const v, dim = 200, 10
	d := simulateMixing(b, v, dim, 100_000, true, 42)
	p := NewParams(v, dim)
	r := rand.New(rand.NewPCG(1, 1))
	for k := range p.Rho {
		p.Rho[k], p.Alpha[k] = 0.5*r.NormFloat64(), 0.5*r.NormFloat64()
	}
	for _, f := range []struct {
		name string
		ll   func(i int) float64
	}{
		{"drawLogLik", func(i int) float64 { return drawLogLik(d, p, i) }},
		{"targetLogLik", func(i int) float64 { return targetLogLik(d, p, i, nil, nil) }},
	} {
		b.Run(f.name, func(b *testing.B) {
			var s float64
			for range b.N {
				for i := range v {
					s += f.ll(i)
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*d.Pairs()), "ns/pair")
		})
	}
}

// BenchmarkMAPEval times one evaluation of the log posterior and its
// gradient, MAP's unit of work, on one thread.
func BenchmarkMAPEval(b *testing.B) {
	d := zipfData(b, 2000, 400_000)
	for _, dim := range []int{10, 100} {
		b.Run(fmt.Sprintf("D=%d", dim), func(b *testing.B) {
			p, grad := NewParams(d.v, dim), NewParams(d.v, dim)
			r := rand.New(rand.NewPCG(1, 1))
			for k := range p.Rho {
				p.Rho[k], p.Alpha[k] = 0.1*r.NormFloat64(), 0.1*r.NormFloat64()
			}
			e := newEvaluator(d, dim, 1)
			pl := startPool(context.Background(), 1, nil)
			defer pl.stop()
			b.ResetTimer()
			for range b.N {
				e.eval(pl, p, 1, grad)
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*d.Pairs()), "ns/pair")
		})
	}
}
