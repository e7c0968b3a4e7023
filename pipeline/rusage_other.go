//go:build !unix

package pipeline

// peakRSS is unknown on systems without getrusage.
func peakRSS() int64 { return 0 }
