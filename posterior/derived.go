package posterior

import (
	"container/heap"
	"fmt"
	"math"
	"sort"

	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/blas64"
)

// VectorKind selects the vectors that cosine similarities, dot products
// and neighbours compare.
type VectorKind int

// The vector kinds; the zero value compares target vectors.
const (
	TargetVectors  VectorKind = iota // rho_i
	ContextVectors                   // alpha_i
	SumVectors                       // rho_i + alpha_i
)

// ParseVectorKind parses "rho" (or ""), "alpha" or "sum".
func ParseVectorKind(s string) (VectorKind, error) {
	switch s {
	case "", "rho":
		return TargetVectors, nil
	case "alpha":
		return ContextVectors, nil
	case "sum":
		return SumVectors, nil
	}
	return 0, fmt.Errorf("posterior: vectors %q, want rho, alpha or sum", s)
}

// String returns the name ParseVectorKind accepts.
func (k VectorKind) String() string {
	switch k {
	case ContextVectors:
		return "alpha"
	case SumVectors:
		return "sum"
	}
	return "rho"
}

// Vector writes token i's vector of kind k in p into dst (length p.D) and
// returns it.
func (k VectorKind) Vector(dst []float64, p *Params, i int) []float64 {
	dst = dst[:p.D]
	switch k {
	case TargetVectors:
		copy(dst, p.Target(i))
	case ContextVectors:
		copy(dst, p.Context(i))
	default:
		r, a := p.Target(i), p.Context(i)
		for d := range dst {
			dst[d] = r[d] + a[d]
		}
	}
	return dst
}

// Pair names two tokens by their rows in Params. Cosine and dot product are
// symmetric in A and B; the co-occurrence probability is that of B in A's
// context, sigmoid(rho_A . alpha_B).
type Pair struct{ A, B int }

// PairQuantities is the number of values PairValues writes per pair:
// cosine, dot product and co-occurrence probability, in that order.
const PairQuantities = 3

// PairValues writes the derived quantities of every pair in one draw p into
// dst[PairQuantities*k:], cosine and dot product of the vectors of kind k.
// A zero vector has cosine 0 with every vector. It returns dst.
func PairValues(dst []float64, p *Params, pairs []Pair, k VectorKind) []float64 {
	dst = dst[:PairQuantities*len(pairs)]
	a, b := make([]float64, p.D), make([]float64, p.D)
	for n, pr := range pairs {
		x, y := k.Vector(a, p, pr.A), k.Vector(b, p, pr.B)
		xy, xx, yy := dot(x, y), dot(x, x), dot(y, y)
		cos := 0.0
		if xx > 0 && yy > 0 {
			cos = xy / math.Sqrt(xx*yy)
		}
		dst[PairQuantities*n] = cos
		dst[PairQuantities*n+1] = xy
		dst[PairQuantities*n+2] = logistic(p.Logit(pr.A, pr.B))
	}
	return dst
}

// CosineScorer computes the cosine similarities of a few query tokens with
// every token of a draw as one matrix product, Q x D by D x V, so that
// neighbour searches over large vocabularies run at matrix-multiply speed.
// Its scratch (V x D unit vectors) is kept between draws; a CosineScorer
// must not be used by more than one goroutine at a time. The zero value
// compares target vectors.
type CosineScorer struct {
	Kind VectorKind

	unit []float64 // every token's unit vector, row-major V x D
}

