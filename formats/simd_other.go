//go:build !amd64 || purego

package formats

// Without the assembly (simd_amd64.go), the Go code runs everywhere.
const (
	hasAVX2 = false
	hasBMI2 = false
)

func int32RangeAVX2([]int32, int32, int32) (mn, mx int32) { panic("formats: no int32RangeAVX2") }

func smallIndexAVX2([]float64, *[countsSmallDict]int32, []int32) (int, int32) {
	panic("formats: no smallIndexAVX2")
}

func huffGroupsBMI2(buf, src []byte, code *[256]uint32, c uint64, nb uint, pos int) (uint64, uint, int) {
	panic("formats: no huffGroupsBMI2")
}

func putIDsBMI2(b []byte, p int, ids []uint32) (int, int) { panic("formats: no putIDsBMI2") }

func decodeIDsBMI2(ids []uint32, b []byte, q int, limit uint64) (n int, end int, bad bool) {
	panic("formats: no decodeIDsBMI2")
}

func packGroups8AVX2(src []int32, dst []byte) int { panic("formats: no packGroups8AVX2") }

func packGroupsWideAVX2(src []int32, dst []byte, w uint) int { panic("formats: no packGroupsWideAVX2") }
