package counts

import (
	"math/rand/v2"
	"slices"
	"testing"
)

// TestRadixSort sorts keys of every width, drawn uniformly, crowded into
// one top digit, constant, or Zipf-like in each half as pair keys are,
// against slices.Sort, on lengths on both sides of the split into buckets.
func TestRadixSort(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	for _, bits := range []uint{1, 7, 11, 12, 22, 23, 32, 33, 45, 64} {
		mask := ^uint64(0) >> (64 - bits)
		draws := map[string]func() uint64{
			"uniform":  func() uint64 { return rng.Uint64() & mask },
			"one-top":  func() uint64 { return mask>>1&rng.Uint64() | (mask &^ (mask >> 1)) },
			"constant": func() uint64 { return mask / 3 },
			"pairs": func() uint64 {
				half := bits / 2
				zipf := func() uint64 { return uint64(1/(rng.Float64()+1e-9)) & (1<<half - 1) }
				return (zipf()<<half | zipf()) & mask
			},
		}
		for name, draw := range draws {
			for _, n := range []int{0, 1, 2, 100, 2047, 2048, 5000, 100000} {
				a := make([]uint64, n)
				for i := range a {
					a[i] = draw()
				}
				want := slices.Clone(a)
				slices.Sort(want)
				tmp := make([]uint64, n)
				got, free := radixSort(a, tmp, bits, make([]uint32, radixHistLen(bits)))
				if !slices.Equal(got, want) {
					t.Fatalf("%d bits, %s, %d keys: not sorted", bits, name, n)
				}
				if n > 0 && &free[0] == &got[0] {
					t.Fatalf("%d bits, %s, %d keys: the free buffer is the sorted one", bits, name, n)
				}
			}
		}
	}
}

// BenchmarkRadixSort sorts 4 M pair keys of 16-bit ids whose smaller id is
// Zipf-distributed over the whole vocabulary and whose larger one lies
// beyond the dense table's 2048, as spilled keys are, with the larger id on
// top (as spill sorts them) or the smaller one.
func BenchmarkRadixSort(b *testing.B) {
	const n, idBits = 4 << 20, 16
	rng := rand.New(rand.NewPCG(7, 8))
	zipf := rand.NewZipf(rng, 1.05, 1, 1<<idBits-1)
	keys := map[string][]uint64{"hi-on-top": make([]uint64, n), "lo-on-top": make([]uint64, n)}
	for i := range n {
		x, y := zipf.Uint64(), zipf.Uint64()
		lo, hi := min(x, y), max(x, y)
		if hi < 2048 {
			hi = 2048 + uint64(i)%(1<<idBits-2048)
		}
		keys["hi-on-top"][i] = hi<<idBits | lo
		keys["lo-on-top"][i] = lo<<idBits | hi
	}
	for _, name := range []string{"hi-on-top", "lo-on-top", "lsd"} {
		b.Run(name, func(b *testing.B) {
			a, tmp := make([]uint64, n), make([]uint64, n)
			hist := make([]uint32, radixHistLen(2*idBits))
			for b.Loop() {
				if name == "lsd" {
					copy(a, keys["hi-on-top"])
					lsdSort(a, tmp, 2*idBits, hist)
					continue
				}
				copy(a, keys[name])
				radixSort(a, tmp, 2*idBits, hist)
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*n), "ns/key")
		})
	}
}
