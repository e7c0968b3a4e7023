package pipeline

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"math"
	"path/filepath"
	"reflect"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/pwe-project/pwe/posterior"
	"github.com/pwe-project/pwe/stages"
)

// fakeClock is a clock the test moves by hand.
type fakeClock struct{ t time.Time }

func (c *fakeClock) now() time.Time          { return c.t }
func (c *fakeClock) advance(d time.Duration) { c.t = c.t.Add(d) }

func newFake() *fakeClock { return &fakeClock{t: time.Date(2026, 11, 21, 12, 0, 0, 0, time.UTC)} }

// TestProgressLines drives a non-terminal report with a fake clock: a line
// every Interval, none in between, with rate and ETA from the counts.
func TestProgressLines(t *testing.T) {
	var buf bytes.Buffer
	clk := newFake()
	r := NewReporter(&buf, ReporterConfig{Interval: 10 * time.Second, Now: clk.now})
	p := r.Progress("fit", "sweeps", 100)
	p.Add(10) // t = 0
	clk.advance(5 * time.Second)
	p.Add(10) // t = 5: too soon
	clk.advance(5 * time.Second)
	p.Add(10) // t = 10: 30 done, 3/s, 70 left
	clk.advance(9 * time.Second)
	p.Add(10) // t = 19: too soon after the last line
	clk.advance(time.Second)
	p.Add(20) // t = 20: 60 done, 3/s, 40 left
	p.Done()
	clk.advance(time.Minute)
	p.Add(40) // after Done: counted, not shown
	want := "fit: 30/100 sweeps (30%), 3.0 sweeps/s, about 23s left\n" +
		"fit: 60/100 sweeps (60%), 3.0 sweeps/s, about 13s left\n"
	if got := buf.String(); got != want {
		t.Errorf("progress lines:\n%q\nwant\n%q", got, want)
	}
	if p.Count() != 100 {
		t.Errorf("count %d, want 100", p.Count())
	}
}

func TestProgressUnknownTotalBytes(t *testing.T) {
	var buf bytes.Buffer
	clk := newFake()
	r := NewReporter(&buf, ReporterConfig{Now: clk.now})
	p := r.Progress("tokenize", UnitBytes, 0)
	clk.advance(DefaultInterval)
	p.Add(12 << 20)
	if want := "tokenize: 12.0 MiB, 1.2 MiB/s, 10s so far\n"; buf.String() != want {
		t.Errorf("got %q, want %q", buf.String(), want)
	}
}

// TestProgressJSON checks that a JSON log gets progress as records whose
// figures parse, never a bar, even on a terminal.
func TestProgressJSON(t *testing.T) {
	var buf bytes.Buffer
	clk := newFake()
	r := NewReporter(&buf, ReporterConfig{Format: LogJSON, Terminal: true, Progress: ProgressAlways, Now: clk.now})
	p := r.Progress("fit", "sweeps", 100)
	clk.advance(12 * time.Second)
	p.Add(30)
	p.Done()
	var rec struct {
		Level, Msg, Stage string
		Progress          struct {
			Done, Total    int64
			Unit           string
			RatePerSecond  float64 `json:"rate_per_second"`
			ETASeconds     float64 `json:"eta_seconds"`
			ElapsedSeconds float64 `json:"elapsed_seconds"`
		}
	}
	if err := json.Unmarshal(buf.Bytes(), &rec); err != nil {
		t.Fatalf("not one JSON object: %v\n%s", err, buf.String())
	}
	pr := rec.Progress
	if rec.Stage != "fit" || pr.Done != 30 || pr.Total != 100 || pr.Unit != "sweeps" || pr.ElapsedSeconds != 12 ||
		math.Abs(pr.RatePerSecond-2.5) > 1e-12 || math.Abs(pr.ETASeconds-28) > 1e-12 {
		t.Errorf("progress record %+v from %s", rec, buf.String())
	}
}

// TestProgressBar checks the terminal bar: drawn in place, taken off the
// line for a message and redrawn after it, cleared by Done.
func TestProgressBar(t *testing.T) {
	var buf bytes.Buffer
	clk := newFake()
	r := NewReporter(&buf, ReporterConfig{Terminal: true, Width: 70, Interval: 10 * time.Second, Now: clk.now})
	p := r.Progress("fit", "sweeps", 200)
	clk.advance(100 * time.Millisecond)
	p.Add(50) // under Interval/50 = 200ms: not drawn
	if buf.Len() != 0 {
		t.Fatalf("bar drawn too soon: %q", buf.String())
	}
	clk.advance(100 * time.Millisecond)
	p.Add(50) // 100 of 200 after 0.2s: 500/s, 0.2s left
	bar := "fit [" + strings.Repeat("=", 9) + strings.Repeat(" ", 10) + "]  50% 100/200 sweeps  500.0 sweeps/s  ETA 0s"
	if got := buf.String(); got != "\r"+bar+"\x1b[K" {
		t.Fatalf("bar %q, want %q", got, "\r"+bar+"\x1b[K")
	}
	if len(bar) != 69 {
		t.Fatalf("bar of %d columns on a 70-column terminal", len(bar))
	}
	buf.Reset()
	r.Stage("fit").Info("hello")
	if want := "\r\x1b[Kfit: hello\n" + bar; buf.String() != want {
		t.Errorf("message over a bar: %q, want %q", buf.String(), want)
	}
	buf.Reset()
	p.Done()
	if buf.String() != "\r\x1b[K" {
		t.Errorf("Done wrote %q, want the line cleared", buf.String())
	}
	buf.Reset()
	r.Stage("fit").Info("after")
	if buf.String() != "fit: after\n" {
		t.Errorf("message after Done: %q", buf.String())
	}
}

