// Command issue2sum summarises the lines of testdata/bench/issue2.sh: the
// median CPU (user + system), wall time and peak RSS of every binary's
// stages; tokenize + count against GloVe's cooccur and against DESIGN.md's
// figure (1.8 M tokens per CPU-second); two threads against one; and (the
// pair mode) the CPU of one-thread runs side by side and of two threads
// against one thread alone.
//
//	testdata/bench/issue2.sh rounds 8 ./pwe | go run ./testdata/bench/issue2sum
package main

import (
	"bufio"
	"flag"
	"fmt"
	"io"
	"os"
	"slices"
	"strconv"
	"strings"
)

// run is one timed command.
type run struct{ cpu, wall, rssMiB float64 }

func main() {
	tokens := flag.Float64("tokens", 10668542, "the corpus's tokens, as pwe counts them (bench-raw)")
	flag.Parse()
	runs, order, err := read(os.Stdin)
	if err != nil {
		fmt.Fprintln(os.Stderr, "issue2sum:", err)
		os.Exit(1)
	}
	for _, key := range order {
		rs := values(runs[key])
		fmt.Printf("%-10s %-8s cpu %.3f (%.2f-%.2f)  wall %.3f  rss %.0f MiB  (%d runs)\n", key[0], key[1],
			median(field(rs, func(r run) float64 { return r.cpu })),
			slices.Min(field(rs, func(r run) float64 { return r.cpu })), slices.Max(field(rs, func(r run) float64 { return r.cpu })),
			median(field(rs, func(r run) float64 { return r.wall })), median(field(rs, func(r run) float64 { return r.rssMiB })), len(rs))
	}
	cooc := runs[[2]string{"cooc", "cooc"}]
	for _, key := range order {
		bin, stage := key[0], key[1]
		if stage != "tok" {
			continue
		}
		for _, count := range []string{"c256MiB", "c1GiB"} {
			sums, ratios := perRound(runs[key], runs[[2]string{bin, count}], cooc, func(r run) float64 { return r.cpu })
			if len(sums) == 0 {
				continue
			}
			t := median(sums)
			line := fmt.Sprintf("%-10s tok+%-8s cpu %.3f  x DESIGN %.3f", bin, count, t, *tokens/t/1.8e6)
			if len(ratios) > 0 {
				c := median(field(values(cooc), func(r run) float64 { return r.cpu }))
				line += fmt.Sprintf("  x cooccur %.3f (median over median; per round %.3f)", c/t, median(ratios))
			}
			fmt.Println(line)
		}
	}
	for _, key := range order {
		bin, stage := key[0], key[1]
		if stage != "tok1" {
			continue
		}
		one, _ := perRound(runs[key], runs[[2]string{bin, "cnt1"}], nil, func(r run) float64 { return r.wall })
		two, _ := perRound(runs[[2]string{bin, "tok2"}], runs[[2]string{bin, "cnt2"}], nil, func(r run) float64 { return r.wall })
		if len(one) == 0 || len(one) != len(two) {
			continue
		}
		var ratios []float64
		for i := range one {
			ratios = append(ratios, one[i]/two[i])
		}
		fmt.Printf("%-10s 2 threads against 1, tokenize + count wall: %.3f (median over median; per round %.3f; 1T %.3f s, 2T %.3f s)\n",
			bin, median(one)/median(two), median(ratios), median(one), median(two))
	}
	// issue2.sh pair: the CPU of one-thread runs side by side, and of a
	// two-thread run, against a one-thread run alone.
	cpu := func(key [2]string) float64 {
		return median(field(values(runs[key]), func(r run) float64 { return r.cpu }))
	}
	for _, key := range order {
		bin, stage := key[0], key[1]
		what, ok := strings.CutSuffix(stage, "-solo")
		if !ok {
			continue
		}
		pair := append(values(runs[[2]string{bin, what + "-pair1"}]), values(runs[[2]string{bin, what + "-pair2"}])...)
		two := runs[[2]string{bin, what + "-two"}]
		if len(pair) == 0 || len(two) == 0 {
			continue
		}
		solo := cpu(key)
		fmt.Printf("%-10s %s CPU against one thread alone: %.3f side by side with another, %.3f on two threads\n",
			bin, what, median(field(pair, func(r run) float64 { return r.cpu }))/solo, cpu([2]string{bin, what + "-two"})/solo)
	}
}

// read parses the lines "round binary stage user system wall rss_kB" into
// runs by (binary, stage) and round, with the keys in order of appearance.
func read(r io.Reader) (map[[2]string]map[string]run, [][2]string, error) {
	runs := map[[2]string]map[string]run{}
	var order [][2]string
	sc := bufio.NewScanner(r)
	for line := 1; sc.Scan(); line++ {
		f := strings.Fields(sc.Text())
		if len(f) != 7 {
			return nil, nil, fmt.Errorf("line %d: %q: want round, binary, stage, user, system, wall, rss", line, sc.Text())
		}
		var x [4]float64
		for i := range x {
			v, err := strconv.ParseFloat(f[3+i], 64)
			if err != nil {
				return nil, nil, fmt.Errorf("line %d: %w", line, err)
			}
			x[i] = v
		}
		key := [2]string{f[1], f[2]}
		if runs[key] == nil {
			runs[key] = map[string]run{}
			order = append(order, key)
		}
		runs[key][f[0]] = run{cpu: x[0] + x[1], wall: x[2], rssMiB: x[3] / 1024}
	}
	return runs, order, sc.Err()
}

// perRound returns, for the rounds both a and b ran, the sums of their
// values, and where ref ran too, ref's CPU over each sum.
func perRound(a, b, ref map[string]run, value func(run) float64) (sums, ratios []float64) {
	rounds := make([]string, 0, len(a))
	for r := range a {
		if _, ok := b[r]; ok {
			rounds = append(rounds, r)
		}
	}
	slices.Sort(rounds)
	for _, r := range rounds {
		s := value(a[r]) + value(b[r])
		sums = append(sums, s)
		if c, ok := ref[r]; ok {
			ratios = append(ratios, c.cpu/s)
		}
	}
	return sums, ratios
}

func values(m map[string]run) []run {
	rs := make([]run, 0, len(m))
	for _, r := range m {
		rs = append(rs, r)
	}
	return rs
}

func field(rs []run, f func(run) float64) []float64 {
	out := make([]float64, len(rs))
	for i, r := range rs {
		out[i] = f(r)
	}
	return out
}

func median(x []float64) float64 {
	s := slices.Clone(x)
	slices.Sort(s)
	n := len(s)
	if n%2 == 1 {
		return s[n/2]
	}
	return (s[n/2-1] + s[n/2]) / 2
}
