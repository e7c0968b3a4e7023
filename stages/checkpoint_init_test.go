package stages

import (
	"math"
	"math/rand/v2"
	"testing"

	"gonum.org/v1/gonum/mat"
)

// TestAlignFrame checks alignFrame against frames built in the test: a
// state moved out of the base frame by a known A0 comes back to the base
// exactly, a noisy one keeps its logits, and too few tokens leave the
// vectors alone.
func TestAlignFrame(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	const n, dim = 30, 4
	random := func(r, c int) *mat.Dense {
		m := mat.NewDense(r, c, nil)
		for i := range r {
			for j := range c {
				m.Set(i, j, rng.NormFloat64())
			}
		}
		return m
	}
	baseRho, baseAlpha := random(n, dim), random(n, dim)
	a0 := random(dim, dim)
	var a0Inv mat.Dense
	if err := a0Inv.Inverse(a0); err != nil {
		t.Fatal(err)
	}
	// The previous fit's frame: rho A0^-1, alpha A0^T, the same logits.
	var rho, alpha mat.Dense
	rho.Mul(baseRho, &a0Inv)
	alpha.Mul(baseAlpha, a0.T())
	r, al := rho.RawMatrix().Data, alpha.RawMatrix().Data
	alignFrame(r, al, baseRho.RawMatrix().Data, dim)
	for k, want := range baseRho.RawMatrix().Data {
		if math.Abs(r[k]-want) > 1e-9 {
			t.Fatalf("rho[%d] = %v after alignment, want %v", k, r[k], want)
		}
	}
	for k, want := range baseAlpha.RawMatrix().Data {
		if math.Abs(al[k]-want) > 1e-9 {
			t.Fatalf("alpha[%d] = %v after alignment, want %v", k, al[k], want)
		}
	}

	// With noise no frame fits exactly; the logits rho_i . alpha_j stay.
	noisy := random(n, dim)
	noisy.Add(noisy, &rho)
	var logits mat.Dense
	logits.Mul(noisy, alpha.T())
	nr, na := mat.DenseCopyOf(noisy), mat.DenseCopyOf(&alpha)
	alignFrame(nr.RawMatrix().Data, na.RawMatrix().Data, baseRho.RawMatrix().Data, dim)
	var after mat.Dense
	after.Mul(nr, na.T())
	if !mat.EqualApprox(&after, &logits, 1e-9) {
		t.Error("alignment changed the logits")
	}
	if mat.EqualApprox(nr, noisy, 1e-3) {
		t.Error("alignment left a state in another frame unchanged")
	}

	// Fewer tokens than dimensions: unchanged.
	few := []float64{1, 2, 3, 4, 5, 6, 7, 8}
	fewAlpha := []float64{8, 7, 6, 5, 4, 3, 2, 1}
	alignFrame(few, fewAlpha, []float64{0, 0, 0, 0, 1, 1, 1, 1}, dim)
	for k := range few {
		if few[k] != float64(k+1) || fewAlpha[k] != float64(8-k) {
			t.Fatalf("two tokens in %d dimensions were changed: %v %v", dim, few, fewAlpha)
		}
	}
}
