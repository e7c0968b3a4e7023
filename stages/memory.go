package stages

import "runtime/debug"

// minMemoryLimit is the least Go memory limit limitMemory sets: about twice
// the heap that a stage takes besides its bounded tables (batches in
// flight, buffers, the output's pages: some 30 MB).
const minMemoryLimit = 64 << 20

// limitMemory sets the Go memory limit for a stage whose tables stay within
// budget bytes, and returns a function that restores the previous limit.
// The tables are bounded, so a limit makes the collector work harder rather
// than let garbage take the process past the budget. It is not set below
// minMemoryLimit, where it kept the collector running: with --memory 16MiB
// on bench-raw, tokenize took twice the CPU, and count 2.47-2.66 s on one
// thread against 1.98-2.08 (2.9 against 1.6 s on two).
func limitMemory(budget int64) (restore func()) {
	prev := debug.SetMemoryLimit(max(budget+budget/16, minMemoryLimit))
	return func() { debug.SetMemoryLimit(prev) }
}
