package posterior

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/pwe-project/pwe/posterior/polyagamma"
)

// denseBackends lists the backends compiled in: gonum always, and the
// default when it differs (the openblas build).
func denseBackends() []dense {
	if defaultDense.name == gonumDense.name {
		return []dense{gonumDense}
	}
	return []dense{gonumDense, defaultDense}
}

// conditionalCase is one token's regression: m pairs with covariates drawn
// from a pool of v vectors (repeats allowed), counts up to 50.
type conditionalCase struct {
	dim, m   int
	idx      []int32
	n, kappa []float64
	other    []float64
	x        []float64
}

func newConditionalCase(dim, m int, seed uint64) conditionalCase {
	r := rand.New(rand.NewPCG(seed, 17))
	v := max(2*m, 10)
	c := conditionalCase{dim: dim, m: m, idx: make([]int32, m), n: make([]float64, m), kappa: make([]float64, m), other: make([]float64, v*dim), x: make([]float64, dim)}
	for k := range c.other {
		c.other[k] = 0.4 * r.NormFloat64()
	}
	for r0 := range m {
		c.idx[r0] = int32(r.IntN(v))
		c.n[r0] = float64(1 + r.IntN(50))
		c.kappa[r0] = math.Round(c.n[r0]*r.Float64()) - c.n[r0]/2
	}
	for k := range c.x {
		c.x[k] = 0.3 * r.NormFloat64()
	}
	return c
}

// naiveDraw is the textbook version of workspace.draw, consuming the same
// random stream (PG draws of the inner step, then dim normals): P by
// triple loop, the Cholesky factor by the column recurrence, the two
// triangular solves by substitution. With given not nil, the first step
// uses those omegas instead of drawing them. It returns x and the last
// step's omegas.
func naiveDraw(c conditionalCase, prec0 float64, inner int, given []float64, seed1, seed2 uint64) (x, omega []float64) {
	dim := c.dim
	src := polyagamma.NewXoshiro(seed1, seed2)
	rng := rand.New(src)
	pg := polyagamma.Sampler{Src: src}
	row := func(r int) []float64 { j := int(c.idx[r]); return c.other[j*dim : (j+1)*dim] }
	x = append([]float64(nil), c.x...)
	b := make([]float64, dim)
	for r := range c.m {
		for k := range dim {
			b[k] += c.kappa[r] * row(r)[k]
		}
	}
	psi := make([]float64, c.m)
	omega = make([]float64, c.m)
	for step := range inner {
		if step == 0 && given != nil {
			copy(omega, given)
		} else {
			for r := range c.m {
				psi[r] = 0
				for k := range dim {
					psi[r] += x[k] * row(r)[k]
				}
			}
			pg.Fill(omega, c.n, psi)
		}
		p := make([]float64, dim*dim)
		for i := range dim {
			p[i*dim+i] = prec0
			for j := range dim {
				for r := range c.m {
					p[i*dim+j] += omega[r] * row(r)[i] * row(r)[j]
				}
			}
		}
		u := make([]float64, dim*dim) // P = U^T U, U upper
		for i := range dim {
			s := p[i*dim+i]
			for k := range i {
				s -= u[k*dim+i] * u[k*dim+i]
			}
			u[i*dim+i] = math.Sqrt(s)
			for j := i + 1; j < dim; j++ {
				s := p[i*dim+j]
				for k := range i {
					s -= u[k*dim+i] * u[k*dim+j]
				}
				u[i*dim+j] = s / u[i*dim+i]
			}
		}
		y := make([]float64, dim)
		for i := range dim { // U^T y = b
			s := b[i]
			for k := range i {
				s -= u[k*dim+i] * y[k]
			}
			y[i] = s / u[i*dim+i]
		}
		for i := range y {
			y[i] += rng.NormFloat64()
		}
		for i := dim - 1; i >= 0; i-- { // U x = y
			s := y[i]
			for k := i + 1; k < dim; k++ {
				s -= u[i*dim+k] * x[k]
			}
			x[i] = s / u[i*dim+i]
		}
	}
	return x, omega
}

// maxRelDiff returns max_k |x_k - y_k| / max_k |y_k|.
func maxRelDiff(x, y []float64) float64 {
	var d, scale float64
	for k := range y {
		d = max(d, math.Abs(x[k]-y[k]))
		scale = max(scale, math.Abs(y[k]))
	}
	return d / scale
}

