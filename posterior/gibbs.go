package posterior

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"runtime"
	"slices"
	"sync"
	"time"

	"golang.org/x/sync/errgroup"
)

// InitMode selects where chains start.
type InitMode int

const (
	// InitMAP starts every chain at the MAP values plus seeded per-chain
	// Normal(0, Jitter^2) jitter on every free coordinate, so that chains
	// start apart and R-hat can see a failure to mix.
	InitMAP InitMode = iota
	// InitPrior draws every free vector from the prior.
	InitPrior
	// InitGiven starts chain c exactly at GibbsConfig.Starts[c], except
	// for the anchors' context vectors, which are the start's.
	InitGiven
)

// ParseInitMode reads "map" or "prior".
func ParseInitMode(s string) (InitMode, error) {
	switch s {
	case "map":
		return InitMAP, nil
	case "prior":
		return InitPrior, nil
	}
	return 0, fmt.Errorf("posterior: init %q: want map or prior", s)
}

// String returns the form ParseInitMode reads ("given" for InitGiven,
// which only library callers can choose).
func (m InitMode) String() string {
	switch m {
	case InitPrior:
		return "prior"
	case InitGiven:
		return "given"
	}
	return "map"
}

// NoWarmup as GibbsConfig.Warmup keeps draws from the first sweep on (a
// zero Warmup means the default).
const NoWarmup = -1

// GibbsConfig configures Gibbs. Zero fields take the defaults given.
type GibbsConfig struct {
	Dim     int // dimension D; default the start's, required without a start
	Chains  int // independent chains; default 4
	Warmup  int // sweeps discarded per chain; default 500, NoWarmup for none
	Draws   int // draws kept per chain; default DefaultDraws
	Thin    int // sweeps per kept draw; default 1
	Inner   int // (PG, Gaussian) steps per token and sweep, the alpha side's first on the rho side's omegas; default 1
	Init    InitMode
	Jitter  float64 // sd of the InitMAP jitter; default 0.1
	PriorSD float64 // prior standard deviation s; default 1
	Threads int     // goroutines shared by all chains; default GOMAXPROCS
	Seed    uint64
	Anchors AnchorRule
	// GroupMoves is the number of Metropolis frame-change moves per sweep,
	// made after the Gibbs updates: every rho_i becomes rho_i A and every
	// free alpha_j becomes alpha_j A^-T with A = exp(eps M), M a D x D
	// matrix of standard normals, accepted with the ratio of the
	// Pólya-Gamma augmented posterior given the sweep's draws of omega for
	// the anchors' pairs, times the Jacobian |det A|^(anchors), so that a
	// proposal costs O(anchors D^2 + D^3) whatever the number of pairs.
	// They move the chain along the directions the Gibbs updates explore
	// slowly. Halfway through warmup (with at least 2 warmup sweeps, and
	// D <= 32) M's covariance is set to the inverse curvature of the log
	// posterior along the moves at the chain's state; eps is adapted toward
	// 30% acceptance during warmup only. Default DefaultGroupMoves;
	// NoGroupMoves for none.
	GroupMoves int
	// Overrelax is the coefficient k of the overrelaxed Gaussian step of
	// every conditional draw (Adler 1981): given the Pólya-Gamma draws,
	// x becomes mu + k (x - mu) + sqrt(1 - k^2) P^-1/2 z instead of
	// mu + P^-1/2 z; both leave the conditional N(mu, P^-1) invariant. With
	// k near -1 each token's vector jumps to the far side of its
	// conditional mean, which turns the slow random walk of the blocked
	// sampler along directions where rho and alpha are strongly coupled into
	// persistent motion. Default DefaultOverrelax(Dim); NoOverrelax for
	// plain Gibbs draws; otherwise it must lie in (-1, 1).
	Overrelax float64
	// Profile times the phases of the conditional draws (GibbsResult.Phases)
	// at the cost of four clock reads per token and side.
	Profile bool
	// OnSweep, if not nil, is called after every sweep of every chain, from
	// the chain's goroutine (so concurrently for different chains), with
	// the sweep counted from 0 over warmup and draws.
	OnSweep func(chain, sweep int)

	// Starts holds the chains' starting points for InitGiven: chain c
	// starts at Starts[c] (with the start's anchor context vectors).
	Starts []*Params
	// Resume continues chains from saved states: chain c, if Resume[c] is
	// not nil, goes on from Resume[c] (which Gibbs does not modify), and the
	// draws are bit for bit those of an uninterrupted run with the same
	// configuration. A nil or short Resume starts the other chains afresh.
	Resume []*ChainState
	// Checkpoint, if not nil, receives each chain's state after every
	// CheckpointEvery-th sweep (counted from 0 over warmup and draws), after
	// the first sweep to end CheckpointInterval or more after the chain's
	// previous checkpoint, after the chain's last sweep, and, when ctx is
	// cancelled, at the chain's last completed sweep (a cut-short sweep is
	// undone, at the cost of one copy of the state per sweep). The
	// state's Params are the chain's and valid only during the call. Calls
	// are serialised with each other and with the Sink's, so the sink's
	// draws up to the state's can be made durable in the call. An error
	// stops the run. Checkpoints read the state only: they never change
	// the draws.
	Checkpoint         func(*ChainState) error
	CheckpointEvery    int
	CheckpointInterval time.Duration
}

