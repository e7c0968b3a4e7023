package counts

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/big"
	"math/bits"
	"os"
	"strings"
	"testing"

	"gonum.org/v1/gonum/stat/distuv"

	"github.com/pwe-project/pwe/formats"
)

// chiSquare pools categories in order until each bin expects at least 5
// and returns the statistic and its degrees of freedom.
func chiSquare(observed []float64, expected []float64) (float64, int) {
	var stat, o, e float64
	bins := 0
	for j := range observed {
		o += observed[j]
		e += expected[j]
		if e >= 5 {
			stat += (o - e) * (o - e) / e
			o, e = 0, 0
			bins++
		}
	}
	if e > 0 {
		stat += (o - e) * (o - e) / e
		bins++
	}
	return stat, bins - 1
}

const testAlpha = 1e-6

func TestBinomialDistribution(t *testing.T) {
	for i, tc := range []struct {
		n int64
		p float64
	}{
		{1, 0.3}, {10, 0.5}, {40, 0.01}, {1000, 0.015}, {1000, 0.019}, {25, 0.8},
		{60, 0.5}, {1000, 0.1}, {100000, 0.3}, {1e9, 1e-4}, {5000, 0.97}, {200, 0.999},
	} {
		const draws = 200000
		r := newRNG(uint64(i), 99, 0)
		var obs []float64
		if tc.n <= 1<<20 {
			obs = make([]float64, tc.n+1)
		}
		sum := 0.0
		for range draws {
			x := binomial(&r, tc.n, tc.p)
			if x < 0 || x > tc.n {
				t.Fatalf("Bin(%d, %v) gave %d", tc.n, tc.p, x)
			}
			sum += float64(x)
			if obs != nil {
				obs[x]++
			}
		}
		d := distuv.Binomial{N: float64(tc.n), P: tc.p}
		mean, sd := d.Mean(), d.StdDev()
		if z := (sum/draws - mean) / (sd / math.Sqrt(draws)); math.Abs(z) > 5 {
			t.Errorf("Bin(%d, %v): mean %v, want %v (z = %.1f)", tc.n, tc.p, sum/draws, mean, z)
		}
		if tc.n > 1<<20 {
			continue
		}
		exp := make([]float64, tc.n+1)
		for x := range exp {
			exp[x] = draws * d.Prob(float64(x))
		}
		stat, df := chiSquare(obs, exp)
		if df > 0 && stat > chiSquareCritical(df, testAlpha) {
			t.Errorf("Bin(%d, %v): chi-square %.1f on %d df exceeds the 1e-6 critical value %.1f",
				tc.n, tc.p, stat, df, chiSquareCritical(df, testAlpha))
		}
	}
}

func zipfCounts(v int) []int64 {
	c := make([]int64, v)
	for j := range c {
		c[j] = int64(1e6 / float64(j+1))
	}
	return c
}

// TestNegativeMethods checks every method's draws against the multinomial:
// the counts sum to m, and a chi-square test against m P(j).
func TestNegativeMethods(t *testing.T) {
	for _, v := range []int{3, 50, 64, 2000} {
		tbl, ok := newNegTable(zipfCounts(v), 0.75)
		if !ok {
			t.Fatal("no table")
		}
		s := newNegSampler(tbl)
		for _, m := range []uint64{1, 17, 400, 300000} {
			for _, method := range []negMethod{negAuto, negAlias, negChain} {
				const reps = 20
				obs := make([]float64, v)
				for rep := range uint64(reps) {
					r := newRNG(rep, uint64(method), m)
					cs, ns := s.sample(&r, m, method, nil, nil)
					var total uint64
					for i, c := range cs {
						if i > 0 && c <= cs[i-1] {
							t.Fatalf("contexts not increasing: %v", cs)
						}
						total += ns[i]
						obs[c] += float64(ns[i])
					}
					if total != m {
						t.Fatalf("v=%d m=%d method %d: %d draws", v, m, method, total)
					}
				}
				exp := make([]float64, v)
				for j := range exp {
					exp[j] = reps * float64(m) * tbl.p[j]
				}
				stat, df := chiSquare(obs, exp)
				if df > 0 && stat > chiSquareCritical(df, testAlpha) {
					t.Errorf("v=%d m=%d method %d: chi-square %.1f on %d df > %.1f", v, m, method, stat, df, chiSquareCritical(df, testAlpha))
				}
			}
		}
	}
}

