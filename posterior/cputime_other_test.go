//go:build !unix

package posterior

import "time"

// cpuTime is not measured here; benchmarks then omit the CPU figures.
func cpuTime() time.Duration { return 0 }
