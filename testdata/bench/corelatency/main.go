//go:build linux

// Command corelatency measures how long a cache line takes to move between
// two CPUs of this machine, the cost that two goroutines on different cores
// pay whenever one reads what the other last wrote: two threads, pinned to
// CPUs a and b, hand a counter back and forth through one atomic word, each
// waiting for the other's store. It also times reading 512 KiB (a tokenize
// batch) that a thread on CPU a has just written, from CPU b and from CPU a:
// a sequential read is prefetched, so it hides most of the hand-over's wait.
//
// usage: go run ./testdata/bench/corelatency [a b]   (default 0 1)
package main

import (
	"fmt"
	"os"
	"runtime"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/sys/unix"
)

func main() {
	a, b := 0, 1
	if len(os.Args) == 3 {
		var err1, err2 error
		a, err1 = strconv.Atoi(os.Args[1])
		b, err2 = strconv.Atoi(os.Args[2])
		if err1 != nil || err2 != nil {
			fmt.Fprintln(os.Stderr, "usage: corelatency [a b]")
			os.Exit(2)
		}
	}
	runtime.GOMAXPROCS(2)
	for range 3 {
		fmt.Printf("CPUs %d and %d: %.0f ns a one-way hand-over\n", a, b, handOver([2]int{a, b}, 200_000))
	}
	for _, cpus := range [][2]int{{a, b}, {a, a}} {
		fmt.Printf("512 KiB written on CPU %d, read on CPU %d: %.1f µs\n", cpus[0], cpus[1], readBack(cpus, 2000))
	}
}

// pin binds the calling goroutine's thread to cpu.
func pin(cpu int) {
	runtime.LockOSThread()
	var set unix.CPUSet
	set.Set(cpu)
	if err := unix.SchedSetaffinity(0, &set); err != nil {
		fmt.Fprintln(os.Stderr, "corelatency:", err)
		os.Exit(1)
	}
}

// handOver returns the mean time, in ns, of one hand-over of the word
// between a thread on cpus[0] and one on cpus[1].
func handOver(cpus [2]int, n int64) float64 {
	var word atomic.Int64
	done := make(chan struct{})
	go func() {
		pin(cpus[1])
		defer runtime.UnlockOSThread()
		for i := int64(1); i <= n; i++ {
			for word.Load() != 2*i-1 {
			}
			word.Store(2 * i)
		}
		close(done)
	}()
	pin(cpus[0])
	defer runtime.UnlockOSThread()
	start := time.Now()
	for i := int64(1); i <= n; i++ {
		word.Store(2*i - 1)
		for word.Load() != 2*i {
		}
	}
	<-done
	return float64(time.Since(start).Nanoseconds()) / float64(2*n)
}

// sink keeps readBack's sums, so that its reads are not optimised away.
var sink uint64

// readBack returns the mean time, in µs, to sum 512 KiB on cpus[1] that a
// thread on cpus[0] has just written.
func readBack(cpus [2]int, rounds int) float64 {
	buf := make([]uint64, 64<<10)
	var total time.Duration
	var sum uint64
	for r := range rounds {
		var wg sync.WaitGroup
		wg.Go(func() {
			pin(cpus[0])
			defer runtime.UnlockOSThread()
			for i := range buf {
				buf[i] = uint64(i + r)
			}
		})
		wg.Wait()
		wg.Go(func() {
			pin(cpus[1])
			defer runtime.UnlockOSThread()
			start := time.Now()
			var s uint64
			for _, x := range buf {
				s += x
			}
			total += time.Since(start)
			sum += s
		})
		wg.Wait()
	}
	sink = sum
	return float64(total.Microseconds()) / float64(rounds)
}
