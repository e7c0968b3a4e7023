package posterior

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	"gonum.org/v1/gonum/mat"
)

// MaxAnchorCond is the largest condition number (2-norm) of the D x D
// matrix of anchor context vectors that ChooseAnchors accepts. Beyond it the
// anchored coordinates are determined by rounding noise rather than by the
// data.
const MaxAnchorCond = 1e8

// Anchor errors, wrapped with the reason and what to do.
var (
	ErrAnchorCount     = errors.New("posterior: wrong number of anchors")
	ErrAnchorNoCounts  = errors.New("posterior: anchor token has no counts as a context")
	ErrIllConditioned  = errors.New("posterior: ill-conditioned anchors")
	ErrAnchorsRequired = errors.New("posterior: anchored sampling needs MAP values")
)

// AnchorKind selects how the D anchor tokens are chosen.
type AnchorKind int

const (
	// AnchorVolume, the default, picks D tokens greedily for the largest
	// volume spanned by their MAP context vectors, each weighted by the
	// square root of the token's total count as a context (pivoted QR on
	// those rows): well-measured anchors that point in different
	// directions pin the frame of the free vectors best. Tokens without
	// context counts have weight zero and are never picked. It mixes best
	// of the rules in the measurements of BENCHMARKS.md.
	AnchorVolume AnchorKind = iota
	// AnchorLast takes the last D tokens in vocabulary order (the rarest,
	// as ids run by descending count): the reference paper's choice.
	AnchorLast
	// AnchorFirst takes tokens 0..D-1, the D most frequent.
	AnchorFirst
	// AnchorIDs takes the ids listed in AnchorRule.IDs.
	AnchorIDs
	// AnchorNone fixes nothing: the posterior is then not identified (its
	// mean is zero and R-hat of raw coordinates is meaningless). Meant for
	// checks of the identification itself.
	AnchorNone
)

// AnchorRule says which tokens' context vectors are fixed at their MAP
// values. The zero value is AnchorVolume.
type AnchorRule struct {
	Kind AnchorKind
	IDs  []int // the anchor ids when Kind is AnchorIDs
}

// ParseAnchorRule reads "volume", "last", "first", "none" or a
// comma-separated list of token ids such as "3,17,42".
func ParseAnchorRule(s string) (AnchorRule, error) {
	switch s {
	case "volume":
		return AnchorRule{Kind: AnchorVolume}, nil
	case "last":
		return AnchorRule{Kind: AnchorLast}, nil
	case "first":
		return AnchorRule{Kind: AnchorFirst}, nil
	case "none":
		return AnchorRule{Kind: AnchorNone}, nil
	}
	var ids []int
	for f := range strings.SplitSeq(s, ",") {
		id, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil {
			return AnchorRule{}, fmt.Errorf("posterior: anchors %q: want volume, last, first, none or comma-separated token ids: %w", s, err)
		}
		ids = append(ids, id)
	}
	return AnchorRule{Kind: AnchorIDs, IDs: ids}, nil
}

// String returns the form ParseAnchorRule reads.
func (r AnchorRule) String() string {
	switch r.Kind {
	case AnchorVolume:
		return "volume"
	case AnchorLast:
		return "last"
	case AnchorFirst:
		return "first"
	case AnchorNone:
		return "none"
	}
	parts := make([]string, len(r.IDs))
	for k, id := range r.IDs {
		parts[k] = strconv.Itoa(id)
	}
	return strings.Join(parts, ",")
}

// Resolve returns the anchor ids, ascending, for v tokens in dim
// dimensions (nil for AnchorNone). AnchorVolume depends on the counts and
// the MAP values and is resolved by ChooseAnchors only: Resolve returns an
// error wrapping ErrAnchorsRequired for it.
func (r AnchorRule) Resolve(v, dim int) ([]int, error) {
	var ids []int
	switch r.Kind {
	case AnchorNone:
		return nil, nil
	case AnchorVolume:
		return nil, fmt.Errorf("%w: anchors %q are chosen from the MAP context vectors", ErrAnchorsRequired, r)
	case AnchorLast, AnchorFirst:
		if dim > v {
			return nil, fmt.Errorf("%w: %d anchors needed (one per dimension) but the vocabulary has %d tokens; lower --dim",
				ErrAnchorCount, dim, v)
		}
		lo := 0
		if r.Kind == AnchorLast {
			lo = v - dim
		}
		for k := range dim {
			ids = append(ids, lo+k)
		}
		return ids, nil
	case AnchorIDs:
		ids = slices.Clone(r.IDs)
	default:
		panic(fmt.Sprintf("posterior: unknown AnchorKind %d", r.Kind))
	}
	if len(ids) != dim {
		return nil, fmt.Errorf("%w: %d ids given, need exactly one per dimension (%d); change --anchors or --dim",
			ErrAnchorCount, len(ids), dim)
	}
	slices.Sort(ids)
	for k, id := range ids {
		if id < 0 || id >= v {
			return nil, fmt.Errorf("%w: token id %d outside the vocabulary (0..%d)", ErrAnchorCount, id, v-1)
		}
		if k > 0 && ids[k-1] == id {
			return nil, fmt.Errorf("%w: token id %d listed twice", ErrAnchorCount, id)
		}
	}
	return ids, nil
}