func (c GibbsConfig) withDefaults() GibbsConfig {
	if c.Chains == 0 {
		c.Chains = 4
	}
	switch c.Warmup {
	case 0:
		c.Warmup = 500
	case NoWarmup:
		c.Warmup = 0
	}
	if c.Draws == 0 {
		c.Draws = DefaultDraws
	}
	if c.Thin == 0 {
		c.Thin = 1
	}
	if c.Inner == 0 {
		c.Inner = 1
	}
	if c.Jitter == 0 {
		c.Jitter = 0.1
	}
	if c.PriorSD == 0 {
		c.PriorSD = 1
	}
	if c.Threads == 0 {
		c.Threads = runtime.GOMAXPROCS(0)
	}
	switch c.GroupMoves {
	case 0:
		c.GroupMoves = DefaultGroupMoves
	case NoGroupMoves:
		c.GroupMoves = 0
	}
	switch c.Overrelax {
	case 0:
		c.Overrelax = DefaultOverrelax(c.Dim)
	case NoOverrelax:
		c.Overrelax = 0
	}
	return c
}

// DefaultOverrelax is GibbsConfig.Overrelax when it is zero:
// -(1 - 0.2/D), at most 0.98 in size (-0.9 at D = 2, -0.96 at D = 5, -0.98
// from D = 10 on). The coupling of the target and context blocks that
// overrelaxation crosses grows with D, while the price of k near -1, the
// size of each vector's deviation from its conditional mean persisting
// from sweep to sweep (autocorrelation k^2), does not; BENCHMARKS.md has
// the measurements behind the rule.
func DefaultOverrelax(dim int) float64 {
	return -min(maxDefaultOverrelax, 1-0.2/float64(max(dim, 1)))
}

// DefaultDraws is GibbsConfig.Draws when it is zero, three times Stan's:
// the largest rank-normalised R-hat of a few thousand coordinates exceeds
// 1.01 by Monte Carlo error alone unless every coordinate's integrated
// autocorrelation time is below about 2.5 with 1000 draws per chain, and
// below about 5 with 2000, while the slowest coordinates at V = 200, D = 10
// (Zipf pairs) have 5 to 13; with 2000 draws one run in about twenty
// still ended between 1.01 and 1.013 there, with 3000 none of sixteen
// above 1.006. The 500 warmup sweeps are then a smaller share of the work,
// so the effective samples per second rise too (BENCHMARKS.md, issue 9).
const DefaultDraws = 3000

// maxDefaultOverrelax bounds the size of DefaultOverrelax.
const maxDefaultOverrelax = 0.98

