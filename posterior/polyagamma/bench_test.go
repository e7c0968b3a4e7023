package polyagamma

import (
	"math/rand/v2"
	"testing"
)

// BenchmarkRand draws PG(b, c) with a fresh c per draw: 90% uniform on
// [-5, 5] (typical logits) and 10% uniform on [-1000, 1000], the way a Gibbs
// sweep presents them.
func BenchmarkRand(b *testing.B) {
	cases := []struct {
		name string
		b    float64
	}{
		{"b=0.5", 0.5}, {"b=1", 1}, {"b=2", 2}, {"b=2.7", 2.7}, {"b=3", 3}, {"b=4", 4},
		{"b=5", 5}, {"b=7", 7}, {"b=10", 10}, {"b=13.01", 13.01}, {"b=15", 15}, {"b=20", 20},
		{"b=50", 50}, {"b=100", 100}, {"b=1000", 1000}, {"b=1e5", 1e5}, {"b=1e7", 1e7},
	}
	for _, tc := range cases {
		b.Run(tc.name, func(b *testing.B) {
			const n = 4096
			cr := rand.New(rand.NewPCG(1, 2))
			cs := make([]float64, n)
			for i := range cs {
				cs[i] = 10*cr.Float64() - 5
				if i%10 == 0 {
					cs[i] = 2000*cr.Float64() - 1000
				}
			}
			bs := make([]float64, n)
			for i := range bs {
				bs[i] = tc.b
			}
			dst := make([]float64, n)
			s := Sampler{Src: NewXoshiro(3, 4)}
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				s.Fill(dst, bs, cs)
			}
			b.ReportMetric(float64(b.N)*n/b.Elapsed().Seconds(), "draws/s")
			b.ReportMetric(b.Elapsed().Seconds()*1e9/(float64(b.N)*n), "ns/draw")
		})
	}
}
