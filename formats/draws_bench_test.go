//go:build unix

package formats

import (
	"io"
	"path/filepath"
	"syscall"
	"testing"
	"time"
)

// cpuTime returns the process's CPU time, the figure that a machine shared
// with other work does not inflate; the benchmarks run one goroutine
// apart from the garbage collector.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// benchDraws writes draws of 5 000 tokens in 50 dimensions, 2 chains x 2
// draws (a million floats per draw), with the fit stage's writer.
func benchDraws(b *testing.B) (path string, floats int) {
	b.Helper()
	ids := make([]int32, 5000)
	for i := range ids {
		ids[i] = int32(i)
	}
	spec := drawsSpec{ids: ids, dim: 50, chains: 2, draws: 2}
	path = filepath.Join(b.TempDir(), "draws.parquet")
	if err := WriteAll(path, spec.rows(), Meta{Schema: SchemaDraws}); err != nil {
		b.Fatal(err)
	}
	return path, 2 * len(ids) * spec.dim * spec.chains * spec.draws
}

// BenchmarkDrawsReader reads every draw with DrawsReader; ns/float is the
// figure to compare with the arithmetic done per coordinate.
func BenchmarkDrawsReader(b *testing.B) {
	path, floats := benchDraws(b)
	start := cpuTime()
	for b.Loop() {
		if err := readAllDraws(path); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64((cpuTime()-start).Nanoseconds())/float64(b.N*floats), "cpu-ns/float")
}

// BenchmarkDrawsRowReader reads the same file as rows of DrawRow, the
// path DrawsReader replaces.
func BenchmarkDrawsRowReader(b *testing.B) {
	path, floats := benchDraws(b)
	buf := make([]DrawRow, 1024)
	start := cpuTime()
	for b.Loop() {
		r, err := Open[DrawRow](path, SchemaDraws)
		if err != nil {
			b.Fatal(err)
		}
		for {
			_, err := r.Read(buf)
			if err == io.EOF {
				break
			}
			if err != nil {
				b.Fatal(err)
			}
		}
		r.Close()
	}
	b.ReportMetric(float64((cpuTime()-start).Nanoseconds())/float64(b.N*floats), "cpu-ns/float")
}
