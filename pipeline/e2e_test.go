package pipeline

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/pwe-project/pwe/formats"
	"github.com/pwe-project/pwe/formats/input"
	"github.com/pwe-project/pwe/stages"
	"github.com/pwe-project/pwe/tokenize"
)

// logRecord is one line of the JSON log.
type logRecord struct {
	Level   string          `json:"level"`
	Msg     string          `json:"msg"`
	Stage   string          `json:"stage"`
	Seconds float64         `json:"seconds"`
	Stats   json.RawMessage `json:"stats"`
}

func parseJSONLog(t *testing.T, b []byte) []logRecord {
	t.Helper()
	var recs []logRecord
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		var r logRecord
		if err := json.Unmarshal(sc.Bytes(), &r); err != nil {
			t.Fatalf("log line is not JSON: %v\n%s", err, sc.Text())
		}
		recs = append(recs, r)
	}
	return recs
}

// TestRunEndToEnd runs every stage on a small corpus with a JSON log and
// checks each output file against the others and against the manifest.
func TestRunEndToEnd(t *testing.T) {
	dir := t.TempDir()
	cfg := loadConfig(t, dir, config)
	var logBuf bytes.Buffer
	rep := NewReporter(&logBuf, ReporterConfig{Format: LogJSON})
	if _, err := Run(context.Background(), cfg, Options{Reporter: rep}); err != nil {
		t.Fatal(err)
	}
	out := cfg.Output
	const chains, draws, dim = 2, 20, 2

	vocab, vmeta, err := formats.ReadAll[formats.VocabRow](filepath.Join(out, VocabFile), formats.SchemaVocab)
	if err != nil {
		t.Fatal(err)
	}
	v := len(vocab)
	if v == 0 || v > 40 {
		t.Fatalf("vocabulary of %d tokens, want 1..40 (max_vocab)", v)
	}
	for i, r := range vocab {
		if int(r.TokenID) != i || (i > 0 && r.Count > vocab[i-1].Count) {
			t.Fatalf("vocab row %d: %+v (ids must be 0..V-1 by descending count)", i, r)
		}
	}
	counts, _, err := formats.ReadAll[formats.CountRow](filepath.Join(out, CountsFile), formats.SchemaCounts)
	if err != nil {
		t.Fatal(err)
	}
	if len(counts) == 0 {
		t.Fatal("no counts")
	}
	for i := range counts {
		var prev *formats.CountRow
		if i > 0 {
			prev = &counts[i-1]
		}
		if err := formats.CheckCountRow(counts[i], prev, v); err != nil {
			t.Fatalf("counts row %d: %v", i, err)
		}
	}

	fit := filepath.Join(out, FitDir)
	mapRows, _, err := formats.ReadAll[formats.VectorRow](filepath.Join(fit, "map.parquet"), formats.SchemaMap)
	if err != nil {
		t.Fatal(err)
	}
	if len(mapRows) != 2*v {
		t.Fatalf("map has %d rows, want 2V = %d", len(mapRows), 2*v)
	}
	anchors := map[int32][]float32{}
	for _, r := range mapRows {
		if len(r.Vector) != dim || r.Token != vocab[r.TokenID].Token {
			t.Fatalf("map row %+v", r)
		}
		if r.Anchor {
			if r.Param != formats.ParamAlpha {
				t.Fatalf("anchor on %s vector: %+v", r.Param, r)
			}
			anchors[r.TokenID] = r.Vector
		}
	}
	if len(anchors) != dim {
		t.Fatalf("%d anchors, want D = %d", len(anchors), dim)
	}

	drawRows, _, err := formats.ReadAll[formats.DrawRow](filepath.Join(fit, "draws.parquet"), formats.SchemaDraws)
	if err != nil {
		t.Fatal(err)
	}
	// Every token's both vectors in every draw of every chain; the anchors'
	// context vectors are in too, fixed at the same values in every draw
	// (a draw of the unanchored posterior, fit's default anchor values).
	if len(drawRows) != chains*draws*v*2 {
		t.Fatalf("draws has %d rows, want chains x draws x V x 2 = %d", len(drawRows), chains*draws*v*2)
	}
	fixed := map[int32][]float32{}
	for _, r := range drawRows {
		if r.Chain < 0 || r.Chain >= chains || r.Draw < 0 || r.Draw >= draws || len(r.Vector) != dim || r.Token != vocab[r.TokenID].Token {
			t.Fatalf("draw row %+v", r)
		}
		if _, ok := anchors[r.TokenID]; !ok || r.Param != formats.ParamAlpha {
			continue
		}
		if a, ok := fixed[r.TokenID]; ok && !slices.Equal(a, r.Vector) {
			t.Fatalf("anchor %d drawn at %v and at %v", r.TokenID, r.Vector, a)
		}
		fixed[r.TokenID] = r.Vector
	}
	ss, _, err := formats.ReadAll[formats.SampleStatsRow](filepath.Join(fit, "sample_stats.parquet"), formats.SchemaSampleStats)
	if err != nil {
		t.Fatal(err)
	}
	if len(ss) != chains*draws {
		t.Fatalf("sample_stats has %d rows, want %d", len(ss), chains*draws)
	}
	summary, _, err := formats.ReadAll[formats.SummaryRow](filepath.Join(fit, "summary.parquet"), formats.SchemaSummary)
	if err != nil {
		t.Fatal(err)
	}
	if want := 2*v*dim - dim*dim; len(summary) != want {
		t.Fatalf("summary has %d rows, want the 2VD - D^2 = %d free coordinates", len(summary), want)
	}

	// The manifest: every stage, its outputs' fingerprints equal to the
	// files', its inputs' to the inputs', and stats equal to the log's.
	man, err := readManifest(filepath.Join(out, ManifestFile))
	if err != nil {
		t.Fatal(err)
	}
	names := []string{}
	for _, r := range man.Stages {
		names = append(names, r.Name)
	}
	if !slices.Equal(names, []string{"tokenize", "count", "fit"}) {
		t.Fatalf("manifest stages %v", names)
	}
	wantOutputs := map[string][]string{
		"tokenize": {VocabFile, TokensFile},
		"count":    {CountsFile},
		"fit":      {"fit/map.parquet", "fit/sample_stats.parquet", "fit/summary.parquet", "fit/draws.parquet"},
	}
	corpus, _ := filepath.Abs("../testdata/austen-200.txt")
	wantInputs := map[string][]string{
		"tokenize": {corpus},
		"count":    {filepath.Join(out, TokensFile), filepath.Join(out, VocabFile)},
		"fit":      {filepath.Join(out, CountsFile), filepath.Join(out, VocabFile)},
	}
	logged := map[string]logRecord{}
	for _, r := range parseJSONLog(t, logBuf.Bytes()) {
		if strings.Contains(r.Msg, "done in") {
			logged[r.Stage] = r
		}
	}
	for _, r := range man.Stages {
		var outs []string
		for _, fp := range r.Outputs {
			rel, _ := filepath.Rel(out, fp.Path)
			outs = append(outs, filepath.ToSlash(rel))
			checkFingerprint(t, r.Name, fp)
		}
		if !slices.Equal(outs, wantOutputs[r.Name]) {
			t.Errorf("%s outputs %v, want %v", r.Name, outs, wantOutputs[r.Name])
		}
		var ins []string
		for _, fp := range r.Inputs {
			ins = append(ins, fp.Path)
			checkFingerprint(t, r.Name, fp)
		}
		if !slices.Equal(ins, wantInputs[r.Name]) {
			t.Errorf("%s inputs %v, want %v", r.Name, ins, wantInputs[r.Name])
		}
		if r.Version == "" || r.Version != vmeta.Version || r.Start.After(r.End) || r.PeakRSS <= 0 || r.Seconds < 0 ||
			r.Seconds > r.End.Sub(r.Start).Seconds()+1e-6 || len(r.Key) != 64 {
			t.Errorf("%s record: version %q (files say %q), %v..%v, %gs, rss %d, key %q",
				r.Name, r.Version, vmeta.Version, r.Start, r.End, r.Seconds, r.PeakRSS, r.Key)
		}
		if r.Name != "tokenize" && r.Seed != 3 {
			t.Errorf("%s seed %d, want the run's 3", r.Name, r.Seed)
		}
		stats, _ := json.Marshal(r.Stats)
		lr, ok := logged[r.Name]
		if !ok {
			t.Errorf("no JSON log record for the end of %s:\n%s", r.Name, logBuf.String())
			continue
		}
		if lr.Level != "INFO" || !jsonEqual(t, lr.Stats, stats) || lr.Seconds <= 0 {
			t.Errorf("%s logged stats %s (%gs), manifest %s", r.Name, lr.Stats, lr.Seconds, stats)
		}
	}
	var settings struct {
		Window int `json:"window"`
	}
	if err := json.Unmarshal(man.find("count").Settings, &settings); err != nil || settings.Window != 3 {
		t.Errorf("count settings %s", man.find("count").Settings)
	}
	// The tokenizer's rules and Unicode version are part of tokenize's
	// settings, and so of its key: a pwe whose rules or tables changed
	// makes the vocabulary again.
	var tokenizeSettings stages.TokenizeConfig
	if err := json.Unmarshal(man.find("tokenize").Settings, &tokenizeSettings); err != nil || tokenizeSettings.Tokenizer.Rules != tokenize.Rules ||
		tokenizeSettings.Tokenizer.Unicode != tokenize.Unicode {
		t.Errorf("tokenize settings %s, want the tokenizer's rules %d and Unicode version %s", man.find("tokenize").Settings, tokenize.Rules, tokenize.Unicode)
	}
	var fitStats struct {
		V     int `json:"vocab_size"`
		Draws int `json:"draws_per_chain"`
	}
	if err := json.Unmarshal(logged["fit"].Stats, &fitStats); err != nil || fitStats.V != v || fitStats.Draws != draws {
		t.Errorf("fit stats in the log: %s", logged["fit"].Stats)
	}
	if _, err := os.Stat(filepath.Join(out, StagingDir)); !os.IsNotExist(err) {
		t.Errorf("staging directory left after a successful run: %v", err)
	}
}

func checkFingerprint(t *testing.T, stage string, fp input.Fingerprint) {
	t.Helper()
	got, err := input.FingerprintFile(fp.Path)
	if err != nil || got.SHA256 != fp.SHA256 || got.Size != fp.Size {
		t.Errorf("%s: manifest fingerprint of %s is %s/%d, the file's %s/%d (%v)", stage, fp.Path, fp.SHA256, fp.Size, got.SHA256, got.Size, err)
	}
}

func jsonEqual(t *testing.T, a, b []byte) bool {
	t.Helper()
	var x, y any
	if json.Unmarshal(a, &x) != nil || json.Unmarshal(b, &y) != nil {
		return false
	}
	xa, _ := json.Marshal(x)
	ya, _ := json.Marshal(y)
	return bytes.Equal(xa, ya)
}
