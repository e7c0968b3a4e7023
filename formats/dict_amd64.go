//go:build amd64 && !purego

package formats

// smallIndexAVX2 sets out[i] to small[k]-1 for the values vals[i] = k,
// four at a time from the start, for as long as each group of four is
// whole numbers below countsSmallDict (not -0) with non-zero slots; it
// returns the number of values done, a multiple of four, with their
// indices or-ed. out must have room for vals.
//
//go:noescape
func smallIndexAVX2(vals []float64, small *[countsSmallDict]int32, out []int32) (n int, or int32)
