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

static double between(const struct timespec *t0, const struct timespec *t1) {
	return (double)(t1->tv_sec - t0->tv_sec) + 1e-9 * (double)(t1->tv_nsec - t0->tv_nsec);
}

static double since(const struct timespec *t0) {
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return between(t0, &t);
}

// yielded is when the calling thread's last factor asked its goroutine to
// yield (see yieldEvery in Go). A goroutine's scheduling slice starts when
// it is put on a thread, after that thread's last yes, so this clock never
// understates the slice; a goroutine new to the thread may yield once
// sooner than needed.
static __thread struct timespec yielded;

// factor is workspace.accumulate followed by potrf_upper, in one call
// from Go; it returns potrf's info, whether the goroutine should yield
// (yield_seconds or more since the thread's last yes) and, if timed, the
// seconds spent forming C.
typedef struct { int info; int yield; double seconds; } factor_result;

static factor_result factor(int n, int m, const int32_t *idx, const double *omega, const double *other,
		double *panel, int rows, double shift, double *c, int timed, double yield_seconds) {
	factor_result res = {0, 0, 0};
	struct timespec t0;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	if (between(&yielded, &t0) >= yield_seconds) {
		res.yield = 1;
		yielded = t0;
	}
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
	"runtime"
	"time"
	"unsafe"
)

// yieldEvery bounds how long a worker runs between yields to the Go
// scheduler. Go's sysmon preempts a goroutine that has run 10 ms without
// being rescheduled; if it is in a cgo call, sysmon takes its P and hands
// it off, and after each such retake polls every 20 us for a millisecond
// or more. A worker runs a chunk of tokens (about a second at D = 100)
// without blocking, so without yields this happened every 10 ms: on 2
// threads and 2 cores, some 9,000 voluntary and 8,000 involuntary context
// switches per sweep instead of a few hundred, and about 0.5 s of a
// 2.5 s sweep lost (BENCHMARKS.md, issue 4). A yield starts a new slice,
// so sysmon never takes the P.
const yieldEvery = 2 * time.Millisecond

// openblasDense calls OpenBLAS with one BLAS thread: the sampler already
// runs one token per worker, and BLAS threads of their own would compete
// with the workers for the cores. A token's dense algebra is one cgo call
// (weighting, Dsyrk per panel, Dpotrf), followed by a yield to the Go
// scheduler every yieldEvery. The workers want no spare P: a yield with a
// P idle wakes a thread to look for work. It does not take the pure-Go
// backend's small-D path: on 1 thread its sweeps took 0.0036 CPU-s
// against 0.0043 with that path at V = 200, D = 10 (BenchmarkSweepTiny)
// and 0.0127 against 0.017 at V = 500, D = 20 (BenchmarkSweepSmall).
var openblasDense = dense{
	name:      "openblas",
	panelRows: func(dim int) int { return max(8, 32768/dim) },
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
			(*C.double)(unsafe.Pointer(&w.prec[0])), C.int(timed), C.double(yieldEvery.Seconds()))
		if res.yield != 0 {
			runtime.Gosched()
		}
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
