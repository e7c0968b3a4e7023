package stages

import "fmt"

// Summarizer is implemented by the stages' statistics: one line of the
// figures a person reads after the stage, without the output path. pwe's
// commands and pwe run print it; JSON logs carry the statistics instead.
type Summarizer interface {
	Summary() string
}

// Summary implements Summarizer.
func (s TokenizeStats) Summary() string {
	spills := ""
	if s.Spills > 0 {
		spills = fmt.Sprintf(" (%d spills)", s.Spills)
	}
	return fmt.Sprintf("%d documents, %d tokens (%.1f M/s), %d distinct%s; vocabulary %d tokens covering %.1f%%",
		s.Documents, s.Tokens, rate(s.Tokens, s.Seconds), s.DistinctTokens, spills, s.VocabSize, 100*s.VocabCoverage)
}

// Summary implements Summarizer.
func (s CountStats) Summary() string {
	return fmt.Sprintf("%d documents, %d tokens (%d out of vocabulary, %d subsampled), %d positive pairs, %d unique pairs, %d spills, %.2fs (%.1f M tokens/s)",
		s.Documents, s.Tokens, s.OOVTokens, s.Subsampled, s.PositivePairs, s.UniquePairs, s.Spills, s.Seconds, rate(s.Tokens, s.Seconds))
}

// rate is n per second in millions, 0 for an instant stage.
func rate(n int64, seconds float64) float64 {
	if seconds <= 0 {
		return 0
	}
	return float64(n) / seconds / 1e6
}

// Summary implements Summarizer: the MAP and, for draws, their largest
// R-hat and smallest bulk ESS, which pwe run prints after its fit stage as
// pwe fit prints them.
func (s FitStats) Summary() string {
	line := fmt.Sprintf("V=%d, %d unique pairs; MAP log posterior %.8g", s.V, s.Pairs, s.MAPLogPost)
	switch {
	case s.Laplace != nil:
		return line + fmt.Sprintf("; Laplace, %d draws per chain", s.Draws)
	case s.Draws > 0:
		return line + fmt.Sprintf("; %d draws per chain, %s", s.Draws, s.Convergence())
	}
	return line
}

// Convergence gives the largest R-hat and the smallest bulk ESS, or says
// that too few draws leave them undefined (recorded as 0).
func (s FitStats) Convergence() string {
	rhat, ess := "R-hat undefined", "bulk ESS undefined"
	if s.MaxRhat > 0 {
		rhat = fmt.Sprintf("max R-hat %.4f", s.MaxRhat)
	}
	if s.MinESSBulk > 0 {
		ess = fmt.Sprintf("min bulk ESS %.0f", s.MinESSBulk)
	}
	return rhat + ", " + ess
}
