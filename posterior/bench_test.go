package posterior

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/blas64"
	"gonum.org/v1/gonum/lapack/lapack64"

	"github.com/pwe-project/pwe/formats"
)

// zipfData builds synthetic counts with Zipf-like structure: target i
// pairs with the deg_i most frequent contexts, deg_i = min(v, a/(i+1)^0.6)
// with a chosen for about `pairs` pairs in all, and n_ij falls off with
// the product of the ranks.
func zipfData(b *testing.B, v, pairs int) *Data {
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
	r := rand.New(rand.NewPCG(3, 4))
	p := NewParams(v, dim)
	for k := range p.Rho {
		p.Rho[k] = sd * r.NormFloat64()
		p.Alpha[k] = sd * r.NormFloat64()
	}
	return p
}

// benchSweep times full sweeps (both sides, no anchors) and reports
// seconds per sweep and the share of each phase in the summed worker time.
func benchSweep(b *testing.B, v, dim, pairs int) {
	d := zipfData(b, v, pairs)
	for _, threads := range []int{1, 2} {
		b.Run(fmt.Sprintf("V=%d/D=%d/pairs=%d/threads=%d", v, dim, d.Pairs(), threads), func(b *testing.B) {
			cfg := GibbsConfig{Dim: dim, Threads: threads, Profile: true}.withDefaults()
			s := newSampler(context.Background(), d, cfg, nil)
			defer s.close()
			p := randomParams(v, dim, 0.3)
			b.ResetTimer()
			for sw := range b.N {
				if err := s.sweep(0, sw, p); err != nil {
					b.Fatal(err)
				}
			}
			b.StopTimer()
			s.close()
			ph := s.phases()
			tot := float64(ph.Total())
			b.ReportMetric(b.Elapsed().Seconds()/float64(b.N), "s/sweep")
			b.ReportMetric(100*float64(ph.PG)/tot, "%pg")
			b.ReportMetric(100*float64(ph.Precision)/tot, "%syrk")
			b.ReportMetric(100*float64(ph.Cholesky)/tot, "%chol")
			b.ReportMetric(100*float64(ph.Gather)/tot, "%gather")
		})
	}
}

// BenchmarkSweep is the D = 100 workload of the design: V = 5000 and about
// 3 M unique pairs.
func BenchmarkSweep(b *testing.B) {
	if testing.Short() {
		b.Skip("large benchmark")
	}
	benchSweep(b, 5000, 100, 3_000_000)
}

func BenchmarkSweepSmall(b *testing.B) { benchSweep(b, 500, 20, 60_000) }

// BenchmarkBareGonum runs only what gonum does in a sweep of
// BenchmarkSweep's shapes (one side's degrees, doubled): Dsyrk of an m x D
// matrix and Dpotrf of the D x D result per token, single-threaded. The
// ratio of BenchmarkSweep's s/sweep (threads=1) to this one's is the
// overhead of everything else (PG draws, gathering, solves).
func BenchmarkBareGonum(b *testing.B) {
	if testing.Short() {
		b.Skip("large benchmark")
	}
	for _, c := range []struct{ v, dim, pairs int }{{5000, 100, 3_000_000}, {500, 20, 60_000}} {
		d := zipfData(b, c.v, c.pairs)
		b.Run(fmt.Sprintf("V=%d/D=%d", c.v, c.dim), func(b *testing.B) {
			m := d.maxDegree()
			g := make([]float64, m*c.dim)
			r := rand.New(rand.NewPCG(5, 6))
			for k := range g {
				g[k] = r.NormFloat64()
			}
			prec := make([]float64, c.dim*c.dim)
			P := blas64.Symmetric{Uplo: blas.Upper, N: c.dim, Stride: c.dim, Data: prec}
			b.ResetTimer()
			for range b.N {
				for side := range 2 {
					for i := range d.v {
						deg := d.degree(side, i)
						G := blas64.General{Rows: deg, Cols: c.dim, Stride: c.dim, Data: g[:deg*c.dim]}
						blas64.Syrk(blas.Trans, 1, G, 0, P)
						for k := range c.dim {
							prec[k*c.dim+k] += 1
						}
						if _, ok := lapack64.Potrf(P); !ok {
							b.Fatal("not positive definite")
						}
					}
				}
			}
			b.ReportMetric(b.Elapsed().Seconds()/float64(b.N), "s/sweep")
		})
	}
}
