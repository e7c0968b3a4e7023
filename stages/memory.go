package stages

import (
	"runtime/debug"
	"sync"

	"github.com/pwe-project/pwe/internal/pages"
)

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

// hugeHeap advises huge pages for the heap a stage is about to use, up to
// its budget (pages.HugeHeap), and returns the function that withdraws the
// advice when the stage ends. The Go runtime maps its heap 4 KiB at a
// time, a page fault each: on bench-raw, tokenize took 9 000-14 000 of
// them, count 12 000-17 000, with the advice 1 700-2 100 and about 4 200,
// and their CPU time fell by up to a fifth on two threads (BENCHMARKS.md,
// session 34). A stage calls it first, before the heap has free memory of
// its own that the runtime would hand out before the advised range; in
// count after the vocabulary was read, there were twice as many faults.
func hugeHeap(budget int64) (withdraw func()) { return pages.HugeHeap(budget) }

// pauseGC turns the collector off until the returned function is called,
// as it may be more than once: for a stage's start, which makes its tables
// and keeps them, so that a collection finds little garbage. At count's
// start on bench-raw, as the heap grew from 4 MB to 50, the collector ran
// six times; with it paused the counting began 3 ms sooner on two threads
// and 6 ms on one (medians of six alternating runs, BENCHMARKS.md, session
// 35). The memory limit, where one is set, still starts a collection.
func pauseGC() (resume func()) {
	pct := debug.SetGCPercent(-1)
	return sync.OnceFunc(func() { debug.SetGCPercent(pct) })
}