// Scores writes into dst (length len(queries) x p.V, row-major) the cosine
// similarity of the vector of queries[q] with that of every token j at
// dst[q*p.V+j], and returns dst. A zero vector has cosine 0 with every
// vector.
func (s *CosineScorer) Scores(dst []float64, p *Params, queries []int) []float64 {
	v, d := p.V, p.D
	if cap(s.unit) < v*d {
		s.unit = make([]float64, v*d)
	}
	s.unit = s.unit[:v*d]
	for i := range v {
		u := s.Kind.Vector(s.unit[i*d:(i+1)*d], p, i)
		if n := math.Sqrt(dot(u, u)); n > 0 {
			for k := range u {
				u[k] /= n
			}
		}
	}
	q := make([]float64, len(queries)*d)
	for r, i := range queries {
		copy(q[r*d:(r+1)*d], s.unit[i*d:(i+1)*d])
	}
	dst = dst[:len(queries)*v]
	blas64.Gemm(blas.NoTrans, blas.Trans, 1,
		blas64.General{Rows: len(queries), Cols: d, Stride: d, Data: q},
		blas64.General{Rows: v, Cols: d, Stride: d, Data: s.unit},
		0, blas64.General{Rows: len(queries), Cols: v, Stride: v, Data: dst})
	return dst
}

// TopK appends to dst the indices j != exclude whose scores have rank at
// most k, rank being 1 + the number of other indices (exclude left out)
// with a strictly larger score: the k largest scores, and any tied with the
// k-th. They are appended in descending order of score, ties by index. NaN
// scores are never selected. Pass exclude = -1 to rank every index.
func TopK(dst []int, scores []float64, k, exclude int) []int {
	if k <= 0 {
		return dst
	}
	h := make(minHeap, 0, k)
	for j, x := range scores {
		if j == exclude || x != x {
			continue
		}
		switch {
		case len(h) < k:
			heap.Push(&h, x)
		case x > h[0]:
			h[0] = x
			heap.Fix(&h, 0)
		}
	}
	if len(h) == 0 {
		return dst
	}
	kth := h[0]
	start := len(dst)
	for j, x := range scores {
		if j != exclude && x >= kth {
			dst = append(dst, j)
		}
	}
	sel := dst[start:]
	sort.SliceStable(sel, func(a, b int) bool { return scores[sel[a]] > scores[sel[b]] })
	return dst
}

type minHeap []float64

func (h minHeap) Len() int           { return len(h) }
func (h minHeap) Less(i, j int) bool { return h[i] < h[j] }
func (h minHeap) Swap(i, j int)      { h[i], h[j] = h[j], h[i] }
func (h *minHeap) Push(x any)        { *h = append(*h, x.(float64)) }
func (h *minHeap) Pop() any {
	old := *h
	x := old[len(old)-1]
	*h = old[:len(old)-1]
	return x
}

// Ranks writes into dst[c] the rank of candidates[c] among scores: 1 + the
// number of indices j != exclude with scores[j] > scores[candidates[c]],
// the definition TopK selects by. It costs O(len(scores) log
// len(candidates)) rather than a pass over the scores per candidate. A
// candidate with a NaN score gets rank len(scores) + 1 (past every index).
// It returns dst.
func Ranks(dst []int, scores []float64, candidates []int, exclude int) []int {
	dst = dst[:len(candidates)]
	// sorted holds the candidates' scores in ascending order; greater[p]
	// counts the indices whose score exceeds exactly the p smallest.
	sorted := make([]float64, 0, len(candidates))
	for _, c := range candidates {
		if x := scores[c]; x == x {
			sorted = append(sorted, x)
		}
	}
	sort.Float64s(sorted)
	count := make([]int, len(sorted)+1)
	for j, x := range scores {
		if j == exclude || x != x {
			continue
		}
		// The score exceeds the candidates' scores sorted[:p].
		p := sort.SearchFloat64s(sorted, x)
		count[p]++
	}
	// above[i]: indices whose score exceeds sorted[i], i.e. with p > i.
	above := make([]int, len(sorted)+1)
	for i := len(sorted) - 1; i >= 0; i-- {
		above[i] = above[i+1] + count[i+1]
	}
	for n, c := range candidates {
		x := scores[c]
		if x != x {
			dst[n] = len(scores) + 1
			continue
		}
		i := sort.SearchFloat64s(sorted, x)
		dst[n] = 1 + above[i]
	}
	return dst
}