func TestProgressOff(t *testing.T) {
	for name, cfg := range map[string]ReporterConfig{
		"never": {Progress: ProgressNever, Terminal: true},
		"quiet": {Quiet: true, Progress: ProgressAlways},
	} {
		var buf bytes.Buffer
		clk := newFake()
		cfg.Now = clk.now
		p := NewReporter(&buf, cfg).Progress("fit", "sweeps", 10)
		clk.advance(time.Hour)
		p.Add(5)
		p.Done()
		if buf.Len() != 0 || p.Count() != 5 {
			t.Errorf("%s: wrote %q, counted %d", name, buf.String(), p.Count())
		}
	}
	var nilRep *Reporter
	p := nilRep.Progress("fit", "sweeps", 10)
	p.Add(1)
	p.Done()
	nilRep.Stage("x").Error("dropped")
}

func TestTextLog(t *testing.T) {
	var buf bytes.Buffer
	log := NewReporter(&buf, ReporterConfig{}).Stage("count")
	log.Info("done", slog.Any(StatsKey, stages.CountStats{Documents: 3}), slog.Float64(SecondsKey, 1.5), "output", "a b.parquet")
	log.Warn("odd", slog.Group("g", "k", 1))
	log.Error("failed")
	NewReporter(&buf, ReporterConfig{}).Logger().Error("bare")
	want := "count: done output=\"a b.parquet\"\ncount: warning: odd g.k=1\ncount: failed\npwe: bare\n"
	if buf.String() != want {
		t.Errorf("text log:\n%s\nwant\n%s", buf.String(), want)
	}
}

func TestQuietLog(t *testing.T) {
	var buf bytes.Buffer
	log := NewReporter(&buf, ReporterConfig{Quiet: true}).Stage("fit")
	log.Info("info")
	log.Warn("warn")
	log.Error("boom")
	if buf.String() != "fit: boom\n" {
		t.Errorf("quiet log %q, want only the error", buf.String())
	}
}

func TestJSONLogCarriesStats(t *testing.T) {
	var buf bytes.Buffer
	st := stages.CountStats{Documents: 7, Tokens: 1234, PositivePairs: 99, UniquePairs: 42}
	NewReporter(&buf, ReporterConfig{Format: LogJSON}).Stage("count").Info("summary", slog.Any(StatsKey, st), slog.Float64(SecondsKey, 0.25))
	var rec struct {
		Level, Msg, Stage string
		Seconds           float64
		Stats             stages.CountStats
	}
	if err := json.Unmarshal(buf.Bytes(), &rec); err != nil {
		t.Fatalf("%v: %s", err, buf.String())
	}
	if rec.Level != "INFO" || rec.Msg != "summary" || rec.Stage != "count" || rec.Seconds != 0.25 || !reflect.DeepEqual(rec.Stats, st) {
		t.Errorf("record %+v from %s", rec, buf.String())
	}
}

func TestParseModes(t *testing.T) {
	for _, s := range []string{"auto", "always", "never"} {
		m, err := ParseProgressMode(s)
		if err != nil || m.String() != s {
			t.Errorf("ParseProgressMode(%q) = %v, %v", s, m, err)
		}
	}
	for _, s := range []string{"text", "json"} {
		f, err := ParseLogFormat(s)
		if err != nil || f.String() != s {
			t.Errorf("ParseLogFormat(%q) = %v, %v", s, f, err)
		}
	}
	if _, err := ParseProgressMode("sometimes"); err == nil {
		t.Error("ParseProgressMode accepted sometimes")
	}
	if _, err := ParseLogFormat("xml"); err == nil {
		t.Error("ParseLogFormat accepted xml")
	}
}

func TestFitSweeps(t *testing.T) {
	w := 7
	if got := fitSweeps(stages.FitConfig{Chains: 3, Warmup: &w, Draws: 5, Thin: 2}); got != 3*(7+10) {
		t.Errorf("fitSweeps = %d, want 51", got)
	}
	if got := fitSweeps(stages.FitConfig{Method: "map"}); got != 0 {
		t.Errorf("fitSweeps(map) = %d, want 0", got)
	}
}

