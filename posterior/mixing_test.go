package posterior

import (
	"cmp"
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

	"gonum.org/v1/gonum/mat"

	"github.com/pwe-project/pwe/formats"
	"github.com/pwe-project/pwe/posterior/diag"
)

// The mixing experiment behind the defaults of GibbsConfig (anchors and
// frame-change moves), run on demand:
//
//	PWE_MIXING=1 go test -run TestMixing -v -timeout 2h ./posterior/
//
// PWE_MIXING_CONFIGS=volume:20:1,last:-1:1:1 replaces the sampler settings
// (anchors:moves per sweep:inner[:overrelax], -1 moves for none, overrelax
// 1 for none and 0 or absent for the default); PWE_MIXING_OUT=FILE
// appends the Markdown rows to FILE as they are made;
// PWE_MIXING_CASES=sub1,sub2 keeps the cases whose name contains one of the
// substrings; PWE_MIXING_DRAWS and PWE_MIXING_WARMUP change the 1000
// draws and 500 warmup sweeps per chain, PWE_MIXING_SEED the sampler's
// seed 5; PWE_MIXING_COUNTS=counts.parquet
// with PWE_MIXING_DIM=D adds a case on real counts (vocabulary size from
// the largest id).

// mixingConfig is one sampler setting of the experiment.
type mixingConfig struct {
	anchors AnchorKind
	moves   int
	inner   int
	relax   float64 // GibbsConfig.Overrelax
}

