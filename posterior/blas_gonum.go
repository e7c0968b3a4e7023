package posterior

import (
	"time"

	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/blas64"
	"gonum.org/v1/gonum/lapack/lapack64"
)

// dense is a backend for the dense algebra of a conditional draw, which
// takes about nine tenths of a sweep at D = 100: the precision
// P = sum_r omega_r c_r c_r^T + shift I and its Cholesky factorisation.
// Matrices are row-major with stride n; only upper triangles are read or
// set.
type dense struct {
	name string
	// panelRows is the number of weighted covariates per syrk call, the
	// rows of workspace.panel; 0 when factor needs no panel at dim.
	panelRows func(dim int) int
	// factor overwrites w.prec by U with P = U^T U, reporting false if P
	// is not positive definite. It adds the time of forming P to
	// w.phases.Precision and restarts *t when w is profiling, so that the
	// caller's next tick counts the factorisation as Cholesky.
	factor func(w *workspace, idx []int32, omega, other []float64, shift float64, t *time.Time) bool
	// syrk sets C to beta C + G^T G for G k x n, and potrf overwrites C by
	// U with C = U^T U: the bare calls, for tests and benchmarks.
	syrk  func(n, k int, g []float64, beta float64, c []float64)
	potrf func(n int, c []float64) bool
}

// gonumDense is the pure-Go backend. gonum's Dsyrk (transposed form) runs
// one axpy per row of G and row of C, so it reads G D times; panels of
// 64 KiB keep G in L2 and the weighted copy of the covariates small (it
// was m x D, 4 MB for the largest token of the D = 100 benchmark).
// smallPrecision replaces Dsyrk up to smallDim, and at every dimension on
// CPUs with AVX2 and FMA (usePrecisionKernel); pureGoPotrf chooses
// between smallPotrf, its blocked AVX2+FMA form potrfFMA, and Dpotrf.
var gonumDense = dense{
	name: "gonum",
	panelRows: func(dim int) int {
		if usePrecisionKernel(dim) {
			return 0
		}
		return gonumPanelRows(dim)
	},
	factor: func(w *workspace, idx []int32, omega, other []float64, shift float64, t *time.Time) bool {
		if usePrecisionKernel(w.dim) {
			smallPrecision(w.dim, idx, omega, other, shift, w.prec)
		} else {
			w.accumulate(idx, omega, other, shift, gonumSyrk)
		}
		w.tick(&w.phases.Precision, t)
		return pureGoPotrf(w.dim)(w.dim, w.prec)
	},
	syrk:  gonumSyrk,
	potrf: gonumPotrf,
}

// usePrecisionKernel reports whether the pure-Go backend forms a
// conditional's precision with smallPrecision rather than panels and
// Dsyrk. The AVX2+FMA kernel streams the triangle through the cache four
// pairs at a time and stays 3 to 3.5 times as fast as Dsyrk from D = 64 to
// 600 (BenchmarkFactor, 8D pairs); the Go code loses to Dsyrk above
// smallDim.
func usePrecisionKernel(dim int) bool { return hasFMA || dim <= smallDim }

// pureGoPotrf returns the pure-Go backend's Cholesky factorisation at
// dim. With AVX2 and FMA, potrfFMA is the fastest at every D
// (BenchmarkPotrf: 1.3 times smallPotrf at D = 10, 3 times Dpotrf at
// D = 100); without, smallPotrf up to smallPotrfDim and gonum's blocked
// Dpotrf above.
func pureGoPotrf(dim int) func(n int, c []float64) bool {
	switch {
	case hasFMA:
		return potrfFMA
	case dim <= smallPotrfDim:
		return smallPotrf
	default:
		return gonumPotrf
	}
}

// smallPotrfDim is the largest dimension that smallPotrf factors when
// potrfFMA is not available: from D = 16 on, gonum's Dpotrf is as fast or
// faster (BenchmarkPotrf: 430 against 450 ns at D = 16, 1.4 against
// 2.3 us at D = 32).
const smallPotrfDim = 16

// gonumPanelRows is the gonum path's panel height: 64 KiB of rows.
func gonumPanelRows(dim int) int { return max(8, 8192/dim) }

func gonumSyrk(n, k int, g []float64, beta float64, c []float64) {
	blas64.Syrk(blas.Trans, 1,
		blas64.General{Rows: k, Cols: n, Stride: n, Data: g[:k*n]},
		beta, blas64.Symmetric{Uplo: blas.Upper, N: n, Stride: n, Data: c[:n*n]})
}

func gonumPotrf(n int, c []float64) bool {
	_, ok := lapack64.Potrf(blas64.Symmetric{Uplo: blas.Upper, N: n, Stride: n, Data: c[:n*n]})
	return ok
}
