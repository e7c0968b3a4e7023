package posterior

import (
	"math"
	"math/rand/v2"
	"sort"
	"testing"
)

// naiveVector builds the vector of a kind coordinate by coordinate.
func naiveVector(p *Params, kind VectorKind, i int) []float64 {
	out := make([]float64, p.D)
	for d := range out {
		switch kind {
		case TargetVectors:
			out[d] = p.Rho[i*p.D+d]
		case ContextVectors:
			out[d] = p.Alpha[i*p.D+d]
		case SumVectors:
			out[d] = p.Rho[i*p.D+d] + p.Alpha[i*p.D+d]
		}
	}
	return out
}

func naiveCosine(x, y []float64) float64 {
	var xy, xx, yy float64
	for d := range x {
		xy += x[d] * y[d]
		xx += x[d] * x[d]
		yy += y[d] * y[d]
	}
	if xx == 0 || yy == 0 {
		return 0
	}
	return xy / math.Sqrt(xx) / math.Sqrt(yy)
}

func TestPairValues(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	p := gaussianParams(rng, 6, 4, 1)
	clear(p.Target(5)) // a zero vector has cosine 0
	pairs := []Pair{{0, 1}, {1, 0}, {2, 2}, {3, 5}, {4, 1}}
	for _, kind := range []VectorKind{TargetVectors, ContextVectors, SumVectors} {
		got := PairValues(make([]float64, PairQuantities*len(pairs)), p, pairs, kind)
		for n, pr := range pairs {
			x, y := naiveVector(p, kind, pr.A), naiveVector(p, kind, pr.B)
			var logit, dotxy float64
			for d := range p.D {
				logit += p.Rho[pr.A*p.D+d] * p.Alpha[pr.B*p.D+d]
				dotxy += x[d] * y[d]
			}
			want := []float64{naiveCosine(x, y), dotxy, 1 / (1 + math.Exp(-logit))}
			for q, w := range want {
				if g := got[PairQuantities*n+q]; math.Abs(g-w) > 1e-12 {
					t.Errorf("%v pair %v quantity %d: got %v, want %v", kind, pr, q, g, w)
				}
			}
		}
	}
	// A large negative logit must not lose the probability to cancellation.
	q := NewParams(2, 1)
	q.Rho[0], q.Alpha[1] = 40, -1
	if got := PairValues(make([]float64, 3), q, []Pair{{0, 1}}, TargetVectors)[2]; math.Abs(got/math.Exp(-40)-1) > 1e-12 {
		t.Errorf("sigmoid(-40) = %v, want %v", got, math.Exp(-40))
	}
}

func TestCosineScorer(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	p := gaussianParams(rng, 40, 7, 1)
	clear(p.Context(9))
	queries := []int{3, 0, 39, 9}
	for _, kind := range []VectorKind{TargetVectors, ContextVectors, SumVectors} {
		s := CosineScorer{Kind: kind}
		for range 2 { // the second call reuses the scratch
			got := s.Scores(make([]float64, len(queries)*p.V), p, queries)
			for r, qi := range queries {
				for j := range p.V {
					want := naiveCosine(naiveVector(p, kind, qi), naiveVector(p, kind, j))
					if g := got[r*p.V+j]; math.Abs(g-want) > 1e-12 {
						t.Fatalf("%v query %d token %d: got %v, want %v", kind, qi, j, g, want)
					}
				}
			}
		}
	}
}

// naiveRank counts, for every index, the other indices with a strictly
// larger score.
func naiveRank(scores []float64, j, exclude int) int {
	r := 1
	for k, x := range scores {
		if k != exclude && k != j && x > scores[j] {
			r++
		}
	}
	return r
}

func TestTopKAndRanks(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	for trial := range 200 {
		n := 1 + rng.IntN(60)
		scores := make([]float64, n)
		for i := range scores {
			// Few distinct values, so that ties are common.
			scores[i] = float64(rng.IntN(1+trial%12)) / 4
		}
		if trial%7 == 0 {
			scores[rng.IntN(n)] = math.NaN()
		}
		exclude := rng.IntN(n+1) - 1
		k := 1 + rng.IntN(8)
		sel := TopK(nil, scores, k, exclude)
		var want []int
		for j, x := range scores {
			if j != exclude && x == x && naiveRank(scores, j, exclude) <= k {
				want = append(want, j)
			}
		}
		sort.SliceStable(want, func(a, b int) bool { return scores[want[a]] > scores[want[b]] })
		if len(sel) != len(want) {
			t.Fatalf("trial %d: TopK %v, want %v (scores %v, k %d, exclude %d)", trial, sel, want, scores, k, exclude)
		}
		for i := range sel {
			if sel[i] != want[i] {
				t.Fatalf("trial %d: TopK %v, want %v", trial, sel, want)
			}
		}
		var cands []int
		for j := range n {
			if j != exclude && rng.IntN(3) == 0 {
				cands = append(cands, j)
			}
		}
		ranks := Ranks(make([]int, len(cands)), scores, cands, exclude)
		for c, j := range cands {
			want := naiveRank(scores, j, exclude)
			if scores[j] != scores[j] {
				want = n + 1
			}
			if ranks[c] != want {
				t.Fatalf("trial %d: rank of %d is %d, want %d (scores %v, exclude %d)", trial, j, ranks[c], want, scores, exclude)
			}
		}
	}
}

func TestParseVectorKind(t *testing.T) {
	for _, s := range []string{"rho", "alpha", "sum"} {
		k, err := ParseVectorKind(s)
		if err != nil || k.String() != s {
			t.Errorf("ParseVectorKind(%q) = %v, %v", s, k, err)
		}
	}
	if _, err := ParseVectorKind("beta"); err == nil {
		t.Error("ParseVectorKind(beta) succeeded")
	}
}

func BenchmarkNeighbourScores(b *testing.B) {
	rng := rand.New(rand.NewPCG(7, 8))
	const v, d = 50000, 50
	p := gaussianParams(rng, v, d, 1)
	queries := []int{1, 10, 100, 1000, 10000}
	dst := make([]float64, len(queries)*v)
	var s CosineScorer
	var sel []int
	for b.Loop() {
		s.Scores(dst, p, queries)
		for q, qi := range queries {
			sel = TopK(sel[:0], dst[q*v:(q+1)*v], 10, qi)
		}
	}
}
