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
// Accumulators (one per goroutine) keep the documents they are given, 2
// bytes a token (4 for a vocabulary above 65536 tokens) with a bitset of
// the documents' starts (direct.go). Finish indexes them by token, 4 bytes
// a token, a range of targets at a time where the budget needs it, and
// counts each target's row at once, from the windows around its
// occurrences, into a tally the size of the vocabulary; a store that
// fills its share of the budget is counted so into a run, in target order,
// and emptied. For each target the merge then
// draws its negatives into the same tally: K * W_i draws from
// P(j) ∝ count_j^power, where W_i is the target's weighted positive total,
// as an exact multinomial keyed by (seed, target), using alias draws for
// few draws and conditional binomials over the vocabulary for many, and
// one pass over the tally writes the row.
//
// Where the window is above 15, or a document does not fit a store,
// accumulators count pairs instead, each unordered co-occurrence once
// under the key (min id, max id): pairs of frequent ids (both below F, at
// most 2048) in a dense triangular table, the others as packed 64-bit keys
// in a buffer that, when full, is radix sorted, aggregated and spilled to
// a temporary file as a run holding both orientations grouped by target,
// indexed by target partition. The merge reads those runs and tables
// beside the stores.
//
// Every random decision is keyed by the seed and what is decided
// (document and position for subsampling, target for negatives), so the
// same seed gives the same rows whatever the number of workers, the
// distribution of documents over them, the way they counted or the memory
// budget.
//
//	Add(ids) ──> store ──(full)──> index, rows ──> run files
//	       └─(W > 15)──> dense table (ids < F), key buffer ──sort──> run files
//	Finish ── per partition: rows of the stores + runs + dense ──> negatives ──> emit (in order)
//
// Appender adds new counts to an earlier sorted result in one streaming
// merge-join, for `pwe count --append`.
//
// The memory budget is split as described at Counter's layout constants:
// vocabulary tables first, then 3/4 for the accumulators and 1/4 for the
// merge.
package counts
