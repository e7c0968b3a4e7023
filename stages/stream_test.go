package stages

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/pwe-project/pwe/formats"
	"github.com/pwe-project/pwe/formats/input"
)

func readCountsFile(t *testing.T, path string) ([]formats.CountRow, formats.Meta) {
	t.Helper()
	rows, meta, err := formats.ReadAll[formats.CountRow](path, formats.SchemaCounts)
	if err != nil {
		t.Fatal(err)
	}
	return rows, meta
}

func readCountsStream(t *testing.T, data []byte) ([]formats.CountRow, formats.Meta) {
	t.Helper()
	r, err := formats.OpenCountsStream(bytes.NewReader(data), "stdin")
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	var rows []formats.CountRow
	buf := make([]formats.CountRow, 777)
	for {
		n, err := r.Read(buf)
		rows = append(rows, buf[:n]...)
		if err == io.EOF {
			return rows, r.Meta()
		}
		if err != nil {
			t.Fatal(err)
		}
	}
}

func sameRows(t *testing.T, what string, got, want []formats.CountRow) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%s: %d rows, want %d", what, len(got), len(want))
	}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("%s: row %d is %+v, want %+v", what, i, got[i], want[i])
		}
	}
}

func rawJSON(v any) string {
	if r, ok := v.(json.RawMessage); ok {
		return string(r)
	}
	return fmt.Sprintf("%v", v)
}

func streamFingerprint(data []byte) input.Fingerprint {
	sum := sha256.Sum256(data)
	return input.Fingerprint{Path: StdioPath, Size: int64(len(data)), SHA256: hex.EncodeToString(sum[:])}
}

// TestStreamRoute writes the vocabulary and the counts as Arrow streams and
// checks that they hold what the Parquet route writes, rows and metadata,
// and that a stream read as --vocab - gives the same counts.
func TestStreamRoute(t *testing.T) {
	t.Setenv("SOURCE_DATE_EPOCH", "0")
	ctx := context.Background()
	dir := t.TempDir()
	vocab := tokenizeFixture(t, dir)
	var vstream bytes.Buffer
	if _, err := Tokenize(ctx, TokenizeConfig{
		Input: TextInput{Paths: []string{fixture}, DocSep: "blank"}, MaxVocab: 300,
		Output: StdioPath, Stdout: &vstream,
	}); err != nil {
		t.Fatal(err)
	}
	vrows, vmeta, err := formats.ReadVocab(vocab)
	if err != nil {
		t.Fatal(err)
	}
	srows, smeta, sum, err := formats.ReadVocabStream(bytes.NewReader(vstream.Bytes()), "stdin")
	if err != nil {
		t.Fatal(err)
	}
	if len(srows) != len(vrows) || sum.Size != int64(vstream.Len()) {
		t.Fatalf("vocab stream: %d rows of %d bytes; file has %d rows", len(srows), sum.Size, len(vrows))
	}
	for i := range vrows {
		if srows[i].Token != vrows[i].Token || srows[i].Count != vrows[i].Count || srows[i].TokenID != vrows[i].TokenID {
			t.Fatalf("vocab row %d: stream %+v, file %+v", i, srows[i], vrows[i])
		}
	}
	for _, k := range [][2]any{{vmeta.Config, smeta.Config}, {vmeta.Inputs, smeta.Inputs}, {vmeta.Stats, smeta.Stats}} {
		if rawJSON(k[0]) != rawJSON(k[1]) {
			t.Errorf("vocab metadata: file %s, stream %s", rawJSON(k[0]), rawJSON(k[1]))
		}
	}

	cfg := CountConfig{Input: TextInput{Paths: []string{fixture}}, Vocab: vocab, Window: 2, Negatives: intp(2), Seed: 7}
	file := cfg
	file.Output = filepath.Join(dir, "counts.parquet")
	if _, err := Count(ctx, file); err != nil {
		t.Fatal(err)
	}
	var cstream bytes.Buffer
	stream := cfg
	stream.Output, stream.Stdout = StdioPath, &cstream
	if _, err := Count(ctx, stream); err != nil {
		t.Fatal(err)
	}
	frows, fmeta := readCountsFile(t, file.Output)
	crows, cmeta := readCountsStream(t, cstream.Bytes())
	sameRows(t, "counts stream", crows, frows)
	for _, k := range [][2]any{{fmeta.Config, cmeta.Config}, {fmeta.Inputs, cmeta.Inputs}, {fmeta.Stats, cmeta.Stats}} {
		if rawJSON(k[0]) != rawJSON(k[1]) {
			t.Errorf("counts metadata: file %s, stream %s", rawJSON(k[0]), rawJSON(k[1]))
		}
	}
	if cmeta.Schema != formats.SchemaCounts || cmeta.CreatedAt != fmeta.CreatedAt {
		t.Errorf("stream schema %q created %q", cmeta.Schema, cmeta.CreatedAt)
	}

	// --vocab - : same rows; the vocabulary input is the stream's bytes.
	fromStdin := cfg
	fromStdin.Vocab, fromStdin.Stdin = StdioPath, bytes.NewReader(vstream.Bytes())
	fromStdin.Output = filepath.Join(dir, "counts-stdin.parquet")
	if _, err := Count(ctx, fromStdin); err != nil {
		t.Fatal(err)
	}
	rows, meta := readCountsFile(t, fromStdin.Output)
	sameRows(t, "counts with --vocab -", rows, frows)
	var inputs []input.Fingerprint
	if err := json.Unmarshal(meta.Inputs.(json.RawMessage), &inputs); err != nil {
		t.Fatal(err)
	}
	if got, want := inputs[len(inputs)-1], streamFingerprint(vstream.Bytes()); got != want {
		t.Errorf("vocabulary fingerprint %+v, want %+v", got, want)
	}
}

