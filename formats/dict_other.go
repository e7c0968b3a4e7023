//go:build !amd64 || purego

package formats

func smallIndexAVX2([]float64, *[countsSmallDict]int32, []int32) (int, int32) {
	panic("formats: no smallIndexAVX2")
}
