package diag

import (
	"math"
	"math/rand/v2"
	"testing"
)

func TestQuantileType7(t *testing.T) {
	// Hand-computed: h = 4p, x[⌊h⌋] + (h − ⌊h⌋)(x[⌊h⌋+1] − x[⌊h⌋]) (0-based).
	sorted := []float64{1, 3, 4, 7, 10}
	for _, tc := range []struct{ p, want float64 }{
		{0, 1}, {0.05, 1.4}, {0.25, 3}, {0.3, 3.2}, {0.5, 4}, {0.6, 5.2},
		{0.9, 8.8}, {0.95, 9.4}, {1, 10},
	} {
		if got := Quantile(sorted, tc.p); math.Abs(got-tc.want) > 1e-15*tc.want {
			t.Errorf("Quantile(%v, %g) = %.17g, want %g", sorted, tc.p, got, tc.want)
		}
	}
	if got := Quantile([]float64{2.5}, 0.3); got != 2.5 {
		t.Errorf("single value: got %g", got)
	}
	if got := Quantile(nil, 0.5); !math.IsNaN(got) {
		t.Errorf("empty: got %g, want NaN", got)
	}
	for _, p := range []float64{-0.1, 1.1, math.NaN()} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("Quantile(_, %g) did not panic", p)
				}
			}()
			Quantile(sorted, p)
		}()
	}
}

func TestMedianAndMAD(t *testing.T) {
	// Draws 1..6 in two chains: median 3.5, |x − 3.5| = 2.5 1.5 .5 .5 1.5 2.5,
	// median 1.5, MAD 1.4826·1.5.
	s := new(Summarizer).Summarize([][]float64{{6, 1, 4}, {3, 5, 2}})
	if s.Median != 3.5 || s.MAD != 1.4826*1.5 || s.Mean != 3.5 {
		t.Errorf("median %g, MAD %g, mean %g; want 3.5, %g, 3.5", s.Median, s.MAD, s.Mean, 1.4826*1.5)
	}
	if want := math.Sqrt(17.5 / 5); math.Abs(s.SD-want) > 1e-15 {
		t.Errorf("sd %g, want %g", s.SD, want)
	}
}

// TestRhatSeparates checks that R-hat is near 1 for chains of one
// distribution and large when one chain is shifted. For M split chains of
// S iid N(0,1) draws, R-hat² ≈ (S−1)/S + var(chain means) with
// (M−1)·S·var(chain means) ~ χ²_{M−1}, so R-hat − 1 ≈ (χ²_{M−1}/(M−1) − 1)/(2S).
// With M = 8 and S = 500, χ²_7 exceeds 35 with probability below 1e-5,
// which bounds R-hat by 1 + 4/1000. Rank normalisation and folding keep
// the draws normal, so the bound applies to Rhat and RhatBasic alike. A
// chain shifted by 2 puts var(chain means) near 6/7 (six means at −0.5,
// two at +1.5), R-hat near 1.36; anything above 1.1 separates.
func TestRhatSeparates(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 11))
	same := ar1(r, 4, 1000, 0, 0, 0)
	var s Summarizer
	got := s.Summarize(same)
	const bound = 1 + 4.0/1000
	if got.Rhat > bound || got.RhatBasic > bound {
		t.Errorf("same distribution: Rhat %g, RhatBasic %g, want below %g", got.Rhat, got.RhatBasic, bound)
	}
	for i := range same[3] {
		same[3][i] += 2
	}
	got = s.Summarize(same)
	if got.Rhat < 1.1 || got.RhatBasic < 1.1 {
		t.Errorf("shifted chain: Rhat %g, RhatBasic %g, want above 1.1", got.Rhat, got.RhatBasic)
	}
}

// TestRhatDetectsScale checks the folded R-hat: chains with equal location
// but one with four times the spread leave the bulk R-hat near 1 and only
// the folded R-hat large.
func TestRhatDetectsScale(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 5))
	chains := ar1(r, 4, 1000, 0, 0, 0)
	for i := range chains[0] {
		chains[0][i] *= 4
	}
	got := new(Summarizer).Summarize(chains)
	if got.RhatBasic > 1+4.0/1000*4 || got.Rhat < 1.1 {
		t.Errorf("scaled chain: RhatBasic %g (want near 1), Rhat %g (want above 1.1)", got.RhatBasic, got.Rhat)
	}
}

