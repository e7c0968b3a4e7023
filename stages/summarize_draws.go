package stages

import (
	"errors"
	"fmt"
	"io"

	"github.com/pwe-project/pwe/formats"
	"github.com/pwe-project/pwe/posterior"
)

// drawStream reads draws.parquet, in either layout, one posterior draw at a
// time: the file's rows are ordered (chain, draw, param, token[, dim]), so
// a draw's vectors arrive together and only one draw is held in memory.
// The first draw fixes the tokens (those whose draws were saved) and their
// order; every later draw must repeat them. Use it like bufio.Scanner:
// Next, then Chain, Draw and Params, and Err at the end.
type drawStream struct {
	path string
	vec  *formats.Reader[formats.DrawRow]
	long *formats.Reader[formats.DrawLongRow]
	vbuf []formats.DrawRow
	lbuf []formats.DrawLongRow
	n, i int // rows in the buffer, next row to use
	eof  bool

	ids    []int32  // token ids of the rows of Params, in file order
	tokens []string // their tokens
	dim    int

	p           *posterior.Params
	chain, draw int
	first       *posterior.Params // the first draw, read at open
	err         error
	chains      []int // draws per chain, counted so far
}

// drawCell is one row of either layout: the values of vector (param, id)
// from coordinate dim on.
type drawCell struct {
	chain int
	draw  int
	param string
	id    int32
	token string
	dim   int
	vals  []float32
	row   int64
}

// openDraws opens path and reads its first draw.
func openDraws(path string) (*drawStream, error) {
	s := &drawStream{path: path}
	var err error
	if s.vec, err = formats.Open[formats.DrawRow](path, formats.SchemaDraws); err != nil {
		if !errors.Is(err, formats.ErrNotPwe) {
			return nil, err
		}
		var lerr error
		if s.long, lerr = formats.Open[formats.DrawLongRow](path, formats.SchemaDrawsLong); lerr != nil {
			return nil, err
		}
		s.lbuf = make([]formats.DrawLongRow, 1<<14)
	} else {
		s.vbuf = make([]formats.DrawRow, 1<<10)
	}
	if err := s.readFirst(); err != nil {
		s.Close()
		return nil, err
	}
	return s, nil
}

// cell returns the next row, or ok = false at the end of the file.
func (s *drawStream) cell() (c drawCell, ok bool, err error) {
	if s.i == s.n {
		if s.eof {
			return c, false, nil
		}
		if s.vec != nil {
			s.n, err = s.vec.Read(s.vbuf)
		} else {
			s.n, err = s.long.Read(s.lbuf)
		}
		s.i = 0
		if err == io.EOF {
			s.eof = true
			return c, false, nil
		}
		if err != nil {
			return c, false, err
		}
	}
	var row int64
	if s.vec != nil {
		row = s.vec.Row() - int64(s.n-s.i)
		r := &s.vbuf[s.i]
		c = drawCell{chain: int(r.Chain), draw: int(r.Draw), param: r.Param, id: r.TokenID, token: r.Token, vals: r.Vector, row: row}
	} else {
		row = s.long.Row() - int64(s.n-s.i)
		r := &s.lbuf[s.i]
		c = drawCell{chain: int(r.Chain), draw: int(r.Draw), param: r.Param, id: r.TokenID, token: r.Token, dim: int(r.Dim), vals: []float32{r.Value}, row: row}
	}
	s.i++
	return c, true, nil
}

func (s *drawStream) unread() { s.i-- }

// readFirst reads the first draw and fixes the tokens and the dimension.
func (s *drawStream) readFirst() error {
	type slot struct {
		param string
		id    int32
		token string
		vals  []float64
	}
	var slots []slot
	for {
		c, ok, err := s.cell()
		if err != nil {
			return err
		}
		if !ok {
			break
		}
		if c.chain != 0 || c.draw != 0 {
			if len(slots) == 0 {
				return fmt.Errorf("%s: row 0: first draw is chain %d draw %d, want chain 0 draw 0", s.path, c.chain, c.draw)
			}
			s.unread()
			break
		}
		if c.param != formats.ParamRho && c.param != formats.ParamAlpha {
			return fmt.Errorf("%s: row %d: param %q, want rho or alpha", s.path, c.row, c.param)
		}
		if n := len(slots); n == 0 || slots[n-1].param != c.param || slots[n-1].id != c.id {
			slots = append(slots, slot{param: c.param, id: c.id, token: c.token})
		}
		sl := &slots[len(slots)-1]
		if c.dim != len(sl.vals) {
			return fmt.Errorf("%s: row %d: coordinate %d of %s of token %d, want %d", s.path, c.row, c.dim, c.param, c.id, len(sl.vals))
		}
		for _, x := range c.vals {
			sl.vals = append(sl.vals, float64(x))
		}
	}
	if len(slots) == 0 {
		return fmt.Errorf("%s: no draws", s.path)
	}
	v := len(slots) / 2
	s.dim = len(slots[0].vals)
	for k, sl := range slots {
		want := formats.ParamRho
		if k >= v {
			want = formats.ParamAlpha
		}
		switch {
		case len(slots)%2 != 0 || sl.param != want || k >= v && sl.id != slots[k-v].id:
			return fmt.Errorf("%s: first draw: want the target vectors of some tokens, then the context vectors of the same tokens in the same order", s.path)
		case len(sl.vals) != s.dim || s.dim == 0:
			return fmt.Errorf("%s: first draw: vectors of lengths %d and %d", s.path, s.dim, len(sl.vals))
		}
	}
	s.first = posterior.NewParams(v, s.dim)
	for k, sl := range slots[:v] {
		s.ids, s.tokens = append(s.ids, sl.id), append(s.tokens, sl.token)
		copy(s.first.Target(k), sl.vals)
		copy(s.first.Context(k), slots[v+k].vals)
	}
	s.chains = []int{0}
	return nil
}

