package diag

import (
	"fmt"
	"math/rand/v2"
	"testing"
)

// BenchmarkSummarize reports the time to summarise one coordinate; pwe
// summarises up to about a million of them. Well-mixing draws end Geyer's
// sequence after a few lags, slowly mixing ones (phi 0.99) need the FFT.
func BenchmarkSummarize(b *testing.B) {
	for _, d := range []int{500, 1000} {
		for _, phi := range []float64{0, 0.9, 0.99} {
			b.Run(fmt.Sprintf("4x%d/phi=%g", d, phi), func(b *testing.B) {
				r := rand.New(rand.NewPCG(1, uint64(d)))
				const nCoords = 16
				coords := make([][][]float64, nCoords)
				for i := range coords {
					coords[i] = ar1(r, 4, d, phi, 0, 0)
				}
				var s Summarizer
				s.Summarize(coords[0])
				b.ReportAllocs()
				b.ResetTimer()
				i := 0
				for b.Loop() {
					s.Summarize(coords[i%nCoords])
					i++
				}
			})
		}
	}
}
