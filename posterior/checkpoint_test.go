package posterior

import (
	"bytes"
	"context"
	"errors"
	"reflect"
	"slices"
	"sync"
	"testing"
	"time"
)

// checkpointConfig has group moves on with a preconditioner set halfway
// through warmup, so that the movers' adapted state matters.
func checkpointConfig(threads int) GibbsConfig {
	return GibbsConfig{Chains: 2, Warmup: 8, Draws: 10, Thin: 2, Inner: 2, GroupMoves: 5, Threads: threads, Seed: 4}
}

// savedStates keeps the latest encoded state of every chain, as a
// checkpoint file would.
type savedStates struct {
	mu     sync.Mutex
	states map[int][]byte
	sweeps map[int][]int // the sweeps of every checkpoint, per chain
}

func newSavedStates() *savedStates {
	return &savedStates{states: map[int][]byte{}, sweeps: map[int][]int{}}
}

func (s *savedStates) save(st *ChainState) error {
	var b bytes.Buffer
	if _, err := st.WriteTo(&b); err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.states[st.Chain] = b.Bytes()
	s.sweeps[st.Chain] = append(s.sweeps[st.Chain], st.Sweep)
	return nil
}

func (s *savedStates) load(t *testing.T, chains int) []*ChainState {
	t.Helper()
	out := make([]*ChainState, chains)
	for c := range chains {
		b, ok := s.states[c]
		if !ok {
			t.Fatalf("no checkpoint of chain %d", c)
		}
		st, err := ReadChainState(bytes.NewReader(b))
		if err != nil {
			t.Fatal(err)
		}
		out[c] = st
	}
	return out
}

// truncate drops the draws a resumed run makes again, as fit truncates its
// spill files to the checkpointed length, after checking that the sink
// received exactly the draws the states account for.
func truncate(t *testing.T, got rawSink, states []*ChainState, cfg GibbsConfig) {
	t.Helper()
	for c, st := range states {
		kept := cfg.KeptDraws(st.Sweep)
		n := 0
		for k := range got {
			if k[0] == c {
				n++
				if k[1] >= kept {
					delete(got, k)
				}
			}
		}
		if n < kept {
			t.Fatalf("chain %d: sink has %d draws, the checkpoint at sweep %d accounts for %d", c, n, st.Sweep, kept)
		}
	}
}

func compareDraws(t *testing.T, ref, got rawSink) {
	t.Helper()
	if len(got) != len(ref) {
		t.Fatalf("%d draws, want %d", len(got), len(ref))
	}
	for k, bits := range ref {
		if !slices.Equal(bits, got[k]) {
			t.Fatalf("chain %d draw %d differs from the uninterrupted run", k[0], k[1])
		}
	}
}

// TestResumeAfterCancel interrupts a run (at a sweep boundary through
// OnSweep, and at an arbitrary moment with a timer), resumes it from the
// checkpoints written on cancellation with another thread count, and
// compares every draw and its statistics bit for bit with an uninterrupted
// run. A resumed run whose movers lost their adapted state differs.
func TestResumeAfterCancel(t *testing.T) {
	d, _ := simulate(t, 30, 3, 3000, 5)
	start := mapFor(t, d, 3)
	ref := rawSink{}
	cfg := checkpointConfig(1)
	if _, err := Gibbs(context.Background(), d, start, cfg, ref); err != nil {
		t.Fatal(err)
	}
	total := cfg.Sweeps()

	interrupt := func(t *testing.T, cut func(cancel func()) GibbsConfig) (rawSink, []*ChainState) {
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		saved := newSavedStates()
		c := cut(cancel)
		c.Checkpoint = saved.save
		got := rawSink{}
		_, err := Gibbs(ctx, d, start, c, got)
		if !errors.Is(err, context.Canceled) {
			t.Fatalf("interrupted run: err %v, want context.Canceled", err)
		}
		states := saved.load(t, cfg.Chains)
		truncate(t, got, states, cfg)
		return got, states
	}
	resume := func(t *testing.T, got rawSink, states []*ChainState) {
		c := checkpointConfig(2)
		c.Resume = states
		if _, err := Gibbs(context.Background(), d, start, c, got); err != nil {
			t.Fatal(err)
		}
		compareDraws(t, ref, got)
	}

	t.Run("boundary", func(t *testing.T) {
		const cutAt = 11 // after the preconditioner is set (sweep 4), inside the kept draws
		got, states := interrupt(t, func(cancel func()) GibbsConfig {
			c := cfg
			c.OnSweep = func(chain, sw int) {
				if chain == 0 && sw == cutAt {
					cancel()
				}
			}
			return c
		})
		// Sweep 11 ran but its draw was not delivered: it is undone.
		if states[0].Sweep != cutAt || states[0].Group == nil || states[0].Group.Precond == nil {
			t.Fatalf("chain 0 checkpointed at sweep %d (group state %+v), want %d with a preconditioner", states[0].Sweep, states[0].Group, cutAt)
		}
		resume(t, got, states)

		// The movers' state matters: a resumed run with another step size
		// gives other draws.
		bad := rawSink{}
		for k, v := range got {
			if k[1] < cfg.KeptDraws(cutAt) || k[0] != 0 {
				bad[k] = v
			}
		}
		c := checkpointConfig(2)
		c.Resume = []*ChainState{states[0], nil}
		c.Resume[0].Group.LogEps -= 0.5
		if _, err := Gibbs(context.Background(), d, start, c, bad); err != nil {
			t.Fatal(err)
		}
		if slices.Equal(bad[[2]int{0, cfg.Draws - 1}], ref[[2]int{0, cfg.Draws - 1}]) {
			t.Fatal("a resumed chain with a changed step size gave the same last draw")
		}
	})

	t.Run("timer", func(t *testing.T) {
		got, states := interrupt(t, func(cancel func()) GibbsConfig {
			c := cfg
			// Slow the sweeps down so that the timer fires mid-run.
			c.OnSweep = func(int, int) { time.Sleep(2 * time.Millisecond) }
			time.AfterFunc(15*time.Millisecond, cancel)
			return c
		})
		for _, st := range states {
			if st.Sweep >= total {
				t.Logf("chain %d finished before the interruption", st.Chain)
			}
		}
		resume(t, got, states)
	})
}

