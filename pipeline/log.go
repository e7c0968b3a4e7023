package pipeline

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"log/slog"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
)

// LogFormat says how messages on stderr look.
type LogFormat int

const (
	// LogText writes one human line per message: "stage: message".
	LogText LogFormat = iota
	// LogJSON writes one JSON object per message (log/slog's JSON handler),
	// for log collectors; stage summaries carry their figures under "stats".
	LogJSON
)

// ParseLogFormat parses "text" or "json".
func ParseLogFormat(s string) (LogFormat, error) {
	switch s {
	case "text":
		return LogText, nil
	case "json":
		return LogJSON, nil
	}
	return 0, fmt.Errorf("pipeline: log format %q, want text or json", s)
}

func (f LogFormat) String() string {
	if f == LogJSON {
		return "json"
	}
	return "text"
}

// ProgressMode says when long steps report their progress.
type ProgressMode int

const (
	// ProgressAuto draws a bar when stderr is a terminal and the log is
	// text, and writes a plain line every ReporterConfig.Interval otherwise.
	ProgressAuto ProgressMode = iota
	// ProgressAlways draws a bar even when stderr is not a terminal (JSON
	// logs still get periodic records: a bar would break the lines).
	ProgressAlways
	// ProgressNever reports no progress.
	ProgressNever
)

// ParseProgressMode parses "auto", "always" or "never".
func ParseProgressMode(s string) (ProgressMode, error) {
	switch s {
	case "auto":
		return ProgressAuto, nil
	case "always":
		return ProgressAlways, nil
	case "never":
		return ProgressNever, nil
	}
	return 0, fmt.Errorf("pipeline: progress %q, want auto, always or never", s)
}

func (m ProgressMode) String() string {
	switch m {
	case ProgressAlways:
		return "always"
	case ProgressNever:
		return "never"
	}
	return "auto"
}

// DefaultInterval is the period of plain progress lines.
const DefaultInterval = 10 * time.Second

// ReporterConfig configures a Reporter. The zero value logs text, reports
// progress in plain lines every DefaultInterval and reads the real clock.
type ReporterConfig struct {
	Format   LogFormat
	Progress ProgressMode
	// Quiet drops every message below slog.LevelError and all progress.
	Quiet bool
	// Terminal says the writer is a terminal (the command finds out with
	// golang.org/x/term); it selects bars in ProgressAuto.
	Terminal bool
	// Width is the terminal's width in columns for bars (default 80).
	Width int
	// Interval is the period of plain progress lines (default
	// DefaultInterval); bars redraw at most every Interval/50.
	Interval time.Duration
	// Now is the clock (default time.Now); tests pass a fake one.
	Now func() time.Time
}

// Reporter is how pwe talks to its user on stderr: every message goes
// through its slog.Logger, and long steps report through Progress. The
// two share the writer, so a message never lands in the middle of a bar.
// A nil *Reporter is valid and silent.
type Reporter struct {
	cfg    ReporterConfig
	logger *slog.Logger

	mu  sync.Mutex // guards w and bar
	w   io.Writer
	bar string // the bar line on screen, "" if none
}

