package counts

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"runtime/debug"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/pwe-project/pwe/formats"
)

// benchCorpus is about 10 M Zipf-distributed ids over V = 65536 in
// documents of 20-200 tokens, like the 10.9 M-token benchmark corpus.
var benchCorpus = sync.OnceValue(func() corpus {
	const v, tokens = 65536, 10_000_000
	r := rand.New(rand.NewPCG(1, 2))
	z := rand.NewZipf(r, 1.05, 1, v-1)
	c := corpus{v: v, counts: make([]int64, v)}
	ids := make([]int32, tokens)
	for i := range ids {
		ids[i] = int32(z.Uint64())
		c.counts[ids[i]]++
	}
	for len(ids) > 0 {
		n := min(len(ids), 20+r.IntN(181))
		c.docs = append(c.docs, ids[:n:n])
		ids = ids[n:]
	}
	for i := 1; i < v; i++ {
		c.counts[i] = min(c.counts[i], c.counts[i-1])
	}
	return c
})

func BenchmarkCount(b *testing.B) {
	cp := benchCorpus()
	for _, tc := range []struct {
		workers int
		memory  int64
		k       int
	}{
		{1, 256 << 20, 1},
		{2, 256 << 20, 1},
		{1, 256 << 20, 0},
		{2, 256 << 20, 0},
		{1, 16 << 20, 1},
		{2, 16 << 20, 1},
	} {
		name := fmt.Sprintf("workers=%d/mem=%dMiB/K=%d", tc.workers, tc.memory>>20, tc.k)
		b.Run(name, func(b *testing.B) {
			cfg := Config{Window: 5, Negatives: tc.k, Memory: tc.memory, Workers: tc.workers, TempDir: b.TempDir(), Seed: 1}
			// As the count stage does.
			defer debug.SetMemoryLimit(debug.SetMemoryLimit(tc.memory + tc.memory/16))
			var tokens int64
			var st Stats
			cpu0 := cpuSeconds()
			for b.Loop() {
				c, err := New(cfg, cp.counts)
				if err != nil {
					b.Fatal(err)
				}
				var wg sync.WaitGroup
				for w := range tc.workers {
					a := c.NewAccumulator()
					wg.Go(func() {
						for i := w; i < len(cp.docs); i += tc.workers {
							if err := a.Add(cp.docs[i], int64(i)); err != nil {
								panic(err)
							}
						}
					})
				}
				wg.Wait()
				var rows int64
				st, err = c.Finish(context.Background(), func(b *formats.CountColumns) error {
					rows += int64(b.Len())
					return nil
				})
				if err != nil {
					b.Fatal(err)
				}
				tokens += st.Tokens
			}
			cpu := cpuSeconds() - cpu0
			b.ReportMetric(float64(tokens)/b.Elapsed().Seconds(), "tokens/s")
			b.ReportMetric(cpu/float64(b.N), "cpu-s/op")
			b.ReportMetric(float64(st.Rows), "rows")
			b.ReportMetric(float64(st.Spills), "spills")
			b.ReportMetric(peakRSS(), "peak-RSS-MiB")
			b.ReportMetric(float64(st.SpilledBytes)/float64(st.UniquePairs), "spilled-B/pair")
		})
	}
}

// cpuSeconds is the process's user + system CPU time; on a shared machine
// it measures the work better than the wall clock.
func cpuSeconds() float64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano()).Seconds()
}

// BenchmarkNegatives times one target's multinomial draw by each method,
// reported per draw, over the benchmark vocabulary.
func BenchmarkNegatives(b *testing.B) {
	tbl, _ := newNegTable(benchCorpus().counts, 0.75)
	s := newNegSampler(tbl)
	for _, m := range []uint64{100, 10000, 65536, 200000, 2000000} {
		for _, method := range []negMethod{negAuto, negAlias, negChain} {
			b.Run(fmt.Sprintf("m=%d/method=%d", m, method), func(b *testing.B) {
				var cs []int32
				var ns []uint64
				seed := uint64(0)
				for b.Loop() {
					r := newRNG(1, 2, seed)
					seed++
					cs, ns = s.sample(&r, m, method, cs[:0], ns[:0])
				}
				b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(uint64(b.N)*m), "ns/draw")
			})
		}
	}
}

// peakRSS is the process's peak resident set in MiB (VmHWM), which includes
// the benchmark corpus itself (about 45 MiB).
func peakRSS() float64 {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(b), "\n") {
		if rest, ok := strings.CutPrefix(line, "VmHWM:"); ok {
			kb, _ := strconv.ParseFloat(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(rest), "kB")), 64)
			return kb / 1024
		}
	}
	return 0
}
