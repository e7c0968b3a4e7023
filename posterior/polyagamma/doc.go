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
// 5 <= b <= 20 and |c| below a threshold that grows with b (7.6 at b = 5,
// 48 at b = 10, 131 at b = 15, 1000 from b = 19): one gamma sum (below),
// with at least two exact head terms and a four times tighter tail criterion
// than for b > 20, because at these b the draw is still far from normal
// (with one head term the CDF error of PG(2, c) would reach 2.2e-4). The
// threshold moderateCMax is where the head would need more terms than the
// sum of Devroye draws costs (about 1.2 b - 4 terms); beyond it, the next
// method applies. The measured CDF error of this regime stays below 1.3e-5.
// A draw then costs the plan (the four cumulants, as much as about three
// Devroye draws) and three or more gamma variates, nearly independent of b:
// about 105 ns of CPU on this machine for |c| <= 5 against 30 ns per
// Devroye term, so below b = 5 the Devroye sum stays cheaper.
//
// Other integer b <= 20: sum of b exact PG(1, c) draws by Devroye's method
// (Devroye 2009, "On exact simulation algorithms for some distributions
// related to Jacobi theta functions"; PSW 2013, Section 4 and Algorithm 1):
// a two-piece envelope, truncated inverse Gaussian on (0, 0.64) and
// exponential on (0.64, inf), accepted by the alternating series of the
// J*(1) density. The per-c set-up is shared by the b summands. Its costly
// part, the mass ratio of the two pieces (two erfc, two exp, two log), is
// replaced by an upper bound read from a table (or, for |c| >= 16, by the
// bound IG <= 1); the envelope is scaled to match and left proposals get an
// extra acceptance factor lambda in [1 - 2.5e-3, 1], resolved exactly (with
// the exact masses) only when the acceptance uniform lands in the sliver
// where it matters. The method stays exact; see devroye.go. The left piece
// is drawn for |c| <= 2/0.64 as 1/N^2 with N the normal tail beyond
// 1/sqrt(0.64), from Robert's (1995) optimal exponential proposal, the tilt
// exp(-c^2 x/8) folded into the same acceptance test; above, by Michael,
// Schucany & Haas (1976).
//
// Other non-integer 1 < b <= 20: floor(b) exact PG(1, c) draws plus PG(b -
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
// The b < 1 branch is the dedicated small-b sampler: its head of at least
// 5/b exact terms resolves the exp(-b^2/(32 x)) behaviour near 0 that a
// single moment-matched gamma would miss.
//
// # The alternate method, implemented but not selected
//
// alternate.go implements the alternate method of Windle, Polson & Scott
// (2014, "Sampling Pólya-Gamma random variates: alternate and approximate
// techniques", arXiv:1405.0506) for J*(h, z), 1 <= h <= 4, with b > 4
// split into equal pieces sharing one set-up: the alternating series of the
// J*(h) density with an inverse-Gaussian envelope left of t(h) and a gamma
// envelope right of it. Two points differ from the paper. The right-hand
// constant is (pi/2)^h/Gamma(h), derived in alternate.go from
// J*(h) = Gamma(h, pi^2/8) + an independent remainder R with
// E[exp(pi^2 R/8)] = (4/pi)^h; the published (pi/2)^(h/2) lies below the
// density's own tail and is not an envelope. And the series' terms decrease
// only from the index where a_{n+1} <= a_n (right of t and
// x > 2(h+1)/log(h+2) they first grow); because the ratio a_{n+1}/a_n
// decreases in n, the first decrease is seen and the squeeze starts there.
// t(h) is where the two envelope kernels cross, which minimises the
// envelope mass for every z at once (0.64 at h = 1, as for Devroye).
// TestAltRightBound and TestAlternateKS check the bound and the draws.
//
// It is not used by Rand and Fill because it loses to the exact Devroye
// sums (and, for 5 <= b <= 20 at moderate |c|, now to the gamma sum) with a
// fresh c per draw: its per-c set-up needs the regularised
// incomplete gamma Q(h, (pi^2/8 + z^2/2) t), two erfc and lgamma, about
// 450 ns, against a table lookup for Devroye. Measured on this machine
// (same c mix as BenchmarkRand, ns per draw, alternate vs Devroye sum, plus
// the gamma sum for the fractional part): b = 1.5: 745 vs 449; 2: 551 vs
// 201; 2.7: 1029 vs 366; 4: 610 vs 234; 10: 968 vs 537; 13: 1018 vs 687.
// (Those figures predate the generator and Devroye changes described
// under Speed, which cut the Devroye sums by a third and leave the
// alternate method's set-up as it was.)
// It would pay only with the mass ratio of its two pieces tabulated over
// (h, z) and corrected exactly in a sliver, as devroye.go does for h = 1.
// The saddle-point approximation is not used either: the gamma sum covers
// its regime with a measured error far below detectability, and it loses
// accuracy for |c| > 35.
//
// # Speed
//
// A PG(1, c) draw costs a few dozen floating-point operations and four to six
// random words, so the generator matters as much as the method. rng
// (rng.go) steps a copy of a *Xoshiro's state inline instead of calling
// the Source once per word (xoshiro256++, whose state advances by shifts
// and exclusive-ors rather than PCG-DXSM's chain of 128-bit
// multiplications), and draws exponential and normal variates from
// 256-layer float64 ziggurats whose fast path hot loops spell out, because
// Go's inliner will not take the generator and the ziggurat together. In
// Devroye's sampler the per-c set-up is a linear interpolation, the
// division 1/z is made only when the Michael-Schucany-Haas branch needs it,
// and a left proposal's series is tried at the bounds of lambda before the
// exact lambda is computed. The gamma sum evaluates the unit cumulants
// once per draw, their Taylor series as eight independent Horner chains.
// TestXoshiroReference, TestInlineXoshiro, TestVariates, TestZigguratClosure, TestZigguratLayers
// and TestDevroyeLeft check these parts on their own; BenchmarkRand
// measures the whole.
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