// ChooseAnchors resolves rule and checks that the anchors identify the
// posterior at the MAP values m: every anchor must occur as a context in
// the counts (otherwise its MAP vector is zero, pulled only by the prior)
// and the D x D matrix of their context vectors must be well conditioned.
func ChooseAnchors(d *Data, m *Params, rule AnchorRule) ([]int, error) {
	var ids []int
	var err error
	if rule.Kind == AnchorVolume {
		ids, err = volumeAnchors(d, m)
	} else {
		ids, err = rule.Resolve(d.v, m.D)
	}
	if err != nil || ids == nil {
		return ids, err
	}
	for _, id := range ids {
		if d.degree(sideAlpha, id) == 0 {
			return nil, fmt.Errorf("%w: token %d (anchors %q); choose other anchors with --anchors, e.g. first",
				ErrAnchorNoCounts, id, rule)
		}
	}
	a := mat.NewDense(m.D, m.D, nil)
	for r, id := range ids {
		a.SetRow(r, m.Context(id))
	}
	if c := mat.Cond(a, 2); !(c <= MaxAnchorCond) {
		return nil, fmt.Errorf("%w: the anchors' %dx%d matrix of MAP context vectors (anchors %q) has condition number %.3g, above %.0g;"+
			" choose other anchors with --anchors (tokens with many counts and unrelated meanings), or lower --dim",
			ErrIllConditioned, m.D, m.D, rule, c, MaxAnchorCond)
	}
	return ids, nil
}

// volumeAnchors picks D tokens by greedy Gram-Schmidt with pivoting on the
// rows sqrt(c_j) alpha_j, c_j the total count of token j as a context: at
// each step the row with the largest residual norm (the lowest id among
// equals) joins the anchors and is projected out of the others, which
// greedily maximises the volume of the chosen rows. Weighting by sqrt(c_j)
// prefers tokens whose MAP vector the data measure well.
func volumeAnchors(d *Data, m *Params) ([]int, error) {
	dim := m.D
	w := make([]float64, d.v*dim)
	counted := 0
	for j := range d.v {
		_, n, _ := d.ContextPairs(j)
		var c float64
		for _, x := range n {
			c += x
		}
		if c > 0 {
			counted++
		}
		s := math.Sqrt(c)
		for k, a := range m.Context(j) {
			w[j*dim+k] = s * a
		}
	}
	if counted < dim {
		return nil, fmt.Errorf("%w: only %d tokens occur as contexts, %d anchors needed (one per dimension); lower --dim",
			ErrAnchorNoCounts, counted, dim)
	}
	picked := make([]bool, d.v)
	ids := make([]int, 0, dim)
	for range dim {
		best, bestNorm := -1, 0.0
		for j := range d.v {
			if picked[j] {
				continue
			}
			if n := sumSquares(w[j*dim : (j+1)*dim]); n > bestNorm {
				best, bestNorm = j, n
			}
		}
		if best < 0 {
			return nil, fmt.Errorf("%w: the weighted MAP context vectors span fewer than %d dimensions (anchors \"volume\"); lower --dim",
				ErrIllConditioned, dim)
		}
		picked[best] = true
		ids = append(ids, best)
		q := slices.Clone(w[best*dim : (best+1)*dim])
		s := 1 / math.Sqrt(bestNorm)
		for k := range q {
			q[k] *= s
		}
		for j := range d.v {
			if !picked[j] {
				row := w[j*dim : (j+1)*dim]
				axpy(-dot(row, q), q, row)
			}
		}
	}
	slices.Sort(ids)
	return ids, nil
}
