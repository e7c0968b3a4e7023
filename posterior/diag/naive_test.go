package diag

import (
	"math"
	"math/rand/v2"
	"sort"
	"testing"

	"gonum.org/v1/gonum/stat/distuv"
)

// The naive* functions restate the package's definitions as directly as
// possible, in the order the paper and the package documentation give
// them, with quadratic-time ranks and autocovariances and no shared code
// with the package, so that the fast paths (packed sort keys, merged
// folding, rank table, paired lags, direct/FFT autocovariance switch, split
// layout) can be checked on shapes the R reference does not cover.

// naiveSplit returns the split chains, dropping middle draws of odd chains.
func naiveSplit(chains [][]float64) [][]float64 {
	var out [][]float64
	for _, c := range chains {
		d := len(c)
		if d == 1 {
			out = append(out, append([]float64(nil), c...))
			continue
		}
		h := d / 2
		out = append(out, append([]float64(nil), c[:h]...), append([]float64(nil), c[d-h:]...))
	}
	return out
}

func naiveMap(chains [][]float64, f func(float64) float64) [][]float64 {
	out := make([][]float64, len(chains))
	for i, c := range chains {
		out[i] = make([]float64, len(c))
		for j, v := range c {
			out[i][j] = f(v)
		}
	}
	return out
}

// naiveZScale ranks every value by counting the values below and equal.
func naiveZScale(chains [][]float64) [][]float64 {
	var all []float64
	for _, c := range chains {
		all = append(all, c...)
	}
	S := float64(len(all))
	return naiveMap(chains, func(v float64) float64 {
		less, equal := 0, 0
		for _, u := range all {
			if u < v {
				less++
			} else if u == v {
				equal++
			}
		}
		r := float64(less) + float64(equal+1)/2
		return distuv.UnitNormal.Quantile((r - 0.375) / (S + 0.25))
	})
}

func naiveMean(x []float64) float64 {
	s := 0.0
	for _, v := range x {
		s += v
	}
	return s / float64(len(x))
}

func naiveVar(x []float64) float64 {
	m := naiveMean(x)
	s := 0.0
	for _, v := range x {
		s += (v - m) * (v - m)
	}
	return s / float64(len(x)-1)
}

func naiveRhat(chains [][]float64) float64 {
	n := float64(len(chains[0]))
	var means, vars []float64
	for _, c := range chains {
		means = append(means, naiveMean(c))
		vars = append(vars, naiveVar(c))
	}
	B := n * naiveVar(means)
	W := naiveMean(vars)
	return math.Sqrt(((n-1)/n*W + B/n) / W)
}

// naiveESS follows the paper: biased autocovariances by direct summation,
// ρ_t = 1 − (W − mean γ_t)/var⁺, Geyer's initial positive then monotone
// sequence over pairs (ρ_2k, ρ_2k+1), τ = −1 + 2 Σ_{t<T} ρ_t + ρ_T.
func naiveESS(chains [][]float64) float64 {
	m, n := len(chains), len(chains[0])
	if n < 3 {
		return math.NaN()
	}
	gamma := func(t int) float64 {
		s := 0.0
		for _, c := range chains {
			mu := naiveMean(c)
			for i := 0; i+t < n; i++ {
				s += (c[i] - mu) * (c[i+t] - mu)
			}
		}
		return s / float64(n) / float64(m)
	}
	W := gamma(0) * float64(n) / float64(n-1)
	varPlus := W * float64(n-1) / float64(n)
	var means []float64
	for _, c := range chains {
		means = append(means, naiveMean(c))
	}
	if m > 1 {
		varPlus += naiveVar(means)
	}
	rhoHat := func(t int) float64 { return 1 - (W-gamma(t))/varPlus }
	rho := make([]float64, n)
	rho[0], rho[1] = 1, rhoHat(1)
	T := 0
	last := [2]float64{1, rho[1]}
	for T+5 < n && last[0]+last[1] > 0 {
		T += 2
		last = [2]float64{rhoHat(T), rhoHat(T + 1)}
		if last[0]+last[1] >= 0 {
			rho[T], rho[T+1] = last[0], last[1]
		}
	}
	if last[0] > 0 {
		rho[T] = last[0]
	}
	for k := 2; k+2 <= T; k += 2 {
		if prev := rho[k-2] + rho[k-1]; rho[k]+rho[k+1] > prev {
			rho[k], rho[k+1] = prev/2, prev/2
		}
	}
	sum := 0.0
	for t := 0; t < max(T, 1); t++ {
		sum += rho[t]
	}
	tau := max(-1+2*sum+rho[T], 1/math.Log10(float64(m*n)))
	return float64(m*n) / tau
}

func naiveSorted(chains [][]float64) []float64 {
	var all []float64
	for _, c := range chains {
		all = append(all, c...)
	}
	sort.Float64s(all)
	return all
}

// naiveQuantile interpolates as x_lo + h·(x_hi − x_lo), a different
// rounding from R's, so comparisons with it need a tolerance.
func naiveQuantile(sorted []float64, p float64) float64 {
	h := float64(len(sorted)-1) * p
	lo := int(math.Floor(h))
	if lo+1 >= len(sorted) {
		return sorted[lo]
	}
	return sorted[lo] + (h-float64(lo))*(sorted[lo+1]-sorted[lo])
}

