// Package movielens reads the rating and movie files of the GroupLens
// MovieLens data sets, so that pwe can embed movies the way it embeds words.
//
// Three layouts cover every release:
//
//	100k  ml-100k u.data: user, item, rating, timestamp separated by tabs;
//	      titles in u.item, pipe-separated and Latin-1 encoded
//	dat   ml-1m and ml-10m ratings.dat: the same fields separated by "::";
//	      titles in movies.dat (Latin-1 in ml-1m, UTF-8 in ml-10m)
//	csv   ml-20m, ml-25m, ml-32m, ml-latest(-small) ratings.csv with the
//	      header userId,movieId,rating,timestamp; titles in movies.csv,
//	      UTF-8, quoted where they hold commas
//
// The layout of a ratings file is recognised from its first line (Detect),
// or forced. Files may be compressed (gzip, zstd, bzip2; see formats/input)
// and may end lines with CRLF. Ratings are whole or half stars from 0 to 5.
//
// A Reader parses a ratings file line by line without allocating, for files
// of tens of millions of ratings; a malformed line is an *input.ParseError
// naming the file and line and wrapping ErrMalformed, or, with SkipBadLines,
// is skipped and counted. ReadTitles reads a movies file into a map from
// movie id to title, decoding Latin-1 where the file is not valid UTF-8.
package movielens
