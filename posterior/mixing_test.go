package posterior

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/pwe-project/pwe/formats"
	"github.com/pwe-project/pwe/posterior/diag"
)

// The mixing experiment behind the defaults of GibbsConfig (anchors and
// frame-change moves), run on demand:
//
//	PWE_MIXING=1 go test -run TestMixing -v -timeout 2h ./posterior/
//
// PWE_MIXING_CONFIGS=volume:20:1,last:-1:1 replaces the sampler settings
// (anchors:moves per sweep:inner, -1 moves for none); PWE_MIXING_OUT=FILE
// appends the Markdown rows to FILE as they are made;
// PWE_MIXING_CASES=sub1,sub2 keeps the cases whose name contains one of the
// substrings; PWE_MIXING_DRAWS and PWE_MIXING_WARMUP change the 1000
// draws and 500 warmup sweeps per chain; PWE_MIXING_COUNTS=counts.parquet
// with PWE_MIXING_DIM=D adds a case on real counts (vocabulary size from
// the largest id).

// mixingConfig is one sampler setting of the experiment.
type mixingConfig struct {
	anchors AnchorKind
	moves   int
	inner   int
}

func (c mixingConfig) String() string {
	return fmt.Sprintf("%v | %d | %d", AnchorRule{Kind: c.anchors}, max(c.moves, 0), c.inner)
}

// mixingCase is one data set of the experiment.
type mixingCase struct {
	name string
	v    int
	dim  int
	data func(t testing.TB) *Data
}