// fitDump prints a fit output for comparison: every row and the metadata
// but the input fingerprints, and, in sample_stats, the wall-clock seconds.
func fitDump(t *testing.T, path string) string {
	t.Helper()
	if filepath.Base(path) == SampleStatsFile {
		rows, _, err := formats.ReadAll[formats.SampleStatsRow](path, formats.SchemaSampleStats)
		if err != nil {
			t.Fatal(err)
		}
		for i := range rows {
			rows[i].Seconds = 0
		}
		return fmt.Sprintf("%v", rows)
	}
	var b bytes.Buffer
	if err := formats.Dump(&b, path, formats.DumpOptions{Rows: -1, Stable: true}); err != nil {
		t.Fatal(err)
	}
	var out []string
	skip := false
	for _, line := range strings.Split(b.String(), "\n") {
		if strings.HasPrefix(line, "  pwe.") || strings.HasPrefix(line, "rows") {
			skip = strings.HasPrefix(line, "  "+formats.KeyInputs+":")
		}
		if !skip {
			out = append(out, line)
		}
	}
	return strings.Join(out, "\n")
}

func fitInputs(t *testing.T, path string) []input.Fingerprint {
	t.Helper()
	_, meta, err := formats.ReadAll[formats.VectorRow](path, formats.SchemaMap)
	if err != nil {
		t.Fatal(err)
	}
	var fps []input.Fingerprint
	if err := json.Unmarshal(meta.Inputs.(json.RawMessage), &fps); err != nil {
		t.Fatal(err)
	}
	return fps
}

