package stages

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/pwe-project/pwe/formats"
	"github.com/pwe-project/pwe/posterior"
	"github.com/pwe-project/pwe/posterior/diag"
)

// countFixture writes vocab and counts of the Austen fixture with a
// vocabulary of v tokens.
func countFixture(t *testing.T, dir string, v int) (vocab, counts string) {
	t.Helper()
	vocab = filepath.Join(dir, "vocab.parquet")
	counts = filepath.Join(dir, "counts.parquet")
	ctx := context.Background()
	if _, err := Tokenize(ctx, TokenizeConfig{Input: TextInput{Paths: []string{fixture}, DocSep: "blank"}, MaxVocab: v, Output: vocab}); err != nil {
		t.Fatal(err)
	}
	if _, err := Count(ctx, CountConfig{Input: TextInput{Paths: []string{fixture}}, Vocab: vocab, Output: counts, Window: 3, Seed: 3}); err != nil {
		t.Fatal(err)
	}
	return vocab, counts
}

func smallFit(vocab, counts, out string) FitConfig {
	w := 30
	return FitConfig{Counts: counts, Vocab: vocab, Output: out, Dim: 3, Anchors: "first",
		Chains: 2, Warmup: &w, Draws: 100, Seed: 5, Memory: 1 << 20}
}

