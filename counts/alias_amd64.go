//go:build amd64 && !purego

package counts

import "golang.org/x/sys/cpu"

// hasAVX2 reports whether negTable.aliasDraws makes its draws with
// aliasDrawsAVX2.
var hasAVX2 = cpu.X86.HasAVX2

// aliasDrawsAVX2 makes aliasDraws's draws into b, four at a time from the
// compact alias table (negTable.compact), for as long as the table decides
// them, at most len(b) &^ 3; it returns their number.
//
//go:noescape
func aliasDrawsAVX2(b []uint32, compact []uint32, s uint64) int
