package posterior

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"
	"time"
)

// gamma returns n u / (1 - n u), u the unit roundoff: the bound on the
// relative error of a sum of n rounded products (Higham, Accuracy and
// Stability of Numerical Algorithms, 3.1).
func gamma(n int) float64 {
	const u = 0x1p-53
	return float64(n) * u / (1 - float64(n)*u)
}

// smallCase returns m pairs over a pool of covariate rows (repeats
// allowed) with PG-like weights spanning four decades.
func smallCase(r *rand.Rand, dim, m int) (idx []int32, omega, other []float64) {
	v := max(m/2, 3)
	other = make([]float64, v*dim)
	for k := range other {
		other[k] = r.NormFloat64()
	}
	idx, omega = make([]int32, m), make([]float64, m)
	for k := range idx {
		idx[k] = int32(r.IntN(v))
		omega[k] = math.Pow(10, 4*r.Float64()-2)
	}
	return idx, omega, other
}

// TestSmallPrecision checks smallPrecision against a triple loop for every
// dimension up to smallDim and pair counts around the four-pair unroll:
// each entry within 2 gamma(m+3) of the sum of the absolute values of its
// terms (both sums are within gamma(m+2) of the exact one), and the
// strict lower triangle untouched. On a CPU with AVX2 and FMA this is the
// assembly kernel.
func TestSmallPrecision(t *testing.T) {
	t.Logf("AVX2+FMA kernel: %v", hasFMA)
	r := rand.New(rand.NewPCG(21, 22))
	const shift = 0.7
	for dim := 1; dim <= smallDim; dim++ {
		for _, m := range []int{0, 1, 2, 3, 4, 5, 7, 8, 13, 64, 333} {
			idx, omega, other := smallCase(r, dim, m)
			prec := make([]float64, dim*dim)
			for k := range prec {
				prec[k] = math.NaN()
			}
			smallPrecision(dim, idx, omega, other, shift, prec)
			for i := range dim {
				for j := range dim {
					got := prec[i*dim+j]
					if j < i {
						if !math.IsNaN(got) {
							t.Fatalf("D=%d m=%d: lower entry [%d,%d] set to %v", dim, m, i, j, got)
						}
						continue
					}
					var want, abs float64
					if i == j {
						want, abs = shift, shift
					}
					for q, jq := range idx {
						c := other[int(jq)*dim : (int(jq)+1)*dim]
						want += omega[q] * c[i] * c[j]
						abs += math.Abs(omega[q] * c[i] * c[j])
					}
					if d := math.Abs(got - want); !(d <= 2*gamma(m+3)*abs) {
						t.Fatalf("D=%d m=%d: [%d,%d] = %v, naive %v (difference %g, bound %g)",
							dim, m, i, j, got, want, d, 2*gamma(m+3)*abs)
					}
				}
			}
		}
	}
}

// exactPrecision returns entry (i, j) of shift I + sum_r omega_r c_r c_r^T
// summed in double-double arithmetic (products split exactly by fused
// multiply-adds, sums by Knuth's TwoSum), so within a few m u^2 of the
// exact value relative to abs, the sum of the absolute values of the
// terms, which it also returns.
func exactPrecision(dim, i, j int, idx []int32, omega, other []float64, shift float64) (sum, abs float64) {
	var hi, lo float64
	add := func(x float64) {
		s := hi + x
		v := s - hi
		lo += (hi - (s - v)) + (x - v)
		hi = s
	}
	if i == j {
		add(shift)
		abs = shift
	}
	for q, jq := range idx {
		c := other[int(jq)*dim : (int(jq)+1)*dim]
		h1 := omega[q] * c[i]
		l1 := math.FMA(omega[q], c[i], -h1)
		h2 := h1 * c[j]
		l2 := math.FMA(h1, c[j], -h2)
		add(h2)
		lo += l2 + l1*c[j]
		abs += math.Abs(h2)
	}
	return hi + lo, abs
}

