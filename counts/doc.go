// Package counts turns streams of token ids into aggregated (target,
// context) pair counts, positive and negative, sorted by (target, context),
// within a memory budget and independently of the number of threads.
//
// Positive pairs come from a symmetric window of W tokens around every
// token of a document, weighted by distance (uniform, linear or harmonic)
// and optionally after word2vec's subsampling of frequent tokens. Weights
// are kept as integers over a common scale (1, W or lcm(1..W)), so sums are
// exact and do not depend on the order in which documents were counted.
//
// Each unordered co-occurrence is counted once under the key (min id, max
// id). Accumulators (one per goroutine) count pairs of frequent ids (both
// below F, at most 2048) in a dense triangular table of uint32 and buffer
// the others as packed 64-bit keys; a full buffer is radix sorted,
// aggregated and spilled to a temporary file as a run holding both
// orientations grouped by target, indexed by target partition. Finish merges the runs partition by partition on several
// goroutines, adds the dense table, and for each target draws its
// negatives: K * W_i draws from P(j) ∝ count_j^power, where W_i is the
// target's weighted positive total, as an exact multinomial keyed by
// (seed, target), using alias draws for few draws and conditional binomials
// over the vocabulary for many. Every random decision is keyed by the seed
// and what is decided (document and position for subsampling, target for
// negatives), so the same seed gives the same rows whatever the number of
// workers, the distribution of documents over them or the memory budget.
//
//	Add(ids) ──window──> dense table (ids < F)
//	                 └─> key buffer ──radix sort, aggregate──> run files
//	Finish ── per partition: merge runs + dense ──> rows + negatives ──> emit (in order)
//
// Appender adds new counts to an earlier sorted result in one streaming
// merge-join, for `pwe count --append`.
//
// The memory budget is split as described at Counter's layout constants:
// vocabulary tables first, then 3/4 for the accumulators and 1/4 for the
// merge.
package counts
