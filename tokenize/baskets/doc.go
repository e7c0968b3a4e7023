// Package baskets turns MovieLens ratings into per-user baskets of liked
// and disliked movies, and into the movie vocabulary, the way exponential
// family embeddings treat a user's movies as a document.
//
// A Builder makes three passes over a Source, which yields each user's
// ratings in file order, users in ascending id:
//
//  1. CountMovies: per-movie counts of distinct raters. A user's repeated
//     ratings of one movie count once; the latest by timestamp (the later
//     line on a tie) is the one that stands, here and below.
//  2. SelectMovies, then Tally: the filters, in this order:
//     movies rated by fewer than MinMovieRatings users are dropped; of the
//     rest the TopMovies most rated are kept (ties by smaller movie id);
//     a user with fewer than MinUserRatings ratings of kept movies is
//     dropped; of a remaining user's ratings of kept movies at most
//     MaxPerUser are kept, a uniformly random subset keyed by (Seed, user
//     id, movie id), so the choice depends on neither threads nor file
//     order. The kept ratings give each movie its final count; movies left
//     with none are dropped.
//  3. Emit: every kept user's liked movies (rating >= MinRating) and
//     disliked movies, as vocabulary ids, to be counted as two documents.
//
// Vocabulary assigns ids by descending final count, ties by token bytes,
// as the text vocabulary does; tokens are titles, made unique by appending
// " (id N)" to every title that several movies share, or "movie:<id>".
//
// Sources: a FileSource streams a ratings file that is sorted by user, as
// every MovieLens release is, re-reading it for each pass; for a file that
// is not (ErrUnsorted), LoadMemory groups the ratings in memory at 8 bytes
// per rating (Entry), within a stated limit.
package baskets
