package main

import (
	"log/slog"
	"os"
	"runtime/pprof"
)

// startProfile writes a CPU profile of the command to the file named by
// PWE_CPUPROFILE, for benchmarking whole commands; the returned function
// stops it. A profile that cannot start is a warning: the command runs.
func startProfile(log *slog.Logger) func() {
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