// TestFitOutputs checks every output of a small fit, and recomputes the
// summary of every coordinate from draws.parquet with the diag package.
func TestFitOutputs(t *testing.T) {
	dir := t.TempDir()
	vocab, counts := countFixture(t, dir, 100)
	cfg := smallFit(vocab, counts, filepath.Join(dir, "fit"))
	cfg.AnchorValues = "draw"
	st, err := Fit(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	v, dim, chains, n := 100, cfg.Dim, cfg.Chains, cfg.Draws
	if len(st.Anchors) != dim || st.Anchors[0] != 0 || st.Anchors[2] != 2 {
		t.Fatalf("anchors %v, want the %d most frequent", st.Anchors, dim)
	}
	if len(st.MAPStarts) != posterior.DefaultMAPStarts || st.MAPLogPost != slices.Max(st.MAPStarts) {
		t.Errorf("MAP log posterior %v, starts %v: want the best of %d", st.MAPLogPost, st.MAPStarts, posterior.DefaultMAPStarts)
	}

	// draws.parquet is written while the summary is; it, sample_stats and
	// map must still record the summary's results.
	for _, f := range []struct{ name, schema string }{{DrawsFile, formats.SchemaDraws}, {SampleStatsFile, formats.SchemaSampleStats}, {MapFile, formats.SchemaMap}} {
		r, err := formats.Open[struct{}](filepath.Join(cfg.Output, f.name), f.schema)
		if err != nil {
			t.Fatal(err)
		}
		var rec struct {
			MaxRhat    float64 `json:"max_rhat"`
			MinESSBulk float64 `json:"min_ess_bulk"`
		}
		raw, _ := r.Meta().Stats.(json.RawMessage)
		if err := json.Unmarshal(raw, &rec); err != nil || rec.MaxRhat != st.MaxRhat || rec.MinESSBulk != st.MinESSBulk || !(st.MaxRhat > 0) {
			t.Errorf("%s records max R-hat %v and min ESS %v (%v), the fit %v and %v", f.name, rec.MaxRhat, rec.MinESSBulk, err, st.MaxRhat, st.MinESSBulk)
		}
		r.Close()
	}

	mp, _, err := formats.ReadAll[formats.VectorRow](filepath.Join(cfg.Output, MapFile), formats.SchemaMap)
	if err != nil {
		t.Fatal(err)
	}
	if len(mp) != 2*v {
		t.Fatalf("map.parquet has %d rows, want %d", len(mp), 2*v)
	}
	anchorAlpha := map[int32][]float32{}
	for _, r := range mp {
		if r.Anchor {
			anchorAlpha[r.TokenID] = r.Vector
		}
	}
	if len(anchorAlpha) != dim {
		t.Errorf("map.parquet marks %d anchors, want %d", len(anchorAlpha), dim)
	}
	// The anchors are fixed at the last state of the unanchored chain that
	// posterior.AnchorState runs from the MAP with the fit's settings.
	data, err := loadCounts(counts, v)
	if err != nil {
		t.Fatal(err)
	}
	full := cfg.WithDefaults()
	m, _, err := posterior.MAP(context.Background(), data, posterior.MAPConfig{Dim: dim, PriorSD: full.PriorSD, Seed: cfg.Seed, Starts: full.MAPStarts})
	if err != nil {
		t.Fatal(err)
	}
	as, err := posterior.AnchorState(context.Background(), data, m, posterior.AnchorStateConfig{
		Rule: posterior.AnchorRule{Kind: posterior.AnchorFirst}, Values: posterior.AnchorAtDraw, Sweeps: full.AnchorSweeps, PriorSD: full.PriorSD, Seed: cfg.Seed,
	})
	if err != nil {
		t.Fatal(err)
	}
	if st.AnchorValues != "draw" || st.AnchorSweeps != posterior.DefaultAnchorSweeps || st.AnchorScaleRatio == nil || !slices.Equal(as.Anchors, st.Anchors) {
		t.Fatalf("anchors %v at %q after %d sweeps, want %v at the draw after %d", st.Anchors, st.AnchorValues, st.AnchorSweeps, as.Anchors, posterior.DefaultAnchorSweeps)
	}
	for id := range anchorAlpha {
		anchorAlpha[id] = toFloat32(nil, as.State.Context(int(id)))
	}

	draws, _, err := formats.ReadAll[formats.DrawRow](filepath.Join(cfg.Output, DrawsFile), formats.SchemaDraws)
	if err != nil {
		t.Fatal(err)
	}
	if len(draws) != chains*n*2*v {
		t.Fatalf("draws.parquet has %d rows, want %d", len(draws), chains*n*2*v)
	}
	// values[param][token][dim][chain*n + draw]
	values := map[string][][][]float64{}
	for _, p := range []string{formats.ParamRho, formats.ParamAlpha} {
		values[p] = make([][][]float64, v)
		for i := range v {
			values[p][i] = make([][]float64, dim)
			for k := range dim {
				values[p][i][k] = make([]float64, chains*n)
			}
		}
	}
	for _, r := range draws {
		for k, x := range r.Vector {
			values[r.Param][r.TokenID][k][int(r.Chain)*n+int(r.Draw)] = float64(x)
		}
		if a, ok := anchorAlpha[r.TokenID]; ok && r.Param == formats.ParamAlpha && !equalFloat32(a, r.Vector) {
			t.Fatalf("anchor %d in chain %d draw %d: %v, want the unanchored chain's %v", r.TokenID, r.Chain, r.Draw, r.Vector, a)
		}
	}

	summary, _, err := formats.ReadAll[formats.SummaryRow](filepath.Join(cfg.Output, SummaryFile), formats.SchemaSummary)
	if err != nil {
		t.Fatal(err)
	}
	if want := 2*v*dim - dim*dim; len(summary) != want {
		t.Fatalf("summary.parquet has %d rows, want %d free coordinates", len(summary), want)
	}
	var sz diag.Summarizer
	for _, r := range summary {
		if _, anchor := anchorAlpha[r.TokenID]; anchor && r.Param == formats.ParamAlpha {
			t.Fatalf("summary holds anchor coordinate %+v", r)
		}
		s := sz.SummarizeFlat(values[r.Param][r.TokenID][r.Dim], chains)
		want := []float64{s.Mean, s.Median, s.SD, s.MAD, s.Q5, s.Q95, s.MCSEMean, s.ESSBulk, s.ESSTail, s.Rhat}
		got := []float64{r.Mean, r.Median, r.SD, r.MAD, r.Q5, r.Q95, r.MCSEMean, r.ESSBulk, r.ESSTail, r.Rhat}
		for k := range want {
			if got[k] != want[k] && !(math.IsNaN(got[k]) && math.IsNaN(want[k])) {
				t.Fatalf("%s %d dim %d statistic %d: summary %v, recomputed from draws %v", r.Param, r.TokenID, r.Dim, k, got[k], want[k])
			}
		}
	}

	ss, _, err := formats.ReadAll[formats.SampleStatsRow](filepath.Join(cfg.Output, SampleStatsFile), formats.SchemaSampleStats)
	if err != nil {
		t.Fatal(err)
	}
	if len(ss) != chains*n {
		t.Fatalf("sample_stats has %d rows, want %d", len(ss), chains*n)
	}
	for i, r := range ss {
		if int(r.Chain) != i/n || int(r.Draw) != i%n || !(r.LogPosterior < r.LogLik) || r.Seconds < 0 || !(r.GroupAccept >= 0 && r.GroupAccept <= 1) {
			t.Fatalf("sample_stats row %d: %+v", i, r)
		}
	}
	assertNoSpill(t, cfg.Output)
}

func equalFloat32(a, b []float32) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

func assertNoSpill(t *testing.T, dir string) {
	t.Helper()
	entries, _ := os.ReadDir(dir)
	for _, e := range entries {
		if strings.HasPrefix(e.Name(), ".") {
			t.Errorf("temporary file %s left in %s", e.Name(), dir)
		}
	}
}

// TestFitDeterministic compares the bytes of draws.parquet and
// summary.parquet across thread counts and summary memory budgets (the
// smaller budget summarises in several blocks).
func TestFitDeterministic(t *testing.T) {
	t.Setenv("SOURCE_DATE_EPOCH", "0")
	dir := t.TempDir()
	vocab, counts := countFixture(t, dir, 100)
	read := func(out, name string) []byte {
		b, err := os.ReadFile(filepath.Join(out, name))
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	base := smallFit(vocab, counts, filepath.Join(dir, "a"))
	base.Threads, base.Memory, base.Draws = 1, 64<<20, 200
	if _, err := Fit(context.Background(), base); err != nil {
		t.Fatal(err)
	}
	other := base
	other.Output, other.Threads, other.Memory = filepath.Join(dir, "b"), 2, 1<<20
	if perCoord := int64(other.Chains*other.Draws) * 8; other.Memory/perCoord >= int64(2*100*other.Dim) {
		t.Fatalf("memory %d holds every coordinate: the test would not cover blocks", other.Memory)
	}
	if _, err := Fit(context.Background(), other); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{DrawsFile, SummaryFile, MapFile} {
		if !bytes.Equal(read(base.Output, name), read(other.Output, name)) {
			t.Errorf("%s differs between threads 1 (one block) and threads 2 (several blocks)", name)
		}
	}
}

// TestFitDrawsLayoutAndFilter checks that the long layout holds the same
// numbers as the vector layout, and that --save-draws keeps only the named
// tokens and rejects unknown ones with file and line.
func TestFitDrawsLayoutAndFilter(t *testing.T) {
	dir := t.TempDir()
	vocab, counts := countFixture(t, dir, 60)
	list := filepath.Join(dir, "tokens.txt")
	os.WriteFile(list, []byte("# the tokens to keep\nthe\n\nof\n"), 0o644)
	cfg := smallFit(vocab, counts, filepath.Join(dir, "long"))
	cfg.DrawsLayout, cfg.SaveDraws, cfg.Draws = "long", list, 20
	if _, err := Fit(context.Background(), cfg); err != nil {
		t.Fatal(err)
	}
	long, _, err := formats.ReadAll[formats.DrawLongRow](filepath.Join(cfg.Output, DrawsFile), formats.SchemaDrawsLong)
	if err != nil {
		t.Fatal(err)
	}
	vec := cfg
	vec.Output, vec.DrawsLayout = filepath.Join(dir, "vec"), "vector"
	if _, err := Fit(context.Background(), vec); err != nil {
		t.Fatal(err)
	}
	rows, _, err := formats.ReadAll[formats.DrawRow](filepath.Join(vec.Output, DrawsFile), formats.SchemaDraws)
	if err != nil {
		t.Fatal(err)
	}
	if want := cfg.Chains * cfg.Draws * 2 * 2; len(rows) != want {
		t.Fatalf("vector layout: %d rows, want %d (2 tokens x 2 params)", len(rows), want)
	}
	if len(long) != len(rows)*cfg.Dim {
		t.Fatalf("long layout: %d rows, want %d", len(long), len(rows)*cfg.Dim)
	}
	for i, r := range rows {
		if r.Token != "the" && r.Token != "of" {
			t.Fatalf("draws of %q written; only the and of were asked for", r.Token)
		}
		for k, x := range r.Vector {
			l := long[i*cfg.Dim+k]
			if l.Chain != r.Chain || l.Draw != r.Draw || l.Param != r.Param || l.TokenID != r.TokenID || int(l.Dim) != k || l.Value != x {
				t.Fatalf("long row %+v does not match vector row %+v dim %d", l, r, k)
			}
		}
	}

	os.WriteFile(list, []byte("the\nnosuchtoken\n"), 0o644)
	cfg.Output = filepath.Join(dir, "bad")
	_, err = Fit(context.Background(), cfg)
	if err == nil || !strings.Contains(err.Error(), list+":2") || !strings.Contains(err.Error(), "nosuchtoken") {
		t.Errorf("unknown token: error %v, want one naming %s:2", err, list)
	}
}

// TestFitRejectsCountsOutsideVocabulary gives the fit a vocabulary smaller
// than the one the counts were made with.
func TestFitRejectsCountsOutsideVocabulary(t *testing.T) {
	dir := t.TempDir()
	_, counts := countFixture(t, dir, 80)
	small := filepath.Join(dir, "small", "vocab.parquet")
	if _, err := Tokenize(context.Background(), TokenizeConfig{Input: TextInput{Paths: []string{fixture}}, MaxVocab: 10, Output: small}); err != nil {
		t.Fatal(err)
	}
	_, err := Fit(context.Background(), smallFit(small, counts, filepath.Join(dir, "fit")))
	if err == nil || !strings.Contains(err.Error(), counts) || !strings.Contains(err.Error(), "row") {
		t.Errorf("error %v, want one naming %s and the row", err, counts)
	}
	assertNoOutput(t, filepath.Join(dir, "fit"))
}

// TestFitWarnings checks the two warnings a fit can end with: a MAP start
// stopped by MAPMaxIter, and a Laplace approximation at a point whose
// precision is not positive definite. With the default limit the same fits
// converge and warn of neither.
func TestFitWarnings(t *testing.T) {
	dir := t.TempDir()
	vocab, counts := countFixture(t, dir, 100)
	hasWarning := func(st FitStats, parts ...string) bool {
		for _, w := range st.Warnings {
			ok := true
			for _, p := range parts {
				ok = ok && strings.Contains(w, p)
			}
			if ok {
				return true
			}
		}
		return false
	}
	for _, c := range []struct {
		method  string
		maxIter int
	}{{"map", 0}, {"map", 2}, {"laplace", 0}, {"laplace", 1}} {
		cfg := smallFit(vocab, counts, filepath.Join(dir, c.method, fmt.Sprint(c.maxIter)))
		cfg.Method, cfg.MAPMaxIter = c.method, c.maxIter
		st, err := Fit(context.Background(), cfg)
		if err != nil {
			t.Fatalf("%s, map-max-iter %d: %v", c.method, c.maxIter, err)
		}
		stopped := hasWarning(st, "did not converge", "continuing from the best point found")
		if stopped != (c.maxIter > 0) {
			t.Errorf("%s, map-max-iter %d: MAP warning %v in %q", c.method, c.maxIter, stopped, st.Warnings)
		}
		// MAPIter adds up the iterations of every start.
		if c.maxIter > 0 && st.MAPIter > c.maxIter*len(st.MAPStarts) {
			t.Errorf("map-max-iter %d: the MAP's %d starts ran %d iterations", c.maxIter, len(st.MAPStarts), st.MAPIter)
		}
		if _, err := os.Stat(filepath.Join(cfg.Output, "map.parquet")); err != nil {
			t.Errorf("%s, map-max-iter %d: %v", c.method, c.maxIter, err)
		}
		if c.method != "laplace" {
			continue
		}
		// Two iterations from a random start leave the optimiser far from
		// the maximum, where the bilinear likelihood curves upwards in some
		// directions; at the MAP it curves downwards in all.
		ls := st.Laplace
		clipped := hasWarning(st, "not positive definite", fmt.Sprintf("%d eigenvalues raised", ls.ClippedEigenvalues))
		switch {
		case c.maxIter == 0 && (ls.ClippedEigenvalues != 0 || clipped):
			t.Errorf("laplace at the MAP: %d eigenvalues clipped, warnings %q", ls.ClippedEigenvalues, st.Warnings)
		case c.maxIter > 0 && (ls.ClippedEigenvalues == 0 || ls.MinEigenvalue == nil || *ls.MinEigenvalue >= 0 || !clipped):
			t.Errorf("laplace after %d MAP iterations: %d eigenvalues clipped, warnings %q", c.maxIter, ls.ClippedEigenvalues, st.Warnings)
		}
	}
}

// TestFitFewDraws: from too few draws for the bulk ESS the fit still
// records the largest R-hat, which is then not 0, and from too few for
// R-hat it records neither and warns that convergence is unknown.
func TestFitFewDraws(t *testing.T) {
	dir := t.TempDir()
	vocab, counts := countFixture(t, dir, 30)
	for _, c := range []struct {
		draws      int
		rhat, ess  bool
		unknownMsg bool
	}{{2, false, false, true}, {5, true, false, false}, {40, true, true, false}} {
		cfg := smallFit(vocab, counts, filepath.Join(dir, fmt.Sprint("fit", c.draws)))
		cfg.Draws = c.draws
		st, err := Fit(context.Background(), cfg)
		if err != nil {
			t.Fatal(err)
		}
		unknown := slices.ContainsFunc(st.Warnings, func(w string) bool { return strings.Contains(w, "convergence is unknown") })
		if (st.MaxRhat > 0) != c.rhat || (st.MinESSBulk > 0) != c.ess || unknown != c.unknownMsg {
			t.Errorf("%d draws: max R-hat %v, min ESS %v, warnings %q; want R-hat %v, ESS %v, unknown %v",
				c.draws, st.MaxRhat, st.MinESSBulk, st.Warnings, c.rhat, c.ess, c.unknownMsg)
		}
	}
}

// TestFitRemovesStale: a fit into a directory that holds an earlier fit,
// and what summarize and evaluate made of it, leaves none of the files it
// does not replace, and keeps the others.
func TestFitRemovesStale(t *testing.T) {
	dir := t.TempDir()
	vocab, counts := countFixture(t, dir, 30)
	cfg := smallFit(vocab, counts, filepath.Join(dir, "fit"))
	cfg.Draws = 10
	if _, err := Fit(context.Background(), cfg); err != nil {
		t.Fatal(err)
	}
	other := filepath.Join(cfg.Output, "notes.txt")
	for _, name := range []string{SimilarityFile, NeighboursFile, EvaluationFile, ReportFile, "notes.txt"} {
		if err := os.WriteFile(filepath.Join(cfg.Output, name), []byte("x"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	cfg.Method = "map"
	st, err := Fit(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{DrawsFile, SummaryFile, SampleStatsFile, SimilarityFile, NeighboursFile, EvaluationFile, ReportFile}
	if !slices.Equal(st.Removed, want) {
		t.Errorf("removed %v, want %v", st.Removed, want)
	}
	entries, _ := os.ReadDir(cfg.Output)
	var left []string
	for _, e := range entries {
		left = append(left, e.Name())
	}
	if !slices.Equal(left, []string{MapFile, "notes.txt"}) {
		t.Errorf("the MAP fit's directory holds %v, want map.parquet and the user's file", left)
	}
	if _, err := os.Stat(other); err != nil {
		t.Error(err)
	}
}
