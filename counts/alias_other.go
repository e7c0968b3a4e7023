//go:build !amd64 || purego

package counts

const hasAVX2 = false

func aliasDrawsAVX2(b []uint32, compact []uint32, s uint64) int { panic("no AVX2") }