// NoOverrelax as GibbsConfig.Overrelax makes plain Gibbs draws. A
// coefficient of 1 would never move, so it serves as the off switch.
const NoOverrelax = 1.0

// Validate reports the first invalid field, after defaults are applied.
func (c GibbsConfig) Validate() error {
	c = c.withDefaults()
	switch {
	case c.Dim < 0:
		return fmt.Errorf("posterior: dimension %d is negative", c.Dim)
	case c.Chains < 1 || c.Chains > 1<<15:
		return fmt.Errorf("posterior: chains %d outside 1..32768", c.Chains)
	case c.Warmup < 0:
		return fmt.Errorf("posterior: warmup %d is negative", c.Warmup)
	case c.Draws < 0 || c.Thin < 1 || c.Inner < 1:
		return fmt.Errorf("posterior: draws %d, thin %d, inner %d: need draws >= 0 and thin, inner >= 1", c.Draws, c.Thin, c.Inner)
	case !sweepsFit(c.Warmup, c.Draws, c.Thin):
		return fmt.Errorf("posterior: warmup %d + draws %d x thin %d sweeps per chain are too many (at most 2^32 - 1)", c.Warmup, c.Draws, c.Thin)
	case c.Init != InitMAP && c.Init != InitPrior && c.Init != InitGiven:
		return fmt.Errorf("posterior: unknown init mode %d", c.Init)
	case !(c.Jitter >= 0) || math.IsInf(c.Jitter, 0):
		return fmt.Errorf("posterior: jitter %v must be finite and non-negative", c.Jitter)
	case !(c.PriorSD > 0) || math.IsInf(c.PriorSD, 0):
		return fmt.Errorf("posterior: prior sd %v must be positive and finite", c.PriorSD)
	case c.Threads < 0:
		return fmt.Errorf("posterior: threads %d is negative", c.Threads)
	case !(c.Overrelax > -1 && c.Overrelax < 1):
		return fmt.Errorf("posterior: overrelaxation %v outside (-1, 1) (NoOverrelax is %v)", c.Overrelax, NoOverrelax)
	case c.GroupMoves < 0:
		return fmt.Errorf("posterior: group moves %d is negative (NoGroupMoves is %d)", c.GroupMoves, NoGroupMoves)
	case c.Init == InitGiven && len(c.Starts) != c.Chains:
		return fmt.Errorf("posterior: init given with %d starts for %d chains", len(c.Starts), c.Chains)
	case len(c.Resume) > c.Chains:
		return fmt.Errorf("posterior: %d chain states to resume for %d chains", len(c.Resume), c.Chains)
	case c.CheckpointEvery < 0 || c.CheckpointInterval < 0:
		return fmt.Errorf("posterior: checkpoint every %d sweeps or %v is negative", c.CheckpointEvery, c.CheckpointInterval)
	}
	return nil
}

// DrawStats accompanies every kept draw.
type DrawStats struct {
	LogPosterior float64 // LogPosterior at the draw (anchors included)
	LogLik       float64 // LogLik at the draw
	Seconds      float64 // wall-clock seconds since the chain's previous kept draw (for the first: since the end of warmup)
	// GroupAccept is the fraction of frame-change moves accepted in the
	// sweeps since the chain's previous kept draw (for the first: since
	// the end of warmup); NaN without group moves.
	GroupAccept float64
}

// Sink receives the kept draws. Gibbs calls Draw from the chains'
// goroutines but never concurrently: calls are serialised by the engine,
// so a Sink needs no locking. Draws of one chain arrive in order (draw
// 0, 1, ...); draws of different chains interleave in an order that
// varies from run to run. p is the chain's live state: it is valid only
// during the call and must not be modified or retained. An error from Draw
// stops the run and is returned by Gibbs.
type Sink interface {
	Draw(chain, draw int, p *Params, stats DrawStats) error
}

// SinkFunc adapts a function to Sink.
type SinkFunc func(chain, draw int, p *Params, stats DrawStats) error

