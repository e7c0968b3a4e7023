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

// potrfFMA is smallPotrf blocked by four rows: the rows of a block take
// smallPotrf's steps among themselves, and the triangle below and right
// of the block then loses the block's contribution in one rank-4 update
// by the AVX2+FMA kernel of smallPrecision (weights -1), which does the
// D^3/3 multiply-adds of the factorisation four columns at a time. It
// must only be called when hasFMA.
func potrfFMA(n int, c []float64) bool {
	c = c[:n*n]
	minus := [4]float64{-1, -1, -1, -1}
	j := 0
	for ; j+4 < n; j += 4 {
		if !potrfRows(n, c, j, j+4) {
			return false
		}
		// Rows j..j+3 of U from column j+4 on, one row apart, update the
		// trailing triangle from (j+4, j+4) on; both slices reach exactly
		// the end of c.
		rank4FMA(n-j-4, n, c[j*n+j+4:], n, &minus, c[(j+4)*n+j+4:])
	}
	return potrfRows(n, c, j, n)
}

// rank4FMA adds sum_q w[q] u_q[i] u_q[k] to c[i*stride+k] for
// 0 <= i <= k < l, with u_q = u[q*ustride : q*ustride+l]; it reads
// nothing outside those rows and writes nothing outside that triangle.
// The caller guarantees that the slices are long enough.
//
//go:noescape
func rank4FMA(l, stride int, u []float64, ustride int, w *[4]float64, c []float64)

// expNegFMA is expNegOne on len(dst)/4 groups of four elements, in AVX2
// with fused multiply-adds; len(x) must be at least len(dst).
//
//go:noescape
func expNegFMA(dst, x []float64)
