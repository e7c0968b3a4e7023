package counts

import (
	"io"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/pwe-project/pwe/formats"
)

// sliceRows serves rows in reads of at most chunk rows.
type sliceRows struct {
	rows  []formats.CountRow
	chunk int
}

func (s *sliceRows) Read(buf []formats.CountRow) (int, error) {
	if len(s.rows) == 0 {
		return 0, io.EOF
	}
	n := copy(buf[:min(len(buf), s.chunk)], s.rows)
	s.rows = s.rows[n:]
	return n, nil
}

func (s *sliceRows) Path() string { return "old.parquet" }

// randomSorted draws sorted unique pairs over v ids, with positives in
// multiples of 1/scale and whole negatives.
func randomSorted(r *rand.Rand, v int, p float64, scale float64) []formats.CountRow {
	var rows []formats.CountRow
	for t := range v {
		for c := range v {
			if r.Float64() < p {
				rows = append(rows, formats.CountRow{TargetID: int32(t), ContextID: int32(c),
					NPos: float64(r.IntN(7)) / scale, NNeg: float64(r.IntN(3))})
			}
		}
	}
	return rows
}

func appendAll(t *testing.T, cfg Config, v int, old, add []formats.CountRow, chunk int) ([]formats.CountRow, AppendStats, error) {
	t.Helper()
	var out []formats.CountRow
	a, err := NewAppender(cfg, v, &sliceRows{old, chunk}, func(rows []formats.CountRow) error {
		out = append(out, rows...)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	for len(add) > 0 {
		n := min(len(add), chunk)
		if err := a.Add(add[:n]); err != nil {
			return out, AppendStats{}, err
		}
		add = add[n:]
	}
	st, err := a.Finish()
	return out, st, err
}

// TestAppender compares the merge with a naive one over a dense table, for
// sparse and dense inputs, empty sides and reads of every size.
func TestAppender(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 1))
	const v = 40
	cfg := Config{Window: 5, Weighting: Harmonic}
	w, _ := windowScale(5, Harmonic)
	scale := float64(w[0])
	for _, c := range []struct{ pOld, pNew float64 }{{0.1, 0.1}, {0.9, 0.05}, {0, 0.3}, {0.3, 0}, {0, 0}} {
		for _, chunk := range []int{1, 7, 5000} {
			old, add := randomSorted(r, v, c.pOld, scale), randomSorted(r, v, c.pNew, scale)
			var k [v][v][2]int
			present := [v][v]bool{}
			for _, rows := range [][]formats.CountRow{old, add} {
				for _, x := range rows {
					k[x.TargetID][x.ContextID][0] += int(x.NPos * scale)
					k[x.TargetID][x.ContextID][1] += int(x.NNeg)
					present[x.TargetID][x.ContextID] = true
				}
			}
			var want []formats.CountRow
			var pairs int64
			for i := range v {
				for j := range v {
					if present[i][j] {
						want = append(want, formats.CountRow{TargetID: int32(i), ContextID: int32(j),
							NPos: float64(k[i][j][0]) / scale, NNeg: float64(k[i][j][1])})
						if k[i][j][0] > 0 {
							pairs++
						}
					}
				}
			}
			got, st, err := appendAll(t, cfg, v, old, add, chunk)
			if err != nil {
				t.Fatal(err)
			}
			if len(got) != len(want) || st.Rows != int64(len(want)) || st.OldRows != int64(len(old)) || st.UniquePairs != pairs {
				t.Fatalf("p %v, chunk %d: %d rows, stats %+v; want %d rows, %d pairs", c, chunk, len(got), st, len(want), pairs)
			}
			for i := range want {
				if got[i] != want[i] {
					t.Fatalf("p %v, chunk %d: row %d is %+v, want %+v", c, chunk, i, got[i], want[i])
				}
			}
		}
	}
}

func TestAppenderRejects(t *testing.T) {
	cfg := Config{Window: 2, Weighting: Linear} // scale 2
	ok := []formats.CountRow{{TargetID: 0, ContextID: 1, NPos: 1, NNeg: 0}, {TargetID: 1, ContextID: 0, NPos: 0.5, NNeg: 2}}
	for _, c := range []struct {
		old, add []formats.CountRow
		want     string
	}{
		{[]formats.CountRow{{TargetID: 0, ContextID: 1, NPos: 1, NNeg: 0}, {TargetID: 0, ContextID: 1, NPos: 1, NNeg: 0}}, ok, "old.parquet: row 1: pair (0, 1) follows (0, 1)"},
		{[]formats.CountRow{{TargetID: 0, ContextID: 9, NPos: 1, NNeg: 0}}, ok, "old.parquet: row 0: context_id 9 outside the vocabulary"},
		{ok, []formats.CountRow{{TargetID: 1, ContextID: 0, NPos: 1, NNeg: 0}, {TargetID: 0, ContextID: 1, NPos: 1, NNeg: 0}}, "counts: new row 1: pair (0, 1) follows (1, 0)"},
		{[]formats.CountRow{{TargetID: 0, ContextID: 1, NPos: 0.3, NNeg: 0}}, ok, "old.parquet: row 0: counts: n_pos is not a multiple of the window's weight scale: 0.3 is not k/2"},
	} {
		_, _, err := appendAll(t, cfg, 3, c.old, c.add, 100)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("error %v, want %q", err, c.want)
		}
	}
}
