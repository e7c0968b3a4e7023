//go:build !linux

package pages

// mapBytes returns an empty slice with room for n bytes, from the Go heap
// where the Linux version maps memory.
func mapBytes(n int) []byte { return make([]byte, 0, max(n, 0)) }

// unmapBytes leaves b to the collector.
func unmapBytes(b []byte) {}
