//go:build unix

package posterior

import (
	"syscall"
	"time"
)

// cpuTime returns the CPU time of the process so far (user and system), a
// figure less disturbed than wall time by other jobs on a shared machine.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
