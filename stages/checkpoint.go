package stages

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/pwe-project/pwe/formats"
	"github.com/pwe-project/pwe/formats/input"
	"github.com/pwe-project/pwe/internal/atomicfile"
	"github.com/pwe-project/pwe/internal/version"
	"github.com/pwe-project/pwe/posterior"
)

// CheckpointDir is the directory, inside the fit's output directory, that
// holds the state of an unfinished Gibbs run: run.ckpt (the MAP, the
// settings and the inputs' fingerprints) and chain-NNNN.ckpt per chain.
// A finished fit removes it.
const CheckpointDir = "checkpoint"

// DefaultCheckpointInterval is how often each chain saves its state when
// FitConfig sets neither CheckpointEvery nor CheckpointInterval. Saving
// costs one write of the chain's state (2 V D float64s, under a second even
// for V = 10^5, D = 100), so a minute bounds the work a crash can lose
// without slowing the run; a sweep count would be minutes apart on large
// data and many per second on small. An interruption by a signal always
// saves the last completed sweep, whatever the interval.
const DefaultCheckpointInterval = time.Minute

// NoCheckpoints as FitConfig.CheckpointInterval turns checkpoints off: an
// interrupted run cannot be resumed.
const NoCheckpoints time.Duration = -1

// ErrCheckpointMismatch is returned by a resumed fit whose checkpoint was
// written for other inputs or settings.
var ErrCheckpointMismatch = errors.New("stages: checkpoint was written for other inputs or settings")

// ErrBadCheckpoint reports a checkpoint file that is truncated or corrupt.
var ErrBadCheckpoint = errors.New("stages: checkpoint is truncated or corrupt")

// ErrNoCheckpoint is returned by a resumed fit that finds nothing to resume.
var ErrNoCheckpoint = errors.New("stages: no checkpoint to resume")

// InterruptedError is returned by a fit whose context was cancelled after
// every chain saved its state: the same fit with Resume set continues it.
// Its message is the one pwe gives the user.
type InterruptedError struct {
	Checkpoint string // the checkpoint directory
	// HowToResume ends the message (default: run the same command with
	// --resume); pwe run, which resumes by itself, says what to do instead.
	HowToResume string
	Err         error // the context's error
}

func (e *InterruptedError) Error() string {
	how := e.HowToResume
	if how == "" {
		how = "run the same command with --resume to continue"
	}
	return fmt.Sprintf("interrupted; the chains' state is saved in %s: %s", e.Checkpoint, how)
}

func (e *InterruptedError) Unwrap() error { return e.Err }

// HasCheckpoint reports whether the fit output directory dir holds the
// checkpoint of an unfinished run.
func HasCheckpoint(dir string) bool {
	_, err := os.Stat(filepath.Join(dir, CheckpointDir, runFile))
	return err == nil
}

// FitCheckpointMatches reports whether cfg.Output holds the checkpoint of
// an unfinished run of cfg on the same inputs, so that the fit can be
// resumed. Inputs on standard input cannot be checked.
func FitCheckpointMatches(cfg FitConfig) bool {
	cfg = cfg.WithDefaults()
	// Hashing the inputs costs a pass over them; most fits have no
	// checkpoint to compare with.
	if cfg.Counts == StdioPath || cfg.Vocab == StdioPath || !HasCheckpoint(cfg.Output) {
		return false
	}
	paths := []string{cfg.Counts, cfg.Vocab}
	if cfg.InitFrom != "" {
		paths = append(paths, filepath.Join(cfg.InitFrom, DrawsFile))
	}
	var inputs []input.Fingerprint
	for _, p := range paths {
		fp, err := input.FingerprintFile(p)
		if err != nil {
			return false
		}
		inputs = append(inputs, fp)
	}
	key, _, _, err := fitKey(cfg, inputs)
	if err != nil {
		return false
	}
	f, err := os.Open(filepath.Join(cfg.Output, CheckpointDir, runFile))
	if err != nil {
		return false
	}
	defer f.Close()
	var head [headerSize]byte
	if _, err := io.ReadFull(f, head[:]); err != nil {
		return false
	}
	return bytes.Equal(head[len(ckptMagic)+1:], key[:])
}

