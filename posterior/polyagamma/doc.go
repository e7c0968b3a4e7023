// Package polyagamma draws Pólya-Gamma PG(b, c) variates for the Gibbs
// sampler, for every b > 0 and every real c, and provides the distribution's
// exact moments, cumulants, Laplace transform and CDF.
//
// PG(b, c) is the law of (1/(2 pi^2)) sum_k g_k / ((k-1/2)^2 + c^2/(4 pi^2))
// with g_k ~ Gamma(b, 1) independent (Polson, Scott & Windle 2013, JASA 108,
// eq. 1). It depends on c only through |c|, and the sampler uses |c|
// throughout, so Rand(b, c) and Rand(b, -c) give identical draws.
//
// # Methods by regime
//
// Integer b <= 20: sum of b exact PG(1, c) draws by Devroye's method
// (Devroye 2009, "On exact simulation algorithms for some distributions
// related to Jacobi theta functions"; PSW 2013, Section 4 and Algorithm 1):
// a two-piece envelope, truncated inverse Gaussian on (0, 0.64) and
// exponential on (0.64, inf), accepted by the alternating series of the
// J*(1) density. The per-c set-up is shared by the b summands. Its costly
// part, the mass ratio of the two pieces (two erfc, two exp, two log), is
// replaced by an upper bound read from a table (or, for |c| >= 16, by the
// bound IG <= 1); the envelope is scaled to match and left proposals get an
// extra acceptance factor lambda in [1 - 1e-6, 1], resolved exactly (with
// the exact masses) only when the acceptance uniform lands in the sliver
// where it matters. The method stays exact; see devroye.go.
//
// Non-integer 1 < b <= 20: floor(b) exact PG(1, c) draws plus PG(b -
// floor(b), c) from the gamma sum below, whose approximation error is judged
// against the variance of the whole draw.
//
// b < 1 and b > 20: truncated gamma sum with a three-cumulant tail. The
// first K terms of the series are drawn exactly (Gamma(b) by Marsaglia &
// Tsang 2000); the remainder sum_{k>K} is replaced by a shifted gamma
// loc + theta Gamma(alpha) with the remainder's exact mean, variance and
// third cumulant, obtained as the closed-form totals minus the head terms.
// This extends Zhou (2016, "Softplus regressions and convex polytopes",
// arXiv:1608.06383), who matches two moments with an unshifted gamma, to
// three cumulants, so the leading error is in the 4th cumulant; K grows
// until that error, in excess-kurtosis units of the whole draw, is at most
// 1e-3 (by the Edgeworth expansion a CDF error near 2e-5), and for b < 1
// at least to 5/b, because the PG(b) density near 0 behaves like
// exp(-b^2/(32 x)), a feature the tail must be narrow against. The shift is
// non-negative by Cauchy-Schwarz, so draws are always positive. K is at
// most 4 for b > 20 and at most 1 for b >= 100 on the whole c axis, so a
// draw costs a few gamma variates,
// and the test TestGammaSumCDFError computes the exact CDF of what is drawn
// (its characteristic function is a product of gamma characteristic
// functions) and bounds its distance to the true CDF by 1e-4 over the
// regime, ten times below what a Kolmogorov-Smirnov test with 10^6 draws can
// see. Unlike the normal approximation used for b > 170 by published hybrid
// samplers it keeps the skewness, and unlike truncating the sum it is not
// biased low.
//
// Not used: the "alternate" method of Windle, Polson & Scott (2014,
// arXiv:1405.0506) and the saddle-point approximation. The gamma sum above
// covers their regimes with a measured error far below detectability and is
// cheaper per draw with a fresh c; the alternate method would moreover need
// its right-tail envelope constant re-derived (the J*(h) right tail is
// asymptotically (pi/2)^h x^(h-1) exp(-pi^2 x/8)/Gamma(h), from the pole
// of cosh^-h(sqrt(2t)) at t = -pi^2/8, which a bound must dominate for all
// x > t), and the saddle-point method loses accuracy for |c| > 35.
//
// # Exact helpers
//
// Mean, Var and the cumulants of order <= 4 used by the sampler come from
// the derivatives of tanh(sqrt s)/sqrt s (s = c^2/4), through a Taylor
// series for |c| < 1 and closed forms with tanh and sech^2 computed from one
// exp(-|c|) above, so nothing overflows or cancels at any c. Cumulant(n, ...)
// sums kappa_n = b (n-1)!/(2 pi^2)^n sum_k ((k-1/2)^2 + a^2)^-n independently:
// by Poisson summation for a = |c|/(2 pi) >= 0.3 and by direct summation
// with an Euler-Maclaurin remainder below. Laplace works in logs with
// sqrt(c^2/4 + t/2) - |c|/2 formed without cancellation. CDF is the
// Gil-Pelaez inversion of the characteristic function with the integration
// half-line rotated into the complex plane (see CDF), accurate to about
// 1e-12.
package polyagamma
