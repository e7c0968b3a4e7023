package posterior

import (
	"math"
	"math/rand/v2"
	"testing"
)

// TestGather checks gatherB and gatherPsiB against one-row-at-a-time
// loops for every dimension up to 20 and numbers of rows around multiples
// of four. Both sum the same products in a different order, so they agree
// to within gamma_{m+2} times the sum of the products' magnitudes (plus
// b's starting value), computed here per element.
func TestGather(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 7))
	const v = 13
	gamma := func(n int) float64 { u := 0x1p-53; return float64(n) * u / (1 - float64(n)*u) }
	for dim := 1; dim <= 20; dim++ {
		other := make([]float64, v*dim)
		for k := range other {
			other[k] = r.NormFloat64()
		}
		x := make([]float64, dim)
		for k := range x {
			x[k] = r.NormFloat64()
		}
		for _, m := range []int{0, 1, 2, 3, 4, 5, 7, 8, 9, 33} {
			idx := make([]int32, m)
			kappa := make([]float64, m)
			for q := range idx {
				idx[q] = int32(r.IntN(v))
				kappa[q] = r.NormFloat64() * 3
			}
			start := make([]float64, dim)
			for k := range start {
				start[k] = r.NormFloat64()
			}
			want := append([]float64(nil), start...)
			mag := make([]float64, dim)
			wantPsi := make([]float64, m)
			magPsi := make([]float64, m)
			for q, j := range idx {
				c := covariate(other, j, dim)
				for k := range dim {
					want[k] += kappa[q] * c[k]
					mag[k] += math.Abs(kappa[q] * c[k])
					wantPsi[q] += x[k] * c[k]
					magPsi[q] += math.Abs(x[k] * c[k])
				}
			}
			check := func(name string, got, want, mag []float64, terms int) {
				t.Helper()
				for k := range want {
					if tol := 2 * gamma(terms+2) * mag[k]; math.Abs(got[k]-want[k]) > tol {
						t.Fatalf("%s dim %d m %d element %d: %.17g, want %.17g (tolerance %.3g)", name, dim, m, k, got[k], want[k], tol)
					}
				}
			}
			for k := range mag {
				mag[k] += math.Abs(start[k])
			}
			b := append([]float64(nil), start...)
			gatherB(dim, idx, kappa, other, b)
			check("gatherB", b, want, mag, m)
			b = append(b[:0], start...)
			psi := make([]float64, m)
			gatherPsiB(x, idx, kappa, other, psi, b)
			check("gatherPsiB b", b, want, mag, m)
			check("gatherPsiB psi", psi, wantPsi, magPsi, dim)
		}
	}
}