// Draw calls f.
func (f SinkFunc) Draw(chain, draw int, p *Params, stats DrawStats) error {
	return f(chain, draw, p, stats)
}

// GibbsResult reports a finished run.
type GibbsResult struct {
	Anchors        []int // anchor token ids, ascending (nil without anchors)
	SweepsPerChain int
	Seconds        float64
	Phases         PhaseTimes // summed over threads, when Profile is set
	// GroupStep is each chain's frame-change step size eps as adapted in
	// warmup (nil without group moves).
	GroupStep []float64
}

// Gibbs runs cfg.Chains chains of the blocked Pólya-Gamma Gibbs sampler on
// the posterior identified by cfg.Anchors and passes every kept draw to
// sink. start holds the MAP values: the anchors' context vectors are fixed
// at start's, and InitMAP starts the chains there; start may be nil only
// with AnchorNone and InitPrior or InitGiven. The draws are the same for
// every Threads, and a run resumed from checkpointed states gives the
// draws the uninterrupted run would have given.
// Cancelling ctx stops the run within about one token's update per thread.
func Gibbs(ctx context.Context, d *Data, start *Params, cfg GibbsConfig, sink Sink) (GibbsResult, error) {
	if err := cfg.Validate(); err != nil {
		return GibbsResult{}, err
	}
	if start != nil && cfg.Dim == 0 {
		cfg.Dim = start.D // before the defaults, some of which depend on it
	}
	cfg = cfg.withDefaults()
	if d.Pairs() == 0 {
		return GibbsResult{}, ErrNoPairs
	}
	if start != nil {
		if cfg.Dim != 0 && cfg.Dim != start.D {
			return GibbsResult{}, fmt.Errorf("posterior: dimension %d differs from the start's %d", cfg.Dim, start.D)
		}
		if start.V != d.v {
			return GibbsResult{}, fmt.Errorf("posterior: start has %d tokens, the counts %d", start.V, d.v)
		}
		cfg.Dim = start.D
	} else if cfg.Anchors.Kind != AnchorNone || cfg.Init == InitMAP {
		return GibbsResult{}, fmt.Errorf("%w: anchors %q and init %q need the MAP as start", ErrAnchorsRequired, cfg.Anchors, cfg.Init)
	} else if cfg.Dim < 1 {
		return GibbsResult{}, fmt.Errorf("posterior: dimension %d must be positive", cfg.Dim)
	}
	for c, p := range cfg.Starts {
		if p == nil || p.V != d.v || p.D != cfg.Dim {
			return GibbsResult{}, fmt.Errorf("posterior: start of chain %d does not have %d tokens in %d dimensions", c, d.v, cfg.Dim)
		}
	}
	var anchors []int
	if cfg.Anchors.Kind != AnchorNone {
		var err error
		if anchors, err = ChooseAnchors(d, start, cfg.Anchors); err != nil {
			return GibbsResult{}, err
		}
	}

	began := time.Now()
	g, gctx := errgroup.WithContext(ctx)
	s := newSampler(gctx, d, cfg, anchors)
	var (
		sinkMu   sync.Mutex
		lateErrs []error // checkpoints that failed after cancellation
	)
	deliver := func(c, draw int, p *Params, st DrawStats) error {
		sinkMu.Lock()
		defer sinkMu.Unlock()
		if err := sink.Draw(c, draw, p, st); err != nil {
			return fmt.Errorf("posterior: chain %d draw %d: %w", c, draw, err)
		}
		return nil
	}
	var checkpoint func(*ChainState) error
	if cfg.Checkpoint != nil {
		checkpoint = func(st *ChainState) error {
			sinkMu.Lock()
			defer sinkMu.Unlock()
			if err := cfg.Checkpoint(st); err != nil {
				return fmt.Errorf("posterior: checkpoint of chain %d at sweep %d: %w", st.Chain, st.Sweep, err)
			}
			return nil
		}
	}
	var steps []float64
	if cfg.GroupMoves > 0 {
		steps = make([]float64, cfg.Chains)
	}
	for c := range cfg.Chains {
		g.Go(func() error {
			var resume *ChainState
			if c < len(cfg.Resume) {
				resume = cfg.Resume[c]
			}
			ch, err := s.newChain(c, start, resume)
			if err != nil {
				return err
			}
			err = s.run(ch, deliver, checkpoint)
			if err != nil && checkpoint != nil && ctx.Err() != nil {
				if cerr := checkpoint(ch.state()); cerr != nil {
					sinkMu.Lock()
					lateErrs = append(lateErrs, cerr)
					sinkMu.Unlock()
				}
			}
			if ch.mover != nil {
				steps[c] = ch.mover.eps()
			}
			return err
		})
	}
	err := g.Wait()
	s.close()
	res := GibbsResult{Anchors: anchors, SweepsPerChain: s.total(), Seconds: time.Since(began).Seconds(), Phases: s.phases(), GroupStep: steps}
	if err == nil {
		err = ctx.Err()
	}
	return res, errors.Join(append([]error{err}, lateErrs...)...)
}

