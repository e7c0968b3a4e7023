package pipeline

import (
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/pwe-project/pwe/stages"
)

// ProgressKey is the attribute group of a plain progress record (done,
// total, unit, rate, ETA); the text format leaves it out, as the message
// says the same.
const ProgressKey = "progress"

// UnitBytes makes progress figures print as MiB.
const UnitBytes = "bytes"

// MergeParts is the unit of count's merge: the parts, of about equal work,
// in which its targets are merged and written.
const MergeParts = "merge parts"

type progressStyle int

const (
	styleOff progressStyle = iota
	styleLines
	styleBar
)

func (r *Reporter) progressStyle() progressStyle {
	switch {
	case r == nil, r.cfg.Quiet, r.cfg.Progress == ProgressNever:
		return styleOff
	case r.cfg.Format == LogJSON:
		return styleLines
	case r.cfg.Progress == ProgressAlways, r.cfg.Terminal:
		return styleBar
	}
	return styleLines
}

// Progress counts the work done by one long step and shows it: a bar
// redrawn in place on a terminal, a plain line (a log record) every
// Interval otherwise. Total is the work expected, or 0 when unknown: then
// only the count and the rate show. Add may be called from any goroutine.
// A nil *Progress is valid and counts nothing.
type Progress struct {
	r     *Reporter
	log   *slog.Logger
	stage string
	unit  string
	total int64 // guarded by mu
	style progressStyle

	done    atomic.Int64
	skipped atomic.Int64 // part of done that was done before (Skip)

	mu          sync.Mutex // guards total, start, last and ended
	start, last time.Time
	ended       bool
}

// Progress starts reporting the progress of stage in units (such as
// "sweeps" or UnitBytes) out of total (0: unknown). Call Done at the end.
func (r *Reporter) Progress(stage, unit string, total int64) *Progress {
	if r == nil {
		return nil
	}
	now := r.cfg.Now()
	return &Progress{
		r: r, log: r.Stage(stage), stage: stage, unit: unit, total: total,
		style: r.progressStyle(), start: now, last: now,
	}
}

