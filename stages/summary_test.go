package stages

import (
	"strings"
	"testing"
)

// TestFitSummary: the fit's line gives the MAP and, for draws, their
// largest R-hat and smallest bulk ESS, or says they are undefined.
func TestFitSummary(t *testing.T) {
	for _, c := range []struct {
		st   FitStats
		want string
	}{
		{FitStats{V: 60, Pairs: 3600, MAPLogPost: -1234.5}, "V=60, 3600 unique pairs; MAP log posterior -1234.5"},
		{FitStats{V: 60, Pairs: 3600, MAPLogPost: -1234.5, Draws: 100, MaxRhat: 1.00712, MinESSBulk: 412.4},
			"; 100 draws per chain, max R-hat 1.0071, min bulk ESS 412"},
		{FitStats{Draws: 1}, "1 draws per chain, R-hat undefined, bulk ESS undefined"},
		{FitStats{Draws: 50, Laplace: &LaplaceStats{}}, "; Laplace, 50 draws per chain"},
	} {
		if got := c.st.Summary(); !strings.Contains(got, c.want) {
			t.Errorf("%+v: %q, want %q in it", c.st, got, c.want)
		}
	}
}
