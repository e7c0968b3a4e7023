package main

import (
	"log/slog"
	"os"
	"runtime"
	"runtime/pprof"
	"runtime/trace"
)

// Without PWE_MEMPROFILE, no allocation is sampled: recording a sample's
// stack took 0.2 % of tokenize and of count.
func init() {
	if os.Getenv("PWE_MEMPROFILE") == "" {
		runtime.MemProfileRate = 0
	}
}

// startProfile writes a CPU profile of the command to the file named by
// PWE_CPUPROFILE, an execution trace (go tool trace) to the file named by
// PWE_TRACE, and a profile of its allocations to the file named by
// PWE_MEMPROFILE, for benchmarking whole commands; the returned function
// stops them. A profile that cannot start is a warning: the command runs.
func startProfile(log *slog.Logger) func() {
	stopCPU := startCPUProfile(log)
	if path := os.Getenv("PWE_MEMPROFILE"); path != "" {
		stop := stopCPU
		stopCPU = func() {
			stop()
			writeAllocsProfile(log, path)
		}
	}
	path := os.Getenv("PWE_TRACE")
	if path == "" {
		return stopCPU
	}
	f, err := os.Create(path)
	if err != nil {
		log.Warn("trace: " + err.Error())
		return stopCPU
	}
	if err := trace.Start(f); err != nil {
		log.Warn("trace: " + err.Error())
		f.Close()
		return stopCPU
	}
	return func() {
		trace.Stop()
		if err := f.Close(); err != nil {
			log.Warn("trace: " + err.Error())
		}
		stopCPU()
	}
}

func startCPUProfile(log *slog.Logger) func() {
	path := os.Getenv("PWE_CPUPROFILE")
	if path == "" {
		return func() {}
	}
	f, err := os.Create(path)
	if err != nil {
		log.Warn("cpu profile: " + err.Error())
		return func() {}
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		log.Warn("cpu profile: " + err.Error())
		f.Close()
		return func() {}
	}
	return func() {
		pprof.StopCPUProfile()
		if err := f.Close(); err != nil {
			log.Warn("cpu profile: " + err.Error())
		}
	}
}

// writeAllocsProfile writes the allocations made so far (go tool pprof
// -sample_index=alloc_space) to path.
func writeAllocsProfile(log *slog.Logger, path string) {
	f, err := os.Create(path)
	if err != nil {
		log.Warn("memory profile: " + err.Error())
		return
	}
	err = pprof.Lookup("allocs").WriteTo(f, 0)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		log.Warn("memory profile: " + err.Error())
	}
}