// TestSmallPrecisionKernels runs the Go code and the AVX2+FMA assembly on
// the same inputs, every dimension up to smallDim and some above it (where
// the pure-Go backend uses the kernel on CPUs that have it), with pair
// counts around the four-pair groups, and checks each entry of both within
// gamma(m+3) abs of the double-double sum. Both are recursive sums of the
// m+1 terms with one more rounding per product (the Go code's products
// and the kernel's w_r c_r[i]), so within gamma(m+2) of the sum of the
// absolute values of the terms; the extra unit absorbs the reference's own
// error and that of the computed abs. Neither may write the strict lower
// triangle or past dim*dim.
func TestSmallPrecisionKernels(t *testing.T) {
	kernels := []struct {
		name string
		f    func(dim int, idx []int32, omega, other []float64, shift float64, prec []float64)
	}{{"go", smallPrecisionGo}, {"fma", smallPrecision}}
	r := rand.New(rand.NewPCG(27, 28))
	const shift = 0.3
	for _, k := range kernels {
		t.Run(k.name, func(t *testing.T) {
			if k.name == "fma" && !hasFMA {
				t.Skip("the CPU lacks AVX2 or FMA, or the build has no assembly")
			}
			for _, dim := range kernelDims() {
				for _, m := range []int{0, 1, 3, 4, 5, 17, 100} {
					idx, omega, other := smallCase(r, dim, m)
					// The covariate pool ends at the last row named.
					used := int32(0)
					for _, j := range idx {
						used = max(used, j)
					}
					other = other[:(used+1)*int32(dim)]
					buf := make([]float64, dim*dim+8)
					for q := range buf {
						buf[q] = math.NaN()
					}
					k.f(dim, idx, omega, other, shift, buf[:dim*dim])
					for q := dim * dim; q < len(buf); q++ {
						if !math.IsNaN(buf[q]) {
							t.Fatalf("D=%d m=%d: wrote %v past the matrix", dim, m, buf[q])
						}
					}
					for i := range dim {
						for j := range dim {
							got := buf[i*dim+j]
							if j < i {
								if !math.IsNaN(got) {
									t.Fatalf("D=%d m=%d: lower entry [%d,%d] set to %v", dim, m, i, j, got)
								}
								continue
							}
							want, abs := exactPrecision(dim, i, j, idx, omega, other, shift)
							if d := math.Abs(got - want); !(d <= gamma(m+3)*abs) {
								t.Fatalf("D=%d m=%d: [%d,%d] = %v, exact %v (difference %g, bound %g)",
									dim, m, i, j, got, want, d, gamma(m+3)*abs)
							}
						}
					}
				}
			}
		})
	}
}

// kernelDims lists the dimensions TestSmallPrecisionKernels checks: all up
// to smallDim, then sizes past a cache line, a power of two, and odd
// remainders of the four-column steps.
func kernelDims() []int {
	var dims []int
	for dim := 1; dim <= smallDim; dim++ {
		dims = append(dims, dim)
	}
	return append(dims, 65, 66, 67, 99, 100, 128, 131, 257)
}

// TestSmallPrecisionBounds checks that a pair naming a covariate row past
// the end of other, or a negative one, panics rather than being read (the
// assembly checks each group of four itself), in a group of four or among
// the pairs left over, and that the last row is accepted.
func TestSmallPrecisionBounds(t *testing.T) {
	const dim = 3
	other := make([]float64, 5*dim)
	prec := make([]float64, dim*dim)
	omega := []float64{1, 1, 1, 1, 1, 1, 1, 1}
	kernels := map[string]func(int, []int32, []float64, []float64, float64, []float64){
		"go": smallPrecisionGo, "dispatch": smallPrecision,
	}
	for _, c := range []struct {
		idx   []int32
		rows  int // of other, at most 5
		panic bool
	}{
		{[]int32{5, 0, 1, 2}, 5, true},
		{[]int32{0, -2, 1, 2}, 5, true},
		{[]int32{0, 1, 5, 2}, 5, true},
		{[]int32{0, 0, 0, 0, 1, 1, 1, 9}, 5, true},
		{[]int32{0, 1, 2, -1}, 5, true},
		{[]int32{0, 1, 2, 3, 5}, 5, true},
		{[]int32{-1}, 5, true},
		{[]int32{0, 0, 0, 0}, 0, true},
		{[]int32{4, 4, 4, 4, 4}, 5, false},
		{[]int32{0, 0, 0, 0}, 1, false},
	} {
		for name, f := range kernels {
			func() {
				defer func() {
					if p := recover(); (p != nil) != c.panic {
						t.Errorf("%s: idx %v over %d rows: panic %v", name, c.idx, c.rows, p)
					}
				}()
				f(dim, c.idx, omega[:len(c.idx)], other[:c.rows*dim:c.rows*dim], 0, prec)
			}()
		}
	}
}

