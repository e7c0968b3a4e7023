package posterior

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"time"
)

// ChainState is one chain between two sweeps: all that Gibbs needs to
// continue the chain exactly as if it had not stopped. The random streams
// are keyed by (seed, chain, sweep, side, token) (see streamSeeds) and
// every generator is re-seeded before it is used, so the sweep count is the
// whole of the generators' position.
type ChainState struct {
	Chain int
	// Sweep is the number of sweeps completed, warmup included; the chain
	// has kept GibbsConfig.KeptDraws(Sweep) draws.
	Sweep  int
	Params *Params
	// Group is the frame-change moves' adapted state; nil without them.
	Group *GroupState
	// Tried and Accepted count the frame-change moves since the chain's
	// previous kept draw (or the end of warmup), for DrawStats.GroupAccept.
	Tried, Accepted int
	// Elapsed is the wall time in seconds since the chain's previous kept
	// draw (or the end of warmup), for DrawStats.Seconds; time spent
	// stopped is not counted.
	Elapsed float64
}

// GroupState is the adapted state of a chain's frame-change moves.
type GroupState struct {
	LogEps float64 // log of the step size eps
	Steps  int     // proposals made since the adaptation last restarted
	// Precond is the upper triangle, row by row, of the D^2 x D^2 factor U
	// of the proposals' precision U^T U; nil while they are isotropic.
	Precond []float64
}

// KeptDraws returns the number of draws a chain has kept after the given
// number of completed sweeps.
func (c GibbsConfig) KeptDraws(sweeps int) int {
	c = c.withDefaults()
	return max(0, sweeps-c.Warmup) / c.Thin
}

// Sweeps returns the number of sweeps each chain makes.
func (c GibbsConfig) Sweeps() int {
	c = c.withDefaults()
	return c.Warmup + c.Draws*c.Thin
}

// state returns the group mover's adapted state.
func (g *groupMover) state() *GroupState {
	st := &GroupState{LogEps: g.logEps, Steps: g.steps}
	if g.precond != nil {
		n := g.dim * g.dim
		st.Precond = make([]float64, 0, n*(n+1)/2)
		for i := range n {
			st.Precond = append(st.Precond, g.precond[i*n+i:(i+1)*n]...)
		}
	}
	return st
}

// restore sets the adapted state. Only the upper triangle of the factor
// is ever read (blas.Upper), so the lower one stays zero.
func (g *groupMover) restore(st *GroupState) error {
	n := g.dim * g.dim
	g.logEps, g.steps, g.precond = st.LogEps, st.Steps, nil
	if st.Precond == nil {
		return nil
	}
	if len(st.Precond) != n*(n+1)/2 {
		return fmt.Errorf("posterior: frame-change factor has %d values, want %d for D = %d", len(st.Precond), n*(n+1)/2, g.dim)
	}
	g.precond = make([]float64, n*n)
	rest := st.Precond
	for i := range n {
		copy(g.precond[i*n+i:(i+1)*n], rest[:n-i])
		rest = rest[n-i:]
	}
	return nil
}

// checkpointMagic opens every encoded ChainState and Params, with the
// encoding's version in its last byte.
var (
	paramsMagic = [8]byte{'p', 'w', 'e', 'P', 'A', 'R', 'M', 1}
	chainMagic  = [8]byte{'p', 'w', 'e', 'C', 'H', 'A', 'N', 1}
)

// ErrBadState reports an encoded ChainState or Params that cannot be read.
var ErrBadState = errors.New("posterior: malformed chain state")

// maxFloats bounds the vectors a decoder allocates, so that a corrupt
// size field fails cleanly instead of exhausting memory.
const maxFloats = 1 << 34

// WriteTo writes p in a little-endian binary encoding that ReadParams
// reads back bit for bit.
func (p *Params) WriteTo(w io.Writer) (int64, error) {
	e := encoder{w: bufio.NewWriterSize(w, 1<<16)}
	e.params(p)
	return e.finish()
}

// ReadParams reads Params written by Params.WriteTo.
func ReadParams(r io.Reader) (*Params, error) {
	d := decoder{r: bufio.NewReaderSize(r, 1<<16)}
	p := d.params()
	return p, d.err
}

// WriteTo writes s in a little-endian binary encoding that ReadChainState
// reads back bit for bit.
func (s *ChainState) WriteTo(w io.Writer) (int64, error) {
	e := encoder{w: bufio.NewWriterSize(w, 1<<16)}
	e.raw(chainMagic[:])
	e.uint(uint64(s.Chain))
	e.uint(uint64(s.Sweep))
	e.uint(uint64(s.Tried))
	e.uint(uint64(s.Accepted))
	e.float(s.Elapsed)
	e.params(s.Params)
	if s.Group == nil {
		e.uint(0)
	} else {
		e.uint(1)
		e.float(s.Group.LogEps)
		e.uint(uint64(s.Group.Steps))
		e.uint(uint64(len(s.Group.Precond)))
		e.floats(s.Group.Precond)
	}
	return e.finish()
}

// ReadChainState reads a ChainState written by ChainState.WriteTo.
func ReadChainState(r io.Reader) (*ChainState, error) {
	d := decoder{r: bufio.NewReaderSize(r, 1<<16)}
	d.magic(chainMagic)
	s := &ChainState{Chain: d.int(), Sweep: d.int(), Tried: d.int(), Accepted: d.int(), Elapsed: d.float()}
	s.Params = d.params()
	switch d.uint() {
	case 0:
	case 1:
		s.Group = &GroupState{LogEps: d.float(), Steps: d.int()}
		if n := d.int(); n > 0 {
			s.Group.Precond = d.floats(n)
		}
	default:
		d.fail("group flag")
	}
	if d.err != nil {
		return nil, d.err
	}
	return s, nil
}