// newChain sets chain c up at its start, or at resume when not nil.
func (s *sampler) newChain(c int, start *Params, resume *ChainState) (*chain, error) {
	cfg := s.cfg
	ch := &chain{c: c, progress: progress{mark: time.Now()}}
	if cfg.GroupMoves > 0 {
		ch.mover = newGroupMover(s.d, cfg.Dim, s.prec0, s.anchors, s.anchor)
		ch.mover.omega = s.omega[c]
	}
	if resume == nil {
		ch.p = s.initial(c, start)
		return ch, nil
	}
	rp := resume.Params
	switch {
	case resume.Chain != c:
		return nil, fmt.Errorf("posterior: state of chain %d given to resume chain %d", resume.Chain, c)
	case rp == nil || rp.V != s.d.v || rp.D != cfg.Dim || len(rp.Rho) != rp.V*rp.D || len(rp.Alpha) != rp.V*rp.D:
		return nil, fmt.Errorf("posterior: chain %d's saved state does not have %d tokens in %d dimensions", c, s.d.v, cfg.Dim)
	case resume.Sweep < 0 || resume.Sweep > s.total():
		return nil, fmt.Errorf("posterior: chain %d's saved state is at sweep %d of %d", c, resume.Sweep, s.total())
	case (resume.Group != nil) != (ch.mover != nil):
		return nil, fmt.Errorf("posterior: chain %d's saved state and the configuration disagree on frame-change moves", c)
	}
	for _, a := range s.anchors {
		if !slices.Equal(rp.Context(a), start.Context(a)) {
			return nil, fmt.Errorf("posterior: chain %d's saved state has another context vector for anchor %d than the start", c, a)
		}
	}
	ch.p = rp.Clone()
	ch.progress = progress{sweep: resume.Sweep, tried: resume.Tried, accepted: resume.Accepted,
		mark: time.Now().Add(-time.Duration(resume.Elapsed * float64(time.Second)))}
	if ch.mover != nil {
		if err := ch.mover.restore(resume.Group); err != nil {
			return nil, fmt.Errorf("chain %d: %w", c, err)
		}
	}
	return ch, nil
}

// run makes the chain's remaining sweeps, passing kept draws to deliver
// and states to checkpoint (when not nil). When a sweep fails, the chain
// is left at its last completed sweep if checkpoint is set.
func (s *sampler) run(ch *chain, deliver func(c, draw int, p *Params, st DrawStats) error, checkpoint func(*ChainState) error) error {
	cfg := s.cfg
	total := s.total()
	var back *backup
	if checkpoint != nil {
		back = &backup{}
	}
	last, ran := time.Now(), false
	for sw := ch.sweep; sw < total; sw++ {
		if back != nil {
			back.save(ch)
		}
		if err := s.step(ch, sw, deliver); err != nil {
			if back != nil {
				back.restore(ch)
			}
			if ferr := s.flush(ch, deliver); ferr != nil {
				err = errors.Join(err, ferr)
			}
			return err
		}
		ch.sweep, ran = sw+1, true
		due := cfg.CheckpointEvery > 0 && ch.sweep%cfg.CheckpointEvery == 0 ||
			cfg.CheckpointInterval > 0 && time.Since(last) >= cfg.CheckpointInterval
		if checkpoint != nil && due && ch.sweep < total {
			if err := s.flush(ch, deliver); err != nil {
				return err
			}
			if err := checkpoint(ch.state()); err != nil {
				return err
			}
			last = time.Now()
		}
	}
	if checkpoint != nil && ran {
		return checkpoint(ch.state())
	}
	return nil
}