// TestAliasDraws compares the alias draws (negTable.aliasDraws, which
// makes them four at a time from the compact table where it has one, and
// aliasDraws, which takes a shift for the index where the table's size is a
// power of two) with the draws made by the definition: index (x mod 2^32)
// V / 2^32, kept with probability keep / 2^32, from a wyrand stream written
// out here. Blocks of odd lengths leave draws to the loop in Go, and 2^20
// draws meet about 16 that the compact table cannot decide.
func TestAliasDraws(t *testing.T) {
	for _, v := range []int{1, 2, 3, 64, 1000, 4096, 65536, 65537} {
		tbl, ok := newNegTable(zipfCounts(v), 0.75)
		if !ok {
			t.Fatal("no table")
		}
		if hasAVX2 != (tbl.compact != nil) && v <= 1<<16 {
			t.Fatalf("v=%d: compact table %v with AVX2 %v", v, tbl.compact != nil, hasAVX2)
		}
		s0 := uint64(v) * 0x9E3779B97F4A7C15
		s := s0
		var undecided int
		check := func(name string, b []uint32, s1 uint64) {
			t.Helper()
			for i, got := range b {
				s += 0xa0761d6478bd642f
				hi, lo := bits.Mul64(s, s^0xe7037ed1a0b428db)
				x := hi ^ lo
				j := (x & 0xffffffff) * uint64(v) >> 32
				e := tbl.alias[j]
				if e.keep>>16 == uint32(x>>48) {
					undecided++
				}
				if uint64(e.keep) <= x>>32 {
					j = uint64(e.other)
				}
				if got != uint32(j) {
					t.Fatalf("v=%d %s: draw %d is %d, want %d", v, name, i, got, j)
				}
			}
			if s1 != s {
				t.Fatalf("v=%d %s: state %#x after the draws, want %#x", v, name, s1, s)
			}
		}
		b := make([]uint32, 1000)
		check("function", b, aliasDraws(b, tbl.alias, s))
		for n := 0; n < 1<<20; {
			b := make([]uint32, 1+n%1021)
			n += len(b)
			check("method", b, tbl.aliasDraws(b, s))
		}
		if tbl.compact != nil && undecided == 0 {
			t.Errorf("v=%d: no draw that the compact table leaves undecided", v)
		}
	}
}

// TestAliasChainAgree compares the two exact methods with each other by a
// two-sample chi-square test on the same large multinomial.
func TestAliasChainAgree(t *testing.T) {
	const v, m = 500, 1000000
	tbl, _ := newNegTable(zipfCounts(v), 1)
	s := newNegSampler(tbl)
	a := make([]float64, v)
	b := make([]float64, v)
	ra, rb := newRNG(1, 2, 3), newRNG(4, 5, 6)
	cs, ns := s.sample(&ra, m, negAlias, nil, nil)
	for i, c := range cs {
		a[c] = float64(ns[i])
	}
	cs, ns = s.sample(&rb, m, negChain, nil, nil)
	for i, c := range cs {
		b[c] = float64(ns[i])
	}
	// Equal sample sizes: sum (a-b)^2/(a+b) is chi-square with bins-1 df.
	var stat float64
	bins := 0
	var pa, pb float64
	for j := range v {
		pa += a[j]
		pb += b[j]
		if pa+pb >= 10 {
			stat += (pa - pb) * (pa - pb) / (pa + pb)
			pa, pb = 0, 0
			bins++
		}
	}
	if crit := chiSquareCritical(bins-1, testAlpha); stat > crit {
		t.Fatalf("alias and chain disagree: chi-square %.1f on %d df > %.1f", stat, bins-1, crit)
	}
}

