package posterior

import (
	"strings"
	"testing"

	"github.com/pwe-project/pwe/formats"
)

func TestDataBuilderIndexesBothSides(t *testing.T) {
	rows := []formats.CountRow{
		{TargetID: 0, ContextID: 2, NPos: 1, NNeg: 2},
		{TargetID: 0, ContextID: 3, NPos: 0, NNeg: 0}, // no information: dropped
		{TargetID: 2, ContextID: 0, NPos: 5, NNeg: 0},
		{TargetID: 2, ContextID: 2, NPos: 0.5, NNeg: 1.25},
		{TargetID: 3, ContextID: 2, NPos: 7, NNeg: 1},
	}
	b := NewDataBuilder(4)
	// Two batches: ordering is checked across the boundary.
	if err := b.Add(rows[:2]); err != nil {
		t.Fatal(err)
	}
	if err := b.Add(rows[2:]); err != nil {
		t.Fatal(err)
	}
	d := b.Build()
	if d.V() != 4 || d.Pairs() != 4 || d.Total() != 3+5+1.75+8 {
		t.Fatalf("V %d pairs %d total %v", d.V(), d.Pairs(), d.Total())
	}
	// Compare both indexes with the rows themselves.
	type pair struct{ i, j int32 }
	want := map[pair][2]float64{}
	for _, r := range rows {
		if n := r.NPos + r.NNeg; n > 0 {
			want[pair{r.TargetID, r.ContextID}] = [2]float64{n, r.NPos - n/2}
		}
	}
	seenT, seenC := 0, 0
	for i := range 4 {
		ctx, n, kappa := d.TargetPairs(i)
		for k, j := range ctx {
			if w := want[pair{int32(i), j}]; w != [2]float64{n[k], kappa[k]} {
				t.Errorf("target %d context %d: n %v kappa %v, want %v", i, j, n[k], kappa[k], w)
			}
			if k > 0 && ctx[k-1] >= j {
				t.Errorf("target %d contexts not ascending: %v", i, ctx)
			}
			seenT++
		}
		tgt, n, kappa := d.ContextPairs(i)
		for k, it := range tgt {
			if w := want[pair{it, int32(i)}]; w != [2]float64{n[k], kappa[k]} {
				t.Errorf("context %d target %d: n %v kappa %v, want %v", i, it, n[k], kappa[k], w)
			}
			if k > 0 && tgt[k-1] >= it {
				t.Errorf("context %d targets not ascending: %v", i, tgt)
			}
			// The position must name the same pair among the by-target
			// arrays: inside target it's range, with context i.
			q := int64(d.contextPairPos(i)[k])
			if q < d.tOff[it] || q >= d.tOff[it+1] || d.tCtx[q] != int32(i) {
				t.Errorf("context %d target %d: position %d is not the pair's", i, it, q)
			}
			seenC++
		}
	}
	if seenT != len(want) || seenC != len(want) {
		t.Errorf("indexes hold %d and %d pairs, want %d", seenT, seenC, len(want))
	}
	if got := d.maxDegree(); got != 3 {
		t.Errorf("maxDegree %d, want 3 (context 2)", got)
	}
}

func TestDataBuilderRejectsBadRows(t *testing.T) {
	cases := []struct {
		name string
		rows []formats.CountRow
		want string
	}{
		{"target out of range", []formats.CountRow{{TargetID: 3, ContextID: 0, NPos: 1}}, "row 0: target_id 3 outside"},
		{"negative context", []formats.CountRow{{TargetID: 0, ContextID: -1, NPos: 1}}, "row 0: context_id -1"},
		{"negative count", []formats.CountRow{{TargetID: 0, ContextID: 0, NPos: 1}, {TargetID: 0, ContextID: 1, NNeg: -2}}, "row 1: n_neg -2"},
		{"unsorted", []formats.CountRow{{TargetID: 1, ContextID: 0, NPos: 1}, {TargetID: 0, ContextID: 1, NPos: 1}}, "row 1: pair (0, 1) follows (1, 0)"},
		{"duplicate", []formats.CountRow{{TargetID: 1, ContextID: 1, NPos: 1}, {TargetID: 1, ContextID: 1, NPos: 1}}, "row 1: pair (1, 1) follows (1, 1)"},
	}
	for _, c := range cases {
		b := NewDataBuilder(3)
		err := b.Add(c.rows)
		if err == nil || !strings.Contains(err.Error(), c.want) || !strings.HasPrefix(err.Error(), "posterior: counts row") {
			t.Errorf("%s: error %v, want one containing %q", c.name, err, c.want)
		}
	}
}
