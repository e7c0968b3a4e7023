// Package tokenize turns text into word tokens and counts them into a
// vocabulary.
//
// Segmentation follows the Unicode word-boundary rules (UAX #29) as
// implemented by github.com/clipperhouse/uax29/v2/words. Because that library
// is the bottleneck of a tokenize pass, a hand-written segmenter covers the
// ASCII subset of the rules, and a [Tokenizer] hands the library only the
// stretches of a document that contain non-ASCII bytes; tests check that the
// two give the same segments. Segments become tokens after Unicode case
// folding (golang.org/x/text/cases.Fold, table-driven for ASCII, with
// Cherokee mended) and composition to normalization form C
// (golang.org/x/text/unicode/norm, checked segment by segment), and are
// dropped when they hold no letter or number, are stop words, or are shorter
// than a minimum length. A Tokenizer remembers what the non-ASCII segments
// it met last became, so that a word met again is neither folded nor
// composed again.
//
// A [Counter] counts tokens and turns the counts into a ranked vocabulary; an
// [Index] maps token bytes back to vocabulary ids. Both intern strings in a
// single byte arena behind an open-addressing hash table, so that counting a
// token already seen allocates nothing and the memory held per distinct token
// is small and predictable. A [Lookup] finds a Counter's ids on another
// goroutine while the Counter's own goroutine counts, so that workers
// tokenizing batches ahead of it number most of their tokens themselves.
package tokenize
