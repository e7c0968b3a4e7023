package stages

import (
	"bytes"
	"context"
	"errors"
	"math"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/pwe-project/pwe/formats"
	"github.com/pwe-project/pwe/posterior"
)

// interruptedFit runs cfg and cancels it once chain 0 has made cut sweeps;
// it returns the error and fails unless the fit reports an interruption.
func interruptedFit(t *testing.T, cfg FitConfig, cut int) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var once sync.Once
	cfg.OnSweep = func(chain, sweep int) {
		if chain == 0 && sweep == cut {
			once.Do(cancel)
		}
	}
	_, err := Fit(ctx, cfg)
	var ie *InterruptedError
	if !errors.As(err, &ie) || !errors.Is(err, context.Canceled) || ie.Checkpoint != filepath.Join(cfg.Output, CheckpointDir) {
		t.Fatalf("interrupted fit: err %v, want an InterruptedError naming %s", err, filepath.Join(cfg.Output, CheckpointDir))
	}
}

func readFile(t *testing.T, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestFitResume interrupts a fit with group moves on, resumes it with
// another thread count, and compares the outputs with an uninterrupted
// fit: draws, summary and map bytes, and sample_stats but for seconds.
func TestFitResume(t *testing.T) {
	t.Setenv("SOURCE_DATE_EPOCH", "0")
	dir := t.TempDir()
	vocab, counts := countFixture(t, dir, 60)
	ref := smallFit(vocab, counts, filepath.Join(dir, "ref"))
	ref.Draws, ref.Threads = 20, 1
	if _, err := Fit(context.Background(), ref); err != nil {
		t.Fatal(err)
	}
	cfg := ref
	cfg.Output, cfg.CheckpointEvery = filepath.Join(dir, "fit"), 7
	interruptedFit(t, cfg, 35) // in the kept draws (warmup 30)
	for _, name := range []string{runFile, chainFile(0), chainFile(1)} {
		if _, err := os.Stat(filepath.Join(cfg.Output, CheckpointDir, name)); err != nil {
			t.Fatalf("after the interruption: %v", err)
		}
	}
	if !FitCheckpointMatches(cfg) {
		t.Fatal("FitCheckpointMatches is false for the interrupted fit's own settings")
	}
	for _, name := range []string{DrawsFile, MapFile, SummaryFile} {
		if _, err := os.Stat(filepath.Join(cfg.Output, name)); err == nil {
			t.Errorf("the interrupted fit wrote %s", name)
		}
	}
	cfg.Resume, cfg.Threads = true, 2
	if _, err := Fit(context.Background(), cfg); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{DrawsFile, SummaryFile, MapFile} {
		if !bytes.Equal(readFile(t, filepath.Join(ref.Output, name)), readFile(t, filepath.Join(cfg.Output, name))) {
			t.Errorf("%s of the resumed fit differs from the uninterrupted one", name)
		}
	}
	want, _, err := formats.ReadAll[formats.SampleStatsRow](filepath.Join(ref.Output, SampleStatsFile), formats.SchemaSampleStats)
	if err != nil {
		t.Fatal(err)
	}
	got, _, err := formats.ReadAll[formats.SampleStatsRow](filepath.Join(cfg.Output, SampleStatsFile), formats.SchemaSampleStats)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != len(want) || len(got) != cfg.Chains*cfg.Draws {
		t.Fatalf("sample_stats has %d rows, want %d", len(got), len(want))
	}
	for i := range want {
		w, g := want[i], got[i]
		w.Seconds, g.Seconds = 0, 0
		if w != g && !(math.IsNaN(w.GroupAccept) && math.IsNaN(g.GroupAccept)) {
			t.Fatalf("sample_stats row %d: %+v, want %+v", i, g, w)
		}
	}
	if _, err := os.Stat(filepath.Join(cfg.Output, CheckpointDir)); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("checkpoint left after a finished fit: %v", err)
	}
	assertNoSpill(t, cfg.Output)
	if FitCheckpointMatches(cfg) {
		t.Error("FitCheckpointMatches is true after the fit finished")
	}
}

