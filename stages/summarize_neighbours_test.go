package stages

import (
	"context"
	"math"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/pwe-project/pwe/formats"
)

// TestNeighboursSecondPass summarises the same neighbours keeping every
// token per draw (one pass), the top K only (a second pass over nearly
// every draw) and ten tokens (a second pass over some draws): the files
// must be identical, since kept and rescored draws give the same scores
// and ranks.
func TestNeighboursSecondPass(t *testing.T) {
	fit := fitFixture(t)
	nd := readNaive(t, fit)
	queries := []string{nd.tokens[3], nd.tokens[30], nd.tokens[50]}
	const top = 3
	draws := len(nd.draws)
	run := func(keep int) []formats.NeighbourRow {
		savedBytes, savedMax := neighbourCacheBytes, neighbourKeepMax
		defer func() { neighbourCacheBytes, neighbourKeepMax = savedBytes, savedMax }()
		neighbourCacheBytes, neighbourKeepMax = 8*len(queries)*draws*keep, keep
		out := filepath.Join(t.TempDir(), "out")
		if _, err := Summarize(context.Background(), SummarizeConfig{Fit: fit, Neighbours: queries, Top: top, Output: out}); err != nil {
			t.Fatal(err)
		}
		rows, _, err := formats.ReadAll[formats.NeighbourRow](filepath.Join(out, NeighboursFile), formats.SchemaNeighbours)
		if err != nil {
			t.Fatal(err)
		}
		return rows
	}
	all := run(len(nd.tokens))
	outside := 0
	for _, r := range all {
		if r.RankQ95 > top+1 {
			outside++
		}
	}
	if outside == 0 {
		t.Fatal("no candidate ranks below the top K + 1 in 5% of the draws: the second pass would not be exercised")
	}
	for _, keep := range []int{0, 10} {
		got := run(keep)
		if len(got) != len(all) {
			t.Fatalf("keeping %d: %d rows, want %d", keep, len(got), len(all))
		}
		for i := range got {
			if !sameBits(got[i], all[i]) {
				t.Errorf("keeping %d: row %d is %+v, want %+v", keep, i, got[i], all[i])
			}
		}
	}
}

// sameBits compares rows field by field, floats by their bits (NaN R-hat
// included).
func sameBits(a, b formats.NeighbourRow) bool {
	x, y := reflect.ValueOf(a), reflect.ValueOf(b)
	for i := range x.NumField() {
		f, g := x.Field(i), y.Field(i)
		if f.Kind() == reflect.Float64 {
			if math.Float64bits(f.Float()) != math.Float64bits(g.Float()) {
				return false
			}
		} else if f.Interface() != g.Interface() {
			return false
		}
	}
	return true
}