// step makes sweep sw of the chain: the Gibbs updates, the frame-change
// moves, and the kept draw if sw yields one. A kept draw's
// log-likelihood, a pass over all pairs, is computed by the next sweep on
// its way (its rho side forms every pair's linear predictor at the state
// it starts from), so the draw is held until then, or delivered at once
// after the last sweep; run delivers a held draw before a checkpoint and
// when it stops.
func (s *sampler) step(ch *chain, sw int, deliver func(c, draw int, p *Params, st DrawStats) error) error {
	cfg := s.cfg
	var ll []float64
	if ch.held {
		ll = ch.ll
	}
	if err := s.sweep(ch.c, sw, ch.p, ll); err != nil {
		return err
	}
	if ch.held {
		if err := s.deliverHeld(ch, sumInOrder(ll), deliver); err != nil {
			return err
		}
	}
	if ch.mover != nil {
		if cfg.Warmup >= 2 && sw == cfg.Warmup/2 {
			ch.mover.precondition(ch.p)
		}
		ch.mover.pcg.Seed(streamSeeds(cfg.Seed, ch.c, sw, sideGroup, 0))
		ch.accepted += ch.mover.run(ch.p, cfg.GroupMoves, sw < cfg.Warmup)
		ch.tried += cfg.GroupMoves
	}
	if cfg.OnSweep != nil {
		cfg.OnSweep(ch.c, sw)
	}
	if sw+1 == cfg.Warmup {
		ch.mark = time.Now()
		ch.tried, ch.accepted = 0, 0
	}
	kept := sw - cfg.Warmup
	if kept < 0 || (kept+1)%cfg.Thin != 0 {
		return nil
	}
	if err := s.ctx.Err(); err != nil {
		return err
	}
	now := time.Now()
	st := DrawStats{LogPosterior: LogPrior(ch.p, cfg.PriorSD), Seconds: now.Sub(ch.mark).Seconds(), GroupAccept: math.NaN()}
	if ch.tried > 0 {
		st.GroupAccept = float64(ch.accepted) / float64(ch.tried)
	}
	ch.tried, ch.accepted = 0, 0
	ch.mark = now
	if ch.pending.p == nil {
		ch.pending.p, ch.ll = NewParams(s.d.v, cfg.Dim), make([]float64, s.d.v)
	}
	ch.pending.p.copyFrom(ch.p)
	ch.pending.draw, ch.pending.st = kept/cfg.Thin, st
	ch.held = true
	if sw+1 == s.total() {
		return s.flush(ch, deliver)
	}
	return nil
}

// flush delivers the held draw, if any, with its log-likelihood computed
// on its own, one thread, whatever the context: it gives the same bits
// as the next sweep would have.
func (s *sampler) flush(ch *chain, deliver func(c, draw int, p *Params, st DrawStats) error) error {
	if !ch.held {
		return nil
	}
	for i := range ch.ll {
		ch.ll[i] = drawLogLik(s.d, ch.pending.p, i)
	}
	return s.deliverHeld(ch, sumInOrder(ch.ll), deliver)
}

// deliverHeld delivers the held draw with log-likelihood ll and lets it go.
func (s *sampler) deliverHeld(ch *chain, ll float64, deliver func(c, draw int, p *Params, st DrawStats) error) error {
	h := &ch.pending
	ch.held = false
	h.st.LogLik = ll
	h.st.LogPosterior += ll
	return deliver(ch.c, h.draw, h.p, h.st)
}