func naiveMedian(chains [][]float64) float64 {
	s := naiveSorted(chains)
	n := len(s)
	if n%2 == 1 {
		return s[n/2]
	}
	return (s[n/2-1] + s[n/2]) / 2
}

func naiveSummary(chains [][]float64) Summary {
	all := naiveSorted(chains)
	mean := naiveMean(all)
	sd := math.Sqrt(naiveVar(all))
	med := naiveMedian(chains)
	folded := naiveMap(chains, func(v float64) float64 { return math.Abs(v - med) })
	split := naiveSplit(chains)
	bulk := naiveRhat(naiveZScale(split))
	tail := naiveRhat(naiveZScale(naiveSplit(folded)))
	essBasic := naiveESS(split)
	indicator := func(p float64) float64 {
		q := naiveQuantile(all, p)
		return naiveESS(naiveSplit(naiveMap(chains, func(v float64) float64 {
			if v <= q {
				return 1
			}
			return 0
		})))
	}
	var m2, m4 float64
	for _, v := range all {
		m2 += (v - mean) * (v - mean)
		m4 += math.Pow(v-mean, 4)
	}
	m2 /= float64(len(all))
	m4 /= float64(len(all))
	essSq := naiveESS(naiveSplit(naiveMap(chains, func(v float64) float64 { return (v - mean) * (v - mean) })))
	return Summary{
		Mean:      mean,
		Median:    med,
		SD:        sd,
		MAD:       1.4826 * naiveMedian(folded),
		Q5:        naiveQuantile(all, 0.05),
		Q95:       naiveQuantile(all, 0.95),
		MCSEMean:  sd / math.Sqrt(essBasic),
		MCSESD:    math.Sqrt((m4 - m2*m2) / essSq / m2 / 4),
		ESSBulk:   naiveESS(naiveZScale(split)),
		ESSTail:   min(indicator(0.05), indicator(0.95)),
		Rhat:      max(bulk, tail),
		ESSBasic:  essBasic,
		RhatBasic: naiveRhat(split),
	}
}

// ar1 returns c chains of d draws of a stationary AR(1) process with
// coefficient phi, chain k shifted by shift·k, rounded to a grid of
// spacing round when round > 0 (to create ties).
func ar1(r *rand.Rand, c, d int, phi, shift, round float64) [][]float64 {
	out := make([][]float64, c)
	for k := range out {
		x := r.NormFloat64() / math.Sqrt(1-phi*phi)
		for range d {
			v := x + shift*float64(k)
			if round > 0 {
				v = math.Round(v/round) * round
			}
			out[k] = append(out[k], v)
			x = phi*x + r.NormFloat64()
		}
	}
	return out
}

func fields(s Summary) []float64 {
	return []float64{s.Mean, s.Median, s.SD, s.MAD, s.Q5, s.Q95, s.MCSEMean, s.MCSESD,
		s.ESSBulk, s.ESSTail, s.Rhat, s.ESSBasic, s.RhatBasic}
}

var fieldNames = []string{"Mean", "Median", "SD", "MAD", "Q5", "Q95", "MCSEMean", "MCSESD",
	"ESSBulk", "ESSTail", "Rhat", "ESSBasic", "RhatBasic"}

// TestSummarizeMatchesNaive compares Summarize with the naive restatement
// on shapes the R reference does not cover: one chain, odd lengths,
// lengths with prime factors above 5 (FFT padding), slow mixing (the FFT
// path) and heavy ties. The tolerance covers summation-order rounding (the
// absolute 1e-14 is for values such as medians that happen to lie near 0
// while the draws are of order 1); a wrong rank, split or lag changes values
// by far more.
func TestSummarizeMatchesNaive(t *testing.T) {
	r := rand.New(rand.NewPCG(20210131, 1))
	cases := []struct {
		name              string
		c, d              int
		phi, shift, round float64
	}{
		{"iid 4x100", 4, 100, 0, 0, 0},
		{"one chain", 1, 200, 0.3, 0, 0},
		{"odd length", 3, 151, 0.5, 0, 0},
		{"prime half", 2, 2 * 127, 0.2, 0, 0},
		{"slow mixing (FFT)", 4, 2 * 167, 0.98, 0, 0},
		{"shifted", 4, 120, 0.1, 0.7, 0},
		{"ties", 4, 101, 0.4, 0, 0.5},
		{"tiny", 2, 7, 0, 0, 0},
		{"short for ESS", 3, 5, 0, 0, 0},
	}
	var s Summarizer
	for _, tc := range cases {
		chains := ar1(r, tc.c, tc.d, tc.phi, tc.shift, tc.round)
		got := fields(s.Summarize(chains))
		want := fields(naiveSummary(chains))
		for i := range got {
			g, w := got[i], want[i]
			if math.IsNaN(w) && math.IsNaN(g) {
				continue
			}
			if !(math.Abs(g-w) <= 1e-9*math.Abs(w)+1e-14) {
				t.Errorf("%s: %s = %.15g, naive %.15g", tc.name, fieldNames[i], g, w)
			}
		}
	}
}
