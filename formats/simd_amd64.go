//go:build amd64 && !purego

package formats

import "golang.org/x/sys/cpu"

// The assembly of this package, by the extensions it needs, and the
// functions it provides.
var (
	// hasAVX2 reports whether int32Range has int32RangeAVX2,
	// countsDict.lookup smallIndexAVX2, and appendHybrid packGroups8AVX2
	// (and, with BMI2, packGroupsWideAVX2).
	hasAVX2 = cpu.X86.HasAVX2
	// hasBMI2 reports whether appendStream codes its groups of four bytes
	// with huffGroupsBMI2, WriteChunk its ids with putIDsBMI2, and
	// decodeIDs reads them with decodeIDsBMI2. The assembly uses BMI1's
	// ANDN, BLSR and TZCNT as well as BMI2's.
	hasBMI2 = cpu.X86.HasBMI1 && cpu.X86.HasBMI2
)

// int32RangeAVX2 is int32Range for len(col) a multiple of 16, sixteen
// values at a time with AVX2's packed minimum and maximum. The Go compiler
// does not vectorise int32Range, which took 2.2 % of count's samples on
// bench-raw.
//
//go:noescape
func int32RangeAVX2(col []int32, lo, hi int32) (mn, mx int32)

// smallIndexAVX2 sets out[i] to small[k]-1 for the values vals[i] = k,
// four at a time from the start, for as long as each group of four is
// whole numbers below countsSmallDict (not -0) with non-zero slots; it
// returns the number of values done, a multiple of four, with their
// indices or-ed. out must have room for vals.
//
//go:noescape
func smallIndexAVX2(vals []float64, small *[countsSmallDict]int32, out []int32) (n int, or int32)

// huffGroupsBMI2 is appendStream's loop over the groups of four bytes of
// src, whose length is a multiple of four, from the last: it adds their
// codes to the bits c, nb of them, and stores the whole bytes in buf at
// pos, which must have room for them and eight more; it returns the bits
// left and the position after the bytes stored.
//
//go:noescape
func huffGroupsBMI2(buf, src []byte, code *[256]uint32, c uint64, nb uint, pos int) (uint64, uint, int)

// putIDsBMI2 is WriteChunk's loop over the ids: it writes them as varints
// into b from p, four bytes stored for each, until an id of four bytes or
// more, and returns the position after them and their number. b must have
// room for four bytes after the last.
//
//go:noescape
func putIDsBMI2(b []byte, p int, ids []uint32) (int, int)

// decodeIDsBMI2 is decodeIDs from position q, with each id's 7-bit groups
// gathered by one PEXT; it returns the position after the ids decoded
// instead of setting it.
//
//go:noescape
func decodeIDsBMI2(ids []uint32, b []byte, q int, limit uint64) (n int, end int, bad bool)

// packGroups8AVX2 packs groups of eight values of src, each below 256, as
// bytes into dst, eight bytes a group: the first group whatever it holds,
// then each group after it until one whose values are all equal, or the
// end of src's whole groups. It returns the number of groups packed; dst
// must have room for eight bytes each.
//
//go:noescape
func packGroups8AVX2(src []int32, dst []byte) int

// packGroupsWideAVX2 is packGroups8AVX2 for values of w bits, 9 <= w <= 15,
// packed in w bytes a group with BMI2's shifts; dst must have room for
// w bytes a group and 16 more.
//
//go:noescape
func packGroupsWideAVX2(src []int32, dst []byte, w uint) int
