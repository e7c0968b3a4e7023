// Package cacheline keeps the values that goroutines write off each other's
// cache lines.
//
// Values allocated one after another, as per-goroutine state often is, sit
// side by side in memory: when one goroutine writes a field of its value
// while another reads or writes a field of its own on the same cache line,
// the line moves between their cores at each turn (false sharing). On the
// two-core virtual machines pwe was benchmarked on, a line took about 260 ns
// to move between cores, against a few ns for a hit in the core's cache.
package cacheline

// Pad, as a struct's first and last field, keeps its other fields off the
// cache lines of the values allocated beside it: 128 bytes, since
// prefetchers fetch lines in pairs.
type Pad [128]byte