// TestESSIndependent checks that the ESS of independent draws is close to
// their number, S = 4000, and of AR(1) draws close to S(1−φ)/(1+φ). For
// independent draws τ̂ − 1 ≈ 2ρ̂₁ + ρ̂₂ + … over the few lags before Geyer's
// sequence turns negative, each ρ̂ of standard deviation 1/√S ≈ 0.016, so
// τ̂ stays within 1 ± 0.2 except with negligible probability; for φ = 0.5
// (τ = 3) the estimator's relative standard deviation is about
// sqrt(2·(2τ)·T/S) with T ≈ 10 lags, about 0.1, and 0.4 is four of them.
func TestESSIndependent(t *testing.T) {
	r := rand.New(rand.NewPCG(2024, 1))
	var s Summarizer
	iid := s.Summarize(ar1(r, 4, 1000, 0, 0, 0))
	for name, v := range map[string]float64{"ESSBulk": iid.ESSBulk, "ESSBasic": iid.ESSBasic, "ESSTail": iid.ESSTail} {
		if v < 4000/1.2 || v > 4000/0.8 {
			t.Errorf("iid %s = %g, want within 4000/(1 ± 0.2)", name, v)
		}
	}
	ar := s.Summarize(ar1(r, 4, 1000, 0.5, 0, 0))
	want := 4000.0 / 3
	if math.Abs(ar.ESSBasic/want-1) > 0.4 || math.Abs(ar.ESSBulk/want-1) > 0.4 {
		t.Errorf("AR(1) φ=0.5: ESSBasic %g, ESSBulk %g, want %g ± 40%%", ar.ESSBasic, ar.ESSBulk, want)
	}
	if want := ar.SD / math.Sqrt(ar.ESSBasic); ar.MCSEMean != want {
		t.Errorf("MCSEMean %g, want sd/sqrt(ESSBasic) = %g", ar.MCSEMean, want)
	}
}

// TestESSCap checks the bound ESS ≤ S·log10(S) on antithetic AR(1) draws
// with φ = −0.9: τ = (1+φ)/(1−φ) ≈ 0.053, its estimate from S = 4000 draws
// has a standard deviation of a few hundredths, and the bound
// 1/log10(4000) ≈ 0.28 is far above.
func TestESSCap(t *testing.T) {
	chains := ar1(rand.New(rand.NewPCG(6, 6)), 4, 1000, -0.9, 0, 0)
	got := ESSBasic(chains)
	if want := 4000 * math.Log10(4000); math.Abs(got-want) > 1e-9*want {
		t.Errorf("antithetic ESS %g, want the cap %g", got, want)
	}
}

func TestAutocovarianceFFTMatchesDirect(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 8))
	for _, n := range []int{3, 7, 64, 127, 250, 301} {
		const m = 3
		x := make([]float64, m*n)
		for i := range x {
			x[i] = r.NormFloat64() + 0.3*float64(i%5)
		}
		var w essWork
		w.m, w.n = m, n
		w.centred = make([]float64, m*n)
		for c := range m {
			mean := meanOf(x[c*n : (c+1)*n])
			for i := range n {
				w.centred[c*n+i] = x[c*n+i] - mean
			}
		}
		w.acov = make([]float64, n)
		w.acovFFT()
		scale := w.acov[0]
		for lag := range n {
			if d := w.directLag(lag); math.Abs(d-w.acov[lag]) > 1e-12*scale {
				t.Errorf("n=%d lag %d: FFT %g, direct %g", n, lag, w.acov[lag], d)
			}
		}
	}
}

func TestNextGoodSize(t *testing.T) {
	for n, want := range map[int]int{0: 2, 1: 2, 2: 2, 3: 3, 7: 8, 11: 12, 14: 15, 250: 250, 251: 256, 500: 500, 1001: 1024} {
		if got := nextGoodSize(n); got != want {
			t.Errorf("nextGoodSize(%d) = %d, want %d", n, got, want)
		}
	}
}