// TestConditionalDrawMatchesNaive checks one token's update, given the
// random stream, against naiveDraw for every backend, with token degrees
// below, at and across the gonum panel size, with the first step's omegas
// drawn (the rho side) and given (the alpha side); it checks the omegas
// left behind too, and that given ones are used as they are.
func TestConditionalDrawMatchesNaive(t *testing.T) {
	for _, be := range denseBackends() {
		for _, tc := range []struct{ dim, m, inner int }{
			{1, 1, 1}, {2, 7, 3}, {5, 40, 1}, {7, 2400, 2}, {24, 30, 1}, {25, 30, 2}, {100, 1, 1}, {100, 81, 1}, {100, 250, 2}, {131, 300, 1},
		} {
			for _, given := range []bool{false, true} {
				t.Run(fmt.Sprintf("%s/D=%d/m=%d/inner=%d/given=%t", be.name, tc.dim, tc.m, tc.inner, given), func(t *testing.T) {
					c := newConditionalCase(tc.dim, tc.m, uint64(tc.dim*1000+tc.m))
					const prec0 = 0.7
					var start []float64
					if given {
						r := rand.New(rand.NewPCG(uint64(tc.m), 3))
						start = make([]float64, tc.m)
						for k := range start {
							start[k] = 0.05 + 3*r.Float64()
						}
					}
					want, wantOmega := naiveDraw(c, prec0, tc.inner, start, 11, 12)
					ws := newWorkspaceWith(be, tc.dim, tc.m, false)
					ws.src.Seed(11, 12)
					got := append([]float64(nil), c.x...)
					omega := make([]float64, tc.m)
					copy(omega, start)
					if err := ws.draw(got, c.idx, c.n, c.kappa, c.other, prec0, omega, given, tc.inner); err != nil {
						t.Fatal(err)
					}
					if d := maxRelDiff(got, want); !(d < 1e-10) {
						t.Errorf("relative difference %g from the naive update", d)
					}
					if d := maxRelDiff(omega, wantOmega); !(d < 1e-10) {
						t.Errorf("omegas differ from the naive update's by %g", d)
					}
				})
			}
		}
	}
}

// TestDenseBackends checks syrk (accumulating across calls) and potrf
// against direct sums, and that potrf and factor refuse indefinite
// matrices (factor is checked against a naive reference through
// TestConditionalDrawMatchesNaive).
func TestDenseBackends(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 8))
	for _, be := range denseBackends() {
		for _, n := range []int{1, 4, 67} {
			k1, k2 := 3, 2*n+1
			g1, g2 := make([]float64, k1*n), make([]float64, k2*n)
			for k := range g1 {
				g1[k] = r.NormFloat64()
			}
			for k := range g2 {
				g2[k] = r.NormFloat64()
			}
			c := make([]float64, n*n)
			for k := range c {
				c[k] = math.NaN() // beta = 0 must not read C
			}
			be.syrk(n, k1, g1, 0, c)
			be.syrk(n, k2, g2, 1, c)
			want := make([]float64, n*n)
			for i := range n {
				for j := i; j < n; j++ {
					for l := range k1 {
						want[i*n+j] += g1[l*n+i] * g1[l*n+j]
					}
					for l := range k2 {
						want[i*n+j] += g2[l*n+i] * g2[l*n+j]
					}
					if d := math.Abs(c[i*n+j] - want[i*n+j]); !(d <= 1e-12*float64(k1+k2)) {
						t.Fatalf("%s n=%d: C[%d,%d] = %v, want %v", be.name, n, i, j, c[i*n+j], want[i*n+j])
					}
				}
			}
			if !be.potrf(n, c) {
				t.Fatalf("%s n=%d: potrf refused a positive definite matrix", be.name, n)
			}
			for i := range n { // U^T U against the upper triangle of C
				for j := i; j < n; j++ {
					var s float64
					for l := 0; l <= i; l++ {
						s += c[l*n+i] * c[l*n+j]
					}
					if d := math.Abs(s - want[i*n+j]); !(d <= 1e-12*float64(n)*math.Abs(want[i*n+i])) {
						t.Fatalf("%s n=%d: (U^T U)[%d,%d] = %v, want %v", be.name, n, i, j, s, want[i*n+j])
					}
				}
			}
		}
		if be.potrf(2, []float64{1, 2, 2, 1}) {
			t.Errorf("%s: potrf accepted an indefinite matrix", be.name)
		}
		c := newConditionalCase(3, 5, 1)
		ws := newWorkspaceWith(be, 3, 5, true)
		now := time.Now()
		if be.factor(ws, c.idx, []float64{1, 1, 1, 1, 1}, c.other, -100, &now) {
			t.Errorf("%s: factor accepted a negative definite precision", be.name)
		}
		if ws.phases.Precision <= 0 {
			t.Errorf("%s: factor did not time the precision", be.name)
		}
	}
}
