package stages

import (
	"bufio"
	"encoding/binary"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"strings"

	"github.com/pwe-project/pwe/formats"
	"github.com/pwe-project/pwe/internal/cleanup"
	"github.com/pwe-project/pwe/posterior"
)

// spill keeps the draws of a Gibbs run on disk while it runs: one file per
// chain, one fixed-size record per kept draw (every target vector, then
// every context vector, as little-endian float32, the precision of
// draws.parquet). From these files draws.parquet is written in (chain, draw)
// order whatever order the chains finished in, and the summary transposes
// them in blocks of coordinates, so no step holds all draws in memory.
type spill struct {
	files  []*os.File
	bufs   []*bufio.Writer
	floats int // float32 values per record
	draws  []int
	stats  []formats.SampleStatsRow
	enc    []byte
}

func newSpill(dir string, chains, floats int) (*spill, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	s := &spill{floats: floats, draws: make([]int, chains), enc: make([]byte, 4*floats)}
	for range chains {
		f, err := os.CreateTemp(dir, ".pwe-draws-*")
		if err != nil {
			s.remove()
			return nil, fmt.Errorf("draws spill: %w", err)
		}
		cleanup.Add(f.Name())
		s.files = append(s.files, f)
		s.bufs = append(s.bufs, bufio.NewWriterSize(f, 1<<20))
	}
	return s, nil
}

// openSpill opens the spill files of a checkpointed run at fixed paths,
// creating them if need be and cutting chain c's to its first draws[c]
// records: those the checkpoint accounts for.
func openSpill(paths []string, floats int, draws []int) (*spill, error) {
	s := &spill{floats: floats, draws: make([]int, len(paths)), enc: make([]byte, 4*floats)}
	record := int64(4 * floats)
	for c, path := range paths {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			s.close()
			return nil, err
		}
		f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o644)
		if err != nil {
			s.close()
			return nil, fmt.Errorf("draws spill: %w", err)
		}
		s.files = append(s.files, f)
		s.bufs = append(s.bufs, bufio.NewWriterSize(f, 1<<20))
		want := int64(draws[c]) * record
		info, err := f.Stat()
		if err == nil && info.Size() < want {
			err = fmt.Errorf("draws spill %s: %d draws, the checkpoint accounts for %d", path, info.Size()/record, draws[c])
		}
		if err == nil {
			err = f.Truncate(want)
		}
		if err == nil {
			_, err = f.Seek(want, io.SeekStart)
		}
		if err != nil {
			s.close()
			return nil, err
		}
		s.draws[c] = draws[c]
	}
	return s, nil
}

// Draw implements posterior.Sink; the engine serialises the calls.
func (s *spill) Draw(chain, draw int, p *posterior.Params, st posterior.DrawStats) error {
	if draw != s.draws[chain] {
		return fmt.Errorf("stages: chain %d delivered draw %d, want %d", chain, draw, s.draws[chain])
	}
	b := s.enc[:0]
	for _, x := range p.Rho {
		b = binary.LittleEndian.AppendUint32(b, math.Float32bits(float32(x)))
	}
	for _, x := range p.Alpha {
		b = binary.LittleEndian.AppendUint32(b, math.Float32bits(float32(x)))
	}
	if _, err := s.bufs[chain].Write(b); err != nil {
		return fmt.Errorf("draws spill: %w", err)
	}
	s.draws[chain]++
	s.stats = append(s.stats, formats.SampleStatsRow{
		Chain: int16(chain), Draw: int32(draw), LogPosterior: st.LogPosterior, LogLik: st.LogLik, Seconds: st.Seconds, GroupAccept: st.GroupAccept,
	})
	return nil
}

func (s *spill) flush() error {
	for _, b := range s.bufs {
		if err := b.Flush(); err != nil {
			return fmt.Errorf("draws spill: %w", err)
		}
	}
	return nil
}

// sync makes chain's draws durable, for a checkpoint.
func (s *spill) sync(chain int) error {
	if err := s.bufs[chain].Flush(); err != nil {
		return fmt.Errorf("draws spill: %w", err)
	}
	if err := s.files[chain].Sync(); err != nil {
		return fmt.Errorf("draws spill: %w", err)
	}
	return nil
}

// chainStats returns the sample statistics of chain's draws, in order.
func (s *spill) chainStats(chain int) []formats.SampleStatsRow {
	var rows []formats.SampleStatsRow
	for _, r := range s.stats {
		if int(r.Chain) == chain {
			rows = append(rows, r)
		}
	}
	return rows
}

// close closes the files and keeps them, for a resumed run.
func (s *spill) close() {
	for _, f := range s.files {
		f.Close()
	}
}

