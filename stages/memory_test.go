package stages

import (
	"runtime/debug"
	"testing"
)

// TestLimitMemory checks the memory limit a stage sets for its budget: a
// sixteenth above it, never below minMemoryLimit, and the previous limit
// back after restore.
func TestLimitMemory(t *testing.T) {
	before := debug.SetMemoryLimit(-1)
	for _, c := range []struct{ budget, want int64 }{
		{1 << 20, minMemoryLimit},
		{16 << 20, minMemoryLimit},
		{256 << 20, 272 << 20},
		{1 << 30, 1<<30 + 64<<20},
	} {
		restore := limitMemory(c.budget)
		if got := debug.SetMemoryLimit(-1); got != c.want {
			t.Errorf("budget %d: limit %d, want %d", c.budget, got, c.want)
		}
		restore()
		if got := debug.SetMemoryLimit(-1); got != before {
			t.Errorf("budget %d: limit %d after restore, want %d", c.budget, got, before)
		}
	}
}