// TestNegativeTotals: per target, sum_j n_neg = K * W_i exactly for
// uniform windows, and floor or ceil of it for weighted ones; the heaviest
// target's negatives pass a chi-square test against K W_i P(j).
func TestNegativeTotals(t *testing.T) {
	cp := newCorpus(21, 300, 800, 100, true)
	for _, wt := range []Weighting{Uniform, Harmonic} {
		const k = 3
		rows, st := runCounter(t, Config{Window: 4, Weighting: wt, Negatives: k, Workers: 2, Seed: 5, TempDir: t.TempDir()},
			cp.counts, cp.docs, 8, &tuning{dense: 30, bufPairs: 2000})
		pos := map[int32]float64{}
		neg := map[int32]float64{}
		var negTotal float64
		for _, r := range rows {
			pos[r.TargetID] += r.NPos
			neg[r.TargetID] += r.NNeg
			negTotal += r.NNeg
		}
		ref, _ := refCounts(cp.docs, 4, wt)
		wi := map[int32]*big.Rat{}
		for key, x := range ref {
			if wi[key[0]] == nil {
				wi[key[0]] = new(big.Rat)
			}
			wi[key[0]].Add(wi[key[0]], x)
		}
		for tgt, w := range wi {
			kw := new(big.Rat).Mul(w, big.NewRat(k, 1))
			lo := new(big.Int).Quo(kw.Num(), kw.Denom())
			got := neg[tgt]
			if kw.IsInt() && got != float64(lo.Int64()) || !kw.IsInt() && got != float64(lo.Int64()) && got != float64(lo.Int64()+1) {
				t.Fatalf("%v: target %d: %v negatives, want K*W_i = %s", wt, tgt, got, kw.FloatString(3))
			}
		}
		if wt == Uniform && negTotal != float64(k*st.PositivePairs) {
			t.Fatalf("sum n_neg = %v, want K * positive pairs = %d", negTotal, k*st.PositivePairs)
		}
		// Chi-square for target 0 against the exact multinomial mean.
		tbl, _ := newNegTable(cp.counts, 0.75)
		obs := make([]float64, cp.v)
		for _, r := range rows {
			if r.TargetID == 0 {
				obs[r.ContextID] = r.NNeg
			}
		}
		exp := make([]float64, cp.v)
		for j := range exp {
			exp[j] = neg[0] * tbl.p[j]
		}
		stat, df := chiSquare(obs, exp)
		if crit := chiSquareCritical(df, testAlpha); stat > crit {
			t.Fatalf("%v: target 0 negatives: chi-square %.1f on %d df > %.1f", wt, stat, df, crit)
		}
	}
}

func TestExpectedNegatives(t *testing.T) {
	cp := newCorpus(31, 60, 50, 30, false)
	const k = 2
	rows, _ := runCounter(t, Config{Window: 3, Weighting: Linear, Negatives: k, NegMode: Expected, NegPower: new(0.5), TempDir: t.TempDir()},
		cp.counts, cp.docs, 1, nil)
	ref, _ := refCounts(cp.docs, 3, Linear)
	wi := map[int32]*big.Rat{}
	for key, x := range ref {
		if wi[key[0]] == nil {
			wi[key[0]] = new(big.Rat)
		}
		wi[key[0]].Add(wi[key[0]], x)
	}
	// P(j) from its definition, count^0.5 / sum, summed in id order.
	p := make([]float64, cp.v)
	sum := 0.0
	for j, c := range cp.counts {
		p[j] = math.Sqrt(float64(c))
		sum += p[j]
	}
	want := map[[2]int32]float64{}
	for tgt, w := range wi {
		wf, _ := w.Float64()
		for j := range p {
			want[[2]int32{tgt, int32(j)}] = k * wf * (p[j] / sum)
		}
	}
	n := 0
	for _, r := range rows {
		if r.NNeg == 0 {
			continue
		}
		n++
		w, ok := want[[2]int32{r.TargetID, r.ContextID}]
		if !ok || w != r.NNeg {
			t.Fatalf("(%d, %d): n_neg %v, want %v", r.TargetID, r.ContextID, r.NNeg, w)
		}
	}
	if n != len(want) {
		t.Fatalf("%d rows with n_neg, want %d", n, len(want))
	}
	counts := make([]int64, MaxExpectedVocab+1)
	for i := range counts {
		counts[i] = 1
	}
	_, err := New(Config{Negatives: 1, NegMode: Expected}, counts)
	if err == nil || !strings.Contains(err.Error(), "expected negatives write V*V rows") || !strings.Contains(err.Error(), "--force") {
		t.Fatalf("V = %d with expected negatives: error %v", len(counts), err)
	}
	c, err := New(Config{Negatives: 1, NegMode: Expected, ForceExpected: true}, counts)
	if err != nil {
		t.Fatalf("ForceExpected: %v", err)
	}
	c.Close()
}

func tempEntries(t *testing.T, dir string) int {
	t.Helper()
	es, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	return len(es)
}