// TestFitFromStream fits from counts.parquet and from the same counts as an
// Arrow stream on stdin, and compares every output.
func TestFitFromStream(t *testing.T) {
	t.Setenv("SOURCE_DATE_EPOCH", "0")
	ctx := context.Background()
	dir := t.TempDir()
	vocab, counts := countFixture(t, dir, 60)
	var stream bytes.Buffer
	if _, err := Count(ctx, CountConfig{Input: TextInput{Paths: []string{fixture}}, Vocab: vocab, Output: StdioPath,
		Stdout: &stream, Window: 3, Seed: 3}); err != nil {
		t.Fatal(err)
	}
	w := 5
	cfg := FitConfig{Vocab: vocab, Dim: 2, Anchors: "first", Chains: 2, Warmup: &w, Draws: 10, Seed: 5, Memory: 1 << 20}
	file, piped := cfg, cfg
	file.Counts, file.Output = counts, filepath.Join(dir, "fit-file")
	piped.Counts, piped.Output, piped.Stdin = StdioPath, filepath.Join(dir, "fit-stream"), bytes.NewReader(stream.Bytes())
	for _, c := range []FitConfig{file, piped} {
		if _, err := Fit(ctx, c); err != nil {
			t.Fatal(err)
		}
	}
	names, err := filepath.Glob(filepath.Join(file.Output, "*.parquet"))
	if err != nil || len(names) < 4 {
		t.Fatalf("fit wrote %v (%v)", names, err)
	}
	for _, name := range names {
		a, b := fitDump(t, name), fitDump(t, filepath.Join(piped.Output, filepath.Base(name)))
		if a != b {
			t.Errorf("%s differs between the file and the stream route:\nfile:\n%s\nstream:\n%s",
				filepath.Base(name), firstLines(a, 30), firstLines(b, 30))
		}
	}
	got := fitInputs(t, filepath.Join(piped.Output, MapFile))
	if len(got) != 2 || got[0] != streamFingerprint(stream.Bytes()) || got[1].Path != vocab {
		t.Errorf("inputs of the stream route: %+v; want the stream's fingerprint, then %s", got, vocab)
	}

	// A truncated stream fails, naming stdin, the batch and the row.
	piped.Stdin = bytes.NewReader(stream.Bytes()[:stream.Len()-8])
	piped.Output = filepath.Join(dir, "fit-truncated")
	_, err = Fit(ctx, piped)
	if !errors.Is(err, formats.ErrTruncated) || !strings.Contains(err.Error(), "stdin: batch ") {
		t.Errorf("truncated stream: %v", err)
	}
	if _, err := os.Stat(filepath.Join(piped.Output, MapFile)); err == nil {
		t.Errorf("a fit from a truncated stream wrote %s", MapFile)
	}
	// A vocabulary stream where counts are expected is refused.
	var vstream bytes.Buffer
	if _, err := Tokenize(ctx, TokenizeConfig{Input: TextInput{Paths: []string{fixture}}, MaxVocab: 60, Output: StdioPath, Stdout: &vstream}); err != nil {
		t.Fatal(err)
	}
	piped.Stdin = &vstream
	if _, err = Fit(ctx, piped); !errors.Is(err, formats.ErrNotPwe) || !strings.Contains(err.Error(), `stdin: formats: not the expected pwe file: want pwe.schema "pwe.counts/1"`) {
		t.Errorf("vocabulary stream as counts: %v", err)
	}
}

func TestOneStdin(t *testing.T) {
	w := 5
	fit := FitConfig{Counts: StdioPath, Vocab: StdioPath, Output: "out", Warmup: &w}
	count := CountConfig{Input: TextInput{Paths: []string{"a.txt", StdioPath}}, Vocab: StdioPath, Output: "c.parquet"}
	appendStdin := CountConfig{Input: TextInput{Paths: []string{"a.txt"}}, Vocab: "v.parquet", Output: "c.parquet", Append: StdioPath}
	for _, c := range []struct {
		err  error
		want string
	}{
		{fit.Validate(), "--counts and --vocab both read standard input"},
		{count.WithDefaults().Validate(), "--vocab and the corpus both read standard input"},
		{appendStdin.WithDefaults().Validate(), "--append names a file"},
	} {
		if c.err == nil || !strings.Contains(c.err.Error(), c.want) {
			t.Errorf("error %v, want %q", c.err, c.want)
		}
	}
	fit.Vocab = "v.parquet"
	if err := fit.Validate(); err != nil {
		t.Errorf("one stdin refused: %v", err)
	}
}
