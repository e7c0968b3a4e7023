package posterior

import (
	"context"
	"errors"
	"math"
	"math/big"
	"slices"
	"strings"
	"testing"

	"github.com/pwe-project/pwe/posterior/diag"
)

// mapFor runs MAP to a tight tolerance for tests.
func mapFor(t testing.TB, d *Data, dim int) *Params {
	t.Helper()
	p, _, err := MAP(context.Background(), d, MAPConfig{Dim: dim, Seed: 1, GradTol: 1e-5})
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// rawSink keeps the bit patterns of every draw.
type rawSink map[[2]int][]uint64

func (s rawSink) Draw(chain, draw int, p *Params, st DrawStats) error {
	var bits []uint64
	for _, v := range append(append([]float64{st.LogPosterior, st.LogLik, st.GroupAccept}, p.Rho...), p.Alpha...) {
		bits = append(bits, math.Float64bits(v))
	}
	s[[2]int{chain, draw}] = bits
	return nil
}

func TestGibbsDeterministicAcrossThreads(t *testing.T) {
	d, _ := simulate(t, 30, 3, 3000, 5)
	start := mapFor(t, d, 3)
	for _, init := range []InitMode{InitMAP, InitPrior} {
		var ref rawSink
		for _, threads := range []int{1, 2, 4} {
			s := rawSink{}
			_, err := Gibbs(context.Background(), d, start, GibbsConfig{
				Chains: 3, Warmup: 5, Draws: 6, Thin: 2, Inner: 2, Init: init, Threads: threads, Seed: 9,
			}, s)
			if err != nil {
				t.Fatal(err)
			}
			if len(s) != 3*6 {
				t.Fatalf("%d draws, want 18", len(s))
			}
			if ref == nil {
				ref = s
				continue
			}
			for k, bits := range ref {
				if !slices.Equal(bits, s[k]) {
					t.Fatalf("init %v, threads %d: chain %d draw %d differs from 1 thread", init, threads, k[0], k[1])
				}
			}
		}
		// Another seed gives other draws, and chains differ from each
		// other.
		s := rawSink{}
		if _, err := Gibbs(context.Background(), d, start, GibbsConfig{Chains: 3, Warmup: 5, Draws: 6, Thin: 2, Inner: 2, Init: init, Seed: 10}, s); err != nil {
			t.Fatal(err)
		}
		if slices.Equal(s[[2]int{0, 0}], ref[[2]int{0, 0}]) || slices.Equal(ref[[2]int{0, 0}], ref[[2]int{1, 0}]) {
			t.Fatal("draws do not depend on the seed or the chain")
		}
	}
}

func TestDrawStats(t *testing.T) {
	d, _ := simulate(t, 12, 2, 800, 6)
	start := mapFor(t, d, 2)
	sd := 1.7
	anchors, err := ChooseAnchors(d, start, AnchorRule{})
	if err != nil {
		t.Fatal(err)
	}
	// Every kept draw but the last has its log-likelihood computed inside
	// the next sweep, the last on its own: both must give the bits of the
	// direct sum (or a resumed run would differ from an uninterrupted one).
	for _, cfg := range []GibbsConfig{{Chains: 2, Warmup: 3, Draws: 4}, {Chains: 2, Warmup: 2, Draws: 3, Thin: 2, Inner: 2}} {
		cfg.PriorSD, cfg.Threads = sd, 2
		var n int
		_, err = Gibbs(context.Background(), d, start, cfg, SinkFunc(func(chain, draw int, p *Params, st DrawStats) error {
			n++
			ll := LogLik(d, p)
			if math.Abs(st.LogLik-ll) > 1e-9*math.Abs(ll) || math.Abs(st.LogPosterior-LogPosterior(d, p, sd)) > 1e-9*math.Abs(ll) {
				t.Errorf("chain %d draw %d: stats %+v, log lik %v, log posterior %v", chain, draw, st, ll, LogPosterior(d, p, sd))
			}
			var direct float64
			for i := range d.v {
				direct += drawLogLik(d, p, i)
			}
			if st.LogLik != direct {
				t.Errorf("thin %d inner %d: chain %d draw %d: log lik %v, its direct sum %v", cfg.Thin, cfg.Inner, chain, draw, st.LogLik, direct)
			}
			if !(st.Seconds > 0) {
				t.Errorf("seconds %v", st.Seconds)
			}
			if !(st.GroupAccept >= 0 && st.GroupAccept <= 1) {
				t.Errorf("group acceptance %v", st.GroupAccept)
			}
			// Anchors (by default chosen for volume) keep their MAP
			// context vectors.
			for _, a := range anchors {
				if !slices.Equal(p.Context(a), start.Context(a)) {
					t.Errorf("anchor %d moved", a)
				}
			}
			return nil
		}))
		if err != nil || n != cfg.Chains*cfg.Draws {
			t.Fatalf("thin %d inner %d: err %v, %d draws", cfg.Thin, cfg.Inner, err, n)
		}
	}
}

func TestGibbsStopsOnSinkErrorAndCancel(t *testing.T) {
	d, _ := simulate(t, 12, 2, 800, 6)
	start := mapFor(t, d, 2)
	boom := errors.New("disk full")
	_, err := Gibbs(context.Background(), d, start, GibbsConfig{Chains: 3, Warmup: 2, Draws: 1000}, SinkFunc(
		func(chain, draw int, p *Params, st DrawStats) error {
			if draw == 3 {
				return boom
			}
			return nil
		}))
	if !errors.Is(err, boom) {
		t.Fatalf("err %v, want the sink's", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	sweeps := 0
	_, err = Gibbs(ctx, d, start, GibbsConfig{Chains: 1, Warmup: 100000, Draws: 1, OnSweep: func(c, sw int) {
		sweeps++
		if sw == 10 {
			cancel()
		}
	}}, SinkFunc(func(int, int, *Params, DrawStats) error { return nil }))
	if !errors.Is(err, context.Canceled) || sweeps > 12 {
		t.Fatalf("err %v after %d sweeps, want context.Canceled right after sweep 10", err, sweeps)
	}
}

// TestUnanchoredMeanIsZero: without anchors the posterior is invariant
// under (rho, alpha) -> (-rho, -alpha) (D = 1), so the exact posterior
// mean of every coordinate is zero. Weak data let the Gibbs sampler cross
// between the two modes; the same data with an anchor give means far from
// zero.
func TestUnanchoredMeanIsZero(t *testing.T) {
	d, _ := simulate(t, 4, 1, 30, 7)
	const chains = 4
	fns := []func(*Params) float64{}
	for i := range 4 {
		fns = append(fns, func(p *Params) float64 { return p.Rho[i] })
	}
	col := newCollector(chains, fns...)
	_, err := Gibbs(context.Background(), d, nil, GibbsConfig{
		Dim: 1, Chains: chains, Warmup: 200, Draws: 5000, Init: InitPrior, Anchors: AnchorRule{Kind: AnchorNone}, Seed: 3,
	}, col)
	if err != nil {
		t.Fatal(err)
	}
	for i := range 4 {
		mean := 0.0
		for _, ch := range col.draws[i] {
			for _, v := range ch {
				mean += v / (chains * 5000)
			}
		}
		if z := mean / diag.MCSEMean(col.draws[i]); !(math.Abs(z) <= 4.5) {
			t.Errorf("unanchored rho_%d: mean %.4f, z = %.2f against 0", i, mean, z)
		}
	}
}

// TestAnchoredRhat: on simulated data the anchored chains (default
// anchors and frame-change moves), started apart, agree after warmup:
// R-hat below 1.01. The logits rho_i . alpha_j with j not an anchor mix
// fast: they do not change along the slow direction of the Gibbs sampler,
// the frame change (rho A, alpha A^-T) of the free vectors, which only the
// anchors' pairs (D/V of the data) resist. Raw coordinates move along it
// and mix more slowly, so their R-hat is checked on a small vocabulary
// with longer chains.
func TestAnchoredRhat(t *testing.T) {
	cases := []struct {
		name   string
		v, n   int
		draws  int
		logits bool
	}{
		{"logits V=15", 15, 6000, 3000, true},
		{"raw coordinates V=6", 6, 3000, 8000, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			const dim, chains = 2, 4
			d, _ := simulate(t, tc.v, dim, tc.n, 8)
			start := mapFor(t, d, dim)
			anchors, err := ChooseAnchors(d, start, AnchorRule{})
			if err != nil {
				t.Fatal(err)
			}
			anchor := anchorMask(tc.v, anchors)
			var fns []func(*Params) float64
			if tc.logits {
				for i := range tc.v {
					for j := range tc.v {
						if !anchor[j] {
							fns = append(fns, func(p *Params) float64 { return p.Logit(i, j) })
						}
					}
				}
			} else {
				for k := range tc.v * dim {
					fns = append(fns, func(p *Params) float64 { return p.Rho[k] })
					if !anchor[k/dim] {
						fns = append(fns, func(p *Params) float64 { return p.Alpha[k] })
					}
				}
			}
			col := newCollector(chains, fns...)
			_, err = Gibbs(context.Background(), d, start, GibbsConfig{Chains: chains, Warmup: 300, Draws: tc.draws, Seed: 4, Jitter: 0.3}, col)
			if err != nil {
				t.Fatal(err)
			}
			worst := 0.0
			for q := range fns {
				rh := diag.Rhat(col.draws[q])
				if !(rh < 1.01) {
					t.Errorf("quantity %d: R-hat %.4f", q, rh)
				}
				worst = math.Max(worst, rh)
			}
			t.Logf("largest R-hat %.4f over %d quantities", worst, len(fns))
		})
	}
}

// TestSweepsFit checks the sweep-count limit against big-integer
// arithmetic at its boundary and where warmup + draws x thin overflows an
// int, which the limit used to wrap past.
func TestSweepsFit(t *testing.T) {
	const limit = 1 << 32
	cases := []struct{ warmup, draws, thin int64 }{
		{0, 0, 1}, {500, 500, 1}, {limit - 1, 0, 1}, {limit, 0, 1},
		{0, limit - 1, 1}, {0, limit, 1}, {1, (limit - 2) / 3, 3}, {2, (limit - 2) / 3, 3},
		{0, math.MaxInt64, 2}, {0, math.MaxInt32, 2}, {math.MaxInt64, 1, 1},
		{10, math.MaxInt64 / 3, 4}, {10, math.MaxInt32 / 3, 4},
	}
	for _, c := range cases {
		if int64(int(c.warmup)) != c.warmup || int64(int(c.draws)) != c.draws {
			continue // past a 32-bit int
		}
		n := new(big.Int).Mul(big.NewInt(c.draws), big.NewInt(c.thin))
		n.Add(n, big.NewInt(c.warmup))
		want := n.Cmp(big.NewInt(limit)) < 0
		if got := sweepsFit(int(c.warmup), int(c.draws), int(c.thin)); got != want {
			t.Errorf("sweepsFit(%d, %d, %d) = %v, want %v", c.warmup, c.draws, c.thin, got, want)
		}
	}
	err := GibbsConfig{Dim: 2, Draws: math.MaxInt, Thin: 2}.Validate()
	if err == nil || !strings.Contains(err.Error(), "too many") {
		t.Errorf("Validate with draws x thin past int: %v, want a too-many-sweeps error", err)
	}
}

// TestDefaultOverrelax checks the rule -(1 - 0.2/D), at most 0.98 in size,
// and that Gibbs takes D from the start before applying it.
func TestDefaultOverrelax(t *testing.T) {
	for _, c := range []struct {
		dim  int
		want float64
	}{{1, -0.8}, {2, -0.9}, {4, -0.95}, {5, -0.96}, {10, -0.98}, {20, -0.98}, {300, -0.98}} {
		if got := DefaultOverrelax(c.dim); math.Abs(got-c.want) > 1e-15 {
			t.Errorf("DefaultOverrelax(%d) = %v, want %v", c.dim, got, c.want)
		}
	}
	cfg := GibbsConfig{Dim: 5}.withDefaults()
	if cfg.Overrelax != DefaultOverrelax(5) || cfg.Draws != DefaultDraws {
		t.Errorf("defaults at D = 5: overrelax %v, draws %d", cfg.Overrelax, cfg.Draws)
	}
	if cfg := (GibbsConfig{Dim: 5, Overrelax: NoOverrelax}).withDefaults(); cfg.Overrelax != 0 {
		t.Errorf("NoOverrelax gave %v", cfg.Overrelax)
	}

	// Dim left zero is the start's, also for the default coefficient: the
	// draws equal those with Dim and the coefficient given, and differ from
	// those with the coefficient of D = 1.
	d, _ := simulate(t, 20, 3, 2000, 6)
	start := mapFor(t, d, 3)
	run := func(cfg GibbsConfig) rawSink {
		s := rawSink{}
		cfg.Chains, cfg.Warmup, cfg.Draws, cfg.Seed = 2, 3, 2, 4
		if _, err := Gibbs(context.Background(), d, start, cfg, s); err != nil {
			t.Fatal(err)
		}
		return s
	}
	implicit := run(GibbsConfig{})
	explicit := run(GibbsConfig{Dim: 3, Overrelax: DefaultOverrelax(3)})
	other := run(GibbsConfig{Dim: 3, Overrelax: DefaultOverrelax(1)})
	for k, bits := range explicit {
		if !slices.Equal(bits, implicit[k]) {
			t.Fatalf("chain %d draw %d: the default coefficient is not D = 3's", k[0], k[1])
		}
	}
	if slices.Equal(other[[2]int{0, 1}], explicit[[2]int{0, 1}]) {
		t.Fatal("the coefficient does not change the draws")
	}
}
