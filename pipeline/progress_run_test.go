package pipeline

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/pwe-project/pwe/formats"
	"github.com/pwe-project/pwe/formats/movielens"
	"github.com/pwe-project/pwe/formats/movielens/mltest"
	"github.com/pwe-project/pwe/stages"
)

// tickingClock moves a second forward at every reading, so that a
// Reporter with a tiny Interval logs every Add.
type tickingClock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *tickingClock) now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(time.Second)
	return c.t
}

// progressRecord is the progress part of a JSON log line.
type progressRecord struct {
	Stage    string `json:"stage"`
	Progress *struct {
		Done  int64  `json:"done"`
		Total int64  `json:"total"`
		Unit  string `json:"unit"`
	} `json:"progress"`
}

// lastProgress returns each stage's last progress record of the log, and
// keyed "stage unit" its last in each unit (count reports its reading,
// then its merge).
func lastProgress(t *testing.T, log []byte) map[string]progressRecord {
	t.Helper()
	last := map[string]progressRecord{}
	sc := bufio.NewScanner(bytes.NewReader(log))
	for sc.Scan() {
		var rec progressRecord
		if err := json.Unmarshal(sc.Bytes(), &rec); err != nil {
			t.Fatalf("log line is not JSON: %v\n%s", err, sc.Text())
		}
		if rec.Progress == nil {
			continue
		}
		last[rec.Stage] = rec
		last[rec.Stage+" "+rec.Progress.Unit] = rec
	}
	return last
}

// everyAdd is a JSON Reporter that logs a progress record at every Add.
func everyAdd(buf *bytes.Buffer) *Reporter {
	clk := &tickingClock{t: time.Date(2026, 11, 22, 0, 0, 0, 0, time.UTC)}
	return NewReporter(buf, ReporterConfig{Format: LogJSON, Interval: time.Nanosecond, Now: clk.now})
}

// TestRunReadProgress checks that pwe run reports the reading of tokenize
// and count in bytes, with the inputs' size as the total and reached:
// the corpus for tokenize, the token stream's chunks for count; and then
// count's merge, in parts, to the last.
func TestRunReadProgress(t *testing.T) {
	dir := t.TempDir()
	cfg := loadConfig(t, dir, config)
	cfg.SkipFit = true
	var log bytes.Buffer
	if _, err := Run(context.Background(), cfg, Options{Reporter: everyAdd(&log)}); err != nil {
		t.Fatal(err)
	}
	info, err := os.Stat(cfg.Input.Paths[0])
	if err != nil {
		t.Fatal(err)
	}
	stream, err := formats.OpenTokenStream(filepath.Join(cfg.Output, TokensFile))
	if err != nil {
		t.Fatal(err)
	}
	defer stream.Close()
	want := map[string]int64{"tokenize": info.Size(), "count": stream.ChunkBytes()}
	last := lastProgress(t, log.Bytes())
	for _, stage := range []string{"tokenize", "count"} {
		rec, ok := last[stage+" "+UnitBytes]
		if !ok {
			t.Errorf("%s: no progress record in\n%s", stage, log.String())
			continue
		}
		if p := rec.Progress; p.Unit != UnitBytes || p.Total != want[stage] || p.Done != want[stage] {
			t.Errorf("%s: last progress %+v; want %d of %d bytes", stage, *p, want[stage], want[stage])
		}
	}
	rec, ok := last["count "+MergeParts]
	if p := rec.Progress; !ok || p.Total < 1 || p.Done != p.Total {
		t.Errorf("count's merge: last progress %+v (%v); want every part done", p, ok)
	}
}

// TestRunMovieLensProgress checks the movielens stage's report: the file
// is read more than once, and the bytes reach the announced total, a
// whole number of passes; then the merge reaches its last part.
func TestRunMovieLensProgress(t *testing.T) {
	dir := t.TempDir()
	ratings := filepath.Join(dir, "ratings.csv")
	var b bytes.Buffer
	w := mltest.NewRatingWriter(&b, movielens.FormatCSV, mltest.Options{})
	for _, r := range mltest.Collect(mltest.Config{Users: 80, Movies: 40, MeanRatings: 15, MinRatings: 2, Zipf: 1.1, Seed: 2}) {
		w.Write(r)
	}
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(ratings, b.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	cfg := Config{Output: filepath.Join(dir, "out"), Seed: 1, SkipFit: true, MovieLens: &stages.MovieLensConfig{Ratings: ratings}}
	var log bytes.Buffer
	if _, err := Run(context.Background(), cfg, Options{Reporter: everyAdd(&log)}); err != nil {
		t.Fatal(err)
	}
	size := int64(b.Len())
	last := lastProgress(t, log.Bytes())
	rec, ok := last["movielens "+UnitBytes]
	if !ok {
		t.Fatalf("no movielens progress record in\n%s", log.String())
	}
	if p := rec.Progress; p.Unit != UnitBytes || p.Done != p.Total || p.Done%size != 0 || p.Done/size < 2 {
		t.Errorf("last progress %+v; want the total reached, a whole number (2 or 3) of passes over %d bytes", *p, size)
	}
	if rec, ok := last["movielens "+MergeParts]; !ok || rec.Progress.Total < 1 || rec.Progress.Done != rec.Progress.Total {
		t.Errorf("merge: last progress %+v (%v); want every part done", rec.Progress, ok)
	}
}

// TestRunFitProgress checks that pwe run reports the fit in sweeps, up to
// the total of every chain's warmup and draws, then the summary of its
// coordinates, and summarize in draws, and that a library caller's OnSweep
// still sees every sweep.
func TestRunFitProgress(t *testing.T) {
	dir := t.TempDir()
	cfg := loadConfig(t, dir, config+"summarize: {pairs_all_among: [the, and]}\n")
	var sweeps atomic.Int64
	cfg.Fit.OnSweep = func(int, int) { sweeps.Add(1) }
	var log bytes.Buffer
	if _, err := Run(context.Background(), cfg, Options{Reporter: everyAdd(&log)}); err != nil {
		t.Fatal(err)
	}
	const total = 2 * (20 + 20) // chains x (warmup + draws) of config
	last := lastProgress(t, log.Bytes())
	rec, ok := last["fit sweeps"]
	if !ok {
		t.Fatalf("no fit progress record in\n%s", log.String())
	}
	if p := rec.Progress; p.Total != total || p.Done != total {
		t.Errorf("last fit progress in sweeps %+v; want %d of %d", *p, total, total)
	}
	// Then the summary, a row of summary.parquet a coordinate.
	summary, _, err := formats.ReadAll[formats.SummaryRow](filepath.Join(cfg.Output, FitDir, stages.SummaryFile), formats.SchemaSummary)
	if err != nil {
		t.Fatal(err)
	}
	if p := last["fit"].Progress; p.Unit != "coordinates summarized" || p.Total != int64(len(summary)) || p.Done != p.Total {
		t.Errorf("last fit progress %+v; want %d of %d coordinates summarized", *p, len(summary), len(summary))
	}
	// Then summarize, in draws: every chain's.
	if p := last["summarize"].Progress; p == nil || p.Unit != "draws" || p.Total != 2*20 || p.Done != p.Total {
		t.Errorf("last summarize progress %+v; want 40 of 40 draws", p)
	}
	if got := sweeps.Load(); got != total {
		t.Errorf("OnSweep saw %d sweeps, want %d", got, total)
	}
}
