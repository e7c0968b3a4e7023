package posterior

import "math"

// smallDim is the largest dimension whose precision the pure-Go backend
// forms with smallPrecisionGo (on CPUs without AVX2 and FMA; with them the
// assembly kernel is used at every dimension, see usePrecisionKernel). Up
// to it, gonum's Dsyrk (one axpy of at most D elements per row of the
// panel and row of the result) spends more on calls and on loads and
// stores of the result than on arithmetic: BenchmarkFactor measured the
// small path 2.5 to 3 times as fast at D = 2 to 20, 1.5 to 2 at D = 32,
// and 1.1 to 1.3 at D = 50 and 64. At 64 the triangle is about as large
// as a level-1 cache.
const smallDim = 64

// smallPrecisionGo sets the upper triangle of prec (row-major, stride
// dim) to sum_r omega_r c_r c_r^T + shift I, c_r = other[idx[r]], reading
// the covariates in place, weighted by omega rather than its square root.
// It is smallPrecision on CPUs and builds without the assembly kernel.
func smallPrecisionGo(dim int, idx []int32, omega, other []float64, shift float64, prec []float64) {
	m := len(idx)
	omega = omega[:m]
	initPrecision(dim, shift, prec)
	q := m &^ 3
	addQuads(dim, idx[:q], omega[:q], other, prec)
	addPairs(dim, idx[q:], omega[q:], other, prec)
}

// initPrecision sets the upper triangle of prec to shift I.
func initPrecision(dim int, shift float64, prec []float64) {
	for i := range dim {
		row := prec[i*dim+i : (i+1)*dim]
		clear(row)
		row[0] = shift
	}
}

// addQuads adds omega_r c_r c_r^T to the upper triangle of prec for a
// multiple of four pairs. Four pairs share each pass over two rows of the
// triangle, so each load and store of prec serves four multiply-adds and
// each covariate load eight.
func addQuads(dim int, idx []int32, omega, other, prec []float64) {
	m := len(idx)
	omega = omega[:m]
	for r := 0; r+4 <= m; r += 4 {
		c0 := covariate(other, idx[r], dim)
		c1 := covariate(other, idx[r+1], dim)
		c2 := covariate(other, idx[r+2], dim)
		c3 := covariate(other, idx[r+3], dim)
		w0, w1, w2, w3 := omega[r], omega[r+1], omega[r+2], omega[r+3]
		i := 0
		for ; i+2 <= dim; i += 2 {
			a0, a1, a2, a3 := w0*c0[i], w1*c1[i], w2*c2[i], w3*c3[i]
			b0, b1, b2, b3 := w0*c0[i+1], w1*c1[i+1], w2*c2[i+1], w3*c3[i+1]
			prec[i*dim+i] += a0*c0[i] + a1*c1[i] + a2*c2[i] + a3*c3[i]
			top := prec[i*dim+i+1 : (i+1)*dim]
			n := len(top)
			bot := prec[(i+1)*dim+i+1 : (i+2)*dim]
			bot = bot[:n]
			d0, d1, d2, d3 := c0[i+1:i+1+n], c1[i+1:i+1+n], c2[i+1:i+1+n], c3[i+1:i+1+n]
			for k := range top {
				e0, e1, e2, e3 := d0[k], d1[k], d2[k], d3[k]
				top[k] += a0*e0 + a1*e1 + a2*e2 + a3*e3
				bot[k] += b0*e0 + b1*e1 + b2*e2 + b3*e3
			}
		}
		if i < dim {
			prec[i*dim+i] += w0*c0[i]*c0[i] + w1*c1[i]*c1[i] + w2*c2[i]*c2[i] + w3*c3[i]*c3[i]
		}
	}
}

// addPairs adds omega_r c_r c_r^T to the upper triangle of prec one pair
// at a time: the at most three pairs left over by addQuads.
func addPairs(dim int, idx []int32, omega, other, prec []float64) {
	omega = omega[:len(idx)]
	for r, j := range idx {
		c := covariate(other, j, dim)
		w := omega[r]
		for i := range dim {
			a := w * c[i]
			row := prec[i*dim+i : (i+1)*dim]
			d := c[i : i+len(row)]
			for k := range row {
				row[k] += a * d[k]
			}
		}
	}
}

// covariate returns row j of other.
func covariate(other []float64, j int32, dim int) []float64 {
	return other[int(j)*dim : (int(j)+1)*dim]
}

// smallPotrf overwrites the upper triangle of c (row-major, stride n) by U
// with C = U^T U and reports whether C is positive definite. It is the
// outer-product form: row j of U is row j of what remains of C, scaled,
// and the rows below lose its contribution, so every loop runs along a
// row.
func smallPotrf(n int, c []float64) bool { return potrfRows(n, c, 0, n) }

// potrfRows makes smallPotrf's steps for rows lo to hi-1, with the
// contribution of each row subtracted from the rows below it up to hi-1
// only; rows from hi on are left for the caller to update.
func potrfRows(n int, c []float64, lo, hi int) bool {
	for j := lo; j < hi; j++ {
		row := c[j*n+j : (j+1)*n]
		d := row[0]
		if !(d > 0) {
			return false
		}
		d = math.Sqrt(d)
		row[0] = d
		inv := 1 / d
		row = row[1:]
		for k := range row {
			row[k] *= inv
		}
		for i, a := range row[:hi-j-1] {
			dst := c[(j+1+i)*n+j+1+i : (j+2+i)*n]
			src := row[i:]
			src = src[:len(dst)]
			for k := range dst {
				dst[k] -= a * src[k]
			}
		}
	}
	return true
}