// TestSweepCounterResumed checks that a resumed fit's report starts at the
// sweeps done before the interruption, and that they do not count in the
// rate (so the time left is that of the sweeps still to run).
func TestSweepCounterResumed(t *testing.T) {
	var buf bytes.Buffer
	clk := newFake()
	r := NewReporter(&buf, ReporterConfig{Interval: 10 * time.Second, Now: clk.now})
	p := r.Progress("fit", "sweeps", 200)
	count := sweepCounter(p)
	count(0, 60) // chain 0 resumed after 60 sweeps
	count(1, 40) // chain 1 after 40
	if p.Count() != 102 {
		t.Fatalf("count %d after the first resumed sweeps, want 60+1 + 40+1", p.Count())
	}
	for sw := 61; sw < 78; sw++ {
		count(0, sw)
	}
	clk.advance(10 * time.Second)
	count(1, 41) // 20 sweeps run in 10 s: 2/s, 80 left
	want := "fit: 120/200 sweeps (60%), 2.0 sweeps/s, about 40s left\n"
	if got := buf.String(); got != want {
		t.Errorf("progress line %q, want %q", got, want)
	}
	fresh := r.Progress("fit", "sweeps", 10)
	sweepCounter(fresh)(0, 0)
	if fresh.Count() != 1 {
		t.Errorf("a fresh chain's first sweep counted %d, want 1", fresh.Count())
	}
}

// TestFitProgress runs a small fit with a progress line at every report:
// the MAP's gradient evaluations come first, then the sweeps, whose report
// begins with the first sweep, so that their rate leaves the MAP's time
// out, and ends at the fit's total.
func TestFitProgress(t *testing.T) {
	dir := t.TempDir()
	cfg := loadConfig(t, dir, config)
	cfg.SkipFit = true
	if _, err := Run(context.Background(), cfg, Options{}); err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	clk := newFake()
	// Every reading of the clock moves it by a second, and a line is due
	// after a second: every Add that reads the clock shows a line.
	tick := func() time.Time { clk.advance(time.Second); return clk.now() }
	r := NewReporter(&buf, ReporterConfig{Interval: time.Second, Now: tick})
	warmup := 5
	fc := stages.FitConfig{
		Counts: filepath.Join(cfg.Output, CountsFile), Vocab: filepath.Join(cfg.Output, VocabFile),
		Output: filepath.Join(dir, "fit"), Dim: 2, Chains: 2, Warmup: &warmup, Draws: 5, Threads: 1,
		CheckpointInterval: stages.NoCheckpoints,
	}
	var evals atomic.Int64
	fc.OnMAPEval = func() { evals.Add(1) }
	if _, err := Fit(context.Background(), r, fc); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(buf.String()), "\n")
	var mapLines, anchorLines, sweepLines []string
	for _, l := range lines {
		switch {
		case strings.Contains(l, "MAP evaluations"):
			if len(anchorLines)+len(sweepLines) > 0 {
				t.Fatalf("MAP progress %q after the anchor chain's or the sweeps' report began", l)
			}
			mapLines = append(mapLines, l)
		case strings.Contains(l, " anchor sweeps"):
			if len(sweepLines) > 0 {
				t.Fatalf("anchor chain progress %q after the sweeps' report began", l)
			}
			anchorLines = append(anchorLines, l)
		case strings.Contains(l, " sweeps"):
			sweepLines = append(sweepLines, l)
		}
	}
	// The default anchor values (auto) run the unanchored chain of
	// posterior.DefaultAnchorSweeps sweeps.
	if want := fmt.Sprintf("fit: %d/%d anchor sweeps (100%%)", posterior.DefaultAnchorSweeps, posterior.DefaultAnchorSweeps); len(anchorLines) == 0 || !strings.HasPrefix(anchorLines[len(anchorLines)-1], want) {
		t.Fatalf("anchor chain progress %q, want it to end with %q", anchorLines, want)
	}
	if n := evals.Load(); len(mapLines) < 10 || int64(len(mapLines)) > n {
		t.Fatalf("%d MAP progress lines for %d evaluations (the caller's hook saw them too)", len(mapLines), n)
	}
	if len(sweepLines) == 0 || !strings.HasPrefix(sweepLines[len(sweepLines)-1], "fit: 20/20 sweeps (100%)") {
		t.Fatalf("sweep progress %q, want it to end at 20/20", sweepLines)
	}
	// Had the sweeps' report started with the MAP, its first rate would be
	// at most (sweeps so far) / (MAP lines) per second.
	var done int
	var rate float64
	if _, err := fmt.Sscanf(sweepLines[0], "fit: %d/20 sweeps", &done); err != nil {
		t.Fatal(err)
	}
	i := strings.Index(sweepLines[0], "%), ")
	if _, err := fmt.Sscanf(sweepLines[0][i+4:], "%f", &rate); err != nil {
		t.Fatalf("%q: %v", sweepLines[0], err)
	}
	if rate <= float64(done)/float64(len(mapLines)) {
		t.Errorf("first sweep line %q: rate %v includes the MAP's %d seconds", sweepLines[0], rate, len(mapLines))
	}
}