func TestEdgeCases(t *testing.T) {
	var s Summarizer
	isNaN := func(name string, v float64) {
		t.Helper()
		if !math.IsNaN(v) {
			t.Errorf("%s = %g, want NaN", name, v)
		}
	}

	// Constant draws: posterior returns NA for every diagnostic.
	constant := [][]float64{{2, 2, 2, 2, 2, 2, 2, 2}, {2, 2, 2, 2, 2, 2, 2, 2}}
	got := s.Summarize(constant)
	if got.Mean != 2 || got.Median != 2 || got.SD != 0 || got.MAD != 0 || got.Q5 != 2 || got.Q95 != 2 {
		t.Errorf("constant draws: %+v", got)
	}
	for i, v := range fields(got)[6:] {
		isNaN("constant "+fieldNames[6+i], v)
	}

	// A NaN anywhere makes every field NaN.
	withNaN := [][]float64{{1, 2, 3, math.NaN(), 5, 6}, {1, 2, 3, 4, 5, 6}}
	for i, v := range fields(s.Summarize(withNaN)) {
		isNaN("NaN input "+fieldNames[i], v)
	}

	// An infinite draw leaves order statistics defined, diagnostics NaN.
	withInf := [][]float64{{1, 2, 3, math.Inf(1), 5, 6, 7}, {1, 2, 3, 4, 5, 6, 7}}
	got = s.Summarize(withInf)
	if got.Median != 4.5 || !math.IsInf(got.Mean, 1) || got.Q5 != 1 || !math.IsInf(got.Q95, 1) {
		t.Errorf("Inf input: median %g, mean %g, q5 %g, q95 %g", got.Median, got.Mean, got.Q5, got.Q95)
	}
	for i, v := range fields(got)[6:] {
		isNaN("Inf input "+fieldNames[6+i], v)
	}

	// Infinities of both signs, or only infinities, must not upset the
	// folding around a median that may be infinite or NaN.
	for _, chains := range [][][]float64{
		{{math.Inf(-1), 1, 2, math.Inf(1)}, {math.Inf(1), math.Inf(1), 3, 4}},
		{{math.Inf(1), math.Inf(1)}, {math.Inf(-1), math.Inf(-1)}},
		{{math.Inf(-1), math.Inf(-1), math.Inf(-1)}},
	} {
		got := s.Summarize(chains)
		for i, v := range fields(got)[6:] {
			isNaN("infinite draws "+fieldNames[6+i], v)
		}
	}

	// Too short: halves of one draw have no R-hat, of two no ESS.
	got = s.Summarize([][]float64{{1, 2, 3}, {4, 6, 5}})
	isNaN("3 draws Rhat", got.Rhat)
	isNaN("3 draws ESSBulk", got.ESSBulk)
	got = s.Summarize([][]float64{{1, 2, 3, 4}, {4, 6, 5, 7}})
	if math.IsNaN(got.Rhat) || math.IsNaN(got.RhatBasic) {
		t.Errorf("4 draws: Rhat %g, RhatBasic %g, want numbers", got.Rhat, got.RhatBasic)
	}
	isNaN("4 draws ESSBasic", got.ESSBasic)
	got = s.Summarize([][]float64{{1}, {2}, {4}})
	if got.Median != 2 {
		t.Errorf("one draw per chain: median %g", got.Median)
	}
	isNaN("one draw Rhat", got.Rhat)

	for i, v := range fields(s.Summarize(nil)) {
		isNaN("no chains "+fieldNames[i], v)
	}

	defer func() {
		if recover() == nil {
			t.Error("chains of different lengths did not panic")
		}
	}()
	s.Summarize([][]float64{{1, 2, 3}, {1, 2}})
}

// TestOddLengthDropsMiddle checks that with odd chain lengths the split
// diagnostics ignore the middle draw, as posterior does, while the order
// statistics use every draw.
func TestOddLengthDropsMiddle(t *testing.T) {
	r := rand.New(rand.NewPCG(9, 9))
	odd := ar1(r, 3, 201, 0.3, 0, 0)
	even := make([][]float64, len(odd))
	for c, chain := range odd {
		even[c] = append(append([]float64(nil), chain[:100]...), chain[101:]...)
		chain[100] = 1e6 // would dominate anything that used it
	}
	var s Summarizer
	o, e := s.Summarize(odd), s.Summarize(even)
	if o.ESSBulk != e.ESSBulk || o.ESSBasic != e.ESSBasic || o.RhatBasic != e.RhatBasic {
		t.Errorf("odd: ESSBulk %g ESSBasic %g RhatBasic %g; without middle draws: %g %g %g",
			o.ESSBulk, o.ESSBasic, o.RhatBasic, e.ESSBulk, e.ESSBasic, e.RhatBasic)
	}
	if o.Q95 == e.Q95 || o.Mean == e.Mean {
		t.Error("order statistics ignored the middle draws")
	}
}

// TestStandaloneFunctions checks that the one-statistic functions agree
// with Summarize.
func TestStandaloneFunctions(t *testing.T) {
	r := rand.New(rand.NewPCG(4, 4))
	chains := ar1(r, 4, 301, 0.7, 0.1, 0)
	want := new(Summarizer).Summarize(chains)
	for name, got := range map[string][2]float64{
		"Rhat":      {Rhat(chains), want.Rhat},
		"RhatBasic": {RhatBasic(chains), want.RhatBasic},
		"ESSBulk":   {ESSBulk(chains), want.ESSBulk},
		"ESSTail":   {ESSTail(chains), want.ESSTail},
		"ESSBasic":  {ESSBasic(chains), want.ESSBasic},
		"MCSEMean":  {MCSEMean(chains), want.MCSEMean},
		"MCSESD":    {MCSESD(chains), want.MCSESD},
	} {
		if got[0] != got[1] {
			t.Errorf("%s = %g, Summarize gives %g", name, got[0], got[1])
		}
	}
	flat := append(append(append(append([]float64(nil), chains[0]...), chains[1]...), chains[2]...), chains[3]...)
	if got := new(Summarizer).SummarizeFlat(flat, 4); got != want {
		t.Errorf("SummarizeFlat = %+v, Summarize %+v", got, want)
	}
}

func TestSummarizeDoesNotAllocate(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 1))
	a, b := ar1(r, 4, 500, 0.2, 0, 0), ar1(r, 4, 500, 0.99, 0, 0)
	var s Summarizer
	s.Summarize(b) // sizes the FFT scratch space
	if n := testing.AllocsPerRun(20, func() { s.Summarize(a); s.Summarize(b) }); n != 0 {
		t.Errorf("Summarize allocated %g times per call pair", n)
	}
}
