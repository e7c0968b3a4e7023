//go:build !amd64 || purego

package formats

// hasAVX2 reports whether int32Range has int32RangeAVX2, and
// countsDict.lookup smallIndexAVX2.
const hasAVX2 = false

func int32RangeAVX2([]int32, int32, int32) (mn, mx int32) { panic("formats: no int32RangeAVX2") }
