//go:build amd64 && !purego && !openblas

package posterior

import (
	"fmt"

	"golang.org/x/sys/cpu"
)

// hasFMA reports whether smallPrecision runs the AVX2+FMA kernel. Its
// fused multiply-adds round once where the Go code rounds twice, so the
// precision (and hence every draw) differs in the last bits between CPUs
// with and without these extensions.
var hasFMA = cpu.X86.HasAVX2 && cpu.X86.HasFMA

// smallPrecision sets the upper triangle of prec (row-major, stride dim)
// to sum_r omega_r c_r c_r^T + shift I, c_r = other[idx[r]], reading the
// covariates in place, weighted by omega rather than its square root. The
// Go compiler does not vectorise smallPrecisionGo; with AVX2 and FMA the
// assembly adds four pairs per pass over the triangle, four columns per
// instruction.
func smallPrecision(dim int, idx []int32, omega, other []float64, shift float64, prec []float64) {
	if !hasFMA {
		smallPrecisionGo(dim, idx, omega, other, shift, prec)
		return
	}
	m := len(idx)
	omega = omega[:m]
	prec = prec[:dim*dim]
	initPrecision(dim, shift, prec)
	q := m &^ 3
	if !addQuadsFMA(dim, idx[:q], omega[:q], other, prec) {
		panic(fmt.Sprintf("posterior: covariate row out of range [0, %d)", len(other)/max(dim, 1)))
	}
	addPairs(dim, idx[q:], omega[q:], other, prec)
}

// addQuadsFMA is addQuads in AVX2+FMA assembly for len(idx)/4 groups of
// four pairs; prec must have dim*dim elements and omega len(idx). It
// reports false, having added only some groups, if a group names a row
// that is negative or past the end of other.
//
//go:noescape
func addQuadsFMA(dim int, idx []int32, omega, other, prec []float64) (ok bool)