// TestResumeFromPeriodicCheckpoint checks when periodic checkpoints are
// taken, that the sink holds exactly the draws a checkpoint accounts for,
// and that a chain continued from a mid-run checkpoint gives the
// uninterrupted draws.
func TestResumeFromPeriodicCheckpoint(t *testing.T) {
	d, _ := simulate(t, 30, 3, 3000, 5)
	start := mapFor(t, d, 3)
	cfg := checkpointConfig(2)
	cfg.CheckpointEvery = 5
	ref := rawSink{}
	sweeps := map[int][]int{}
	var mid *ChainState
	cfg.Checkpoint = func(st *ChainState) error {
		// Checkpoint calls are serialised with the sink's, so ref is stable.
		sweeps[st.Chain] = append(sweeps[st.Chain], st.Sweep)
		n := 0
		for k := range ref {
			if k[0] == st.Chain {
				n++
			}
		}
		if n != cfg.KeptDraws(st.Sweep) {
			t.Errorf("chain %d at sweep %d: the sink has %d draws, want %d", st.Chain, st.Sweep, n, cfg.KeptDraws(st.Sweep))
		}
		if st.Chain == 1 && st.Sweep == 10 {
			var b bytes.Buffer
			if _, err := st.WriteTo(&b); err != nil {
				return err
			}
			var err error
			mid, err = ReadChainState(&b)
			return err
		}
		return nil
	}
	if _, err := Gibbs(context.Background(), d, start, cfg, ref); err != nil {
		t.Fatal(err)
	}
	if want := []int{5, 10, 15, 20, 25, cfg.Sweeps()}; !slices.Equal(sweeps[1], want) {
		t.Fatalf("chain 1 checkpointed at sweeps %v, want %v", sweeps[1], want)
	}
	got := rawSink{}
	for k, v := range ref {
		if k[0] != 1 || k[1] < cfg.KeptDraws(10) {
			got[k] = v
		}
	}
	r := checkpointConfig(1)
	r.Resume = []*ChainState{nil, mid}
	// Chain 0 starts afresh and overwrites its draws with the same ones.
	if _, err := Gibbs(context.Background(), d, start, r, got); err != nil {
		t.Fatal(err)
	}
	compareDraws(t, ref, got)
}

func TestChainStateEncoding(t *testing.T) {
	p := NewParams(3, 2)
	for i := range p.Rho {
		p.Rho[i], p.Alpha[i] = float64(i)+0.25, -float64(i)/3
	}
	st := &ChainState{Chain: 3, Sweep: 17, Params: p, Tried: 40, Accepted: 11, Elapsed: 1.5,
		Group: &GroupState{LogEps: -2.5, Steps: 9, Precond: []float64{1, 2, 3, 4, 5, 6, 7, 8, 9, 10}}}
	var b bytes.Buffer
	if _, err := st.WriteTo(&b); err != nil {
		t.Fatal(err)
	}
	got, err := ReadChainState(bytes.NewReader(b.Bytes()))
	if err != nil {
		t.Fatal(err)
	}
	if got.Chain != 3 || got.Sweep != 17 || got.Tried != 40 || got.Accepted != 11 || got.Elapsed != 1.5 ||
		!slices.Equal(got.Params.Rho, p.Rho) || !slices.Equal(got.Params.Alpha, p.Alpha) ||
		got.Group.LogEps != -2.5 || got.Group.Steps != 9 || !slices.Equal(got.Group.Precond, st.Group.Precond) {
		t.Fatalf("decoded %+v, want %+v", got, st)
	}
	for _, n := range []int{0, 5, b.Len() / 2, b.Len() - 1} {
		if _, err := ReadChainState(bytes.NewReader(b.Bytes()[:n])); !errors.Is(err, ErrBadState) {
			t.Errorf("truncated to %d bytes: err %v, want ErrBadState", n, err)
		}
	}
	bad := slices.Clone(b.Bytes())
	bad[3] ^= 1
	if _, err := ReadChainState(bytes.NewReader(bad)); !errors.Is(err, ErrBadState) {
		t.Errorf("bad header: err %v", err)
	}
	// A mover restores exactly the factor it exported.
	g := newGroupMover(nil, 2, 1, nil, nil)
	if err := g.restore(got.Group); err != nil {
		t.Fatal(err)
	}
	if back := g.state(); !slices.Equal(back.Precond, st.Group.Precond) || g.precond[1*4+0] != 0 || g.precond[0*4+3] != 4 {
		t.Fatalf("restored factor %v", g.precond)
	}
	if err := g.restore(&GroupState{Precond: []float64{1}}); err == nil {
		t.Error("a factor of the wrong size was accepted")
	}
}

