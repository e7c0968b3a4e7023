// Package posterior computes the identified posterior of the probabilistic
// skip-gram model from pair counts: the log posterior and its gradient,
// the MAP, the choice of anchors, and draws from a blocked Pólya-Gamma
// Gibbs sampler. It is the numerical engine of `pwe fit`; reading and
// writing files is left to the caller (draws go to a Sink as they are
// made, never all held in memory).
//
// # Model
//
// Token i has a target vector rho_i and a context vector alpha_i in R^D.
// With n = n_pos + n_neg trials and kappa = n_pos - n/2 per pair (i, j),
//
//	log p(data | rho, alpha) = sum_ij n_pos log sig(x_ij) + n_neg log sig(-x_ij),  x_ij = rho_i . alpha_j
//	rho_i, alpha_j ~ Normal(0, s^2 I)
//
// evaluated as n log sig(x) - n_neg x with log sig(x) = -log1p(exp(-x)) for
// x >= 0 and x - log1p(exp(x)) otherwise, so large counts and large |x|
// neither overflow nor cancel. LogPosterior drops the prior's normalising
// constant.
//
// # Identification
//
// The likelihood sees only dot products, so (rho A, alpha A^-T) fits as
// well as (rho, alpha) for any invertible A. MAP optimises all 2VD
// coordinates (the prior pins the scale); ChooseAnchors then picks D
// tokens (AnchorRule: last D, first D, or listed ids) whose context
// vectors are fixed at their MAP values, refusing tokens without context
// counts and anchor matrices with condition number above MaxAnchorCond.
// The identification is weak: the Gibbs sampler moves slowly along the
// frame change of the free vectors, which only the anchors' pairs resist,
// so raw coordinates and logits with an anchor context need far more
// sweeps than the other logits rho_i . alpha_j (see TestAnchoredRhat).
// Fixing the anchors conditions on a data-dependent frame; on simulated
// data the 90% intervals of the logits cover 89-90% anchored against
// exactly 90% unanchored (TestCalibration).
//
// # MAP
//
// L-BFGS (gonum optimize) in coordinates scaled by sqrt(1/s^2 + n/4), n a
// token's total count on that side, which makes the gradient tolerance
// read in posterior standard deviations and conditions the problem; the
// gradient is evaluated in parallel over targets and over contexts (each
// side recomputes its dot products, so no two goroutines write the same
// vector). A failed line search near the optimum restarts L-BFGS.
//
// # Gibbs sweep
//
// Given alpha the rho_i are independent Bayesian logistic regressions, and
// so are the free alpha_j given rho. A sweep updates every rho_i, then
// every non-anchor alpha_j. For token i with pairs r = 1..m and
// covariates c_r (the other side's vectors, gathered into an m x D matrix
// A):
//
//	psi = A x                                    (Dgemv)
//	omega_r ~ PG(n_r, psi_r)
//	P = G^T G + I/s^2,  G_r = sqrt(omega_r) c_r   (Dsyrk)
//	b = A^T kappa                                (Dgemv, once per sweep)
//	P = U^T U (Dpotrf);  x = U^-1 (U^-T b + z),  z ~ N(0, I)   (two Dtrsv)
//
// so x ~ N(P^-1 b, P^-1). GibbsConfig.Inner repeats the PG and Gaussian
// steps per token and sweep. A token without pairs on a side is drawn from
// the prior. Cost per sweep: about 2 (pairs) D^2 flops in Dsyrk, V D^3/3
// in Dpotrf, and one PG draw per pair and side. Each worker owns its
// scratch, sized for the largest token, so steady-state sweeps allocate
// only a closure per task.
//
// # Parallelism and random streams
//
// Chains run in their own goroutines and share a pool of Threads workers;
// each half-sweep is split into contiguous token ranges of about equal
// cost (pairs x D^2 + D^3), eight per thread. The random stream of one
// token update is a PCG seeded from (seed, chain, sweep, side, token)
// through SplitMix64 (streamSeeds), reseeded in place, so draws are
// bit-identical whatever the number of threads or the order in which
// workers pick tasks; initial values and MAP jitter use side 2. Per-draw
// log-likelihoods are summed per token and then in token order, for the
// same reason. Sink calls are serialised by the engine.
//
// # Memory
//
// Data stores every pair twice, by target (context id int32, n and kappa
// float64) and by context (target id int32, own copies of n and kappa), so
// both half-sweeps read contiguous memory: 40 bytes per unique pair, plus
// 16 bytes per token for the offsets. Each chain holds one Params (2 V D
// float64); each worker 2 m_max D + 2 m_max + D^2 + 2D float64, m_max the
// largest number of pairs of a token on either side.
package posterior
