package posterior

import (
	"errors"
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/pwe-project/pwe/formats"
)

func TestAnchorRuleResolve(t *testing.T) {
	cases := []struct {
		in      string
		v, dim  int
		want    []int
		wantErr error
	}{
		{"last", 10, 3, []int{7, 8, 9}, nil},
		{"first", 10, 3, []int{0, 1, 2}, nil},
		{"none", 10, 3, nil, nil},
		{"9, 2,5", 10, 3, []int{2, 5, 9}, nil},
		{"1,2", 10, 3, nil, ErrAnchorCount},
		{"1,2,10", 10, 3, nil, ErrAnchorCount},
		{"1,2,2", 10, 3, nil, ErrAnchorCount},
		{"last", 2, 3, nil, ErrAnchorCount},
		{"volume", 10, 3, nil, ErrAnchorsRequired},
	}
	for _, c := range cases {
		r, err := ParseAnchorRule(c.in)
		if err != nil {
			t.Fatalf("%q: %v", c.in, err)
		}
		got, err := r.Resolve(c.v, c.dim)
		if !errors.Is(err, c.wantErr) || !slices.Equal(got, c.want) {
			t.Errorf("%q: %v, %v; want %v, %v", c.in, got, err, c.want, c.wantErr)
		}
		if back, _ := ParseAnchorRule(r.String()); back.Kind != r.Kind || !slices.Equal(back.IDs, r.IDs) {
			t.Errorf("%q: String %q does not parse back", c.in, r.String())
		}
	}
	if _, err := ParseAnchorRule("rare"); err == nil {
		t.Error("ParseAnchorRule accepts rare")
	}
}

func TestChooseAnchorsRefuses(t *testing.T) {
	rows := []formats.CountRow{
		{TargetID: 0, ContextID: 0, NPos: 1, NNeg: 1},
		{TargetID: 0, ContextID: 1, NPos: 1, NNeg: 1},
		{TargetID: 1, ContextID: 2, NPos: 1, NNeg: 1},
	}
	d := buildData(t, 4, rows)
	m := NewParams(4, 2)
	copy(m.Alpha, []float64{1, 0, 0, 1, 1, 1e-9, 0.5, 0.5})
	if ids, err := ChooseAnchors(d, m, AnchorRule{Kind: AnchorFirst}); err != nil || !slices.Equal(ids, []int{0, 1}) {
		t.Fatalf("first: %v, %v", ids, err)
	}
	// Token 3 never occurs as a context.
	_, err := ChooseAnchors(d, m, AnchorRule{Kind: AnchorLast})
	if !errors.Is(err, ErrAnchorNoCounts) || !strings.Contains(err.Error(), "token 3") || !strings.Contains(err.Error(), "--anchors") {
		t.Errorf("last: %v", err)
	}
	// alpha_0 and alpha_2 are parallel to within 1e-9: condition number
	// about 2e9.
	_, err = ChooseAnchors(d, m, AnchorRule{Kind: AnchorIDs, IDs: []int{0, 2}})
	if !errors.Is(err, ErrIllConditioned) || !strings.Contains(err.Error(), "--dim") {
		t.Errorf("ill-conditioned: %v", err)
	}
}

// TestVolumeAnchors: weighted rows sqrt(c_j) alpha_j, c_j the context
// count. Token 0 has the longest row (weight 3, norm 3.0); among the rest
// the row of token 4 (weight 2, (0.1, 1)) keeps the largest part
// orthogonal to it (2.0), more than token 2's (weight 3 but nearly
// parallel to token 0) or token 3's (no counts, however long its vector).
// The 2 x 2 case is small enough to check against every pair: the greedy
// choice is the pair of largest weighted volume here.
func TestVolumeAnchors(t *testing.T) {
	counts := map[int]float64{0: 9, 1: 1, 2: 9, 4: 4}
	var rows []formats.CountRow
	for j := range 5 {
		if c, ok := counts[j]; ok {
			rows = append(rows, formats.CountRow{TargetID: 0, ContextID: int32(j), NPos: c / 2, NNeg: c / 2})
		}
	}
	d := buildData(t, 5, rows)
	m := NewParams(5, 2)
	copy(m.Alpha, []float64{1, 0, 0.3, 0.9, 0.95, 0.15, 0, 40, 0.1, 1})
	ids, err := ChooseAnchors(d, m, AnchorRule{})
	if err != nil || !slices.Equal(ids, []int{0, 4}) {
		t.Fatalf("volume anchors %v, %v; want [0 4]", ids, err)
	}
	best, bestVol := [2]int{}, 0.0
	for a := range 5 {
		for b := a + 1; b < 5; b++ {
			wa, wb := math.Sqrt(counts[a]), math.Sqrt(counts[b])
			x, y := m.Context(a), m.Context(b)
			if vol := math.Abs(wa * wb * (x[0]*y[1] - x[1]*y[0])); vol > bestVol {
				best, bestVol = [2]int{a, b}, vol
			}
		}
	}
	if best != [2]int{0, 4} {
		t.Fatalf("brute force picks %v", best)
	}
	// Five dimensions need five tokens with context counts; token 3 has
	// none, so a 5-dimensional fit is refused.
	m5 := NewParams(5, 5)
	for k := range m5.Alpha {
		m5.Alpha[k] = float64(k%7) - 3
	}
	if _, err := ChooseAnchors(d, m5, AnchorRule{Kind: AnchorVolume}); !errors.Is(err, ErrAnchorNoCounts) || !strings.Contains(err.Error(), "--dim") {
		t.Errorf("D=5 with 4 counted tokens: %v", err)
	}
	// Collinear weighted rows span one dimension only.
	copy(m.Alpha, []float64{1, 1, 2, 2, 3, 3, 0, 40, -1, -1})
	if _, err := ChooseAnchors(d, m, AnchorRule{Kind: AnchorVolume}); !errors.Is(err, ErrIllConditioned) {
		t.Errorf("collinear: %v", err)
	}
}
