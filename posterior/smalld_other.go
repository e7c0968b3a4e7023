//go:build !amd64 || purego || openblas

package posterior

// hasFMA reports whether smallPrecision runs the AVX2+FMA kernel, which
// is only built for amd64 without the purego tag, and not with openblas:
// a cgo package cannot hold Go assembly (and that backend does not call
// smallPrecision).
const hasFMA = false

// smallPrecision sets the upper triangle of prec (row-major, stride dim)
// to sum_r omega_r c_r c_r^T + shift I, c_r = other[idx[r]].
func smallPrecision(dim int, idx []int32, omega, other []float64, shift float64, prec []float64) {
	smallPrecisionGo(dim, idx, omega, other, shift, prec)
}

// potrfFMA is never called without hasFMA.
func potrfFMA(n int, c []float64) bool { panic("posterior: potrfFMA without the AVX2+FMA kernel") }

// expNegFMA is never called without the AVX2+FMA kernel.
func expNegFMA(dst, x []float64) { panic("posterior: expNegFMA without the AVX2+FMA kernel") }