// Next reads the next draw; it returns false at the end of the file or on
// an error (see Err).
func (s *drawStream) Next() bool {
	if s.err != nil {
		return false
	}
	if s.first != nil {
		s.p, s.first = s.first, nil
		s.chain, s.draw = 0, 0
		s.chains[0] = 1
		return true
	}
	v, d := len(s.ids), s.dim
	total := 2 * v * d
	pos := 0
	for pos < total {
		c, ok, err := s.cell()
		if err != nil {
			s.err = err
			return false
		}
		if !ok {
			if pos > 0 {
				s.err = fmt.Errorf("%s: the last draw (chain %d draw %d) is incomplete", s.path, s.chain, s.draw)
			}
			return false
		}
		if pos == 0 {
			if err := s.startDraw(c); err != nil {
				s.err = err
				return false
			}
		}
		k := pos / d
		param, i := formats.ParamRho, k
		if k >= v {
			param, i = formats.ParamAlpha, k-v
		}
		switch {
		case c.chain != s.chain || c.draw != s.draw:
			s.err = fmt.Errorf("%s: row %d: chain %d draw %d starts before chain %d draw %d is complete", s.path, c.row, c.chain, c.draw, s.chain, s.draw)
		case c.param != param || c.id != s.ids[i] || c.dim != pos%d || len(c.vals) > d-c.dim:
			s.err = fmt.Errorf("%s: row %d: %s of token %d (coordinate %d), want %s of token %d (coordinate %d) as in the first draw",
				s.path, c.row, c.param, c.id, c.dim, param, s.ids[i], pos%d)
		}
		if s.err != nil {
			return false
		}
		dst := s.p.Rho
		off := pos
		if k >= v {
			dst, off = s.p.Alpha, pos-v*d
		}
		for n, x := range c.vals {
			dst[off+n] = float64(x)
		}
		pos += len(c.vals)
	}
	return true
}

// startDraw checks that c, the first row of a draw, continues the
// sequence: the next draw of the chain, or draw 0 of the next chain.
func (s *drawStream) startDraw(c drawCell) error {
	switch {
	case c.chain == s.chain && c.draw == s.draw+1:
	case c.chain == s.chain+1 && c.draw == 0:
		s.chains = append(s.chains, 0)
	default:
		return fmt.Errorf("%s: row %d: chain %d draw %d follows chain %d draw %d; want draws in order", s.path, c.row, c.chain, c.draw, s.chain, s.draw)
	}
	s.chain, s.draw = c.chain, c.draw
	s.chains[c.chain]++
	return nil
}

// Params returns the current draw; it is overwritten by the next call to
// Next.
func (s *drawStream) Params() *posterior.Params { return s.p }

// Chain and Draw return the current draw's chain and draw number.
func (s *drawStream) Chain() int { return s.chain }
func (s *drawStream) Draw() int  { return s.draw }

// Err returns the first error met by Next.
func (s *drawStream) Err() error { return s.err }

// DrawsPerChain returns the draws per chain when all chains have the same
// number, which the diagnostics need; call it after Next returned false.
func (s *drawStream) DrawsPerChain() (chains, n int, err error) {
	for c, k := range s.chains {
		if k != s.chains[0] {
			return 0, 0, fmt.Errorf("%s: chain %d has %d draws, chain 0 has %d; the diagnostics need chains of equal length", s.path, c, k, s.chains[0])
		}
	}
	return len(s.chains), s.chains[0], nil
}

// Close releases the file.
func (s *drawStream) Close() error {
	if s.vec != nil {
		return s.vec.Close()
	}
	return s.long.Close()
}

// tokenIndex maps the tokens of the draws to their rows in Params.
func (s *drawStream) tokenIndex() map[string]int {
	m := make(map[string]int, len(s.tokens))
	for i, t := range s.tokens {
		m[t] = i
	}
	return m
}