// sumInOrder returns the sum of x in index order, which does not depend on
// how x was filled.
func sumInOrder(x []float64) float64 {
	var s float64
	for _, v := range x {
		s += v
	}
	return s
}

// sampler holds what the chains share: the data, the thread pool and the
// split of tokens into tasks.
type sampler struct {
	ctx         context.Context
	d           *Data
	cfg         GibbsConfig
	prec0       float64
	anchors     []int
	anchor      []bool
	rhoChunks   []chunk
	alphaChunks []chunk
	pool        *pool

	// omega[c] holds chain c's Pólya-Gamma draw of every pair, in the
	// order of the by-target arrays: the rho side draws them, the alpha side
	// and the frame-change moves read them (see sweep).
	omega [][]float64

	closeOnce  sync.Once
	wsMu       sync.Mutex
	workspaces []*workspace
}

func newSampler(ctx context.Context, d *Data, cfg GibbsConfig, anchors []int) *sampler {
	dim := float64(cfg.Dim)
	cost := func(side int) func(int) float64 {
		return func(i int) float64 {
			return float64(d.degree(side, i))*(dim*dim+2*dim+40) + dim*dim*dim/3 + dim*dim
		}
	}
	s := &sampler{
		ctx:         ctx,
		d:           d,
		cfg:         cfg,
		prec0:       1 / (cfg.PriorSD * cfg.PriorSD),
		anchors:     anchors,
		anchor:      make([]bool, d.v),
		rhoChunks:   partition(d.v, cfg.Threads, cost(sideRho)),
		alphaChunks: partition(d.v, cfg.Threads, cost(sideAlpha)),
	}
	for _, a := range anchors {
		s.anchor[a] = true
	}
	s.omega = make([][]float64, cfg.Chains)
	for c := range s.omega {
		s.omega[c] = make([]float64, d.Pairs())
	}
	maxDeg := d.maxDegree()
	s.pool = startPool(ctx, cfg.Threads, func() *workspace {
		ws := newWorkspace(cfg.Dim, maxDeg, cfg.Profile)
		ws.relax = cfg.Overrelax
		s.wsMu.Lock()
		s.workspaces = append(s.workspaces, ws)
		s.wsMu.Unlock()
		return ws
	})
	return s
}

// total returns the sweeps per chain; s.cfg has its defaults applied, so
// it must not go through GibbsConfig.Sweeps, which would apply them twice.
func (s *sampler) total() int { return s.cfg.Warmup + s.cfg.Draws*s.cfg.Thin }

// close stops the pool; it may be called more than once.
func (s *sampler) close() { s.closeOnce.Do(s.pool.stop) }

// phases sums the workers' phase timers; call it after close.
func (s *sampler) phases() PhaseTimes {
	s.wsMu.Lock()
	defer s.wsMu.Unlock()
	var t PhaseTimes
	for _, ws := range s.workspaces {
		t.add(ws.phases)
	}
	return t
}

// initial returns chain c's starting point.
func (s *sampler) initial(c int, start *Params) *Params {
	dim := s.cfg.Dim
	p := NewParams(s.d.v, dim)
	if start != nil {
		copy(p.Rho, start.Rho)
		copy(p.Alpha, start.Alpha)
	}
	if s.cfg.Init == InitGiven {
		from := s.cfg.Starts[c]
		copy(p.Rho, from.Rho)
		for i := range s.d.v {
			if !s.anchor[i] {
				copy(p.Context(i), from.Context(i))
			}
		}
		return p
	}
	pcg := rand.NewPCG(0, 0)
	rng := rand.New(pcg)
	for i := range s.d.v {
		pcg.Seed(streamSeeds(s.cfg.Seed, c, 0, sideInit, i))
		rho, alpha := p.Target(i), p.Context(i)
		switch s.cfg.Init {
		case InitPrior:
			for k := range rho {
				rho[k] = s.cfg.PriorSD * rng.NormFloat64()
			}
			if !s.anchor[i] {
				for k := range alpha {
					alpha[k] = s.cfg.PriorSD * rng.NormFloat64()
				}
			}
		case InitMAP:
			for k := range rho {
				rho[k] += s.cfg.Jitter * rng.NormFloat64()
			}
			if !s.anchor[i] {
				for k := range alpha {
					alpha[k] += s.cfg.Jitter * rng.NormFloat64()
				}
			}
		}
	}
	return p
}