// Add records n more units of work.
func (p *Progress) Add(n int64) {
	if p == nil {
		return
	}
	p.done.Add(n)
	if p.style == styleOff {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.update()
}

// update shows the count if the last showing is long enough ago; p.mu is
// held.
func (p *Progress) update() {
	period := p.r.cfg.Interval
	if p.style == styleBar {
		period /= 50
	}
	now := p.r.cfg.Now()
	if p.ended || now.Sub(p.last) < period {
		return
	}
	p.last = now
	p.show(p.done.Load(), now)
}

// Skip records n units of work done before this report began, such as
// the sweeps of a resumed fit: they count towards the total, not towards
// the rate.
func (p *Progress) Skip(n int64) {
	if p == nil {
		return
	}
	p.skipped.Add(n)
	p.Add(n)
}

// SetTotal changes the work expected (0: unknown), for a step that learns
// it as it goes; it makes Progress a stages.ReadProgress.
func (p *Progress) SetTotal(total int64) {
	if p == nil {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.total = total
	if p.style != styleOff {
		p.update()
	}
}

// Done ends the report and takes the bar off the screen (the stage's
// summary follows it).
func (p *Progress) Done() {
	if p == nil {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.ended {
		return
	}
	p.ended = true
	if p.style == styleBar {
		r := p.r
		r.mu.Lock()
		if r.bar != "" {
			fmt.Fprint(r.w, "\r\x1b[K")
			r.bar = ""
		}
		r.mu.Unlock()
	}
}

// Count returns the work recorded so far.
func (p *Progress) Count() int64 {
	if p == nil {
		return 0
	}
	return p.done.Load()
}

// show draws the bar or logs a line; p.mu is held.
func (p *Progress) show(done int64, now time.Time) {
	elapsed := now.Sub(p.start).Seconds()
	rate := 0.0
	if elapsed > 0 {
		rate = float64(done-p.skipped.Load()) / elapsed
	}
	eta := -1.0
	if p.total > 0 && rate > 0 && done <= p.total {
		eta = float64(p.total-done) / rate
	}
	if p.style == styleLines {
		p.line(done, rate, eta, elapsed)
		return
	}
	p.bar(done, rate, eta, elapsed)
}

func (p *Progress) line(done int64, rate, eta, elapsed float64) {
	var msg strings.Builder
	msg.WriteString(p.amount(done))
	if p.total > 0 {
		fmt.Fprintf(&msg, " (%.0f%%)", 100*float64(done)/float64(p.total))
	}
	fmt.Fprintf(&msg, ", %s", p.rate(rate))
	if eta >= 0 {
		fmt.Fprintf(&msg, ", about %s left", clock(eta))
	} else {
		fmt.Fprintf(&msg, ", %s so far", clock(elapsed))
	}
	attrs := []any{
		slog.Int64("done", done), slog.String("unit", p.unit),
		slog.Float64("rate_per_second", rate), slog.Float64("elapsed_seconds", elapsed),
	}
	if p.total > 0 {
		attrs = append(attrs, slog.Int64("total", p.total))
	}
	if eta >= 0 {
		attrs = append(attrs, slog.Float64("eta_seconds", eta))
	}
	p.log.Info(msg.String(), slog.Group(ProgressKey, attrs...))
}

func (p *Progress) bar(done int64, rate, eta, elapsed float64) {
	right := " " + p.amount(done) + "  " + p.rate(rate)
	if eta >= 0 {
		right += "  ETA " + clock(eta)
	} else {
		right += "  " + clock(elapsed)
	}
	left := p.stage + " "
	width := p.r.cfg.Width - 1 // the last column would wrap on some terminals
	var line string
	if p.total > 0 {
		frac := min(float64(done)/float64(p.total), 1)
		pct := fmt.Sprintf(" %3.0f%%", 100*frac)
		cells := width - len(left) - len(pct) - len(right) - 2
		if cells >= 10 {
			full := int(frac * float64(cells))
			line = left + "[" + strings.Repeat("=", full) + strings.Repeat(" ", cells-full) + "]" + pct + right
		} else {
			line = left + strings.TrimSpace(pct) + right
		}
	} else {
		line = left + strings.TrimSpace(right)
	}
	if len(line) > width {
		line = line[:width]
	}
	r := p.r
	r.mu.Lock()
	fmt.Fprint(r.w, "\r"+line+"\x1b[K")
	r.bar = line
	r.mu.Unlock()
}

func (p *Progress) amount(done int64) string {
	if p.unit == UnitBytes {
		s := mib(float64(done))
		if p.total > 0 {
			s += "/" + mib(float64(p.total))
		}
		return s
	}
	if p.total > 0 {
		return fmt.Sprintf("%d/%d %s", done, p.total, p.unit)
	}
	return fmt.Sprintf("%d %s", done, p.unit)
}

func (p *Progress) rate(r float64) string {
	if p.unit == UnitBytes {
		return mib(r) + "/s"
	}
	return fmt.Sprintf("%.1f %s/s", r, p.unit)
}

func mib(b float64) string { return fmt.Sprintf("%.1f MiB", b/(1<<20)) }

// clock formats seconds as 1h02m03s, 2m03s or 3s.
func clock(sec float64) string {
	d := time.Duration(sec+0.5) * time.Second
	h, m, s := int(d.Hours()), int(d.Minutes())%60, int(d.Seconds())%60
	switch {
	case h > 0:
		return fmt.Sprintf("%dh%02dm%02ds", h, m, s)
	case m > 0:
		return fmt.Sprintf("%dm%02ds", m, s)
	}
	return fmt.Sprintf("%ds", s)
}

// fitSweeps is the number of sweeps a fit runs in all: the total of its
// progress report (0 for a point estimate, which has no sweeps).
func fitSweeps(cfg stages.FitConfig) int64 {
	cfg = cfg.WithDefaults()
	if cfg.Method != "gibbs" {
		return 0
	}
	return int64(cfg.Chains) * int64(*cfg.Warmup+cfg.Draws*cfg.Thin)
}

// readCounter adapts p to the Progress hook of the tokenize, count and
// movielens stages, which report the raw bytes of input they read (and
// set the total). A nil p must become a nil interface, not an interface
// holding a nil pointer.
func readCounter(p *Progress) stages.ReadProgress {
	if p == nil {
		return nil
	}
	return p
}

// sweepCounter adapts p to the fit stage's OnSweep hook. A chain whose
// first sweep reported is not its first was resumed from a checkpoint: its
// earlier sweeps count as skipped, so the report starts where the
// interrupted run stopped.
func sweepCounter(p *Progress) func(chain, sweep int) {
	if p == nil {
		return nil
	}
	var mu sync.Mutex
	seen := map[int]bool{}
	return func(chain, sweep int) {
		mu.Lock()
		first := !seen[chain]
		seen[chain] = true
		mu.Unlock()
		if first && sweep > 0 {
			p.Skip(int64(sweep))
		}
		p.Add(1)
	}
}