func TestTempFilesRemoved(t *testing.T) {
	cp := newCorpus(41, 1000, 300, 200, false)
	cfg := Config{Memory: MinMemory, Negatives: 1}
	for _, ending := range []string{"finish", "emit-error", "close"} {
		dir := t.TempDir()
		cfg.TempDir = dir
		c, err := New(cfg, cp.counts)
		if err != nil {
			t.Fatal(err)
		}
		a := c.NewAccumulator()
		for i, d := range cp.docs {
			if err := a.Add(d, int64(i)); err != nil {
				t.Fatal(err)
			}
		}
		if tempEntries(t, dir) == 0 {
			t.Fatalf("%s: no spill files in %s after Add under a tiny budget", ending, dir)
		}
		boom := errors.New("boom")
		switch ending {
		case "finish":
			if _, err := c.Finish(context.Background(), func(*formats.CountColumns) error { return nil }); err != nil {
				t.Fatal(err)
			}
		case "emit-error":
			if _, err := c.Finish(context.Background(), func(*formats.CountColumns) error { return boom }); !errors.Is(err, boom) {
				t.Fatalf("Finish returned %v, want the emit error", err)
			}
		case "close":
		}
		if err := c.Close(); err != nil {
			t.Fatal(err)
		}
		if n := tempEntries(t, dir); n != 0 {
			t.Fatalf("%s: %d entries left in the temp dir", ending, n)
		}
	}
}

func TestErrors(t *testing.T) {
	if _, err := New(Config{}, nil); !errors.Is(err, ErrEmptyVocabulary) {
		t.Fatalf("empty vocabulary: %v", err)
	}
	if _, err := New(Config{Negatives: 1}, []int64{0, 0}); err == nil {
		t.Fatal("all-zero counts with negatives: no error")
	}
	if _, err := New(Config{}, []int64{3, -1}); err == nil {
		t.Fatal("negative count: no error")
	}
	for _, cfg := range []Config{
		{Window: -1}, {Window: MaxWindow + 1}, {Weighting: 7}, {NegMode: 3}, {Subsample: -1}, {Subsample: math.NaN()},
		{NegPower: new(-0.5)}, {Memory: 1000}, {Workers: -2}, {Weighting: Harmonic, Window: 23},
	} {
		if err := cfg.Validate(); err == nil || !strings.HasPrefix(err.Error(), "counts: ") {
			t.Errorf("%+v: error %v", cfg, err)
		}
	}
	if err := (Config{Weighting: Harmonic, Window: 22}).Validate(); err != nil {
		t.Errorf("harmonic window 22: %v", err)
	}
	c, err := New(Config{TempDir: t.TempDir()}, []int64{5, 3, 1})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	a := c.NewAccumulator()
	for _, bad := range [][]int32{{0, 3}, {-2}} {
		if err := a.Add(bad, 12); err == nil || !strings.Contains(err.Error(), "document 12") {
			t.Errorf("ids %v: error %v", bad, err)
		}
	}
}

func TestParse(t *testing.T) {
	for _, w := range []Weighting{Uniform, Linear, Harmonic} {
		if got, err := ParseWeighting(w.String()); err != nil || got != w {
			t.Errorf("ParseWeighting(%q) = %v, %v", w.String(), got, err)
		}
	}
	for _, m := range []NegMode{Sampled, Expected} {
		if got, err := ParseNegMode(m.String()); err != nil || got != m {
			t.Errorf("ParseNegMode(%q) = %v, %v", m.String(), got, err)
		}
	}
	if _, err := ParseWeighting("gaussian"); err == nil {
		t.Error("ParseWeighting accepted gaussian")
	}
	if _, err := ParseNegMode("exact"); err == nil {
		t.Error("ParseNegMode accepted exact")
	}
	d := Config{Negatives: -1}.WithDefaults()
	if d.Window != DefaultWindow || d.Negatives != 1 || *d.NegPower != 0.75 || d.Memory != DefaultMemory || d.Workers != 1 {
		t.Errorf("defaults: %+v", d)
	}
	if n := (Config{}).WithDefaults().Negatives; n != 0 {
		t.Errorf("explicit zero negatives became %d", n)
	}
	_ = fmt.Sprint()
}