const (
	runFile    = "run.ckpt"
	headerSize = 8 + 1 + sha256.Size
)

var (
	ckptMagic  = [8]byte{'p', 'w', 'e', 'C', 'K', 'P', 'T', 1}
	castagnoli = crc32.MakeTable(crc32.Castagnoli)
)

// File kinds, the byte after the magic.
const (
	kindRun   = 'R'
	kindChain = 'C'
)

// fitKey hashes what the draws depend on: pwe's version, the content
// settings (seed included; paths, threads and memory are not content) and
// the inputs' contents.
func fitKey(cfg FitConfig, inputs []input.Fingerprint) (key [sha256.Size]byte, settings, ins []byte, err error) {
	if settings, err = json.Marshal(cfg); err != nil {
		return key, nil, nil, err
	}
	content := make([]input.Fingerprint, len(inputs))
	for i, fp := range inputs {
		content[i] = input.Fingerprint{Size: fp.Size, SHA256: fp.SHA256}
	}
	if ins, err = json.Marshal(content); err != nil {
		return key, nil, nil, err
	}
	h := sha256.New()
	fmt.Fprintf(h, "pwe fit checkpoint\x00%s\x00%s\x00%s", version.String(), settings, ins)
	copy(key[:], h.Sum(nil))
	return key, settings, ins, nil
}

// gibbsRun is one Gibbs run of the fit stage, with its checkpoint.
type gibbsRun struct {
	cfg    FitConfig
	dir    string // checkpoint directory; "" without checkpoints
	key    [sha256.Size]byte
	set    []byte // settings JSON, for messages on a mismatch
	ins    []byte // content of the inputs' fingerprints, JSON
	floats int    // float32 values per spilled draw
	gcfg   posterior.GibbsConfig

	finished bool // the outputs are written
}

func newGibbsRun(cfg FitConfig, inputs []input.Fingerprint, v int) (*gibbsRun, error) {
	r := &gibbsRun{cfg: cfg, floats: 2 * v * cfg.Dim}
	if cfg.Method != "gibbs" || cfg.CheckpointInterval == NoCheckpoints {
		return r, nil
	}
	r.dir = filepath.Join(cfg.Output, CheckpointDir)
	var err error
	r.key, r.set, r.ins, err = fitKey(cfg, inputs)
	return r, err
}

// resuming reports whether the run continues a checkpoint.
func (r *gibbsRun) resuming() bool { return r.cfg.Resume && r.dir != "" }

// writeFile writes one checkpoint file atomically: the magic, the kind, the
// key, the body, and the CRC-32C of all of it.
func (r *gibbsRun) writeFile(name string, kind byte, body func(w *bufio.Writer) error) error {
	path := filepath.Join(r.dir, name)
	f, err := atomicfile.Create(path)
	if err != nil {
		return err
	}
	defer f.Abort()
	crc := crc32.New(castagnoli)
	w := bufio.NewWriterSize(io.MultiWriter(f, crc), 1<<20)
	w.Write(ckptMagic[:])
	w.WriteByte(kind)
	w.Write(r.key[:])
	if err := body(w); err != nil {
		return fmt.Errorf("checkpoint %s: %w", path, err)
	}
	if err := w.Flush(); err != nil {
		return fmt.Errorf("checkpoint %s: %w", path, err)
	}
	if _, err := f.Write(binary.LittleEndian.AppendUint32(nil, crc.Sum32())); err != nil {
		return fmt.Errorf("checkpoint %s: %w", path, err)
	}
	return f.Commit()
}

// readFile reads and checks one checkpoint file and returns its body.
// A file with another key is refused with ErrCheckpointMismatch.
func (r *gibbsRun) readFile(name string, kind byte) (*bytes.Reader, error) {
	path := filepath.Join(r.dir, name)
	key, body, err := checkFile(path, kind)
	if err != nil {
		return nil, err
	}
	if !bytes.Equal(key, r.key[:]) {
		return nil, r.mismatch(path, body, kind)
	}
	return bytes.NewReader(body), nil
}

