//go:build unix

package input

import (
	"syscall"
	"time"
)

// cpuTime is the CPU time (user + system) the process has used. Benchmarks
// report it besides wall time because the test machines are shared, and a
// busy neighbour stretches wall time but not CPU time.
func cpuTime() (time.Duration, bool) {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0, false
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano()), true
}