// potrfs lists the row-major Cholesky factorisations written here:
// smallPotrf, and potrfFMA where the CPU and build have the kernel.
func potrfs() []namedPotrf {
	fs := []namedPotrf{{"small", smallPotrf}}
	if hasFMA {
		fs = append(fs, namedPotrf{"fma", potrfFMA})
	}
	return fs
}

// namedPotrf is one Cholesky factorisation under test.
type namedPotrf struct {
	name string
	f    func(n int, c []float64) bool
}

// TestSmallPotrf checks smallPotrf's and potrfFMA's factors by their
// backward error, |U^T U - P| <= gamma(n+1) |U|^T |U| entrywise (Higham,
// Theorem 10.3, which holds for any order of the inner products' sums),
// checks them against gonum's Dpotrf, checks that the strict lower
// triangle is neither read nor written, and that matrices that are not
// positive definite are refused, also when that shows only in a later
// block of four rows.
func TestSmallPotrf(t *testing.T) {
	dims := append(kernelDims(), 200)
	for _, f := range potrfs() {
		r := rand.New(rand.NewPCG(23, 24))
		for _, n := range dims {
			for _, m := range []int{0, n / 2, 3 * n} {
				idx, omega, other := smallCase(r, n, m)
				p := make([]float64, n*n)
				smallPrecision(n, idx, omega, other, 0.5, p)
				for i := range n {
					for j := range i {
						p[i*n+j] = math.NaN() // must not be read
					}
				}
				u := append([]float64(nil), p...)
				if !f.f(n, u) {
					t.Fatalf("%s n=%d m=%d: refused a positive definite matrix", f.name, n, m)
				}
				ref := append([]float64(nil), p...)
				if !gonumPotrf(n, ref) {
					t.Fatalf("n=%d m=%d: gonum refused the matrix", n, m)
				}
				for i := range n {
					for j := range i {
						if !math.IsNaN(u[i*n+j]) {
							t.Fatalf("%s n=%d m=%d: lower entry [%d,%d] set to %v", f.name, n, m, i, j, u[i*n+j])
						}
					}
					for j := i; j < n; j++ {
						var s, abs float64
						for l := 0; l <= i; l++ {
							s += u[l*n+i] * u[l*n+j]
							abs += math.Abs(u[l*n+i] * u[l*n+j])
						}
						if d := math.Abs(s - p[i*n+j]); !(d <= gamma(n+1)*abs) {
							t.Fatalf("%s n=%d m=%d: (U^T U)[%d,%d] = %v, P = %v (difference %g, bound %g)",
								f.name, n, m, i, j, s, p[i*n+j], d, gamma(n+1)*abs)
						}
						// Both factors have small backward error; the
						// precisions here are well conditioned (shift 0.5,
						// weights below 100), so the factors agree to a few
						// thousand ulps.
						if d := math.Abs(u[i*n+j] - ref[i*n+j]); !(d <= 1e-12*math.Abs(ref[j*n+j])) {
							t.Fatalf("%s n=%d m=%d: U[%d,%d] = %v, gonum %v", f.name, n, m, i, j, u[i*n+j], ref[i*n+j])
						}
					}
				}
			}
		}
		for _, bad := range [][]float64{
			{1, 2, 0, 1},  // indefinite
			{0, 0, 0, 1},  // singular
			{-1, 0, 0, 1}, // negative diagonal
			{math.NaN(), 0, 0, 1},
			{1, math.NaN(), 0, 1},
		} {
			if f.f(2, append([]float64(nil), bad...)) {
				t.Errorf("%s: accepted %v", f.name, bad)
			}
		}
		// The identity with rows 6 and 7 made indefinite, or a NaN in
		// the first block that the rank-4 update carries to row 9.
		for _, tc := range []struct {
			n    int
			set  func(c []float64, n int)
			what string
		}{
			{11, func(c []float64, n int) { c[6*n+7] = 2 }, "indefinite trailing block"},
			{11, func(c []float64, n int) { c[1*n+9] = math.NaN() }, "NaN in the first block's rows"},
		} {
			c := make([]float64, tc.n*tc.n)
			for i := range tc.n {
				c[i*tc.n+i] = 1
			}
			tc.set(c, tc.n)
			if f.f(tc.n, c) {
				t.Errorf("%s: accepted a matrix with a %s", f.name, tc.what)
			}
		}
	}
}