// checkFile reads the checkpoint file at path and checks its header, kind
// and checksum; it returns the key and the body.
func checkFile(path string, kind byte) (key, body []byte, err error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, nil, fmt.Errorf("checkpoint: %w", err)
	}
	if len(b) < headerSize+4 || !bytes.Equal(b[:len(ckptMagic)], ckptMagic[:]) {
		return nil, nil, fmt.Errorf("checkpoint %s: %w (%d bytes, no pwe checkpoint header)", path, ErrBadCheckpoint, len(b))
	}
	all, sum := b[:len(b)-4], binary.LittleEndian.Uint32(b[len(b)-4:])
	if crc32.Checksum(all, castagnoli) != sum {
		return nil, nil, fmt.Errorf("checkpoint %s: %w (checksum mismatch)", path, ErrBadCheckpoint)
	}
	if b[len(ckptMagic)] != kind {
		return nil, nil, fmt.Errorf("checkpoint %s: %w (kind %q, want %q)", path, ErrBadCheckpoint, b[len(ckptMagic)], kind)
	}
	return all[len(ckptMagic)+1 : headerSize], all[headerSize:], nil
}

// mismatch explains which settings or inputs differ from the checkpoint's.
func (r *gibbsRun) mismatch(path string, body []byte, kind byte) error {
	msg := "pwe version, inputs or settings differ"
	if kind == kindRun {
		br := bytes.NewReader(body)
		set, err1 := readBytes(br)
		ins, err2 := readBytes(br)
		if err1 == nil && err2 == nil {
			msg = describeChange(set, r.set, ins, r.ins)
		}
	}
	return fmt.Errorf("%s: %w: %s; run without --resume to start over", path, ErrCheckpointMismatch, msg)
}

// describeChange names the settings that changed, or says the inputs or
// the version did.
func describeChange(oldSet, newSet, oldIns, newIns []byte) string {
	var was, now map[string]any
	if json.Unmarshal(oldSet, &was) == nil && json.Unmarshal(newSet, &now) == nil {
		var diffs []string
		for k, v := range now {
			if o, _ := json.Marshal(was[k]); string(o) != mustJSON(v) {
				diffs = append(diffs, fmt.Sprintf("%s %s, now %s", k, o, mustJSON(v)))
			}
		}
		for k, v := range was {
			if _, ok := now[k]; !ok {
				diffs = append(diffs, fmt.Sprintf("%s %s, now unset", k, mustJSON(v)))
			}
		}
		if len(diffs) > 0 {
			sort.Strings(diffs)
			return "settings changed: " + strings.Join(diffs, "; ")
		}
	}
	if !bytes.Equal(oldIns, newIns) {
		return "the inputs' contents changed"
	}
	return "made by another pwe version"
}

