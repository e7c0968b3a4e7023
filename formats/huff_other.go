//go:build !amd64 || purego

package formats

// hasBMI2 reports whether appendStream codes its groups of four bytes with
// huffGroupsBMI2, WriteChunk its ids with putIDsBMI2, and decodeIDs reads
// them with decodeIDsBMI2.
const hasBMI2 = false

func huffGroupsBMI2(buf, src []byte, code *[256]uint32, c uint64, nb uint, pos int) (uint64, uint, int) {
	panic("formats: no huffGroupsBMI2")
}

func putIDsBMI2(b []byte, p int, ids []uint32) (int, int) { panic("formats: no putIDsBMI2") }

func decodeIDsBMI2(ids []uint32, b []byte, q int, limit uint64) (n int, end int, bad bool) {
	panic("formats: no decodeIDsBMI2")
}