// BenchmarkPotrf times the Cholesky factorisations of one precision (4 D
// pairs): smallPotrf, potrfFMA (with the kernel) and gonum's Dpotrf. It is
// the measurement behind pureGoPotrf.
func BenchmarkPotrf(b *testing.B) {
	fs := append(potrfs(), namedPotrf{"gonum", gonumPotrf})
	for _, dim := range []int{5, 10, 16, 20, 32, 50, 100, 200} {
		r := rand.New(rand.NewPCG(25, 26))
		idx, omega, other := smallCase(r, dim, 4*dim)
		p := make([]float64, dim*dim)
		smallPrecision(dim, idx, omega, other, 1, p)
		c := make([]float64, dim*dim)
		for _, f := range fs {
			b.Run(fmt.Sprintf("%s/D=%d", f.name, dim), func(b *testing.B) {
				for range b.N {
					copy(c, p)
					if !f.f(dim, c) {
						b.Fatal("not positive definite")
					}
				}
			})
		}
	}
}

// BenchmarkFactor times one conditional's precision and factorisation,
// for m = 8 D and m = 100 pairs: smallPrecision followed by each of
// potrfs() and by Dpotrf (kernel-NAME), and panels of weighted covariates,
// Dsyrk and Dpotrf (gonum). It is the measurement
// behind smallDim, smallPotrfDim and usePrecisionKernel; smallPrecision is
// the AVX2+FMA kernel where the CPU has it.
func BenchmarkFactor(b *testing.B) {
	for _, dim := range []int{2, 5, 10, 20, 32, 50, 64, 100, 200, 300, 600} {
		for _, m := range []int{8 * dim, 100} {
			r := rand.New(rand.NewPCG(25, 26))
			idx, omega, other := smallCase(r, dim, m)
			w := newWorkspaceWith(gonumDense, dim, m, false)
			// The workspace has no panel where the kernel forms the
			// precision; the gonum path needs one.
			w.rows = min(m, gonumPanelRows(dim))
			w.panel = make([]float64, w.rows*dim)
			for _, p := range append(potrfs(), namedPotrf{"dpotrf", gonumPotrf}) {
				b.Run(fmt.Sprintf("kernel-%s/D=%d/m=%d", p.name, dim, m), func(b *testing.B) {
					cpu := cpuTime()
					for range b.N {
						smallPrecision(dim, idx, omega, other, 1, w.prec)
						if !p.f(dim, w.prec) {
							b.Fatal("not positive definite")
						}
					}
					reportCPU(b, cpu)
				})
			}
			b.Run(fmt.Sprintf("gonum/D=%d/m=%d", dim, m), func(b *testing.B) {
				cpu := cpuTime()
				for range b.N {
					w.accumulate(idx, omega, other, 1, gonumSyrk)
					if !gonumPotrf(dim, w.prec) {
						b.Fatal("not positive definite")
					}
				}
				reportCPU(b, cpu)
			})
		}
	}
}

// BenchmarkSmallPrecision compares the Go code and the AVX2+FMA kernel
// forming one conditional's precision from 100 pairs; cpu-ns/pair is the
// process CPU time per pair.
func BenchmarkSmallPrecision(b *testing.B) {
	const m = 100
	for _, dim := range []int{2, 5, 10, 20, 64} {
		r := rand.New(rand.NewPCG(29, 30))
		idx, omega, other := smallCase(r, dim, m)
		prec := make([]float64, dim*dim)
		for _, k := range []struct {
			name string
			f    func(dim int, idx []int32, omega, other []float64, shift float64, prec []float64)
		}{{"go", smallPrecisionGo}, {"fma", smallPrecision}} {
			b.Run(fmt.Sprintf("%s/D=%d", k.name, dim), func(b *testing.B) {
				if k.name == "fma" && !hasFMA {
					b.Skip("no AVX2+FMA kernel")
				}
				cpu := cpuTime()
				for range b.N {
					k.f(dim, idx, omega, other, 1, prec)
				}
				if cpu := cpuTime() - cpu; cpu > 0 {
					b.ReportMetric(float64(cpu.Nanoseconds())/float64(b.N*m), "cpu-ns/pair")
				}
			})
		}
	}
}

// reportCPU reports the process CPU time since cpu per iteration, less
// disturbed than ns/op by other jobs on a shared machine.
func reportCPU(b *testing.B, cpu time.Duration) {
	if cpu := cpuTime() - cpu; cpu > 0 {
		b.ReportMetric(float64(cpu.Nanoseconds())/float64(b.N), "cpu-ns/op")
	}
}