// TestRowsMatchSampler checks the rows Finish writes, which for most
// targets come from draining the positives together with the tally of
// alias draws (merger.tallyRows), against the sampler run on its own:
// every target's negatives must be exactly the draws of its stream, and
// every row's positive count that of the reference.
func TestRowsMatchSampler(t *testing.T) {
	cp := newCorpus(8, 400, 1500, 60, true)
	const k, seed = 2, 11
	rows, _ := runCounter(t, Config{Window: 3, Negatives: k, Workers: 2, Seed: seed, TempDir: t.TempDir()},
		cp.counts, cp.docs, 3, &tuning{dense: 40, bufPairs: 5000})
	ref, _ := refCounts(cp.docs, 3, Uniform)
	tbl, _ := newNegTable(cp.counts, 0.75)
	s := newNegSampler(tbl)
	byTarget := map[int32][]formats.CountRow{}
	for _, r := range rows {
		byTarget[r.TargetID] = append(byTarget[r.TargetID], r)
	}
	wi := map[int32]int64{}
	for key, x := range ref {
		wi[key[0]] += x.Num().Int64()
	}
	tallied := 0
	for tgt, w := range wi {
		m := uint64(k * w)
		if s.tallies(m) {
			tallied++
		}
		r := newRNG(seed, domainNegatives, uint64(tgt))
		cs, ns := s.sample(&r, m, negAuto, nil, nil)
		want := map[int32]formats.CountRow{}
		for i, c := range cs {
			want[c] = formats.CountRow{TargetID: tgt, ContextID: c, NNeg: float64(ns[i])}
		}
		for key, x := range ref {
			if key[0] == tgt {
				e := want[key[1]]
				e.TargetID, e.ContextID = tgt, key[1]
				e.NPos, _ = x.Float64()
				want[key[1]] = e
			}
		}
		got := byTarget[tgt]
		if len(got) != len(want) {
			t.Fatalf("target %d (%d draws): %d rows, want %d", tgt, m, len(got), len(want))
		}
		for _, g := range got {
			if g != want[g.ContextID] {
				t.Fatalf("target %d (%d draws): row %+v, want %+v", tgt, m, g, want[g.ContextID])
			}
		}
	}
	if tallied < 20 {
		t.Fatalf("only %d targets drew their negatives into the tally", tallied)
	}
	if len(byTarget) != len(wi) {
		t.Fatalf("%d targets with rows, want %d", len(byTarget), len(wi))
	}
}

// TestNegativesBeyond32Bits: where a target's draws pass 2^32, the counts
// cannot share a word with the positive counts, and the rows counted from
// stores are finalRow's, as when pairs are counted.
func TestNegativesBeyond32Bits(t *testing.T) {
	cp := newCorpus(21, 40, 60, 30, false)
	cfg := Config{Window: 3, Negatives: 1 << 30, Seed: 8, TempDir: t.TempDir()}
	want, _ := runCounter(t, cfg, cp.counts, cp.docs, 1, &tuning{dense: -1})
	got, _ := runCounter(t, cfg, cp.counts, cp.docs, 1, nil)
	big := false
	for _, r := range got {
		big = big || r.NNeg >= 1<<32
	}
	if !big {
		t.Fatal("no negative count reaches 2^32; the test does not test what it says")
	}
	rowsEqual(t, "draws beyond 32 bits", want, got)
}

// TestNegTableLargePower: a power whose powers of the counts overflow
// gives the distribution of count^power all the same (computed here in
// logarithms), not a refusal; so do powers that do not overflow, and 0,
// the uniform law over the tokens counted.
func TestNegTableLargePower(t *testing.T) {
	counts := []int64{0, 1000, 999, 3, 1000, 500}
	for _, power := range []float64{150, 1e308, 0.75, 2, 0} {
		tab, ok := newNegTable(counts, power)
		if !ok {
			t.Fatalf("power %g refused", power)
		}
		// The reference: c^power / sum c^power, each computed as
		// exp(power log(c / max)).
		want := make([]float64, len(counts))
		var sum float64
		for j, c := range counts {
			if c > 0 {
				want[j] = math.Exp(power * math.Log(float64(c)/1000))
				sum += want[j]
			}
		}
		for j := range want {
			want[j] /= sum
			if d := math.Abs(tab.p[j] - want[j]); d > 1e-12 {
				t.Errorf("power %g: p[%d] = %g, want %g", power, j, tab.p[j], want[j])
			}
		}
	}
}
