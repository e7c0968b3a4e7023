package polyagamma

import (
	"math"
)

// tailExcessTol bounds the 4th-cumulant error of the replaced tail, in units
// of the squared variance of the whole draw (an excess-kurtosis error). By the
// Edgeworth expansion a kurtosis error e moves the CDF by at most
// e * max|He3(x) phi(x)| / 24 = 0.023 e, so 1e-3 keeps the CDF error near
// 2e-5, fifty times below the 1e-3 a Kolmogorov-Smirnov test with 10^6 draws
// can see. TestGammaSumCDFError measures the actual error.
const tailExcessTol = 1e-3

// maxHead caps the exact head terms as a guard against rounding in the
// tail cumulants; the largest count actually needed is about 750, for
// b = 0.1 at |c| = 1e4.
const maxHead = 4096

// moderateExcessTol and moderateMinHead replace tailExcessTol and the
// minimum head for a whole draw with 2 <= b <= maxModerate. At these b the
// draw is still far from normal and the Edgeworth argument behind
// tailExcessTol is loose: with one head term the CDF error of PG(2, c)
// reaches 2.2e-4 near |c| = 4. Two head terms and a four times tighter
// criterion keep it below 5e-5 (TestGammaSumCDFError).
const (
	moderateExcessTol = 2.5e-4
	moderateMinHead   = 2
)

// tailPlan splits PG(b, c) = (1/(2 pi^2)) sum_k g_k / d_k, g_k ~ Gamma(b),
// d_k = (k-1/2)^2 + c^2/(4 pi^2), into K exact head terms with weights
// headWeight(k, c) = 1/(2 pi^2 d_k) and a tail sum_{k>K} replaced by the
// shifted gamma loc + scale*Gamma(shape) with the tail's first three
// cumulants. The tail's cumulants are the totals (closed forms) minus the
// head's, kappa_n = b (n-1)! w^n per term. Terms move to the head until the
// tail's 4th-cumulant error b (k4 - 3 k3^2 / (2 k2)) is at most
// tol * vref^2, where vref = Var(bRef, c) is the variance of the whole draw
// this one is part of (bRef = b on its own), and at least until K = kMin.
// If that takes more than kMax head terms, ok is false and the rest is
// meaningless (kMax = maxHead never fails: the cap wins).
//
// The shift loc = b (k1 - k2^2/k3) is >= 0 by Cauchy-Schwarz, so draws
// stay positive; matching three cumulants (rather than two as in Zhou 2016)
// leaves only the 4th-order error the criterion controls.
func tailPlan(b, bRef, c float64, kMin, kMax int, tol float64) (K int, loc, scale, shape float64, ok bool) {
	k1, k2, k3, k4 := unitCumulants(c)
	a2 := c * c / (4 * math.Pi * math.Pi)
	vref := bRef * k2
	lim := tol * vref * vref / b
	for k := 1; ; k++ {
		if k > kMin && k4-1.5*k3*k3/k2 <= lim || k > maxHead {
			break
		}
		if k > kMax {
			return 0, 0, 0, 0, false
		}
		w := headWeight(k, a2)
		w2 := w * w
		k1 -= w
		k2 -= w2
		k3 -= 2 * w2 * w
		k4 -= 6 * w2 * w2
		K = k
	}
	if !(k3 > 0 && k2 > 0) {
		// The tail is below rounding of the totals; its mean is all that is
		// left to add.
		return K, b * max(k1, 0), 0, 0, true
	}
	scale = k3 / (2 * k2)
	shape = b * k2 / (scale * scale)
	loc = b*k1 - shape*scale
	if loc < 0 {
		loc = 0
	}
	return K, loc, scale, shape, true
}

// headWeight returns the k-th weight 1/(2 pi^2 ((k-1/2)^2 + a2)) of the
// series, a2 = c^2/(4 pi^2).
func headWeight(k int, a2 float64) float64 {
	fk := float64(k) - 0.5
	return 1 / (2 * math.Pi * math.Pi * (fk*fk + a2))
}

// minHead is the number of exact head terms below which a draw of PG(b, c)
// with b < 1 on its own never goes.
// For small b the density near 0 behaves like exp(-b^2/(32 x)), a feature of
// width about b^2/32 that a shifted gamma cannot follow; the tail must be
// narrow against it, which takes K of order 1/b. With K = 5/b the measured
// CDF error (TestGammaSumCDFError) stays below 1e-4 for b = 0.1 .. 1.
func minHead(b float64) int {
	if b >= 1 {
		return 0
	}
	return int(math.Ceil(5 / b))
}

// gammaSum draws PG(b, c) from the head terms and the matched tail, as part
// of a draw of PG(bRef, c) (see tailPlan).
func gammaSum(g *rng, b, bRef, c float64, kMin int) float64 {
	K, loc, scale, shape, _ := tailPlan(b, bRef, c, kMin, maxHead, tailExcessTol)
	return drawPlan(g, b, c, K, loc, scale, shape)
}

// drawPlan draws the K head terms and the tail of a plan.
func drawPlan(g *rng, b, c float64, K int, loc, scale, shape float64) float64 {
	var x float64
	if K > 0 {
		a2 := c * c / (4 * math.Pi * math.Pi)
		head := newGammaGen(b)
		for k := 1; k <= K; k++ {
			x += headWeight(k, a2) * head.draw(g)
		}
	}
	if shape > 0 {
		tail := newGammaGen(shape)
		x += scale * tail.draw(g)
	}
	return x + loc
}