func (s *spill) remove() {
	for _, f := range s.files {
		f.Close()
		os.Remove(f.Name())
		cleanup.Forget(f.Name())
	}
}

// readRange reads values [lo, hi) of record draw of chain into dst.
func (s *spill) readRange(chain, draw, lo, hi int, raw []byte, dst []float32) error {
	raw = raw[:4*(hi-lo)]
	off := (int64(draw)*int64(s.floats) + int64(lo)) * 4
	if _, err := s.files[chain].ReadAt(raw, off); err != nil {
		return fmt.Errorf("draws spill: %w", err)
	}
	decodeFloats(dst[:hi-lo], raw)
	return nil
}

func decodeFloats(dst []float32, raw []byte) {
	for i := range dst {
		dst[i] = math.Float32frombits(binary.LittleEndian.Uint32(raw[4*i:]))
	}
}

// writeSummary summarises every free coordinate: the draws are read in
// blocks of coordinates sized so that a block of float64 draws fits in
// cfg.Memory, and each block is summarised by cfg.Threads goroutines.
func writeSummary(path string, s *spill, free []int, tokens []string, cfg FitConfig, stats *FitStats,
	meta func(string) formats.Meta) error {
	chains, n := len(s.files), s.draws[0]
	perCoord := int64(chains*n) * 8
	block := int(max(1, cfg.Memory/perCoord))
	vals := make([]float64, min(block, len(free))*chains*n)
	rows := make([]formats.SummaryRow, min(block, len(free)))
	blockStats := make([]formats.Stats, len(rows))
	v, dim := len(tokens), cfg.Dim
	w, err := formats.Create[formats.SummaryRow](path, meta(formats.SchemaSummary))
	if err != nil {
		return err
	}
	defer w.Abort()
	var conv convergence
	progress := func(int, int) {}
	if cfg.OnSummarized != nil {
		progress = cfg.OnSummarized
	}
	progress(0, len(free))
	for start := 0; start < len(free); start += block {
		coords := free[start:min(start+block, len(free))]
		lo, hi := coords[0], coords[len(coords)-1]+1
		raw := make([]byte, 4*(hi-lo))
		rec := make([]float32, hi-lo)
		for c := range chains {
			for d := range n {
				if err := s.readRange(c, d, lo, hi, raw, rec); err != nil {
					return err
				}
				for k, off := range coords {
					vals[(k*chains+c)*n+d] = float64(rec[off-lo])
				}
			}
		}
		summarizeEach(blockStats[:len(coords)], chains, cfg.Threads, func(_, k int) []float64 {
			return vals[k*chains*n : (k+1)*chains*n]
		})
		for k, off := range coords {
			param, tok := formats.ParamRho, off/dim
			if off >= v*dim {
				param, tok = formats.ParamAlpha, (off-v*dim)/dim
			}
			r := &rows[k]
			r.Stats = blockStats[k]
			r.Param, r.TokenID, r.Token, r.Dim = param, int32(tok), tokens[tok], int16(off%dim)
			conv.add(r)
		}
		if err := w.Write(rows[:len(coords)]); err != nil {
			return err
		}
		progress(start+len(coords), len(free))
	}
	// R-hat is defined from fewer draws than the bulk ESS: each is
	// recorded where it is, the largest R-hat even when no ESS is.
	if conv.worstRhat.Rhat > 0 {
		stats.MaxRhat = conv.worstRhat.Rhat
	}
	if conv.haveESS {
		stats.MinESSBulk = conv.worstESS.ESSBulk
	}
	if cfg.Method == "gibbs" {
		if msg := conv.warning(chains); msg != "" {
			stats.Warnings = append(stats.Warnings, msg)
		} else if stats.MaxRhat == 0 {
			stats.Warnings = append(stats.Warnings, fmt.Sprintf("R-hat and ESS cannot be computed from %d draws per chain, so the chains' convergence is unknown: give more --draws", n))
		}
	}
	return w.Close()
}

// Thresholds of the usual convergence rule (Vehtari et al. 2021): R-hat
// below 1.01 and a bulk ESS of at least 100 per chain.
const (
	rhatThreshold      = 1.01
	essPerChainMinimum = 100
)

// convergence follows the summary's rows: the largest R-hat and the
// smallest bulk ESS (FitStats) and, for the fit's warning, how many
// coordinates break the usual rule. Too few draws give NaN, which is never
// a worst case.
type convergence struct {
	rows, highRhat      int
	haveESS             bool
	worstRhat, worstESS formats.SummaryRow
}