// TestFitResumeRefused checks the refusals: nothing to resume, changed
// settings, changed inputs, and corrupt or truncated checkpoint files,
// each with a message naming the file.
func TestFitResumeRefused(t *testing.T) {
	dir := t.TempDir()
	vocab, counts := countFixture(t, dir, 40)
	cfg := smallFit(vocab, counts, filepath.Join(dir, "fit"))
	cfg.Draws, cfg.Resume = 5, true
	if _, err := Fit(context.Background(), cfg); !errors.Is(err, ErrNoCheckpoint) {
		t.Fatalf("resume without a checkpoint: err %v", err)
	}
	cfg.Resume = false
	interruptedFit(t, cfg, 33) // chain 0 has 3 draws (warmup 30)
	cfg.Resume = true
	runPath := filepath.Join(cfg.Output, CheckpointDir, runFile)

	changed := cfg
	changed.Draws = 6
	_, err := Fit(context.Background(), changed)
	if !errors.Is(err, ErrCheckpointMismatch) || !strings.Contains(err.Error(), "draws 5, now 6") || !strings.Contains(err.Error(), runPath) {
		t.Errorf("resume with other draws: err %v", err)
	}
	otherCounts := filepath.Join(dir, "other-counts.parquet")
	if _, err := Count(context.Background(), CountConfig{Input: TextInput{Paths: []string{fixture}}, Vocab: vocab, Output: otherCounts, Window: 2, Seed: 3}); err != nil {
		t.Fatal(err)
	}
	changed = cfg
	changed.Counts = otherCounts
	if b1, b2 := readFile(t, counts), readFile(t, otherCounts); bytes.Equal(b1, b2) {
		t.Fatal("the fixture gave the same counts twice: the test needs other inputs")
	}
	if _, err := Fit(context.Background(), changed); !errors.Is(err, ErrCheckpointMismatch) || !strings.Contains(err.Error(), "inputs") {
		t.Errorf("resume with other counts: err %v", err)
	}

	chainPath := filepath.Join(cfg.Output, CheckpointDir, chainFile(1))
	good := readFile(t, chainPath)
	flipped := bytes.Clone(good)
	flipped[len(flipped)/2] ^= 0x10
	os.WriteFile(chainPath, flipped, 0o644)
	if _, err := Fit(context.Background(), cfg); !errors.Is(err, ErrBadCheckpoint) || !strings.Contains(err.Error(), chainPath) {
		t.Errorf("resume with a corrupt chain file: err %v", err)
	}
	os.WriteFile(chainPath, good, 0o644)
	run := readFile(t, runPath)
	for _, n := range []int{0, 20, len(run) - 1} {
		os.WriteFile(runPath, run[:n], 0o644)
		if _, err := Fit(context.Background(), cfg); !errors.Is(err, ErrBadCheckpoint) || !strings.Contains(err.Error(), runPath) {
			t.Errorf("resume with run.ckpt cut to %d bytes: err %v", n, err)
		}
	}
	os.WriteFile(runPath, run, 0o644)
	// A truncated spill file is refused with its name.
	spills, _ := filepath.Glob(filepath.Join(cfg.Output, ".pwe-draws-*"))
	if len(spills) != cfg.Chains {
		t.Fatalf("spill files %v, want %d", spills, cfg.Chains)
	}
	os.Truncate(spills[0], 0)
	if _, err := Fit(context.Background(), cfg); err == nil || !strings.Contains(err.Error(), spills[0]) {
		t.Errorf("resume with an emptied spill: err %v", err)
	}
}

