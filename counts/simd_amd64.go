//go:build amd64 && !purego

package counts

import "golang.org/x/sys/cpu"

var (
	// hasAVX2 reports whether negTable.aliasDraws makes its draws with
	// aliasDrawsAVX2.
	hasAVX2 = cpu.X86.HasAVX2
	// hasAVX512 reports whether scanEntries writes its rows with
	// scanEntriesAVX512.
	hasAVX512 = cpu.X86.HasAVX512F && cpu.X86.HasAVX512VL && cpu.X86.HasPOPCNT
)

// aliasDrawsAVX2 makes aliasDraws's draws into b, four at a time from the
// compact alias table (negTable.compact), for as long as the table decides
// them, at most len(b) &^ 3; it returns their number.
//
//go:noescape
func aliasDrawsAVX2(b []uint32, compact []uint32, s uint64) int

// scanEntriesAVX512 is scanEntries for the first len(blk) &^ 7 entries,
// eight at a time, without emptying them. The columns must have room for
// len(blk) rows.
//
//go:noescape
func scanEntriesAVX512(blk []uint64, base, t int32, tg, cx []int32, np, nn []float64, scale float64) (rows int, unique int64)
