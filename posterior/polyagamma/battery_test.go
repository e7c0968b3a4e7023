package polyagamma

import (
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"
)

func fullMode() bool { return os.Getenv("PWE_PG_FULL") == "1" }

// batteryBs returns the b values of the battery, or the comma-separated
// subset in PWE_PG_B (to rerun the cells of one regime in full mode).
func batteryBs(t *testing.T) []float64 {
	env := os.Getenv("PWE_PG_B")
	if env == "" {
		return batteryB
	}
	var bs []float64
	for _, f := range strings.Split(env, ",") {
		b, err := strconv.ParseFloat(strings.TrimSpace(f), 64)
		if err != nil {
			t.Fatalf("PWE_PG_B: %v", err)
		}
		bs = append(bs, b)
	}
	return bs
}

var (
	batteryB = []float64{0.1, 0.5, 0.999, 1, 2.7, 4, 4.5, 5, 8, 13, 13.01, 20, 50, 51, 170, 171, 1e3, 1e4, 1e5}
	batteryC = []float64{0, 1e-12, -1e-12, 1e-8, 1e-4, 1, 5, 20, 35, 40, 60, 100, 177, 178, 200, 709, 710, 1e4}
)

// kolmogorovSF returns P(sqrt(n) D > x) for the one-sample statistic under
// the null, by the Kolmogorov limit with Stephens' (1970) finite-n
// correction x -> x (1 + 0.12/sqrt n + 0.11/n) / 1.
func kolmogorovSF(x float64, n int) float64 {
	sn := math.Sqrt(float64(n))
	x *= 1 + 0.12/sn + 0.11/float64(n)
	if x < 0.2 {
		return 1
	}
	var s float64
	for k := 1; k < 100; k++ {
		term := 2 * math.Exp(-2*float64(k*k)*x*x)
		if k%2 == 0 {
			term = -term
		}
		s += term
		if math.Abs(term) < 1e-18 {
			break
		}
	}
	return math.Min(1, math.Max(0, s))
}

// ksCritical returns the D with P(D > crit) = alpha for n draws.
func ksCritical(alpha float64, n int) float64 {
	lo, hi := 0.2, 10.0
	for i := 0; i < 100; i++ {
		m := (lo + hi) / 2
		if kolmogorovSF(m, n) > alpha {
			lo = m
		} else {
			hi = m
		}
	}
	return hi / math.Sqrt(float64(n))
}

// ksBounds bounds the one-sample KS statistic D = sup_x |F_n(x) - F(x)| of
// the sorted sample xs without evaluating F at every draw. F is evaluated
// exactly at a grid of every m-th order statistic; between grid points
// g_j < g_{j+1}, F is monotone, so F(x) lies in [F(g_j), F(g_{j+1})] and
// F_n(x) in [F_n(g_j), F_n(g_{j+1}-)], which bounds |F_n - F| on the interval
// by max(F_n(g_{j+1}-) - F(g_j), F(g_{j+1}) - F_n(g_j)). The values at the grid
// points themselves are a lower bound. With m draws between grid points the
// two bounds differ by about m/n. Intervals whose upper bound reaches crit
// are refined by evaluating F at every draw inside them, which makes the
// pass/fail decision exact.
func ksBounds(xs []float64, cdf func(float64) float64, m int, crit float64) (lo, hi float64) {
	n := len(xs)
	fn := float64(n)
	idx := []int{}
	for i := 0; i < n; i += m {
		idx = append(idx, i)
	}
	if idx[len(idx)-1] != n-1 {
		idx = append(idx, n-1)
	}
	f := make([]float64, len(idx))
	for j, i := range idx {
		f[j] = cdf(xs[i])
		// Exact statistic at the grid draw: F_n jumps from i/n to (i+1)/n.
		lo = math.Max(lo, math.Max(float64(i+1)/fn-f[j], f[j]-float64(i)/fn))
	}
	hi = lo
	// Below the first grid point and above the last one.
	hi = math.Max(hi, f[0])
	hi = math.Max(hi, 1-f[len(f)-1])
	for j := 0; j+1 < len(idx); j++ {
		i0, i1 := idx[j], idx[j+1]
		// On (x_i0, x_i1): F_n in [(i0+1)/n, i1/n], F in [f_j, f_{j+1}].
		u := math.Max(float64(i1)/fn-f[j], f[j+1]-float64(i0+1)/fn)
		if u >= crit && i1-i0 > 1 {
			u = 0
			for i := i0 + 1; i < i1; i++ {
				fi := cdf(xs[i])
				u = math.Max(u, math.Max(float64(i+1)/fn-fi, fi-float64(i)/fn))
			}
			lo = math.Max(lo, u)
		}
		hi = math.Max(hi, u)
	}
	return lo, hi
}

