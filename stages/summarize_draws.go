package stages

import (
	"fmt"

	"github.com/pwe-project/pwe/formats"
	"github.com/pwe-project/pwe/posterior"
)

// drawStream reads draws.parquet, in either layout, one posterior draw at a
// time as Params, over formats.DrawsReader, which checks the rows' order
// and holds one draw in memory. The first draw fixes the tokens (those
// whose draws were saved) and their order. Use it like bufio.Scanner:
// Next, then Chain, Draw and Params, and Err at the end.
type drawStream struct {
	path string
	r    *formats.DrawsReader

	ids    []int32  // token ids of the rows of Params, in file order
	tokens []string // their tokens
	dim    int

	p *posterior.Params
}

// openDraws opens path and reads its first draw.
func openDraws(path string) (*drawStream, error) {
	r, err := formats.OpenDraws(path)
	if err != nil {
		return nil, err
	}
	return &drawStream{
		path: path, r: r, ids: r.TokenIDs(), tokens: r.Tokens(), dim: r.Dim(),
		p: posterior.NewParams(len(r.TokenIDs()), r.Dim()),
	}, nil
}

// Next reads the next draw; it returns false at the end of the file or on
// an error (see Err).
func (s *drawStream) Next() bool {
	if !s.r.Next() {
		return false
	}
	vals := s.r.Values()
	n := len(s.p.Rho)
	for k, x := range vals[:n] {
		s.p.Rho[k] = float64(x)
	}
	for k, x := range vals[n:] {
		s.p.Alpha[k] = float64(x)
	}
	return true
}

// Params returns the current draw; it is overwritten by the next call to
// Next.
func (s *drawStream) Params() *posterior.Params { return s.p }

// Chain and Draw return the current draw's chain and draw number.
func (s *drawStream) Chain() int { return s.r.Chain() }
func (s *drawStream) Draw() int  { return s.r.Draw() }

// Err returns the first error met by Next.
func (s *drawStream) Err() error { return s.r.Err() }

// DrawsPerChain returns the draws per chain when all chains have the same
// number, which the diagnostics need; call it after Next returned false.
func (s *drawStream) DrawsPerChain() (chains, n int, err error) {
	per := s.r.DrawsPerChain()
	for c, k := range per {
		if k != per[0] {
			return 0, 0, fmt.Errorf("%s: chain %d has %d draws, chain 0 has %d; the diagnostics need chains of equal length", s.path, c, k, per[0])
		}
	}
	return len(per), per[0], nil
}

// Close releases the file.
func (s *drawStream) Close() error { return s.r.Close() }

// tokenIndex maps the tokens of the draws to their rows in Params.
func (s *drawStream) tokenIndex() map[string]int {
	m := make(map[string]int, len(s.tokens))
	for i, t := range s.tokens {
		m[t] = i
	}
	return m
}
