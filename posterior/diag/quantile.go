package diag

import "math"

// Quantile returns the type 7 sample quantile (R's default, Hyndman and Fan
// 1996) of the ascending values in sorted at probability p: with
// h = (n−1)p, the linear interpolation between the order statistics
// ⌊h⌋+1 and ⌈h⌉+1. The arithmetic follows R's quantile.default operation by
// operation, so that the result is bit-identical to R's; ess_tail
// compares draws against it. Quantile returns NaN for an empty slice or a NaN
// value among those it reads. It panics if p is outside [0, 1].
func Quantile(sorted []float64, p float64) float64 {
	if !(p >= 0 && p <= 1) {
		panic("diag: quantile probability outside [0, 1]")
	}
	n := len(sorted)
	if n == 0 {
		return math.NaN()
	}
	index := 1 + float64(n-1)*p
	lo := math.Floor(index)
	hi := math.Ceil(index)
	q := sorted[int(lo)-1]
	xhi := sorted[int(hi)-1]
	if index > lo && xhi != q {
		h := index - lo
		// The conversions forbid fusing into an FMA, which R does not do.
		q = float64((1-h)*q) + float64(h*xhi)
	}
	return q
}

// median returns the median of the ascending values in sorted the way R's
// median does: the middle value, or the mean of the two middle values.
func median(sorted []float64) float64 {
	n := len(sorted)
	if n == 0 {
		return math.NaN()
	}
	if n%2 == 1 {
		return sorted[n/2]
	}
	return (sorted[n/2-1] + sorted[n/2]) / 2
}
