package posterior

import (
	"errors"
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