type cellResult struct {
	b, c       float64
	zMin, zMax float64
	dLo, dHi   float64
	p          float64
}

// TestBattery checks the sampler on every cell of the (b, c) grid: mean and
// variance z-tests against the exact cumulants (the variance's standard
// error uses the exact 4th cumulant), the Laplace transform at three t
// (standard error from the exact Laplace(2t) - Laplace(t)^2), a one-sample
// Kolmogorov-Smirnov test against the Gil-Pelaez CDF at family-wise level
// 1e-3 (Bonferroni over cells), and c against -c with the same seed.
// Each cell's generator is seeded by a hash of its indices, so that the
// cells' streams share no part of their state (seeds that differ in one
// word only run in lockstep in the other).
// PWE_PG_FULL=1 runs 10^6 draws per cell and prints a Markdown table.
func TestBattery(t *testing.T) {
	n, m := 3000, 6
	if fullMode() {
		n, m = 1_000_000, 100
	}
	bs := batteryBs(t)
	cells := len(bs) * len(batteryC)
	crit := ksCritical(1e-3/float64(cells), n)
	const zLim = 5
	var results []cellResult
	xs := make([]float64, n)
	for _, b := range bs {
		bi := slices.Index(batteryB, b)
		for ci, c := range batteryC {
			seed, seed2 := cellSeeds(bi, ci)
			s := Sampler{Src: NewXoshiro(seed, seed2)}
			for i := range xs {
				xs[i] = s.Rand(b, c)
			}
			// Symmetry in c: the same seed must give the same draws.
			sNeg := Sampler{Src: NewXoshiro(seed, seed2)}
			for i := 0; i < 50; i++ {
				if x := sNeg.Rand(b, -c); x != xs[i] {
					t.Fatalf("b=%g: draw %d differs between c=%g and -c: %g vs %g", b, i, c, xs[i], x)
				}
			}
			res := cellResult{b: b, c: c, zMin: math.Inf(1), zMax: math.Inf(-1)}
			check := func(name string, z float64) {
				res.zMin, res.zMax = math.Min(res.zMin, z), math.Max(res.zMax, z)
				if !(math.Abs(z) <= zLim) {
					t.Errorf("b=%g c=%g: %s z = %.2f", b, c, name, z)
				}
			}
			var sum float64
			for _, x := range xs {
				if !(x > 0) || math.IsInf(x, 0) {
					t.Fatalf("b=%g c=%g: draw %g is not finite and positive", b, c, x)
				}
				sum += x
			}
			fn := float64(n)
			mean := sum / fn
			var ss float64
			for _, x := range xs {
				ss += (x - mean) * (x - mean)
			}
			sampleVar := ss / (fn - 1)
			k2, k4 := Var(b, c), Cumulant(4, b, c)
			check("mean", (mean-Mean(b, c))/math.Sqrt(k2/fn))
			check("variance", (sampleVar-k2)/math.Sqrt(k4/fn+2*k2*k2/(fn-1)))
			for _, tm := range []float64{0.5, 1, 3} {
				tt := tm / Mean(b, c)
				var lsum float64
				for _, x := range xs {
					lsum += math.Exp(-tt * x)
				}
				l1 := Laplace(b, c, tt)
				check(fmt.Sprintf("Laplace(t=%.3g)", tt), (lsum/fn-l1)/math.Sqrt((Laplace(b, c, 2*tt)-l1*l1)/fn))
			}
			slices.Sort(xs)
			res.dLo, res.dHi = ksBounds(xs, func(x float64) float64 { return CDF(b, c, x) }, m, crit)
			res.p = kolmogorovSF(res.dLo*math.Sqrt(fn), n)
			if res.dHi > crit {
				t.Errorf("b=%g c=%g: KS D in [%.4g, %.4g] exceeds critical %.4g", b, c, res.dLo, res.dHi, crit)
			}
			results = append(results, res)
		}
	}
	if fullMode() {
		var sb strings.Builder
		fmt.Fprintf(&sb, "\nN = %d draws per cell; |z| <= %d; KS critical D = %.5f (family-wise alpha 1e-3 over %d cells)\n\n", n, zLim, crit, cells)
		sb.WriteString("| b | c | min z | max z | KS D (lower, upper bound) | KS p |\n|---|---|---|---|---|---|\n")
		for _, r := range results {
			fmt.Fprintf(&sb, "| %g | %g | %.2f | %.2f | %.5f, %.5f | %.3g |\n", r.b, r.c, r.zMin, r.zMax, r.dLo, r.dHi, r.p)
		}
		t.Log(sb.String())
	}
}