// TestFitRestartRemovesStaleSpills interrupts a fit whose draws spill to
// one temporary directory, then starts it over (no --resume) with another
// and another draws setting: the first run's spill files go with its
// checkpoint instead of staying behind.
func TestFitRestartRemovesStaleSpills(t *testing.T) {
	dir := t.TempDir()
	vocab, counts := countFixture(t, dir, 40)
	cfg := smallFit(vocab, counts, filepath.Join(dir, "fit"))
	cfg.Draws, cfg.TempDir = 5, filepath.Join(dir, "tmp1")
	if err := os.MkdirAll(cfg.TempDir, 0o755); err != nil {
		t.Fatal(err)
	}
	// A file of the user's in the temporary directory stays.
	other := filepath.Join(cfg.TempDir, "keep.txt")
	if err := os.WriteFile(other, []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	interruptedFit(t, cfg, 33)
	spills, _ := filepath.Glob(filepath.Join(cfg.TempDir, spillPrefix+"*"))
	if len(spills) != cfg.Chains {
		t.Fatalf("spill files %v after the interruption, want %d", spills, cfg.Chains)
	}
	cfg.TempDir, cfg.Draws = filepath.Join(dir, "tmp2"), 6
	if err := os.MkdirAll(cfg.TempDir, 0o755); err != nil {
		t.Fatal(err)
	}
	if _, err := Fit(context.Background(), cfg); err != nil {
		t.Fatal(err)
	}
	if left, _ := filepath.Glob(filepath.Join(dir, "tmp*", spillPrefix+"*")); len(left) > 0 {
		t.Errorf("spill files left after the restarted fit: %v", left)
	}
	if _, err := os.Stat(other); err != nil {
		t.Errorf("the user's file in the temporary directory: %v", err)
	}

	// A fit of another method, or without checkpoints, replaces an
	// interrupted one too: its checkpoint and spills go once it finishes,
	// and it cannot be asked to resume it.
	for _, method := range []string{"map", "laplace", "gibbs"} {
		cfg.Method, cfg.TempDir, cfg.CheckpointInterval = "gibbs", filepath.Join(dir, "tmp1"), 0
		interruptedFit(t, cfg, 33)
		again := cfg
		again.Method = method
		if method == "gibbs" {
			again.CheckpointInterval = NoCheckpoints
		}
		again.Resume = true
		if _, err := Fit(context.Background(), again); err == nil {
			t.Errorf("%s: resumed a fit that keeps no checkpoint", method)
		}
		again.Resume = false
		if _, err := Fit(context.Background(), again); err != nil {
			t.Fatal(err)
		}
		left, _ := filepath.Glob(filepath.Join(dir, "tmp*", spillPrefix+"*"))
		if HasCheckpoint(cfg.Output) || len(left) > 0 {
			t.Errorf("%s: checkpoint %v and spills %v left after the fit that replaced it", method, HasCheckpoint(cfg.Output), left)
		}
	}
}

// TestFitInitFrom starts a fit on a larger vocabulary from a previous
// fit's draws and checks its first draw against posterior.Gibbs run from
// starting points built here from draws.parquet, and that it differs from
// a fit started at the MAP.
func TestFitInitFrom(t *testing.T) {
	dir := t.TempDir()
	prevDir, nextDir := filepath.Join(dir, "prev"), filepath.Join(dir, "next")
	os.Mkdir(prevDir, 0o755)
	os.Mkdir(nextDir, 0o755)
	pv, pc := countFixture(t, prevDir, 40)
	prev := smallFit(pv, pc, filepath.Join(prevDir, "fit"))
	prev.Draws = 4
	if _, err := Fit(context.Background(), prev); err != nil {
		t.Fatal(err)
	}
	nv, nc := countFixture(t, nextDir, 60)
	zero, none := 0, 0
	next := smallFit(nv, nc, filepath.Join(nextDir, "fit"))
	next.Chains, next.Draws, next.Warmup, next.GroupMoves, next.InitFrom = 3, 1, &zero, &none, prev.Output
	if _, err := Fit(context.Background(), next); err != nil {
		t.Fatal(err)
	}

	// The starts, built from the rows: chain c from prev's chain c mod 2,
	// draw 3; tokens not in prev at the MAP.
	rows, _, err := formats.ReadAll[formats.DrawRow](filepath.Join(prev.Output, DrawsFile), formats.SchemaDraws)
	if err != nil {
		t.Fatal(err)
	}
	vocabRows, _, err := formats.ReadVocab(nv)
	if err != nil {
		t.Fatal(err)
	}
	data, err := loadCounts(nc, len(vocabRows))
	if err != nil {
		t.Fatal(err)
	}
	var stats FitStats
	rule, _ := anchorRule(next.Anchors, nil)
	_, anchored, err := fitMAP(context.Background(), next.WithDefaults(), data, rule, &stats)
	if err != nil {
		t.Fatal(err)
	}
	index := map[string]int{}
	for i, v := range vocabRows {
		index[v.Token] = i
	}
	// Chain c starts from prev's chain c mod 2, draw 3, carried into the
	// anchored start's frame (alignFrame, checked by TestAlignFrame);
	// tokens not in prev at the anchored start.
	starts := make([]*posterior.Params, next.Chains)
	fromPrev := 0
	for c := range starts {
		var shared []int
		var rho, alpha, baseRho []float64
		for _, r := range rows {
			i, ok := index[r.Token]
			if int(r.Chain) != c%prev.Chains || r.Draw != int32(prev.Draws-1) || !ok {
				continue
			}
			if r.Param == formats.ParamAlpha {
				alpha = appendFloat64(alpha, r.Vector)
				continue
			}
			shared = append(shared, i)
			rho = appendFloat64(rho, r.Vector)
			baseRho = append(baseRho, anchored.Target(i)...)
		}
		if len(alpha) != len(rho) {
			t.Fatalf("chain %d: %d alpha and %d rho values in draws.parquet", c, len(alpha), len(rho))
		}
		alignFrame(rho, alpha, baseRho, anchored.D)
		p := anchored.Clone()
		for k, i := range shared {
			copy(p.Target(i), rho[k*anchored.D:(k+1)*anchored.D])
			copy(p.Context(i), alpha[k*anchored.D:(k+1)*anchored.D])
			fromPrev += 2
		}
		starts[c] = p
	}
	if fromPrev != next.Chains*2*40 {
		t.Fatalf("%d vectors taken from the previous fit, want %d", fromPrev, next.Chains*2*40)
	}
	want := map[[2]int][]float32{} // (chain, token) -> rho of draw 0
	_, err = posterior.Gibbs(context.Background(), data, anchored, posterior.GibbsConfig{
		Chains: next.Chains, Warmup: posterior.NoWarmup, Draws: 1, GroupMoves: posterior.NoGroupMoves, Seed: next.Seed,
		Init: posterior.InitGiven, Starts: starts, Anchors: posterior.AnchorRule{Kind: posterior.AnchorIDs, IDs: stats.Anchors},
	}, posterior.SinkFunc(func(c, _ int, p *posterior.Params, _ posterior.DrawStats) error {
		for i := range p.V {
			want[[2]int{c, i}] = toFloat32(nil, p.Target(i))
		}
		return nil
	}))
	if err != nil {
		t.Fatal(err)
	}
	got, _, err := formats.ReadAll[formats.DrawRow](filepath.Join(next.Output, DrawsFile), formats.SchemaDraws)
	if err != nil {
		t.Fatal(err)
	}
	checked := 0
	for _, r := range got {
		if r.Param != formats.ParamRho {
			continue
		}
		if !equalFloat32(r.Vector, want[[2]int{int(r.Chain), int(r.TokenID)}]) {
			t.Fatalf("chain %d token %q: first draw %v, want %v", r.Chain, r.Token, r.Vector, want[[2]int{int(r.Chain), int(r.TokenID)}])
		}
		checked++
	}
	if checked != next.Chains*60 {
		t.Fatalf("checked %d vectors, want %d", checked, next.Chains*60)
	}

	// Started at the MAP instead, the first draw differs.
	atMAP := next
	atMAP.InitFrom, atMAP.Output = "", filepath.Join(nextDir, "map-start")
	if _, err := Fit(context.Background(), atMAP); err != nil {
		t.Fatal(err)
	}
	if bytes.Equal(readFile(t, filepath.Join(atMAP.Output, DrawsFile)), readFile(t, filepath.Join(next.Output, DrawsFile))) {
		t.Error("--init-from made no difference to the draws")
	}

	// Refusals: no draws, another dimension.
	noDraws := prev
	noDraws.SaveDraws, noDraws.Output = "none", filepath.Join(prevDir, "nodraws")
	if _, err := Fit(context.Background(), noDraws); err != nil {
		t.Fatal(err)
	}
	bad := next
	bad.InitFrom = noDraws.Output
	if _, err := Fit(context.Background(), bad); !errors.Is(err, ErrNoDraws) || !strings.Contains(err.Error(), "save-draws none") {
		t.Errorf("init-from a fit without draws: err %v", err)
	}
	bad = next
	bad.Dim = 4
	if _, err := Fit(context.Background(), bad); err == nil || !strings.Contains(err.Error(), "dimension 3, this fit has dimension 4") {
		t.Errorf("init-from a fit of another dimension: err %v", err)
	}
}

// TestFitInitFromOtherCorpus: a previous fit that shares no token with
// this one's vocabulary is refused, since no chain would start from it.
func TestFitInitFromOtherCorpus(t *testing.T) {
	dir := t.TempDir()
	sim := filepath.Join(dir, "sim")
	if _, err := Simulate(context.Background(), SimulateConfig{VocabSize: 10, Dim: 3, Observations: 2000, Seed: 1, Output: sim}); err != nil {
		t.Fatal(err)
	}
	other := smallFit(filepath.Join(sim, "vocab.parquet"), filepath.Join(sim, "counts.parquet"), filepath.Join(dir, "other"))
	other.Draws = 3
	if _, err := Fit(context.Background(), other); err != nil {
		t.Fatal(err)
	}
	vocab, counts := countFixture(t, dir, 30)
	cfg := smallFit(vocab, counts, filepath.Join(dir, "fit"))
	cfg.InitFrom = other.Output
	if _, err := Fit(context.Background(), cfg); err == nil || !strings.Contains(err.Error(), "none of its 10 tokens is in this fit's vocabulary") {
		t.Errorf("init-from a fit of another corpus: %v, want it refused", err)
	}
}
