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
// coordinates (the prior pins the scale); AnchorState then runs one
// unanchored chain from the MAP and ChooseAnchors picks D tokens whose
// context vectors are fixed: at the chain's last state (AnchorAtDraw), at
// the MAP (AnchorAtMAP), or at the MAP unless it is degenerate
// (AnchorAuto, the default, as the draw mixes more slowly). Any invertible
// anchor block identifies the model, but the prior is only O(D)-invariant,
// so the anchored posterior is right only when the block's scale is
// typical of the posterior; with weak data the MAP is the origin and
// anchors fixed there make intervals too narrow. ChooseAnchors refuses
// tokens without context counts and anchor matrices with condition number
// above MaxAnchorCond. AnchorRule's default, AnchorVolume, picks them
// greedily for the largest volume of the context vectors weighted by
// sqrt(context count) (pivoted QR); last D (the reference paper's),
// first D and listed ids are the alternatives. The identification is
// weak: the Gibbs sampler moves slowly along the frame change of the free
// vectors, which only the anchors' pairs resist, so raw coordinates,
// cosines and logits with an anchor context mix slowly unless the
// anchors are well measured and spread (the volume rule) and the
// frame-change moves below are on, and the Gaussian steps are
// overrelaxed (GibbsConfig.Overrelax). Fixing the anchors conditions on a
// data-dependent frame; on simulated data the 90% intervals of the logits
// cover 89-90% anchored against exactly 90% unanchored (TestCalibration).
//
// # Frame-change moves
//
// After each Gibbs sweep, GibbsConfig.GroupMoves Metropolis moves
// propose A = exp(eps M), M a D x D matrix of standard normals, and map
// every rho_i to rho_i A and every free alpha_j to alpha_j A^-T. Logits
// with a free context do not change. The moves target the Pólya-Gamma
// augmented posterior p(rho, alpha | omega), the omegas being those the
// sweep left for the anchors' pairs (the rho side's draws: the alpha side
// skips the anchors): with the state they are a draw from the augmented
// joint, because every step of the sweep draws a conditional of it (see
// Gibbs sweep). The acceptance ratio is the ratio of the prior and of
// the anchors' augmented terms, times the Jacobian |det A|^(anchors) =
// exp(anchors eps tr M) (V target vectors scale by det A, V - anchors free
// contexts by det A^-1); M and -M being equally likely, A and A^-1 have
// the same law and no proposal ratio enters. With the Gram matrices
// R = sum rho_i^T rho_i and Q = sum_free alpha_j^T alpha_j, the prior's
// sums of squares after a cumulative change C are tr(C^T R C) and
// tr(C^-1 Q C^-T); given omega, anchor a's pairs contribute
// k_a . (C alpha_a) - (C alpha_a)^T M_a (C alpha_a) / 2 with
// k_a = sum_i kappa_ia rho_i and M_a = sum_i omega_ia rho_i^T rho_i,
// formed once per sweep. A proposal costs O(anchors D^2 + D^3), not a
// log-sigmoid per anchor pair, and the state is changed once per sweep
// in O(V D^2). Halfway through warmup (for D <= 32) the proposal is
// preconditioned: vec(M) ~ N(0, H^-1), H a positive semi-definite
// approximation of the curvature of the log posterior in log A at the
// chain's state (the prior's quadratic terms and the Gauss-Newton term of
// the anchors' pairs), so that tightly and loosely pinned directions of the
// frame move at their own scales. eps follows a Robbins-Monro recursion on
// log eps toward 30% acceptance during warmup (restarting at 2.38/D once
// preconditioned) and is frozen afterwards with H, so the kept draws come
// from a fixed kernel. The moves are exact for any anchors (the
// quadrature tests in D = 1 and D = 2, TestGroupMovesKeepPrior and the
// simulation-based calibration check it).
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
// Given alpha and the Pólya-Gamma variables omega_ij ~ PG(n_ij, rho_i .
// alpha_j), the rho_i are independent Gaussians, and so are the free
// alpha_j given rho and omega. A sweep is one scan over the augmented
// posterior p(rho, alpha, omega) with one Pólya-Gamma draw per pair: target
// by target, omega_i. given the current vectors and then rho_i given
// omega_i. (which, the rho_i being conditionally independent, is all of
// omega and then all of rho); then every non-anchor alpha_j given rho and
// the same omega_.j, which the rho side stored in target order and the
// alpha side reads through Data's context-to-target positions. Against a
// scan that redraws omega before each side it mixed as well per sweep and
// cost 27-40% less CPU at D = 10 and 20. For token i with pairs r = 1..m and
// covariates c_r (the other side's vectors, read row by row where they
// are, never gathered):
//
//	psi_r = c_r . x,  b = sum_r kappa_r c_r      (one pass over the rows)
//	omega_r ~ PG(n_r, psi_r)                     (rho side only)
//	P = G^T G + I/s^2,  G_r = sqrt(omega_r) c_r
//	P = U^T U;  x = U^-1 (U^-T b + z),  z ~ N(0, I)   (two triangular solves)
//
// so x ~ N(P^-1 b, P^-1) (overrelaxed: GibbsConfig.Overrelax). The dense
// steps go through a small backend, which gives the same update to
// rounding: gonum by default (pure Go), or OpenBLAS with the openblas
// build tag (Debian's libopenblas-dev; one BLAS thread, one cgo call per
// token, parallel across tokens), both Dsyrk on panels of weighted rows
// and Dpotrf. The pure-Go backend instead forms P from the covariates in
// place, weighted by omega, four pairs per pass over its triangle
// (smalld.go): in AVX2+FMA assembly at every D on CPUs that have it
// (three times as fast as gonum's Dsyrk at D = 100 to 600), in Go for
// D <= 64 elsewhere, where gonum's calls, loads and stores cost more than
// the arithmetic. With AVX2+FMA it factors P by a Cholesky blocked by
// four columns whose trailing rank-4 updates run through the same
// assembly (potrfFMA; 1.7 times as fast as Dpotrf at D = 32, 3 to 3.7
// times at D = 100 to 200); elsewhere by an outer-product Cholesky
// written for row-major storage up to D = 16 and by gonum's blocked Dpotrf
// above.
//
// GibbsConfig.Inner = k > 1 makes k (omega_i., rho_i) steps per target and,
// per free context, one alpha_j step with the stored omegas and k - 1
// (omega_.j, alpha_j) steps, each side writing its last omegas back, so
// the stored omegas still go with the state. A token without pairs on a
// side is drawn from the prior. Cost per sweep: about 2 (pairs) D^2 flops
// forming the precisions, V D^3/3 in the factorisations, and one PG draw
// per pair (2k - 1 with Inner = k). Each worker owns its scratch, sized for
// the largest token, so steady-state sweeps allocate only a closure per
// task.
//
// # Parallelism and random streams
//
// Chains run in their own goroutines and share a pool of Threads workers;
// each half-sweep is split into contiguous token ranges of about equal
// cost (pairs x D^2 + D^3), eight per thread. The random stream of one
// token update is a xoshiro256++ generator (polyagamma.Xoshiro) seeded
// from (seed, chain, sweep, side, token) through SplitMix64 (streamSeeds),
// reseeded in place, so draws are
// bit-identical whatever the number of threads or the order in which
// workers pick tasks; initial values and MAP jitter use side 2, a
// sweep's frame-change moves side 3 (one stream per chain and sweep, run
// in the chain's goroutine). Per-draw
// log-likelihoods are summed per token and then in token order, for the
// same reason; a kept draw's is computed by the next sweep's rho side,
// which forms every pair's linear predictor anyway, or on its own (same
// arithmetic, same bits) after the last sweep and before a checkpoint. Sink calls are serialised by the engine.
//
// # Checkpoints
//
// A chain can stop between two sweeps and go on later as if it had not:
// GibbsConfig.Checkpoint receives its ChainState (the sweeps completed,
// the Params, the frame-change moves' adapted step size and
// preconditioner, and the acceptance and wall-time counters of the
// current draw), and GibbsConfig.Resume hands such states back. Because
// every random stream is keyed by (seed, chain, sweep, side, token) and
// re-seeded before use, the sweep count is the whole of the generators'
// position: no generator state is saved, and a resumed chain makes the
// same draws bit for bit, whatever Threads. On cancellation each chain
// delivers the state of its last completed sweep (a sweep cut short is
// undone), and Checkpoint calls are serialised with the Sink's, so a
// caller can make the draws up to a state durable in the same call
// (stages does: chain files beside the spilled draws). ChainState.WriteTo
// and ReadChainState, and Params.WriteTo and ReadParams, give the
// encodings (little-endian, bit for bit; a magic number with a version
// byte, and bounded sizes, so a damaged file fails with ErrBadState).
//
// # Laplace approximation
//
// Laplace draws independent samples from the Gaussian centred at the MAP
// whose precision is the negative Hessian of the log posterior in the
// free coordinates, the anchors' context vectors fixed at their MAP
// values (the same identification as the Gibbs sampler's). The Hessian's
// blocks per pair, including the r I term of the cross block that the
// Gauss-Newton approximation leaves out, are derived in the comment of
// Laplace in laplace.go. LaplaceDense factorises the whole precision
// (keeping the correlations between vectors; at most MaxDenseLaplace
// free coordinates); LaplacePerToken, the reference paper's variant for
// large vocabularies, takes each vector's D x D block alone and so
// understates the marginal variances where vectors are correlated. A
// factorisation that fails, or is too ill-conditioned, falls back to an
// eigen-decomposition with the curvature floored at the prior's. Like the
// Gibbs draws, the Laplace draws do not depend on Threads.
//
// # Memory
//
// Data stores every pair twice, by target (context id int32, n and kappa
// float64) and by context (target id int32, own copies of n and kappa),
// so both half-sweeps read contiguous memory, plus each by-context pair's
// position among the by-target ones (int32): 44 bytes per unique pair,
// plus 16 bytes per token for the offsets. Gibbs holds one Pólya-Gamma
// draw per pair and chain (8 bytes per pair and chain) and each chain one
// Params (2 V D float64) and, with frame-change moves, about 15 D^2
// float64 of scratch plus the D^4 float64 preconditioner (D <= 32: at most
// 8 MB); each worker 2 m_max + D^2 + 2D float64, m_max the largest number
// of pairs of a token on either side, and one panel of weighted rows
// (64 KiB with gonum above D = 64, 256 KiB with OpenBLAS).
package posterior
