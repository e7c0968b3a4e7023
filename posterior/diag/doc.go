// Package diag computes MCMC convergence diagnostics and posterior summary
// statistics for one scalar quantity at a time, following R's posterior
// package (version 1.4) and Vehtari, Gelman, Simpson, Carpenter and Bürkner
// (2021), "Rank-normalization, folding, and localization: An improved R-hat
// for assessing convergence of MCMC", Bayesian Analysis 16(2).
//
// Draws are given per chain, chains[c][d], all chains of equal length. The
// definitions, with S draws per split chain and M split chains:
//
//   - Chains are split into halves; when a chain has an odd number of draws
//     the middle draw is dropped, as posterior does.
//   - Rank normalisation replaces each draw of the split chains by its rank r
//     among all M·S draws (average ranks for ties) and then by
//     Φ⁻¹((r − 3/8)/(M·S + 1/4)).
//   - R-hat of M chains of S draws is sqrt(((S−1)/S·W + B/S)/W), W the mean
//     within-chain variance and B/S the variance of the chain means (both
//     with n−1 denominators). Rhat is the larger of the R-hats of the
//     rank-normalised split draws and of the rank-normalised split draws
//     folded around the median, |x − median(x)|; RhatBasic is the R-hat of
//     the split draws themselves.
//   - ESS uses the biased autocovariance γ_t = (1/S) Σ_{i=1}^{S−t} (x_i −
//     x̄)(x_{i+t} − x̄) of every split chain, averaged over chains, the
//     variance estimate var⁺ = γ̄_0 + var(chain means) and ρ_t = 1 −
//     (W − γ̄_t)/var⁺ with W = γ̄_0·S/(S−1); Geyer's initial positive
//     sequence is made monotone and τ = −1 + 2 Σ_{t<T} ρ_t + ρ_T, where T is
//     the last even lag of the positive sequence. τ is bounded below by
//     1/log10(M·S), so ESS never exceeds M·S·log10(M·S). When the sequence
//     stops at T = 0 (split chains of at most five draws, or ρ_1 ≤ −1),
//     posterior's R code sums ρ over the index vector 1:0, which makes τ = 2;
//     that behaviour is kept.
//   - ESSBulk is the ESS of the rank-normalised split draws; ESSTail the
//     smaller ESS of the indicators x ≤ q05 and x ≤ q95; ESSBasic the ESS of
//     the split draws.
//   - MCSEMean = sd/sqrt(ESSBasic). MCSESD uses the moments of moments
//     (Kenney and Keeping 1951): with c = x − mean(x), m₂ = mean(c²),
//     m₄ = mean(c⁴) and n the ESS of the split c², MCSESD =
//     sqrt((m₄ − m₂²)/n / m₂ / 4).
//   - Quantiles are R's type 7, MAD is 1.4826·median(|x − median(x)|) and
//     sd uses the n−1 denominator.
//
// Autocovariances are summed directly for the first lags, which is all that
// well-mixing chains need, and through a zero-padded real FFT
// (gonum.org/v1/gonum/dsp/fourier) once Geyer's sequence runs long. Both
// compute the same γ_t up to rounding. Earlier posterior sources divide
// the FFT result by 2S² where the transform length is 2S' (S' ≥ S the next
// size with no prime factor above 5), which scales γ_t by S'/S; that is 1
// for 250 or 500 draws per half, so the reference data cannot tell the two
// apart. This package uses the unscaled γ_t of the paper, as later
// posterior versions do.
//
// Undefined values are NaN, where posterior returns NA: every field is NaN
// when a draw is NaN or there are no draws; R-hat and ESS values (and so
// the MCSEs) are NaN when a draw is infinite, when the draws they are
// computed from are constant (range below machine epsilon), when split
// chains have fewer than two draws (R-hat) or three draws (ESS). With
// infinite draws the mean, SD, quantiles and MAD follow IEEE arithmetic
// (±Inf or NaN). A single chain is split into two and handled like any
// other; chains of one draw are not split.
package diag
