//go:build !amd64 || purego

package counts

const (
	hasAVX2   = false
	hasAVX512 = false
)

func aliasDrawsAVX2(b []uint32, compact []uint32, s uint64) int { panic("counts: no AVX2") }

func scanEntriesAVX512(blk []uint64, base, t int32, tg, cx []int32, np, nn []float64, scale float64) (rows int, unique int64) {
	panic("counts: no AVX-512")
}
