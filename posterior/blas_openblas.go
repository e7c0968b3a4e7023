//go:build openblas

package posterior

/*
#cgo CFLAGS: -O2
#cgo LDFLAGS: -lopenblas -lm
#include <math.h>
#include <stdint.h>
#include <time.h>
#include <cblas.h>

// Declared here too, in case cblas.h is another BLAS's (Debian's
// alternatives): linking is to libopenblas either way.
void openblas_set_num_threads(int num_threads);
void dpotrf_(const char *uplo, const int *n, double *a, const int *lda, int *info);

// Row-major upper is column-major lower of the same buffer, and its
// factor L (C = L L^T) is the row-major U (C = U^T U).
static int potrf_upper(int n, double *c) {
	int info;
	const char uplo = 'L';
	dpotrf_(&uplo, &n, c, &n, &info);
	return info;
}

static double since(const struct timespec *t0) {
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)(t.tv_sec - t0->tv_sec) + 1e-9 * (double)(t.tv_nsec - t0->tv_nsec);
}

// factor is workspace.accumulate followed by potrf_upper, in one call
// from Go; it returns potrf's info and, if timed, the seconds spent
// forming C.
typedef struct { int info; double seconds; } factor_result;

static factor_result factor(int n, int m, const int32_t *idx, const double *omega, const double *other,
		double *panel, int rows, double shift, double *c, int timed) {
	factor_result res = {0, 0};
	struct timespec t0;
	if (timed) clock_gettime(CLOCK_MONOTONIC, &t0);
	double beta = 0;
	for (int lo = 0; lo < m; lo += rows) {
		int hi = lo + rows < m ? lo + rows : m;
		for (int r = lo; r < hi; r++) {
			double s = sqrt(omega[r]);
			const double *src = other + (size_t)idx[r] * n;
			double *dst = panel + (size_t)(r - lo) * n;
			for (int k = 0; k < n; k++) dst[k] = s * src[k];
		}
		cblas_dsyrk(CblasRowMajor, CblasUpper, CblasTrans, n, hi - lo, 1, panel, n, beta, c, n);
		beta = 1;
	}
	for (int k = 0; k < n; k++) c[k * n + k] += shift;
	if (timed) res.seconds = since(&t0);
	res.info = potrf_upper(n, c);
	return res;
}
*/
import "C"

import (
	"time"
	"unsafe"
)

// openblasDense calls OpenBLAS with one BLAS thread: the sampler already
// runs one token per worker, and BLAS threads of their own would compete
// with the workers for the cores. A token's dense algebra is one cgo call
// (weighting, Dsyrk per panel, Dpotrf), and the workers want a spare P
// (dense.reserveProcs).
var openblasDense = dense{
	name:       "openblas",
	spareProcs: 1,
	panelRows:  func(dim int) int { return max(8, 32768/dim) },
	factor: func(w *workspace, idx []int32, omega, other []float64, shift float64, t *time.Time) bool {
		n, m := w.dim, len(idx)
		_ = omega[m-1]
		_ = w.prec[n*n-1]
		timed := 0
		if w.profile {
			timed = 1
		}
		// idx indexes rows of other (Data guarantees it); C does not check.
		res := C.factor(C.int(n), C.int(m), (*C.int32_t)(unsafe.Pointer(&idx[0])),
			(*C.double)(unsafe.Pointer(&omega[0])), (*C.double)(unsafe.Pointer(&other[0])),
			(*C.double)(unsafe.Pointer(&w.panel[0])), C.int(w.rows), C.double(shift),
			(*C.double)(unsafe.Pointer(&w.prec[0])), C.int(timed))
		if w.profile {
			d := time.Duration(float64(res.seconds) * 1e9)
			w.phases.Precision += d
			*t = t.Add(d)
		}
		return res.info == 0
	},
	syrk: func(n, k int, g []float64, beta float64, c []float64) {
		_ = g[k*n-1]
		_ = c[n*n-1]
		C.cblas_dsyrk(C.CblasRowMajor, C.CblasUpper, C.CblasTrans, C.int(n), C.int(k),
			1, (*C.double)(unsafe.Pointer(&g[0])), C.int(n),
			C.double(beta), (*C.double)(unsafe.Pointer(&c[0])), C.int(n))
	},
	potrf: func(n int, c []float64) bool {
		_ = c[n*n-1]
		return C.potrf_upper(C.int(n), (*C.double)(unsafe.Pointer(&c[0]))) == 0
	},
}

var defaultDense = openblasDense

func init() { C.openblas_set_num_threads(1) }