// TestBackupUndoesStep takes every warmup sweep's step (the adapting ones
// and the one that sets the preconditioner) and the first kept draw's,
// undoes it from a backup, and checks that the chain is where it was:
// Params, progress and the mover's adapted state. The step's effect is
// checked too, lest the test pass on steps that change nothing.
func TestBackupUndoesStep(t *testing.T) {
	d, _ := simulate(t, 30, 3, 3000, 5)
	start := mapFor(t, d, 3)
	cfg := checkpointConfig(1)
	cfg.Dim = start.D
	cfg = cfg.withDefaults()
	anchors, err := ChooseAnchors(d, start, cfg.Anchors)
	if err != nil {
		t.Fatal(err)
	}
	s := newSampler(context.Background(), d, cfg, anchors)
	defer s.close()
	ch, err := s.newChain(0, start, nil)
	if err != nil {
		t.Fatal(err)
	}
	draws := 0
	deliver := func(int, int, *Params, DrawStats) error { draws++; return nil }
	var b backup
	for sw := range cfg.Warmup + cfg.Thin {
		p, at, adapt := ch.p.Clone(), ch.progress, ch.mover.groupAdapt
		adapt.precond = slices.Clone(adapt.precond)
		b.save(ch)
		if err := s.step(ch, sw, deliver); err != nil {
			t.Fatal(err)
		}
		if slices.Equal(ch.p.Rho, p.Rho) || ch.tried == at.tried || sw < cfg.Warmup && ch.mover.steps == adapt.steps {
			t.Fatalf("sweep %d changed too little to test the backup", sw)
		}
		b.restore(ch)
		// run delivers a kept draw the undone step held (with its own
		// copy of the state) before it stops; so does the test.
		if err := s.flush(ch, deliver); err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(ch.p, p) || ch.progress != at || !reflect.DeepEqual(ch.mover.groupAdapt, adapt) {
			t.Fatalf("sweep %d: restored %d of %d moves accepted, log eps %v after %d steps; want %d of %d, %v after %d",
				sw, ch.accepted, ch.tried, ch.mover.logEps, ch.mover.steps, at.accepted, at.tried, adapt.logEps, adapt.steps)
		}
		if err := s.step(ch, sw, deliver); err != nil {
			t.Fatal(err)
		}
		ch.sweep = sw + 1
	}
	if err := s.flush(ch, deliver); err != nil {
		t.Fatal(err)
	}
	if ch.mover.precond == nil || draws != 2 {
		t.Fatalf("preconditioner %v, %d draws delivered: the loop missed the sweeps it means to test", ch.mover.precond != nil, draws)
	}
}

// TestCheckpointCarriesState lists the fields backup copies by value,
// which a checkpoint must carry too: a field added to progress or
// groupAdapt fails here until chain.state, sampler.newChain (for
// progress) or groupMover.state and restore (for groupAdapt), and the
// ChainState encoding, carry it.
func TestCheckpointCarriesState(t *testing.T) {
	for _, c := range []struct {
		typ  reflect.Type
		want []string
	}{
		{reflect.TypeFor[progress](), []string{"sweep", "tried", "accepted", "mark"}},
		{reflect.TypeFor[groupAdapt](), []string{"logEps", "steps", "precond"}},
	} {
		var got []string
		for f := range c.typ.Fields() {
			got = append(got, f.Name)
		}
		if !slices.Equal(got, c.want) {
			t.Errorf("%v has fields %v, checkpoints carry %v", c.typ, got, c.want)
		}
	}
}

// BenchmarkChainStateWrite encodes one chain's checkpoint at V = 1000,
// D = 20 with the frame-change preconditioner, and reports its size.
func BenchmarkChainStateWrite(b *testing.B) {
	const v, dim = 1000, 20
	m := dim * dim
	st := &ChainState{Sweep: 123, Params: randomParams(v, dim, 0.3), Group: &GroupState{LogEps: -1.5, Steps: 40, Precond: make([]float64, m*(m+1)/2)}}
	var buf bytes.Buffer
	for b.Loop() {
		buf.Reset()
		if _, err := st.WriteTo(&buf); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(buf.Len()), "bytes")
}
