//go:build unix

package stages

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/pwe-project/pwe/formats"
)

// writeSyntheticDraws writes a draws.parquet of v tokens in d dimensions,
// chains x n draws of standard normal coordinates.
func writeSyntheticDraws(tb testing.TB, dir string, v, d, chains, n int) {
	tb.Helper()
	w, err := formats.Create[formats.DrawRow](filepath.Join(dir, DrawsFile), formats.Meta{Schema: formats.SchemaDraws})
	if err != nil {
		tb.Fatal(err)
	}
	defer w.Abort()
	rng := rand.New(rand.NewPCG(1, 2))
	tokens := make([]string, v)
	for i := range tokens {
		tokens[i] = "t" + strconv.Itoa(i)
	}
	rows := make([]formats.DrawRow, 0, 4096)
	vals := make([]float32, 4096*d)
	for c := range chains {
		for g := range n {
			for _, param := range []string{formats.ParamRho, formats.ParamAlpha} {
				for i := range v {
					if len(rows) == cap(rows) {
						if err := w.Write(rows); err != nil {
							tb.Fatal(err)
						}
						rows = rows[:0]
					}
					vec := vals[len(rows)*d : (len(rows)+1)*d]
					for k := range vec {
						vec[k] = float32(rng.NormFloat64())
					}
					rows = append(rows, formats.DrawRow{Chain: int16(c), Draw: int32(g), Param: param, TokenID: int32(i), Token: tokens[i], Vector: vec})
				}
			}
		}
	}
	if err := w.Write(rows); err != nil {
		tb.Fatal(err)
	}
	if err := w.Close(); err != nil {
		tb.Fatal(err)
	}
}

func cpuSeconds() float64 {
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano()).Seconds()
}

// BenchmarkSummarizeNeighbours summarises the neighbours of 10 queries
// (top 10) over V = 50 000 tokens (PWE_BENCH_V overrides) in D = 50, 2
// chains x 5 draws, and reports process CPU seconds per draw, the figure
// to scale to a run's draws.
func BenchmarkSummarizeNeighbours(b *testing.B) {
	v, d, chains, n := 50000, 50, 2, 5
	if s := os.Getenv("PWE_BENCH_V"); s != "" {
		v, _ = strconv.Atoi(s)
	}
	dir := b.TempDir()
	writeSyntheticDraws(b, dir, v, d, chains, n)
	var queries []string
	for q := range 10 {
		queries = append(queries, fmt.Sprintf("t%d", q*v/10))
	}
	cfg := SummarizeConfig{Fit: dir, Neighbours: queries, Top: 10, PairsAllAmong: queries}
	cpu := 0.0
	for b.Loop() {
		start := cpuSeconds()
		if _, err := Summarize(context.Background(), cfg); err != nil {
			b.Fatal(err)
		}
		cpu += cpuSeconds() - start
	}
	b.ReportMetric(cpu/float64(b.N*chains*n), "cpu-s/draw")
}
