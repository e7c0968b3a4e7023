package stages

import (
	"math"
	"strings"
	"testing"

	"github.com/pwe-project/pwe/formats"
)

func TestConvergenceWarning(t *testing.T) {
	row := func(param, tok string, dim int, rhat, ess float64) *formats.SummaryRow {
		r := &formats.SummaryRow{Param: param, Token: tok, Dim: int16(dim)}
		r.Rhat, r.ESSBulk = rhat, ess
		return r
	}
	var ok convergence
	for _, r := range []*formats.SummaryRow{row("rho", "a", 0, 1.001, 900), row("alpha", "b", 1, 1.0099, 400), row("rho", "c", 0, math.NaN(), math.NaN())} {
		ok.add(r)
	}
	if msg := ok.warning(4); msg != "" {
		t.Errorf("converged rows warned: %s", msg)
	}
	// 399 < 4 x 100 breaks the ESS rule alone.
	ok.add(row("rho", "d", 2, 1.002, 399))
	if msg := ok.warning(4); !strings.Contains(msg, `smallest bulk ESS is 399 at rho["d"][2] (want 400`) || strings.Contains(msg, "R-hat above") {
		t.Errorf("low ESS: %s", msg)
	}
	var bad convergence
	for _, r := range []*formats.SummaryRow{row("rho", "a", 0, 1.02, 900), row("alpha", "b", 3, 1.05, 800), row("rho", "c", 1, 1.011, 700), row("rho", "e", 0, 1.0, 1000)} {
		bad.add(r)
	}
	msg := bad.warning(4)
	if !strings.Contains(msg, `3 of 4 raw coordinates (75%) have R-hat above 1.01, the largest 1.05 at alpha["b"][3]`) || strings.Contains(msg, "bulk ESS") {
		t.Errorf("high R-hat: %s", msg)
	}
}