func TestMixing(t *testing.T) {
	if os.Getenv("PWE_MIXING") == "" {
		t.Skip("set PWE_MIXING=1 to run the mixing experiment (about half an hour)")
	}
	draws, warmup := envInt(t, "PWE_MIXING_DRAWS", 1000), envInt(t, "PWE_MIXING_WARMUP", 500)
	var cases []mixingCase
	for _, law := range []string{"zipf", "uniform"} {
		for _, c := range []struct{ v, dim, n int }{{50, 2, 50_000}, {50, 5, 50_000}, {200, 10, 100_000}} {
			cases = append(cases, mixingCase{
				name: fmt.Sprintf("sim %s V=%d D=%d N=%d", law, c.v, c.dim, c.n), v: c.v, dim: c.dim,
				data: func(t testing.TB) *Data { return simulateMixing(t, c.v, c.dim, c.n, law == "zipf", 42) },
			})
		}
	}
	if path := os.Getenv("PWE_MIXING_COUNTS"); path != "" {
		rows, _, err := formats.ReadAll[formats.CountRow](path, formats.SchemaCounts)
		if err != nil {
			t.Fatal(err)
		}
		v := 0
		for _, r := range rows {
			v = max(v, int(r.TargetID)+1, int(r.ContextID)+1)
		}
		dim := envInt(t, "PWE_MIXING_DIM", 20)
		cases = append(cases, mixingCase{
			name: fmt.Sprintf("%s V=%d D=%d", path, v, dim), v: v, dim: dim,
			data: func(t testing.TB) *Data { return buildData(t, v, rows) },
		})
	}
	if filter := os.Getenv("PWE_MIXING_CASES"); filter != "" {
		cases = slices.DeleteFunc(cases, func(c mixingCase) bool {
			for f := range strings.SplitSeq(filter, ",") {
				if strings.Contains(c.name, f) {
					return false
				}
			}
			return true
		})
	}
	configs := []mixingConfig{
		{AnchorLast, NoGroupMoves, 1}, {AnchorLast, DefaultGroupMoves, 1},
		{AnchorFirst, NoGroupMoves, 1}, {AnchorFirst, DefaultGroupMoves, 1},
		{AnchorVolume, NoGroupMoves, 1}, {AnchorVolume, DefaultGroupMoves, 1},
		{AnchorVolume, DefaultGroupMoves, 2},
	}
	if s := os.Getenv("PWE_MIXING_CONFIGS"); s != "" {
		configs = parseMixingConfigs(t, s)
	}
	out := func(line string) {
		t.Log(line)
		if path := os.Getenv("PWE_MIXING_OUT"); path != "" {
			f, err := os.OpenFile(path, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
			if err != nil {
				t.Fatal(err)
			}
			fmt.Fprintln(f, line)
			if err := f.Close(); err != nil {
				t.Fatal(err)
			}
		}
	}
	out(fmt.Sprintf("\n4 chains x %d draws after %d warmup sweeps, started at the MAP (jitter 0.1), threads 2.\n", draws, warmup))
	out("| case | anchors | moves/sweep | inner | raw R-hat max | raw > 1.01 | logit R-hat max | logit > 1.01 | cos R-hat max | cos > 1.01 | raw ESS/CPU-s | logit ESS/CPU-s | cos ESS/CPU-s | accept | CPU s | wall s |")
	out("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|")
	for _, mc := range cases {
		d := mc.data(t)
		start, res, err := MAP(context.Background(), d, MAPConfig{Dim: mc.dim, Seed: 1, Threads: 2})
		if err != nil {
			t.Fatalf("%s: MAP: %v", mc.name, err)
		}
		t.Logf("%s: %d pairs, MAP in %d iterations, %.1fs", mc.name, d.Pairs(), res.Iterations, res.Seconds)
		for _, cfg := range configs {
			row, err := mixingRun(d, start, mc, cfg, draws, warmup)
			if err != nil {
				t.Errorf("%s %v: %v", mc.name, cfg, err)
				continue
			}
			out(row)
		}
	}
}

func parseMixingConfigs(t *testing.T, s string) []mixingConfig {
	var out []mixingConfig
	for f := range strings.SplitSeq(s, ",") {
		parts := strings.Split(f, ":")
		if len(parts) != 3 {
			t.Fatalf("PWE_MIXING_CONFIGS: %q is not anchors:moves:inner", f)
		}
		rule, err := ParseAnchorRule(parts[0])
		if err != nil {
			t.Fatal(err)
		}
		moves, err1 := strconv.Atoi(parts[1])
		inner, err2 := strconv.Atoi(parts[2])
		if err1 != nil || err2 != nil {
			t.Fatalf("PWE_MIXING_CONFIGS: %q: moves and inner must be integers", f)
		}
		out = append(out, mixingConfig{rule.Kind, moves, inner})
	}
	return out
}

func envInt(t *testing.T, name string, def int) int {
	s := os.Getenv(name)
	if s == "" {
		return def
	}
	n, err := strconv.Atoi(s)
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	return n
}

// simulateMixing draws true vectors with coordinates Normal(0, 1/D) (the
// reference paper's signal-to-noise 1), then n pair events, target and
// context independently uniform or Zipf-Mandelbrot over ranks (P(id) ∝
// (id + 1 + 2.7)^-1, so low ids are frequent as in a vocabulary), each
// labelled positive with probability sigmoid(rho_i . alpha_j).
func simulateMixing(t testing.TB, v, dim, n int, zipf bool, seed uint64) *Data {
	r := rand.New(rand.NewPCG(seed, 7))
	truth := NewParams(v, dim)
	sd := 1 / math.Sqrt(float64(dim))
	for k := range truth.Rho {
		truth.Rho[k] = sd * r.NormFloat64()
		truth.Alpha[k] = sd * r.NormFloat64()
	}
	cdf := make([]float64, v)
	var acc float64
	for i := range v {
		w := 1.0
		if zipf {
			w = 1 / (float64(i+1) + 2.7)
		}
		acc += w
		cdf[i] = acc
	}
	pick := func() int {
		i, _ := slices.BinarySearch(cdf, r.Float64()*acc)
		return min(i, v-1)
	}
	return labelPairs(t, truth, n, r, func() (int, int) { return pick(), pick() })
}

// mixingRun samples with one configuration and returns its table row.
func mixingRun(d *Data, start *Params, mc mixingCase, cfg mixingConfig, draws, warmup int) (string, error) {
	const chains = 4
	anchors, err := ChooseAnchors(d, start, AnchorRule{Kind: cfg.anchors})
	if err != nil {
		return "", err
	}
	anchor := anchorMask(mc.v, anchors)
	dim := mc.dim
	r := rand.New(rand.NewPCG(9, 9))
	// Quantities: every free coordinate, up to 2000 random logits (any
	// pair) and 500 random cosines of target vectors.
	var rawIdx []int // index into Rho (k < V D) or Alpha (k - V D)
	for k := range 2 * mc.v * dim {
		if k < mc.v*dim || !anchor[(k-mc.v*dim)/dim] {
			rawIdx = append(rawIdx, k)
		}
	}
	logitPairs := r.Perm(mc.v * mc.v)[:min(2000, mc.v*mc.v)]
	var cosPairs [][2]int
	for len(cosPairs) < 500 {
		i, k := r.IntN(mc.v), r.IntN(mc.v)
		if i != k {
			cosPairs = append(cosPairs, [2]int{i, k})
		}
	}
	alloc := func(n int) [][][]float64 {
		x := make([][][]float64, n)
		for q := range x {
			x[q] = make([][]float64, chains)
			for c := range chains {
				x[q][c] = make([]float64, draws)
			}
		}
		return x
	}
	raw, logit, cos := alloc(len(rawIdx)), alloc(len(logitPairs)), alloc(len(cosPairs))
	var accept float64
	sink := SinkFunc(func(c, k int, p *Params, st DrawStats) error {
		for q, idx := range rawIdx {
			if idx < mc.v*dim {
				raw[q][c][k] = p.Rho[idx]
			} else {
				raw[q][c][k] = p.Alpha[idx-mc.v*dim]
			}
		}
		for q, pr := range logitPairs {
			logit[q][c][k] = p.Logit(pr/mc.v, pr%mc.v)
		}
		for q, pr := range cosPairs {
			cos[q][c][k] = cosine(p.Target(pr[0]), p.Target(pr[1]))
		}
		if !math.IsNaN(st.GroupAccept) {
			accept += st.GroupAccept / float64(chains*draws)
		}
		return nil
	})
	cpu0 := cpuSeconds()
	began := time.Now()
	_, err = Gibbs(context.Background(), d, start, GibbsConfig{
		Chains: chains, Warmup: warmup, Draws: draws, Inner: cfg.inner, Threads: 2, Seed: 5,
		Anchors: AnchorRule{Kind: AnchorIDs, IDs: anchors}, GroupMoves: cfg.moves,
	}, sink)
	if err != nil {
		return "", err
	}
	wall := time.Since(began).Seconds()
	cpu := cpuSeconds() - cpu0
	var sum diag.Summarizer
	stats := func(x [][][]float64) (maxR, share, essPerCPU float64) {
		ess := make([]float64, len(x))
		for q, ch := range x {
			s := sum.Summarize(ch)
			if s.Rhat > 1.01 || math.IsNaN(s.Rhat) {
				share++
			}
			maxR = math.Max(maxR, s.Rhat)
			ess[q] = s.ESSBulk
		}
		slices.Sort(ess)
		return maxR, share / float64(len(x)), ess[len(ess)/2] / cpu
	}
	rR, rS, rE := stats(raw)
	lR, lS, lE := stats(logit)
	cR, cS, cE := stats(cos)
	acc := "-"
	if cfg.moves != NoGroupMoves {
		acc = fmt.Sprintf("%.2f", accept)
	}
	return fmt.Sprintf("| %s | %v | %.3f | %.1f%% | %.3f | %.1f%% | %.3f | %.1f%% | %.0f | %.0f | %.0f | %s | %.0f | %.0f |",
		mc.name, cfg, rR, 100*rS, lR, 100*lS, cR, 100*cS, rE, lE, cE, acc, cpu, wall), nil
}

// cpuSeconds returns the process's user and system CPU time.
func cpuSeconds() float64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		panic(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano()).Seconds()
}
