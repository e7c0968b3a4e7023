package main

import (
	"log/slog"
	"os"
	"runtime/pprof"
	"runtime/trace"
)

// startProfile writes a CPU profile of the command to the file named by
// PWE_CPUPROFILE, and an execution trace (go tool trace) to the file named
// by PWE_TRACE, for benchmarking whole commands; the returned function
// stops them. A profile that cannot start is a warning: the command runs.
func startProfile(log *slog.Logger) func() {
	stopCPU := startCPUProfile(log)
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