// NewReporter returns a Reporter writing to w.
func NewReporter(w io.Writer, cfg ReporterConfig) *Reporter {
	if cfg.Interval <= 0 {
		cfg.Interval = DefaultInterval
	}
	if cfg.Width <= 0 {
		cfg.Width = 80
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	r := &Reporter{cfg: cfg, w: w}
	level := slog.LevelInfo
	if cfg.Quiet {
		level = slog.LevelError
	}
	out := lockedWriter{r}
	var h slog.Handler
	if cfg.Format == LogJSON {
		h = slog.NewJSONHandler(out, &slog.HandlerOptions{Level: level})
	} else {
		h = &textHandler{level: level, w: out}
	}
	r.logger = slog.New(h)
	return r
}

// discard is the logger of a nil Reporter.
var discard = slog.New(slog.DiscardHandler)

// Logger returns the logger; a nil Reporter's discards everything.
func (r *Reporter) Logger() *slog.Logger {
	if r == nil {
		return discard
	}
	return r.logger
}

// Stage returns the logger for one stage's messages: they carry the
// attribute stage=name, which the text format shows as the prefix "name: ".
func (r *Reporter) Stage(name string) *slog.Logger {
	return r.Logger().With(StageKey, name)
}

// StageKey is the attribute naming the stage (or command) of a message.
const StageKey = "stage"

// StatsKey is the attribute holding a stage's summary figures (its Stats
// struct, encoded with its JSON tags). The text format leaves it out: the
// message already says the same in words.
const StatsKey = "stats"

// SecondsKey is the attribute holding a stage's wall time in seconds; the
// text format leaves it out too.
const SecondsKey = "seconds"

// machineOnly reports the attributes the text format leaves out: they
// repeat, for log collectors, what the message says in words.
func machineOnly(key string) bool {
	switch key {
	case StatsKey, ProgressKey, SecondsKey:
		return true
	}
	return false
}

// lockedWriter writes a whole log record while the bar is off the screen.
type lockedWriter struct{ r *Reporter }

func (lw lockedWriter) Write(p []byte) (int, error) {
	r := lw.r
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.bar != "" {
		io.WriteString(r.w, "\r\x1b[K")
	}
	n, err := r.w.Write(p)
	if r.bar != "" {
		io.WriteString(r.w, r.bar)
	}
	return n, err
}

// textHandler writes "stage: message key=value ..." lines: no time (the
// user is watching) and no level but for warnings and errors. Messages
// without a stage are pwe's own, prefixed "pwe: ".
type textHandler struct {
	level slog.Level
	w     io.Writer
	attrs []slog.Attr // from WithAttrs, groups flattened
	group string      // prefix of later attribute keys
}

func (h *textHandler) Enabled(_ context.Context, l slog.Level) bool { return l >= h.level }

func (h *textHandler) Handle(_ context.Context, rec slog.Record) error {
	stage := "pwe"
	var tail bytes.Buffer
	add := func(a slog.Attr) {
		a.Value = a.Value.Resolve()
		switch {
		case a.Key == StageKey:
			stage = a.Value.String()
		case machineOnly(a.Key), a.Equal(slog.Attr{}):
		default:
			tail.WriteByte(' ')
			tail.WriteString(a.Key)
			tail.WriteByte('=')
			tail.WriteString(quoteIfNeeded(a.Value.String()))
		}
	}
	for _, a := range h.attrs {
		add(a)
	}
	rec.Attrs(func(a slog.Attr) bool {
		for _, f := range flatten(h.group, a) {
			add(f)
		}
		return true
	})
	var line strings.Builder
	line.WriteString(stage)
	line.WriteString(": ")
	switch {
	case rec.Level >= slog.LevelError:
	case rec.Level >= slog.LevelWarn:
		line.WriteString("warning: ")
	}
	line.WriteString(rec.Message)
	line.Write(tail.Bytes())
	line.WriteByte('\n')
	_, err := io.WriteString(h.w, line.String())
	return err
}

func (h *textHandler) WithAttrs(as []slog.Attr) slog.Handler {
	c := *h
	c.attrs = slices.Clone(h.attrs)
	for _, a := range as {
		c.attrs = append(c.attrs, flatten(h.group, a)...)
	}
	return &c
}

func (h *textHandler) WithGroup(name string) slog.Handler {
	c := *h
	c.group = h.group + name + "."
	return &c
}

// flatten turns group attributes into dotted keys, except the groups of
// machineOnly keys, which stay whole so that the handler can drop them.
func flatten(prefix string, a slog.Attr) []slog.Attr {
	if a.Value.Kind() != slog.KindGroup || machineOnly(a.Key) {
		if prefix != "" && a.Key != StageKey {
			a.Key = prefix + a.Key
		}
		return []slog.Attr{a}
	}
	var out []slog.Attr
	p := prefix
	if a.Key != "" {
		p += a.Key + "."
	}
	for _, g := range a.Value.Group() {
		out = append(out, flatten(p, g)...)
	}
	return out
}

func quoteIfNeeded(s string) string {
	if s == "" || strings.ContainsAny(s, " \t\n\"=") {
		return strconv.Quote(s)
	}
	return s
}
