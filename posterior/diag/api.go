package diag

import "math"

// The functions below compute one statistic of chains[c][d] each, with
// the definitions of the package documentation. They allocate their
// scratch space on every call; use a Summarizer to compute many statistics
// or many quantities.

// Rhat returns the rank-normalised split R-hat: the larger of the R-hats of
// the rank-normalised split chains and of their folded counterpart.
func Rhat(chains [][]float64) float64 {
	var s Summarizer
	if !s.loadSorted(chains) {
		return math.NaN()
	}
	rh, _ := s.rankDiagnostics(false)
	return rh
}

// RhatBasic returns the R-hat of the split chains, without rank
// normalisation.
func RhatBasic(chains [][]float64) float64 {
	var s Summarizer
	s.load(chains)
	if len(s.flat) == 0 || !allFinite(s.flat) {
		return math.NaN()
	}
	_, rh := s.basicDiagnostics(true)
	return rh
}

// ESSBulk returns the effective sample size of the rank-normalised split
// chains.
func ESSBulk(chains [][]float64) float64 {
	var s Summarizer
	if !s.loadSorted(chains) {
		return math.NaN()
	}
	_, e := s.rankDiagnostics(true)
	return e
}

// ESSTail returns the smaller of the effective sample sizes of the
// indicators x ≤ q05 and x ≤ q95.
func ESSTail(chains [][]float64) float64 {
	var s Summarizer
	if !s.loadSorted(chains) {
		return math.NaN()
	}
	return s.essTail()
}

// ESSBasic returns the effective sample size of the split chains; it is
// posterior's ess_mean as well.
func ESSBasic(chains [][]float64) float64 {
	var s Summarizer
	s.load(chains)
	if len(s.flat) == 0 || !allFinite(s.flat) {
		return math.NaN()
	}
	e, _ := s.basicDiagnostics(false)
	return e
}

// MCSEMean returns the Monte Carlo standard error of the mean,
// sd/sqrt(ESSBasic).
func MCSEMean(chains [][]float64) float64 {
	var s Summarizer
	s.load(chains)
	if len(s.flat) == 0 || !allFinite(s.flat) {
		return math.NaN()
	}
	_, m2, _ := moments(s.flat)
	n := float64(len(s.flat))
	e, _ := s.basicDiagnostics(false)
	return math.Sqrt(m2*n/(n-1)) / math.Sqrt(e)
}

// MCSESD returns the Monte Carlo standard error of the standard deviation.
func MCSESD(chains [][]float64) float64 {
	var s Summarizer
	s.load(chains)
	if len(s.flat) == 0 || !allFinite(s.flat) {
		return math.NaN()
	}
	return s.mcseSD(moments(s.flat))
}

// loadSorted loads chains and sorts and folds the draws. It reports false,
// leaving the rest undone, when there are no draws or a non-finite one.
func (s *Summarizer) loadSorted(chains [][]float64) bool {
	s.load(chains)
	if len(s.flat) == 0 || !allFinite(s.flat) {
		return false
	}
	s.sortDraws()
	s.foldDraws(median(s.sorted))
	return true
}