func mustJSON(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

func writeBytes(w io.Writer, b []byte) {
	w.Write(binary.LittleEndian.AppendUint64(nil, uint64(len(b))))
	w.Write(b)
}

func readBytes(r *bytes.Reader) ([]byte, error) {
	var n uint64
	if err := binary.Read(r, binary.LittleEndian, &n); err != nil {
		return nil, err
	}
	if n > uint64(r.Len()) {
		return nil, io.ErrUnexpectedEOF
	}
	b := make([]byte, n)
	_, err := io.ReadFull(r, b)
	return b, err
}

// mapCheckpoint is what run.ckpt holds besides the MAP vectors.
type mapCheckpoint struct {
	Stats      FitStats `json:"stats"`
	MAPSeconds float64  `json:"map_seconds"`
}

// saveMAP writes run.ckpt: the settings, the inputs, the MAP and its
// statistics, and the anchored chains' start when it is not the MAP (the
// draw whose anchor values are fixed), so that a resumed run skips the
// MAP and the chain that drew the start.
func (r *gibbsRun) saveMAP(m, start *posterior.Params, stats FitStats) error {
	extra, err := json.Marshal(mapCheckpoint{Stats: stats, MAPSeconds: stats.MAPSeconds})
	if err != nil {
		return err
	}
	return r.writeFile(runFile, kindRun, func(w *bufio.Writer) error {
		writeBytes(w, r.set)
		writeBytes(w, r.ins)
		writeBytes(w, extra)
		if _, err := m.WriteTo(w); err != nil || start == m {
			return err
		}
		_, err := start.WriteTo(w)
		return err
	})
}

// loadMAP reads run.ckpt: the MAP and the anchored chains' start.
func (r *gibbsRun) loadMAP(stats *FitStats) (m, start *posterior.Params, err error) {
	path := filepath.Join(r.dir, runFile)
	if _, err := os.Stat(path); errors.Is(err, fs.ErrNotExist) {
		return nil, nil, fmt.Errorf("%w in %s (the run finished, was never started, or was stopped before its MAP was found)", ErrNoCheckpoint, r.dir)
	}
	br, err := r.readFile(runFile, kindRun)
	if err != nil {
		return nil, nil, err
	}
	var extra []byte
	for range 3 {
		if extra, err = readBytes(br); err != nil {
			return nil, nil, fmt.Errorf("checkpoint %s: %w: %w", path, ErrBadCheckpoint, err)
		}
	}
	var mc mapCheckpoint
	if err := json.Unmarshal(extra, &mc); err != nil {
		return nil, nil, fmt.Errorf("checkpoint %s: %w: %w", path, ErrBadCheckpoint, err)
	}
	// One buffered reader for both Params, as each read buffers ahead.
	pr := bufio.NewReaderSize(br, 1<<16)
	if m, err = posterior.ReadParams(pr); err != nil {
		return nil, nil, fmt.Errorf("checkpoint %s: %w", path, err)
	}
	if m.V != stats.V || m.D != r.cfg.Dim {
		return nil, nil, fmt.Errorf("checkpoint %s: %w (MAP of %d x %d, want %d x %d)", path, ErrBadCheckpoint, m.V, m.D, stats.V, r.cfg.Dim)
	}
	start = m
	if mc.Stats.AnchorValues == posterior.AnchorAtDraw.String() {
		if start, err = posterior.ReadParams(pr); err != nil {
			return nil, nil, fmt.Errorf("checkpoint %s: anchor values: %w", path, err)
		}
		if start.V != m.V || start.D != m.D {
			return nil, nil, fmt.Errorf("checkpoint %s: %w (anchor values of %d x %d, want %d x %d)", path, ErrBadCheckpoint, start.V, start.D, m.V, m.D)
		}
	}
	v, pairs := stats.V, stats.Pairs
	*stats = mc.Stats
	stats.V, stats.Pairs, stats.MAPSeconds = v, pairs, mc.MAPSeconds
	return m, start, nil
}

func chainFile(c int) string { return fmt.Sprintf("chain-%04d.ckpt", c) }

// statRecord is one sample_stats row of a chain file.
type statRecord struct {
	LogPosterior, LogLik, Seconds, GroupAccept float64
}

// saveChain makes the chain's spilled draws durable and writes its
// state. posterior.Gibbs serialises it with the spill's Draw calls.
func (r *gibbsRun) saveChain(sp *spill, st *posterior.ChainState) error {
	c := st.Chain
	n := sp.draws[c]
	if want := r.gcfg.KeptDraws(st.Sweep); n != want {
		return fmt.Errorf("stages: chain %d has %d draws at sweep %d, want %d", c, n, st.Sweep, want)
	}
	if err := sp.sync(c); err != nil {
		return err
	}
	rows := sp.chainStats(c)
	return r.writeFile(chainFile(c), kindChain, func(w *bufio.Writer) error {
		writeBytes(w, []byte(sp.files[c].Name()))
		recs := make([]statRecord, len(rows))
		for i, row := range rows {
			recs[i] = statRecord{row.LogPosterior, row.LogLik, row.Seconds, row.GroupAccept}
		}
		binary.Write(w, binary.LittleEndian, uint64(len(recs)))
		binary.Write(w, binary.LittleEndian, recs)
		_, err := st.WriteTo(w)
		return err
	})
}

// loadChain reads chain c's file: its state (nil when the chain never
// saved one), the path of its spill, and the sample statistics of its
// draws.
func (r *gibbsRun) loadChain(c int) (*posterior.ChainState, string, []formats.SampleStatsRow, error) {
	path := filepath.Join(r.dir, chainFile(c))
	if _, err := os.Stat(path); errors.Is(err, fs.ErrNotExist) {
		return nil, "", nil, nil
	}
	br, err := r.readFile(chainFile(c), kindChain)
	if err != nil {
		return nil, "", nil, err
	}
	bad := func(err error) error { return fmt.Errorf("checkpoint %s: %w: %w", path, ErrBadCheckpoint, err) }
	spillPath, err := readBytes(br)
	if err != nil {
		return nil, "", nil, bad(err)
	}
	var n uint64
	if err := binary.Read(br, binary.LittleEndian, &n); err != nil {
		return nil, "", nil, bad(err)
	}
	if n > uint64(br.Len())/32 {
		return nil, "", nil, bad(io.ErrUnexpectedEOF)
	}
	recs := make([]statRecord, n)
	if err := binary.Read(br, binary.LittleEndian, recs); err != nil {
		return nil, "", nil, bad(err)
	}
	st, err := posterior.ReadChainState(br)
	if err != nil {
		return nil, "", nil, bad(err)
	}
	if st.Chain != c || int(n) != r.gcfg.KeptDraws(st.Sweep) || st.Sweep > r.gcfg.Sweeps() {
		return nil, "", nil, bad(fmt.Errorf("chain %d at sweep %d with %d draws", st.Chain, st.Sweep, n))
	}
	rows := make([]formats.SampleStatsRow, n)
	for i, rec := range recs {
		rows[i] = formats.SampleStatsRow{Chain: int16(c), Draw: int32(i), LogPosterior: rec.LogPosterior, LogLik: rec.LogLik,
			Seconds: rec.Seconds, GroupAccept: rec.GroupAccept}
	}
	return st, string(spillPath), rows, nil
}

// removeStaleSpills removes the spill files that the chain files of an
// earlier, interrupted run in dir name, before a fresh run replaces that
// checkpoint: they lie in the earlier run's temporary directory, which
// need not be this run's. Only files named as pwe names spills are
// removed, and unreadable chain files are skipped (whatever their key:
// the settings may have changed).
func removeStaleSpills(dir string) {
	names, _ := filepath.Glob(filepath.Join(dir, "chain-*.ckpt"))
	for _, name := range names {
		_, body, err := checkFile(name, kindChain)
		if err != nil {
			continue
		}
		path, err := readBytes(bytes.NewReader(body))
		if err != nil || !strings.HasPrefix(filepath.Base(string(path)), spillPrefix) {
			continue
		}
		os.Remove(string(path))
	}
}

// spillPrefix begins the names of checkpointed runs' spill files.
const spillPrefix = ".pwe-draws-"

// spillPaths names the spill files of a checkpointed run: fixed names
// derived from the output directory, so that a rerun reuses them rather
// than leaving orphans.
func spillPaths(cfg FitConfig) []string {
	abs, err := filepath.Abs(cfg.Output)
	if err != nil {
		abs = cfg.Output
	}
	h := sha256.Sum256([]byte(abs))
	paths := make([]string, cfg.Chains)
	for c := range paths {
		paths[c] = filepath.Join(cfg.TempDir, fmt.Sprintf("%s%s-%04d", spillPrefix, hex.EncodeToString(h[:6]), c))
	}
	return paths
}

// sample runs the Gibbs chains from the MAP m, or continues the
// checkpointed run, and returns the spill holding the draws. Without
// checkpoints its files are removed when sampling fails; with them they
// stay, with the checkpoint, for a resumed run.
func (r *gibbsRun) sample(ctx context.Context, data *posterior.Data, m, start *posterior.Params, starts []*posterior.Params, stats *FitStats) (*spill, error) {
	cfg := r.cfg
	init, _ := posterior.ParseInitMode(cfg.Init)
	warmup := *cfg.Warmup
	if warmup == 0 {
		warmup = posterior.NoWarmup
	}
	moves := *cfg.GroupMoves
	if moves == 0 {
		moves = posterior.NoGroupMoves
	}
	relax := *cfg.Overrelax
	if relax == 0 {
		relax = posterior.NoOverrelax
	}
	r.gcfg = posterior.GibbsConfig{
		Dim: cfg.Dim, Chains: cfg.Chains, Warmup: warmup, Draws: cfg.Draws, Thin: cfg.Thin,
		Inner: cfg.Inner, GroupMoves: moves, Overrelax: relax, Init: init, PriorSD: cfg.PriorSD, Threads: cfg.Threads, Seed: cfg.Seed,
		Anchors: posterior.AnchorRule{Kind: posterior.AnchorIDs, IDs: stats.Anchors}, OnSweep: cfg.OnSweep,
	}
	if starts != nil {
		r.gcfg.Init, r.gcfg.Starts = posterior.InitGiven, starts
	}
	if r.dir == "" {
		sp, err := newSpill(cfg.TempDir, cfg.Chains, r.floats)
		if err != nil {
			return nil, err
		}
		if err := r.gibbs(ctx, data, start, sp, stats); err != nil {
			sp.remove()
			return nil, err
		}
		return sp, nil
	}

	paths := spillPaths(cfg)
	draws := make([]int, cfg.Chains)
	var rows []formats.SampleStatsRow
	if r.resuming() {
		r.gcfg.Resume = make([]*posterior.ChainState, cfg.Chains)
		for c := range cfg.Chains {
			st, path, chainRows, err := r.loadChain(c)
			if err != nil {
				return nil, err
			}
			if st == nil {
				continue
			}
			r.gcfg.Resume[c], paths[c], draws[c] = st, path, len(chainRows)
			rows = append(rows, chainRows...)
		}
	} else {
		removeStaleSpills(r.dir)
		if err := os.RemoveAll(r.dir); err != nil {
			return nil, err
		}
		if err := os.MkdirAll(r.dir, 0o755); err != nil {
			return nil, err
		}
		if err := r.saveMAP(m, start, *stats); err != nil {
			return nil, err
		}
	}
	sp, err := openSpill(paths, r.floats, draws)
	if err != nil {
		return nil, err
	}
	sp.stats = rows
	r.gcfg.Checkpoint = func(st *posterior.ChainState) error { return r.saveChain(sp, st) }
	r.gcfg.CheckpointEvery, r.gcfg.CheckpointInterval = cfg.CheckpointEvery, cfg.CheckpointInterval
	if cfg.CheckpointEvery == 0 && cfg.CheckpointInterval == 0 {
		r.gcfg.CheckpointInterval = DefaultCheckpointInterval
	}
	if err := r.gibbs(ctx, data, start, sp, stats); err != nil {
		sp.close()
		if ctx.Err() != nil {
			return nil, &InterruptedError{Checkpoint: r.dir, Err: err}
		}
		return nil, err
	}
	return sp, nil
}

func (r *gibbsRun) gibbs(ctx context.Context, data *posterior.Data, m *posterior.Params, sp *spill, stats *FitStats) error {
	done := 0
	for _, st := range r.gcfg.Resume {
		if st != nil {
			done += st.Sweep
		}
	}
	start := time.Now()
	if _, err := posterior.Gibbs(ctx, data, m, r.gcfg, sp); err != nil {
		return err
	}
	stats.GibbsSeconds = time.Since(start).Seconds()
	stats.SweepsPerSec = float64(r.cfg.Chains*r.gcfg.Sweeps()-done) / stats.GibbsSeconds
	stats.Draws = r.cfg.Draws
	return sp.flush()
}

// finish removes the checkpoint once the outputs are written. A fit that
// kept none (another method, or checkpoints off) removes the checkpoint of
// an interrupted fit in its directory, with its spill files, which it has
// replaced: they would otherwise stay for good.
func (r *gibbsRun) finish() error {
	r.finished = true
	dir := r.dir
	if dir == "" {
		if !HasCheckpoint(r.cfg.Output) {
			return nil
		}
		dir = filepath.Join(r.cfg.Output, CheckpointDir)
		removeStaleSpills(dir)
	}
	return os.RemoveAll(dir)
}

// release closes the spill, and removes it unless an unfinished
// checkpoint refers to it.
func (r *gibbsRun) release(sp *spill) {
	if r.dir == "" || r.finished {
		sp.remove()
		return
	}
	sp.close()
}