// row returns the setting's table cells at dimension dim, which the
// default overrelaxation depends on.
func (c mixingConfig) row(dim int) string {
	relax := GibbsConfig{Dim: dim, Overrelax: c.relax}.withDefaults().Overrelax
	return fmt.Sprintf("%v | %d | %d | %g", AnchorRule{Kind: c.anchors}, max(c.moves, 0), c.inner, relax)
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
	seed := uint64(envInt(t, "PWE_MIXING_SEED", 5))
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
		{AnchorLast, NoGroupMoves, 1, NoOverrelax}, {AnchorLast, DefaultGroupMoves, 1, NoOverrelax},
		{AnchorFirst, NoGroupMoves, 1, NoOverrelax}, {AnchorFirst, DefaultGroupMoves, 1, NoOverrelax},
		{AnchorVolume, NoGroupMoves, 1, NoOverrelax}, {AnchorVolume, DefaultGroupMoves, 1, NoOverrelax},
		{AnchorVolume, DefaultGroupMoves, 2, NoOverrelax},
		{AnchorVolume, NoGroupMoves, 1, 0}, {AnchorVolume, DefaultGroupMoves, 1, 0},
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
	out(fmt.Sprintf("\n4 chains x %d draws after %d warmup sweeps, anchors and start by AnchorState's defaults (the MAP unless it is degenerate; jitter 0.1), threads 2.\n", draws, warmup))
	out("| case | anchors | moves/sweep | inner | overrelax | raw R-hat max | raw > 1.01 | logit R-hat max | logit > 1.01 | cos R-hat max | cos > 1.01 | raw ESS/CPU-s | logit ESS/CPU-s | cos ESS/CPU-s | accept | CPU s | wall s |")
	out("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|")
	for _, mc := range cases {
		d := mc.data(t)
		start, res, err := MAP(context.Background(), d, MAPConfig{Dim: mc.dim, Seed: 1, Threads: 2})
		if err != nil {
			t.Fatalf("%s: MAP: %v", mc.name, err)
		}
		t.Logf("%s: %d pairs, MAP in %d iterations, %.1fs", mc.name, d.Pairs(), res.Iterations, res.Seconds)
		for _, cfg := range configs {
			row, err := mixingRun(d, start, mc, cfg, draws, warmup, seed)
			if err != nil {
				t.Errorf("%s %s: %v", mc.name, cfg.row(mc.dim), err)
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
		if len(parts) != 3 && len(parts) != 4 {
			t.Fatalf("PWE_MIXING_CONFIGS: %q is not anchors:moves:inner[:overrelax]", f)
		}
		var relax float64
		if len(parts) == 4 {
			var err error
			if relax, err = strconv.ParseFloat(parts[3], 64); err != nil {
				t.Fatalf("PWE_MIXING_CONFIGS: %q: %v", f, err)
			}
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
		out = append(out, mixingConfig{rule.Kind, moves, inner, relax})
	}
	return out
}

func envFloat(t *testing.T, name string, def float64) float64 {
	s := os.Getenv(name)
	if s == "" {
		return def
	}
	x, err := strconv.ParseFloat(s, 64)
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	return x
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

// simulateMixing simulates the reference paper's data sets (Simulate's
// defaults: SNR 1, Zipf-Mandelbrot a = 1, b = 2.7 over ranks) with pairs
// uniform over distinct (target, context) or Zipf.
func simulateMixing(t testing.TB, v, dim, n int, zipf bool, seed uint64) *Data {
	law := PairsUniform
	if zipf {
		law = PairsZipf
	}
	_, rows, err := Simulate(SimConfig{V: v, D: dim, N: n, Pairs: law, Seed: seed})
	if err != nil {
		t.Fatal(err)
	}
	return buildData(t, v, rows)
}

// mixingRun samples with one configuration and returns its table row.
// The anchors and the chains' start come from AnchorState with its
// defaults, as in pwe fit.
func mixingRun(d *Data, m *Params, mc mixingCase, cfg mixingConfig, draws, warmup int, seed uint64) (string, error) {
	const chains = 4
	as, err := AnchorState(context.Background(), d, m, AnchorStateConfig{Rule: AnchorRule{Kind: cfg.anchors}, Threads: 2, Seed: seed})
	if err != nil {
		return "", err
	}
	start, anchors := as.State, as.Anchors
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
		Chains: chains, Warmup: warmup, Draws: draws, Inner: cfg.inner, Threads: 2, Seed: seed,
		Anchors: AnchorRule{Kind: AnchorIDs, IDs: anchors}, GroupMoves: cfg.moves, Overrelax: cfg.relax,
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
		mc.name, cfg.row(mc.dim), rR, 100*rS, lR, 100*lS, cR, 100*cS, rE, lE, cE, acc, cpu, wall), nil
}

// cpuSeconds returns the process's user and system CPU time.
func cpuSeconds() float64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		panic(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano()).Seconds()
}

// TestMixingDiagnosis runs a few chains on one simulated case through the
// sampler's internals, recording the state after every sweep, and logs
// where the slow mixing is: the log posterior and the scale of the two
// sides during warmup, raw R-hat over the two halves of the kept draws, by
// token frequency and side, within-chain autocorrelation times of the worst
// coordinates, and how much of the chains' differences a frame change
// explains. Run with
//
//	PWE_MIXING_DIAG=1 go test -run TestMixingDiagnosis -v -timeout 1h ./posterior/
//
// PWE_MIXING_DIAG_LAW=uniform, PWE_MIXING_CHAINS, PWE_MIXING_DRAWS,
// PWE_MIXING_WARMUP, PWE_MIXING_MOVES and PWE_MIXING_RELAX change the
// defaults (zipf, 4 chains, 300 draws, 500 warmup sweeps, the default
// GroupMoves and Overrelax; 1 for plain Gibbs draws).
func TestMixingDiagnosis(t *testing.T) {
	if os.Getenv("PWE_MIXING_DIAG") == "" {
		t.Skip("set PWE_MIXING_DIAG=1 to run the mixing diagnosis")
	}
	const v, dim, n = 200, 10, 100_000
	chains := envInt(t, "PWE_MIXING_CHAINS", 4)
	draws, warmup := envInt(t, "PWE_MIXING_DRAWS", 300), envInt(t, "PWE_MIXING_WARMUP", 500)
	moves := envInt(t, "PWE_MIXING_MOVES", 0)
	d := simulateMixing(t, v, dim, n, os.Getenv("PWE_MIXING_DIAG_LAW") != "uniform", 42)
	start, _, err := MAP(context.Background(), d, MAPConfig{Dim: dim, Seed: 1, Threads: 2})
	if err != nil {
		t.Fatal(err)
	}
	anchors, err := ChooseAnchors(d, start, AnchorRule{})
	if err != nil {
		t.Fatal(err)
	}
	anchor := anchorMask(v, anchors)
	cfg := GibbsConfig{Dim: dim, Chains: chains, Warmup: warmup, Draws: draws, Threads: 2, Seed: 5,
		Anchors: AnchorRule{Kind: AnchorIDs, IDs: anchors}, GroupMoves: moves, Overrelax: envFloat(t, "PWE_MIXING_RELAX", 0)}.withDefaults()
	s := newSampler(context.Background(), d, cfg, anchors)
	defer s.close()
	total := s.total()
	lp := make([][]float64, chains)      // [chain][sweep]
	ssRho := make([][]float64, chains)   // sum of squares of rho
	ssAlpha := make([][]float64, chains) // of the free alpha
	kept := make([][]*Params, chains)    // [chain][draw]
	noDeliver := func(int, int, *Params, DrawStats) error { return nil }
	cpu0 := cpuSeconds()
	for c := range chains {
		ch, err := s.newChain(c, start, nil)
		if err != nil {
			t.Fatal(err)
		}
		for sw := range total {
			if err := s.step(ch, sw, noDeliver); err != nil {
				t.Fatal(err)
			}
			lp[c] = append(lp[c], LogPosterior(d, ch.p, 1))
			ssRho[c] = append(ssRho[c], sumSquares(ch.p.Rho))
			var sa float64
			for j := range v {
				if !anchor[j] {
					sa += sumSquares(ch.p.Context(j))
				}
			}
			ssAlpha[c] = append(ssAlpha[c], sa)
			if sw >= warmup {
				kept[c] = append(kept[c], ch.p.Clone())
			}
		}
		if ch.mover != nil {
			t.Logf("chain %d: frame-change step %.3f, accepted %.2f since the last draw", c, ch.mover.eps(), float64(ch.accepted)/float64(max(ch.tried, 1)))
		}
	}
	t.Logf("%d chains x %d sweeps (warmup %d, moves %d, overrelax %v): %.0f CPU-s; anchors %v", chains, total, warmup, cfg.GroupMoves, cfg.Overrelax, cpuSeconds()-cpu0, anchors)
	diagnoseTraces(t, lp, ssRho, ssAlpha, warmup)
	diagnoseRaw(t, d, kept, anchor)
	diagnoseFrame(t, kept, anchor)
	diagnoseSlow(t, d, kept, anchor)
}

// diagnoseTraces logs block means, over the chains, of the log posterior
// and of the two sides' sums of squares.
func diagnoseTraces(t *testing.T, lp, ssRho, ssAlpha [][]float64, warmup int) {
	total := len(lp[0])
	block := max(total/20, 1)
	for lo := 0; lo < total; lo += block {
		hi := min(lo+block, total)
		var m [3]float64
		spread := math.Inf(-1)
		for c := range lp {
			var cm float64
			for sw := lo; sw < hi; sw++ {
				cm += lp[c][sw] / float64(hi-lo)
				m[1] += ssRho[c][sw] / float64((hi-lo)*len(lp))
				m[2] += ssAlpha[c][sw] / float64((hi-lo)*len(lp))
			}
			m[0] += cm / float64(len(lp))
			spread = max(spread, cm)
		}
		tag := ""
		if lo < warmup {
			tag = " (warmup)"
		}
		t.Logf("sweeps %4d-%4d: log posterior %.1f (max chain %.1f), sum rho^2 %.1f, sum free alpha^2 %.1f%s", lo, hi-1, m[0], spread, m[1], m[2], tag)
	}
}

// rawSeries returns the kept draws of raw coordinate k (rho below V D,
// then alpha) as [chain][draw], from draw lo to hi.
func rawSeries(kept [][]*Params, k, lo, hi int) [][]float64 {
	out := make([][]float64, len(kept))
	for c, ps := range kept {
		for _, p := range ps[lo:hi] {
			if k < p.V*p.D {
				out[c] = append(out[c], p.Rho[k])
			} else {
				out[c] = append(out[c], p.Alpha[k-p.V*p.D])
			}
		}
	}
	return out
}

// diagnoseRaw logs raw R-hat over both halves and by frequency and side,
// and the autocorrelation times of the worst coordinates.
func diagnoseRaw(t *testing.T, d *Data, kept [][]*Params, anchor []bool) {
	v, dim := kept[0][0].V, kept[0][0].D
	n := len(kept[0])
	var free []int
	for k := range 2 * v * dim {
		if k < v*dim || !anchor[(k-v*dim)/dim] {
			free = append(free, k)
		}
	}
	type stat struct {
		k          int
		rhat, half [2]float64
		ess        float64
	}
	stats := make([]stat, len(free))
	for q, k := range free {
		stats[q] = stat{k: k, rhat: [2]float64{diag.Rhat(rawSeries(kept, k, 0, n)), 0}}
		stats[q].half = [2]float64{diag.Rhat(rawSeries(kept, k, 0, n/2)), diag.Rhat(rawSeries(kept, k, n/2, n))}
		stats[q].ess = diag.ESSBulk(rawSeries(kept, k, 0, n))
	}
	summary := func(name string, f func(stat) float64, keep func(stat) bool) {
		var mx, above, cnt float64
		var ess []float64
		for _, s := range stats {
			if !keep(s) {
				continue
			}
			cnt++
			r := f(s)
			mx = math.Max(mx, r)
			if r > 1.01 {
				above++
			}
			ess = append(ess, s.ess)
		}
		slices.Sort(ess)
		t.Logf("%-34s R-hat max %.3f, > 1.01 %5.1f%% of %4.0f, median bulk ESS %.0f", name, mx, 100*above/cnt, cnt, ess[len(ess)/2])
	}
	all := func(stat) bool { return true }
	summary("raw, all draws", func(s stat) float64 { return s.rhat[0] }, all)
	summary("raw, first half", func(s stat) float64 { return s.half[0] }, all)
	summary("raw, second half", func(s stat) float64 { return s.half[1] }, all)
	// Frequency: each token's total count on the coordinate's side.
	count := func(k int) float64 {
		var idx []float64
		if k < v*dim {
			_, idx, _ = d.TargetPairs(k / dim)
		} else {
			_, idx, _ = d.ContextPairs((k - v*dim) / dim)
		}
		var s float64
		for _, x := range idx {
			s += x
		}
		return s
	}
	counts := make([]float64, len(stats))
	for q, s := range stats {
		counts[q] = count(s.k)
	}
	sorted := slices.Clone(counts)
	slices.Sort(sorted)
	for _, side := range []string{"rho", "alpha"} {
		for qi := range 4 {
			lo, hi := sorted[qi*len(sorted)/4], sorted[min((qi+1)*len(sorted)/4, len(sorted)-1)]
			name := fmt.Sprintf("%s, count %.0f-%.0f", side, lo, hi)
			summary(name, func(s stat) float64 { return s.rhat[0] }, func(s stat) bool {
				c := count(s.k)
				isRho := s.k < v*dim
				return isRho == (side == "rho") && c >= lo && (c < hi || qi == 3)
			})
		}
	}
	slices.SortFunc(stats, func(a, b stat) int { return cmp.Compare(b.rhat[0], a.rhat[0]) })
	for _, s := range stats[:10] {
		side, tok, k := "rho", s.k/dim, s.k%dim
		if s.k >= v*dim {
			side, tok, k = "alpha", (s.k-v*dim)/dim, (s.k-v*dim)%dim
		}
		series := rawSeries(kept, s.k, 0, n)
		var taus []string
		var means []string
		for _, ch := range series {
			taus = append(taus, fmt.Sprintf("%.0f", float64(len(ch))/diag.ESSBulk([][]float64{ch})))
			var m float64
			for _, x := range ch {
				m += x / float64(len(ch))
			}
			means = append(means, fmt.Sprintf("%.3f", m))
		}
		t.Logf("worst %s_%d[%d] (count %.0f): R-hat %.3f (halves %.3f, %.3f), per-chain tau %v, chain means %v",
			side, tok, k, count(s.k), s.rhat[0], s.half[0], s.half[1], taus, means)
	}
}

// diagnoseFrame fits, for every kept draw, the frame change A_t that best
// maps the overall posterior mean of rho to the draw's rho (least squares),
// and logs the R-hat and autocorrelation of A_t's entries and of the
// residual coordinates rho_t - mean A_t and alpha_t - mean A_t^-T: if the
// frame carries the slow mixing, the entries of A_t mix slowly and the
// residuals fast.
func diagnoseFrame(t *testing.T, kept [][]*Params, anchor []bool) {
	v, dim := kept[0][0].V, kept[0][0].D
	chains, n := len(kept), len(kept[0])
	meanRho := mat.NewDense(v, dim, nil)
	meanAlpha := mat.NewDense(v, dim, nil)
	for _, ps := range kept {
		for _, p := range ps {
			meanRho.Add(meanRho, mat.NewDense(v, dim, p.Rho))
			meanAlpha.Add(meanAlpha, mat.NewDense(v, dim, p.Alpha))
		}
	}
	meanRho.Scale(1/float64(chains*n), meanRho)
	meanAlpha.Scale(1/float64(chains*n), meanAlpha)
	var qr mat.QR
	qr.Factorize(meanRho)
	entries := make([][][]float64, dim*dim) // [entry][chain][draw]
	resRho := make([][][]float64, v*dim)    // residual rho coordinates
	resAlpha := make([][][]float64, v*dim)  // residual alpha coordinates
	for _, x := range [][][][]float64{entries, resRho, resAlpha} {
		for q := range x {
			x[q] = make([][]float64, chains)
		}
	}
	var a, aInvT, fit mat.Dense
	for c, ps := range kept {
		for _, p := range ps {
			rho := mat.NewDense(v, dim, p.Rho)
			if err := qr.SolveTo(&a, false, rho); err != nil {
				t.Fatal(err)
			}
			for q := range dim * dim {
				entries[q][c] = append(entries[q][c], a.At(q/dim, q%dim))
			}
			fit.Mul(meanRho, &a)
			for k := range v * dim {
				resRho[k][c] = append(resRho[k][c], p.Rho[k]-fit.At(k/dim, k%dim))
			}
			if err := aInvT.Inverse(a.T()); err != nil {
				t.Fatal(err)
			}
			fit.Mul(meanAlpha, aInvT.T())
			for k := range v * dim {
				resAlpha[k][c] = append(resAlpha[k][c], p.Alpha[k]-fit.At(k/dim, k%dim))
			}
		}
	}
	report := func(name string, x [][][]float64, keep func(q int) bool) {
		var mx, above, cnt float64
		var ess []float64
		for q, series := range x {
			if !keep(q) {
				continue
			}
			r := diag.Rhat(series)
			cnt++
			mx = math.Max(mx, r)
			if r > 1.01 {
				above++
			}
			ess = append(ess, diag.ESSBulk(series))
		}
		slices.Sort(ess)
		t.Logf("%-28s R-hat max %.3f, > 1.01 %5.1f%% of %4.0f, bulk ESS min %.0f median %.0f", name, mx, 100*above/cnt, cnt, ess[0], ess[len(ess)/2])
	}
	all := func(int) bool { return true }
	report("frame A_t entries", entries, all)
	report("rho residual after A_t", resRho, all)
	report("alpha residual after A_t^-T", resAlpha, func(q int) bool { return !anchor[q/dim] })
	// Chain-mean frames: A_c fitted to chain c's mean of rho.
	for c, ps := range kept {
		cm := mat.NewDense(v, dim, nil)
		for _, p := range ps {
			cm.Add(cm, mat.NewDense(v, dim, p.Rho))
		}
		cm.Scale(1/float64(n), cm)
		if err := qr.SolveTo(&a, false, cm); err != nil {
			t.Fatal(err)
		}
		var diff, res mat.Dense
		diff.Sub(cm, meanRho)
		fit.Mul(meanRho, &a)
		res.Sub(cm, &fit)
		var sv mat.SVD
		sv.Factorize(&a, mat.SVDNone)
		t.Logf("chain %d: ||mean_c - mean|| %.3f, explained by a frame change %.1f%%, singular values of A_c %.3f",
			c, mat.Norm(&diff, 2), 100*(1-math.Pow(mat.Norm(&res, 2)/mat.Norm(&diff, 2), 2)), sv.Values(nil))
	}
}

// diagnoseSlow finds the slowest linear functions of the free coordinates
// (time-lagged independent components of the top principal components of
// the kept draws, lag 5) and logs their autocorrelation and where their
// covariance pattern lies: the share of its squared norm in the tangent
// space of the frame changes at the posterior mean (rho X, -alpha X^T), on
// each side, and by token frequency. The same shares are logged for the
// chain means' differences from the overall mean.
func diagnoseSlow(t *testing.T, d *Data, kept [][]*Params, anchor []bool) {
	const lag, pcs = 5, 150
	v, dim := kept[0][0].V, kept[0][0].D
	chains, n := len(kept), len(kept[0])
	var free []int
	for k := range 2 * v * dim {
		if k < v*dim || !anchor[(k-v*dim)/dim] {
			free = append(free, k)
		}
	}
	m := len(free)
	x := mat.NewDense(chains*n, m, nil)
	for c, ps := range kept {
		for s, p := range ps {
			row := x.RawRowView(c*n + s)
			for q, k := range free {
				if k < v*dim {
					row[q] = p.Rho[k]
				} else {
					row[q] = p.Alpha[k-v*dim]
				}
			}
		}
	}
	mean := make([]float64, m)
	for r := range chains * n {
		axpy(1/float64(chains*n), x.RawRowView(r), mean)
	}
	for r := range chains * n {
		axpy(-1, mean, x.RawRowView(r))
	}
	// Tangent space of the frame changes at the mean: one column per
	// generator E_kl.
	tan := mat.NewDense(m, dim*dim, nil)
	for q, k := range free {
		for kl := range dim * dim {
			r, c := kl/dim, kl%dim
			if k < v*dim { // (rho X)[i, c] = sum_r rho[i, r] X[r, c]
				if k%dim == c {
					tan.Set(q, kl, mean[q-k%dim+r])
				}
			} else if k%dim == r { // -(alpha X^T)[j, r] = -sum_c alpha[j, c] X[r, c]
				tan.Set(q, kl, -mean[q-k%dim+c])
			}
		}
	}
	var tq mat.QR
	tq.Factorize(tan)
	var qmat mat.Dense
	tq.QTo(&qmat)
	basis := qmat.Slice(0, m, 0, dim*dim)
	count := func(k int) float64 {
		var ns []float64
		if k < v*dim {
			_, ns, _ = d.TargetPairs(k / dim)
		} else {
			_, ns, _ = d.ContextPairs((k - v*dim) / dim)
		}
		var s float64
		for _, c := range ns {
			s += c
		}
		return s
	}
	counts := make([]float64, m)
	for q, k := range free {
		counts[q] = count(k)
	}
	sorted := slices.Clone(counts)
	slices.Sort(sorted)
	describe := func(name string, p []float64) {
		pv := mat.NewVecDense(m, p)
		var proj mat.VecDense
		proj.MulVec(basis.T(), pv)
		total := mat.Dot(pv, pv)
		var rho float64
		var quart [4]float64
		for q, k := range free {
			if k < v*dim {
				rho += p[q] * p[q]
			}
			qi := min(sort4(sorted, counts[q]), 3)
			quart[qi] += p[q] * p[q]
		}
		t.Logf("%-22s in frame tangent %5.1f%% (random: %.1f%%), on rho %5.1f%%, by count quartile %.0f%% %.0f%% %.0f%% %.0f%%",
			name, 100*mat.Dot(&proj, &proj)/total, 100*float64(dim*dim)/float64(m), 100*rho/total,
			100*quart[0]/total, 100*quart[1]/total, 100*quart[2]/total, 100*quart[3]/total)
	}
	for c := range chains {
		diff := make([]float64, m)
		for s := range n {
			axpy(1/float64(n), x.RawRowView(c*n+s), diff)
		}
		describe(fmt.Sprintf("chain %d mean - mean", c), diff)
	}
	var svd mat.SVD
	if !svd.Factorize(x, mat.SVDThin) {
		t.Fatal("SVD failed")
	}
	var u mat.Dense
	svd.UTo(&u)
	k := min(pcs, chains*n-1)
	z := u.Slice(0, chains*n, 0, k) // whitened scores, up to a factor
	c0 := mat.NewSymDense(k, nil)
	ct := mat.NewSymDense(k, nil)
	for c := range chains {
		for s := 0; s+lag < n; s++ {
			a, b := z.(*mat.Dense).RawRowView(c*n+s), z.(*mat.Dense).RawRowView(c*n+s+lag)
			for i := range k {
				for j := i; j < k; j++ {
					c0.SetSym(i, j, c0.At(i, j)+(a[i]*a[j]+b[i]*b[j])/2)
					ct.SetSym(i, j, ct.At(i, j)+(a[i]*b[j]+b[i]*a[j])/2)
				}
			}
		}
	}
	// Generalised eigenproblem ct w = lambda c0 w through c0's Cholesky.
	var ch mat.Cholesky
	if !ch.Factorize(c0) {
		t.Fatal("lagged covariance not positive definite")
	}
	var l, linv mat.TriDense
	ch.LTo(&l)
	if err := linv.InverseTri(&l); err != nil {
		t.Fatal(err)
	}
	var tmp, sym mat.Dense
	tmp.Mul(&linv, ct)
	sym.Mul(&tmp, linv.T())
	ss := mat.NewSymDense(k, nil)
	for i := range k {
		for j := i; j < k; j++ {
			ss.SetSym(i, j, (sym.At(i, j)+sym.At(j, i))/2)
		}
	}
	var es mat.EigenSym
	if !es.Factorize(ss, true) {
		t.Fatal("eigen failed")
	}
	vals := es.Values(nil)
	var vecs mat.Dense
	es.VectorsTo(&vecs)
	for e := k - 1; e >= k-5; e-- {
		// w = L^-T y; the slow observable is z w, its pattern x^T z w.
		var w, obs, pattern mat.VecDense
		w.MulVec(linv.T(), vecs.ColView(e))
		obs.MulVec(z, &w)
		pattern.MulVec(x.T(), &obs)
		tau := -lag / math.Log(vals[e])
		describe(fmt.Sprintf("slow %d (lag-%d ac %.3f, time %.0f)", k-1-e, lag, vals[e], tau), pattern.RawVector().Data)
	}
	t.Logf("fastest of the %d: lag-%d autocorrelation %.3f", k, lag, vals[0])
}

// sort4 returns the quartile of c in sorted.
func sort4(sorted []float64, c float64) int {
	i, _ := slices.BinarySearch(sorted, c)
	return 4 * i / len(sorted)
}
