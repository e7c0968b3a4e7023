//go:build !unix

package input

import "time"

func cpuTime() (time.Duration, bool) { return 0, false }