type encoder struct {
	w   *bufio.Writer
	n   int64
	err error
	buf [8]byte
}

func (e *encoder) raw(b []byte) {
	if e.err != nil {
		return
	}
	var k int
	k, e.err = e.w.Write(b)
	e.n += int64(k)
}

func (e *encoder) uint(x uint64) {
	binary.LittleEndian.PutUint64(e.buf[:], x)
	e.raw(e.buf[:])
}

func (e *encoder) float(x float64) { e.uint(math.Float64bits(x)) }

func (e *encoder) floats(xs []float64) {
	for _, x := range xs {
		e.float(x)
	}
}

func (e *encoder) params(p *Params) {
	e.raw(paramsMagic[:])
	e.uint(uint64(p.V))
	e.uint(uint64(p.D))
	e.floats(p.Rho)
	e.floats(p.Alpha)
}

func (e *encoder) finish() (int64, error) {
	if e.err == nil {
		e.err = e.w.Flush()
	}
	return e.n, e.err
}

type decoder struct {
	r   *bufio.Reader
	err error
	buf [8]byte
}

func (d *decoder) fail(what string) {
	if d.err == nil {
		d.err = fmt.Errorf("%w: bad %s", ErrBadState, what)
	}
}

func (d *decoder) uint() uint64 {
	if d.err != nil {
		return 0
	}
	if _, err := io.ReadFull(d.r, d.buf[:]); err != nil {
		if err == io.EOF {
			err = io.ErrUnexpectedEOF
		}
		d.err = fmt.Errorf("%w: %w", ErrBadState, err)
		return 0
	}
	return binary.LittleEndian.Uint64(d.buf[:])
}

// int reads a count, which must fit an int32 comfortably.
func (d *decoder) int() int {
	x := d.uint()
	if x > math.MaxInt32 {
		d.fail("count")
		return 0
	}
	return int(x)
}

func (d *decoder) float() float64 { return math.Float64frombits(d.uint()) }

func (d *decoder) floats(n int) []float64 {
	if d.err != nil {
		return nil
	}
	xs := make([]float64, n)
	for i := range xs {
		xs[i] = d.float()
	}
	return xs
}

func (d *decoder) magic(want [8]byte) {
	if d.err != nil {
		return
	}
	var got [8]byte
	if _, err := io.ReadFull(d.r, got[:]); err != nil || got != want {
		d.fail("header")
	}
}

func (d *decoder) params() *Params {
	d.magic(paramsMagic)
	v, dim := d.int(), d.int()
	if d.err != nil {
		return nil
	}
	if v < 1 || dim < 1 || int64(v)*int64(dim) > maxFloats/2 {
		d.fail(fmt.Sprintf("size %d x %d", v, dim))
		return nil
	}
	p := NewParams(v, dim)
	for i := range p.Rho {
		p.Rho[i] = d.float()
	}
	for i := range p.Alpha {
		p.Alpha[i] = d.float()
	}
	return p
}

// chain is one running chain of Gibbs. Besides p, whatever a sweep changes
// and the next sweep reads lives in progress (and the mover's groupAdapt),
// so that backup keeps all of it with one value copy.
type chain struct {
	c     int
	p     *Params
	mover *groupMover
	// With held set, pending is a kept draw waiting for the next sweep to
	// compute its log-likelihood (see sampler.step); its buffers serve
	// the next draw. A held draw is never part of a checkpoint:
	// sampler.run delivers it before each one.
	held    bool
	pending heldDraw
	ll      []float64 // per-target log-likelihoods of the held draw
	progress
}

// heldDraw is a kept draw whose log-likelihood is still to come.
type heldDraw struct {
	p    *Params // a copy of the state
	draw int
	st   DrawStats // all but LogLik; LogPosterior holds the log prior
}

// progress is where a chain stands, apart from its Params.
type progress struct {
	sweep           int // sweeps completed
	tried, accepted int
	mark            time.Time // wall time of the previous kept draw or the end of warmup
}

// state exports the chain's state; its Params alias the chain's.
func (ch *chain) state() *ChainState {
	st := &ChainState{Chain: ch.c, Sweep: ch.sweep, Params: ch.p, Tried: ch.tried, Accepted: ch.accepted,
		Elapsed: time.Since(ch.mark).Seconds()}
	if ch.mover != nil {
		st.Group = ch.mover.state()
	}
	return st
}

// backup holds a chain's state at the start of a sweep, so that a sweep
// cut short by cancellation can be undone and the checkpoint taken at the
// last completed sweep. The Params are copied deeply, as a sweep updates
// them in place; progress and groupAdapt are copied by value, so a field
// added to either is kept without a change here.
type backup struct {
	p        *Params
	progress progress
	adapt    groupAdapt
}

func (b *backup) save(ch *chain) {
	if b.p == nil {
		b.p = NewParams(ch.p.V, ch.p.D)
	}
	b.p.copyFrom(ch.p)
	b.progress = ch.progress
	if ch.mover != nil {
		b.adapt = ch.mover.groupAdapt
	}
}

func (b *backup) restore(ch *chain) {
	ch.p.copyFrom(b.p)
	ch.progress = b.progress
	if ch.mover != nil {
		ch.mover.groupAdapt = b.adapt
	}
}