// sweep makes one scan of chain c over the Pólya-Gamma augmented
// posterior p(rho, alpha, omega), omega_ij ~ PG(n_ij, rho_i . alpha_j):
// target by target, omega_i. given rho and alpha and then rho_i given
// omega_i. and alpha (which, the rho_i being conditionally independent, is
// all of omega and then all of rho); then every free alpha_j given the same
// omega_.j, read through Data's context-to-target positions, and rho. Each
// step draws a conditional of the augmented joint (the Gaussian steps
// overrelaxed, which leaves it invariant), so the sweep leaves the
// posterior invariant with one Pólya-Gamma draw per pair; against a scan
// that redraws omega before each side it mixed as well per sweep and cost
// 27-40% less CPU at D = 10 and 20 (BENCHMARKS.md). With Inner = k > 1,
// each rho_i makes k (omega_i., rho_i) steps and each alpha_j one step
// with the stored omega_.j and k - 1 with fresh ones; both write their
// last draws back. s.omega[c] then holds, with the state, a draw of the
// augmented joint, and the frame-change moves, which target p(rho, alpha |
// omega), read the anchors' pairs there (the alpha side skips the anchors,
// so those are the rho side's draws). When ll is not nil, ll[i] receives
// the log-likelihood of target i's pairs at p as the sweep found it,
// computed from the linear predictors the rho side forms anyway (see step).
func (s *sampler) sweep(c, sw int, p *Params, ll []float64) error {
	var mu sync.Mutex
	var first error
	fail := func(err error) {
		mu.Lock()
		if first == nil {
			first = err
		}
		mu.Unlock()
	}
	omega, inner := s.omega[c], s.cfg.Inner
	for _, side := range [2]int{sideRho, sideAlpha} {
		chunks, own, other := s.rhoChunks, p.Rho, p.Alpha
		if side == sideAlpha {
			chunks, own, other = s.alphaChunks, p.Alpha, p.Rho
		}
		dim := s.cfg.Dim
		s.pool.forEach(chunks, func(ws *workspace, ch chunk) {
			for i := ch.lo; i < ch.hi; i++ {
				if side == sideAlpha && s.anchor[i] {
					continue
				}
				ws.src.Seed(streamSeeds(s.cfg.Seed, c, sw, side, i))
				idx, n, kappa := s.d.side(side, i)
				x := own[i*dim : (i+1)*dim]
				var err error
				if side == sideRho {
					ws.wantLogLik = ll != nil
					err = ws.draw(x, idx, n, kappa, other, s.prec0, omega[s.d.tOff[i]:s.d.tOff[i+1]], false, inner)
					ws.wantLogLik = false
					if ll != nil {
						ll[i] = ws.logLik
					}
				} else {
					pos := s.d.contextPairPos(i)
					om := ws.omega[:len(pos)]
					for r, q := range pos {
						om[r] = omega[q]
					}
					err = ws.draw(x, idx, n, kappa, other, s.prec0, om, true, inner)
					if inner > 1 {
						for r, q := range pos {
							omega[q] = om[r]
						}
					}
				}
				if err != nil {
					fail(fmt.Errorf("%w (chain %d, sweep %d, token %d)", err, c, sw, i))
					return
				}
			}
		})
		if first != nil {
			return first
		}
		if err := s.ctx.Err(); err != nil {
			return err
		}
	}
	return nil
}