func (c *convergence) add(r *formats.SummaryRow) {
	c.rows++
	if r.Rhat > rhatThreshold { // NaN never is
		c.highRhat++
	}
	if r.Rhat > c.worstRhat.Rhat {
		c.worstRhat = *r
	}
	if !math.IsNaN(r.ESSBulk) && (!c.haveESS || r.ESSBulk < c.worstESS.ESSBulk) {
		c.worstESS, c.haveESS = *r, true
	}
}

// warning says which coordinates break the rule for the given number of
// chains, or returns "" when none does.
func (c *convergence) warning(chains int) string {
	minESS := float64(essPerChainMinimum * chains)
	lowESS := c.haveESS && c.worstESS.ESSBulk < minESS
	if c.highRhat == 0 && !lowESS {
		return ""
	}
	name := func(r formats.SummaryRow) string {
		return fmt.Sprintf("%s[%q][%d]", r.Param, r.Token, r.Dim)
	}
	var parts []string
	if c.highRhat > 0 {
		parts = append(parts, fmt.Sprintf("%d of %d raw coordinates (%.2g%%) have R-hat above %g, the largest %.4g at %s",
			c.highRhat, c.rows, 100*float64(c.highRhat)/float64(c.rows), rhatThreshold, c.worstRhat.Rhat, name(c.worstRhat)))
	}
	if lowESS {
		parts = append(parts, fmt.Sprintf("the smallest bulk ESS is %.0f at %s (want %.0f: %d per chain)",
			c.worstESS.ESSBulk, name(c.worstESS), minESS, essPerChainMinimum))
	}
	return strings.Join(parts, "; ") + ": the chains have not mixed well enough in the raw coordinates for their summaries to be trusted;" +
		" logits and cosines usually mix better (pwe summarize reports their R-hat), and more --draws (or --thin) help"
}

// drawsSchema is draws.parquet's schema for the layout cfg asks for.
func drawsSchema(cfg FitConfig) string {
	if cfg.DrawsLayout == "long" {
		return formats.SchemaDrawsLong
	}
	return formats.SchemaDraws
}

// writeDraws writes draws.parquet from the spill files in (chain, draw,
// param, token) order, for the tokens marked in keep, with metadata meta.
// Its rows can be written while the summary is (both only read the
// spill): before it closes the file it calls summary, which waits for the
// summary, returns its error (the file is then dropped) and the fit's
// statistics, which the summary completes, for the file's pwe.stats.
func writeDraws(path string, s *spill, tokens []string, keep []bool, cfg FitConfig, meta formats.Meta, summary func() (FitStats, error)) error {
	v, dim := len(tokens), cfg.Dim
	long := cfg.DrawsLayout == "long"
	var wv *formats.Writer[formats.DrawRow]
	var wl *formats.Writer[formats.DrawLongRow]
	var err error
	if long {
		wl, err = formats.Create[formats.DrawLongRow](path, meta)
	} else {
		wv, err = formats.Create[formats.DrawRow](path, meta)
	}
	if err != nil {
		return err
	}
	defer func() {
		if wv != nil {
			wv.Abort()
		}
		if wl != nil {
			wl.Abort()
		}
	}()
	raw := make([]byte, 4*s.floats)
	rec := make([]float32, s.floats)
	var vrows []formats.DrawRow
	var lrows []formats.DrawLongRow
	for c, f := range s.files {
		r := bufio.NewReaderSize(io.NewSectionReader(f, 0, int64(s.draws[c])*int64(len(raw))), 1<<20)
		for d := range s.draws[c] {
			if _, err := io.ReadFull(r, raw); err != nil {
				return fmt.Errorf("draws spill: %w", err)
			}
			decodeFloats(rec, raw)
			vrows, lrows = vrows[:0], lrows[:0]
			for p, param := range []string{formats.ParamRho, formats.ParamAlpha} {
				for i, tok := range tokens {
					if !keep[i] {
						continue
					}
					vec := rec[(p*v+i)*dim : (p*v+i+1)*dim]
					if !long {
						vrows = append(vrows, formats.DrawRow{Chain: int16(c), Draw: int32(d), Param: param, TokenID: int32(i), Token: tok, Vector: vec})
						continue
					}
					for k, x := range vec {
						lrows = append(lrows, formats.DrawLongRow{Chain: int16(c), Draw: int32(d), Param: param, TokenID: int32(i), Token: tok, Dim: int16(k), Value: x})
					}
				}
			}
			if long {
				err = wl.Write(lrows)
			} else {
				err = wv.Write(vrows)
			}
			if err != nil {
				return err
			}
		}
	}
	stats, err := summary()
	if err != nil {
		return err
	}
	if long {
		if err := wl.SetStats(stats); err != nil {
			return err
		}
		return wl.Close()
	}
	if err := wv.SetStats(stats); err != nil {
		return err
	}
	return wv.Close()
}