func TestKSBoundsExact(t *testing.T) {
	// On a small sample the bounds must bracket the statistic computed at
	// every draw.
	src := rand.New(rand.NewPCG(1, 1))
	xs := make([]float64, 500)
	for i := range xs {
		xs[i] = src.Float64() * 1.1 // slightly off Uniform(0, 1)
	}
	slices.Sort(xs)
	cdf := func(x float64) float64 { return math.Min(x, 1) }
	var d float64
	for i, x := range xs {
		d = math.Max(d, math.Max(float64(i+1)/500-cdf(x), cdf(x)-float64(i)/500))
	}
	lo, hi := ksBounds(xs, cdf, 20, 1)
	if lo > d+1e-15 || hi < d-1e-15 {
		t.Errorf("bounds [%g, %g] miss D = %g", lo, hi, d)
	}
	lo, hi = ksBounds(xs, cdf, 20, 0) // refine everything: exact
	if math.Abs(lo-d) > 1e-15 || math.Abs(hi-d) > 1e-15 {
		t.Errorf("refined bounds [%g, %g], D = %g", lo, hi, d)
	}
	// The critical value must reproduce the textbook 1.358/sqrt(n) at 5%.
	if c := ksCritical(0.05, 10000) * 100; math.Abs(c-1.358) > 0.005 {
		t.Errorf("5%% critical sqrt(n) D = %g, want about 1.358", c)
	}
}

func TestPanics(t *testing.T) {
	s := Sampler{Src: NewXoshiro(1, 2)}
	for _, f := range []func(){
		func() { s.Rand(0, 1) },
		func() { s.Rand(-1, 1) },
		func() { s.Rand(math.NaN(), 1) },
		func() { s.Rand(1, math.NaN()) },
		func() { s.Fill(make([]float64, 2), []float64{1}, []float64{1, 2}) },
		func() { Cumulant(0, 1, 1) },
	} {
		func() {
			defer func() {
				if recover() == nil {
					t.Error("expected a panic")
				}
			}()
			f()
		}()
	}
}

// Fill must give the same draws as repeated Rand on the same source.
func TestFillMatchesRand(t *testing.T) {
	bs := []float64{1, 0.5, 30, 7.25, 1e4}
	cs := []float64{0, -3, 700, 12, 1}
	dst := make([]float64, len(bs))
	Sampler{Src: NewXoshiro(5, 6)}.Fill(dst, bs, cs)
	s := Sampler{Src: NewXoshiro(5, 6)}
	for i := range bs {
		if x := s.Rand(bs[i], cs[i]); x != dst[i] {
			t.Errorf("Fill[%d] = %g, Rand = %g", i, dst[i], x)
		}
	}
}

// cellSeeds hashes a battery cell's indices into both words of its PCG
// state (SplitMix64's finaliser).
func cellSeeds(bi, ci int) (uint64, uint64) {
	mix := func(x uint64) uint64 {
		x += 0x9e3779b97f4a7c15
		x = (x ^ x>>30) * 0xbf58476d1ce4e5b9
		x = (x ^ x>>27) * 0x94d049bb133111eb
		return x ^ x>>31
	}
	k := uint64(bi)<<32 | uint64(ci)
	return mix(k), mix(^k)
}
