package stages

import (
	"bytes"
	"compress/gzip"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"regexp"
	"runtime/debug"
	"slices"
	"strings"
	"testing"
	"unicode"

	"github.com/klauspost/compress/zstd"

	"github.com/pwe-project/pwe/formats"
	"github.com/pwe-project/pwe/formats/input"
	"github.com/pwe-project/pwe/tokenize"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata/")

// fixture is 200 lines of Sense and Sensibility cut from ../shared/data.
const fixture = "../testdata/austen-200.txt"

func intp(k int) *int { return &k }

func tokenizeFixture(t *testing.T, dir string) string {
	t.Helper()
	vocab := filepath.Join(dir, "vocab.parquet")
	_, err := Tokenize(context.Background(), TokenizeConfig{
		Input:    TextInput{Paths: []string{fixture}, DocSep: "blank"},
		MaxVocab: 300,
		Output:   vocab,
	})
	if err != nil {
		t.Fatal(err)
	}
	return vocab
}

func checkGolden(t *testing.T, name, path string, rows int) {
	t.Helper()
	var dump bytes.Buffer
	if err := formats.Dump(&dump, path, formats.DumpOptions{Rows: rows, Stable: true}); err != nil {
		t.Fatal(err)
	}
	// The Unicode version is the Go version's (tokenize.Unicode): the
	// golden holds a placeholder for it, so that it serves every Go.
	recorded := []byte(`"unicode": "` + tokenize.Unicode + `"`)
	if !bytes.Contains(dump.Bytes(), recorded) {
		t.Errorf("%s does not record the Unicode version %s", path, tokenize.Unicode)
	}
	// So is the fingerprint of a vocabulary made in the test, which
	// records it; the vocabulary's own golden checks its content.
	got := bytes.ReplaceAll(dump.Bytes(), recorded, []byte(`"unicode": "(this Go's)"`))
	got = madeVocab.ReplaceAll(got, []byte(`"path": "vocab.parquet",${1}"sha256": "(made in the test)",${1}"size": 0`))
	golden := filepath.Join("testdata", name+".golden")
	if *update {
		if err := os.WriteFile(golden, got, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatalf("%v (run go test ./stages -update to create it)", err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s differs from %s (go test ./stages -update rewrites it after review)\ngot:\n%s", path, golden, firstLines(string(got), 40))
	}
}

// madeVocab matches the fingerprint of a vocabulary made in a test.
var madeVocab = regexp.MustCompile(`"path": "vocab.parquet",(\n\s*)"sha256": "[0-9a-f]{64}",\n\s*"size": [0-9]+`)

func firstLines(s string, n int) string {
	lines := strings.SplitN(s, "\n", n+1)
	if len(lines) > n {
		lines = lines[:n]
	}
	return strings.Join(lines, "\n")
}

func TestTokenizeGolden(t *testing.T) {
	t.Setenv("SOURCE_DATE_EPOCH", "0")
	vocab := tokenizeFixture(t, t.TempDir())
	checkGolden(t, "austen-200.vocab", vocab, 25)
	rows, _, err := formats.ReadVocab(vocab)
	if err != nil {
		t.Fatal(err)
	}
	for i := 1; i < len(rows); i++ {
		a, b := rows[i-1], rows[i]
		if a.Count < b.Count || a.Count == b.Count && a.Token >= b.Token {
			t.Fatalf("rows %d and %d out of order: %+v, %+v", i-1, i, a, b)
		}
	}
}

func TestCountGolden(t *testing.T) {
	t.Setenv("SOURCE_DATE_EPOCH", "0")
	dir := t.TempDir()
	vocab := tokenizeFixture(t, dir)
	out := filepath.Join(dir, "counts.parquet")
	// No DocSep: the count stage takes the vocabulary corpus's (blank), and
	// the golden's documents count (21 paragraphs, not 200 lines) shows it.
	_, err := Count(context.Background(), CountConfig{
		Input: TextInput{Paths: []string{fixture}},
		Vocab: vocab, Output: out, Window: 2, Negatives: intp(1), Seed: 7,
	})
	if err != nil {
		t.Fatal(err)
	}
	checkGolden(t, "austen-200.counts", out, 25)
}

// TestCountDeterministic runs the count stage with different thread counts
// and memory budgets (400 KiB for the counter forces spills to disk, on the
// big fixture, with two workers; 64 threads on 8 MiB count on a few
// workers) and compares the bytes.
func TestCountDeterministic(t *testing.T) {
	t.Setenv("SOURCE_DATE_EPOCH", "0")
	dir := t.TempDir()
	vocab := tokenizeFixture(t, dir)
	corpus := bigFixture(t, dir)
	var first []byte
	for i, run := range []struct {
		threads int
		memory  int64
	}{{1, 1 << 30}, {2, 1 << 30}, {3, 1 << 30}, {2, countWorkerBytes + 400<<10}, {64, 8 << 20}} {
		out := filepath.Join(dir, "counts.parquet")
		st, err := Count(context.Background(), CountConfig{
			Input: TextInput{Paths: []string{corpus}, DocSep: "blank"},
			Vocab: vocab, Output: out, Window: 3, Subsample: 1e-3, Seed: 11,
			Threads: run.threads, Memory: run.memory, TempDir: dir,
		})
		if err != nil {
			t.Fatal(err)
		}
		got, err := os.ReadFile(out)
		if err != nil {
			t.Fatal(err)
		}
		if i == 0 {
			first = got
			continue
		}
		if !bytes.Equal(got, first) {
			t.Errorf("threads %d, memory %d (%d spills): output differs from threads 1", run.threads, run.memory, st.Spills)
		}
		if run.memory < countWorkerBytes+1<<20 && st.Spills == 0 {
			t.Errorf("memory %d: no spill; the test no longer covers the spill path", run.memory)
		}
		if st.Threads != run.threads || st.Workers < 1 || st.Workers > run.threads ||
			(run.threads == 64) != (st.Workers < run.threads) || run.threads == 64 && st.Workers == 1 {
			t.Errorf("threads %d, memory %d: counted on %d workers of %d threads", run.threads, run.memory, st.Workers, st.Threads)
		}
	}
}

// TestManyInputFiles: a corpus of more files than input.MaxListedInputs
// is recorded in the outputs' pwe.inputs as one fingerprint, which the
// files give again; one of as many files as that lists them all.
func TestManyInputFiles(t *testing.T) {
	for _, n := range []int{input.MaxListedInputs, input.MaxListedInputs + 1} {
		dir := t.TempDir()
		corpus := filepath.Join(dir, "corpus")
		if err := os.Mkdir(corpus, 0o755); err != nil {
			t.Fatal(err)
		}
		var fps []input.Fingerprint
		for i := range n {
			path := filepath.Join(corpus, fmt.Sprintf("doc%05d.txt", i))
			if err := os.WriteFile(path, fmt.Appendf(nil, "the cat number %d sat\n", i%17), 0o644); err != nil {
				t.Fatal(err)
			}
			fp, err := input.FingerprintFile(path)
			if err != nil {
				t.Fatal(err)
			}
			fps = append(fps, fp)
		}
		vocab, counts := filepath.Join(dir, "vocab.parquet"), filepath.Join(dir, "counts.parquet")
		if _, err := Tokenize(context.Background(), TokenizeConfig{Input: TextInput{Paths: []string{corpus}}, Output: vocab}); err != nil {
			t.Fatal(err)
		}
		if _, err := Count(context.Background(), CountConfig{Input: TextInput{Paths: []string{corpus}}, Vocab: vocab, Output: counts}); err != nil {
			t.Fatal(err)
		}
		_, vmeta, err := formats.ReadVocab(vocab)
		if err != nil {
			t.Fatal(err)
		}
		_, cmeta := readCountsFile(t, counts)
		want := fps
		if n > input.MaxListedInputs {
			sum := sha256.New()
			var size int64
			for _, fp := range fps {
				fmt.Fprintf(sum, "%s\t%d\t%s\n", fp.Path, fp.Size, fp.SHA256)
				size += fp.Size
			}
			want = []input.Fingerprint{{Path: fmt.Sprintf("%d files, %s to %s", n, fps[0].Path, fps[n-1].Path), Size: size, SHA256: hex.EncodeToString(sum.Sum(nil))}}
		}
		for _, f := range []struct {
			name  string
			meta  formats.Meta
			extra int // the vocabulary, after the corpus
		}{{"vocab.parquet", vmeta, 0}, {"counts.parquet", cmeta, 1}} {
			var got []input.Fingerprint
			if err := json.Unmarshal(f.meta.Inputs.(json.RawMessage), &got); err != nil {
				t.Fatal(err)
			}
			if len(got) != len(want)+f.extra || !slices.Equal(got[:len(want)], want) {
				t.Errorf("%d files: %s records %d inputs, the first %+v; want %d, the first %+v", n, f.name, len(got), got[0], len(want)+f.extra, want[0])
			}
		}
	}
}

// TestBadInputs checks that bad inputs fail with an error naming the file
// and line or row, and that no output appears under the final name or as a
// temporary file.
func TestBadInputs(t *testing.T) {
	dir := t.TempDir()
	write := func(name string, data []byte) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, data, 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	text := bytes.Repeat([]byte("the quick brown fox jumps over the lazy dog\n"), 2000)
	var gz bytes.Buffer
	zw := gzip.NewWriter(&gz)
	zw.Write(text)
	zw.Close()
	zs, err := zstd.NewWriter(nil)
	if err != nil {
		t.Fatal(err)
	}
	zst := zs.EncodeAll(text, nil)
	empty := write("empty.txt", []byte("\n\n  \n"))

	cases := []struct {
		name  string
		in    TextInput
		wants []string // substrings of the error
	}{
		{"empty corpus", TextInput{Paths: []string{empty}}, []string{"empty corpus: no token in " + empty}},
		{"punctuation only", TextInput{Paths: []string{write("punct.txt", []byte("... --- !!!\n"))}}, []string{"empty corpus"}},
		{"truncated gzip", TextInput{Paths: []string{write("cut.txt.gz", gz.Bytes()[:gz.Len()/2])}}, []string{"cut.txt.gz"}},
		{"truncated zstd", TextInput{Paths: []string{write("cut.txt.zst", zst[:len(zst)/2])}}, []string{"cut.txt.zst"}},
		{"jsonl not json", TextInput{Paths: []string{write("bad.jsonl", []byte("{\"text\": \"a b\"}\n{\"text\": \"c d\"}\nnot json\n"))}, TextField: "text"}, []string{"bad.jsonl:3"}},
		{"parquet without column", TextInput{Paths: []string{fixtureParquet(t, dir)}, TextColumn: "body"}, []string{"docs.parquet", "body"}},
		{"missing file", TextInput{Paths: []string{filepath.Join(dir, "nope.txt")}}, []string{"nope.txt"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			out := filepath.Join(dir, "out", "vocab.parquet")
			// The token stream, too, must not appear.
			tokens := filepath.Join(dir, "out", "tokens.bin")
			_, err := Tokenize(context.Background(), TokenizeConfig{Input: c.in, Output: out, Tokens: tokens})
			if err == nil {
				t.Fatal("no error")
			}
			for _, w := range c.wants {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not mention %q", err, w)
				}
			}
			assertNoOutput(t, filepath.Dir(out))
		})
	}
	var pe *input.ParseError
	_, err = Tokenize(context.Background(), TokenizeConfig{
		Input:  TextInput{Paths: []string{filepath.Join(dir, "bad.jsonl")}, TextField: "text"},
		Output: filepath.Join(dir, "out", "v.parquet"),
	})
	if !errors.As(err, &pe) || pe.Line != 3 {
		t.Errorf("JSONL error %v: want a *input.ParseError at line 3", err)
	}
}

// fixtureParquet writes a Parquet file with a "text" column (not "body").
func fixtureParquet(t *testing.T, dir string) string {
	type doc struct {
		Text string `parquet:"text"`
	}
	p := filepath.Join(dir, "docs.parquet")
	w, err := formats.Create[doc](p, formats.Meta{Schema: "test/1"})
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Write([]doc{{"a b c"}, {"d e f"}}); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return p
}

func assertNoOutput(t *testing.T, dir string) {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if errors.Is(err, os.ErrNotExist) {
		return
	}
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		t.Errorf("output directory holds %s after a failed run", e.Name())
	}
}

// TestOutputNamesAnInput: an output that names one of the stage's inputs,
// or the other output, is refused before anything is written, and the
// input is left as it was; counts growing in place (--append and -o the
// same file) stay allowed.
func TestOutputNamesAnInput(t *testing.T) {
	dir := t.TempDir()
	corpus := filepath.Join(dir, "corpus.txt")
	text := []byte("the cat sat on the mat\nthe dog ate the hat\n")
	stop := filepath.Join(dir, "stop.txt")
	for p, b := range map[string][]byte{corpus: text, stop: []byte("on\n")} {
		if err := os.WriteFile(p, b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	vocab, tokens := filepath.Join(dir, "vocab.parquet"), filepath.Join(dir, "tokens.bin")
	if _, err := Tokenize(context.Background(), TokenizeConfig{Input: TextInput{Paths: []string{corpus}}, Output: vocab, Tokens: tokens}); err != nil {
		t.Fatal(err)
	}
	counts := filepath.Join(dir, "counts.parquet")
	if _, err := Count(context.Background(), CountConfig{Tokens: tokens, Vocab: vocab, Output: counts}); err != nil {
		t.Fatal(err)
	}
	kept := map[string][]byte{}
	for _, p := range []string{corpus, stop, vocab, tokens, counts} {
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		kept[p] = b
	}
	// The corpus named through its directory, as the input expands it.
	viaDir := filepath.Join(dir, ".", "corpus.txt")
	cases := []struct {
		name string
		run  func() error
		want string
	}{
		{"tokenize -o the corpus", func() error {
			_, err := Tokenize(context.Background(), TokenizeConfig{Input: TextInput{Paths: []string{dir + "/*.txt"}}, Output: viaDir})
			return err
		}, "is the input"},
		{"tokenize --tokens the stop words", func() error {
			_, err := Tokenize(context.Background(), TokenizeConfig{Input: TextInput{Paths: []string{corpus}},
				Tokenizer: TokenizerConfig{StopwordsFile: stop}, Output: filepath.Join(dir, "v2.parquet"), Tokens: stop})
			return err
		}, "is the input " + stop},
		{"tokenize -o and --tokens alike", func() error {
			out := filepath.Join(dir, "new", "both")
			_, err := Tokenize(context.Background(), TokenizeConfig{Input: TextInput{Paths: []string{corpus}}, Output: out, Tokens: out})
			return err
		}, "named as two outputs"},
		{"count --tokens -o the vocabulary", func() error {
			_, err := Count(context.Background(), CountConfig{Tokens: tokens, Vocab: vocab, Output: vocab})
			return err
		}, "is the input " + vocab},
		{"count -o the token stream", func() error {
			_, err := Count(context.Background(), CountConfig{Tokens: tokens, Vocab: vocab, Output: tokens})
			return err
		}, "is the input " + tokens},
		{"count text -o the corpus", func() error {
			_, err := Count(context.Background(), CountConfig{Input: TextInput{Paths: []string{dir}}, Vocab: vocab, Output: corpus})
			return err
		}, "is the input"},
	}
	for _, c := range cases {
		if err := c.run(); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: error %v, want one saying %q", c.name, err, c.want)
		}
		for p, b := range kept {
			if got, err := os.ReadFile(p); err != nil || !bytes.Equal(got, b) {
				t.Fatalf("%s: %s changed (%v)", c.name, p, err)
			}
		}
	}
	assertNoOutput(t, filepath.Join(dir, "new"))
	if _, err := Count(context.Background(), CountConfig{Tokens: tokens, Vocab: vocab, Append: counts, Output: counts}); err != nil {
		t.Errorf("count --append X -o X: %v", err)
	}
}

// TestLongDocument: a document longer than tokenize.PieceBytes, tokenized a
// piece at a time, has the tokens of the same text cut into lines (the
// vocabulary's counts agree), and count gives the same pairs from its text
// as from the token stream tokenize wrote.
func TestLongDocument(t *testing.T) {
	dir := t.TempDir()
	lines, err := os.ReadFile(fixture)
	if err != nil {
		t.Fatal(err)
	}
	lines = bytes.Repeat(lines, 2*tokenize.PieceBytes/len(lines)+1)
	// Short documents on either side: the tokens gathered before the long
	// one must be numbered before its pieces.
	first, last := "a first line of marianne\n", "and elinor at the last\n"
	long := []byte(first + string(bytes.ReplaceAll(lines, []byte("\n"), []byte(" "))) + "\n" + last)
	lines = []byte(first + string(lines) + last)
	write := func(name string, b []byte) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, b, 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	longPath, linesPath := write("long.txt", long), write("lines.txt", lines)
	vocab := func(name, in, tokens string) []formats.VocabRow {
		out := filepath.Join(dir, name)
		if _, err := Tokenize(context.Background(), TokenizeConfig{Input: TextInput{Paths: []string{in}}, Output: out, Tokens: tokens}); err != nil {
			t.Fatal(err)
		}
		rows, _, err := formats.ReadAll[formats.VocabRow](out, formats.SchemaVocab)
		if err != nil {
			t.Fatal(err)
		}
		return rows
	}
	tokens := filepath.Join(dir, "long.bin")
	if got, want := vocab("long.parquet", longPath, tokens), vocab("lines.parquet", linesPath, ""); !slices.Equal(got, want) {
		t.Fatalf("the long document's vocabulary (%d tokens) differs from its lines' (%d)", len(got), len(want))
	}
	counted := func(cfg CountConfig) []formats.CountRow {
		cfg.Vocab, cfg.Output = filepath.Join(dir, "long.parquet"), filepath.Join(dir, "counts.parquet")
		st, err := Count(context.Background(), cfg)
		if err != nil {
			t.Fatal(err)
		}
		if st.Documents != 3 {
			t.Fatalf("%d documents, want 3", st.Documents)
		}
		rows, _, err := formats.ReadAll[formats.CountRow](cfg.Output, formats.SchemaCounts)
		if err != nil {
			t.Fatal(err)
		}
		return rows
	}
	if got, want := counted(CountConfig{Input: TextInput{Paths: []string{longPath}}}), counted(CountConfig{Tokens: tokens}); !slices.Equal(got, want) {
		t.Errorf("count of the long document's text: %d rows; of its token stream: %d", len(got), len(want))
	}
}

// TestCountRestoresGC: count pauses the collector for its start
// (pauseGC) and leaves the process's setting as it found it, whether it
// succeeds or fails after the pause.
func TestCountRestoresGC(t *testing.T) {
	dir := t.TempDir()
	vocab := tokenizeFixture(t, dir)
	defer debug.SetGCPercent(debug.SetGCPercent(77))
	for _, c := range []struct {
		name  string
		vocab string
		fails bool
	}{{"success", vocab, false}, {"missing vocabulary", filepath.Join(dir, "none.parquet"), true}} {
		_, err := Count(context.Background(), CountConfig{
			Input: TextInput{Paths: []string{fixture}},
			Vocab: c.vocab, Output: filepath.Join(dir, "counts.parquet"), Window: 2,
		})
		if (err != nil) != c.fails {
			t.Fatalf("%s: error %v", c.name, err)
		}
		if got := debug.SetGCPercent(77); got != 77 {
			t.Errorf("%s: GC percent %d after count, want 77", c.name, got)
		}
	}
}

// TestCountRepeatedVocabularyToken: count reads the vocabulary without its
// own check for repeated tokens, and the index it builds refuses one,
// naming the file and the ids; no output appears.
func TestCountRepeatedVocabularyToken(t *testing.T) {
	dir := t.TempDir()
	vocab := filepath.Join(dir, "vocab.parquet")
	rows := []formats.VocabRow{{TokenID: 0, Token: "the", Count: 9}, {TokenID: 1, Token: "dashwood", Count: 5}, {TokenID: 2, Token: "the", Count: 3}}
	if err := formats.WriteVocab(vocab, rows, formats.Meta{Config: TokenizeConfig{}}); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "out", "counts.parquet")
	_, err := Count(context.Background(), CountConfig{Input: TextInput{Paths: []string{fixture}}, Vocab: vocab, Output: out, Window: 2})
	if err == nil || !strings.Contains(err.Error(), vocab) || !strings.Contains(err.Error(), `duplicate token "the" at ids 0 and 2`) {
		t.Fatalf("count with a repeated vocabulary token: %v", err)
	}
	assertNoOutput(t, filepath.Dir(out))
}

// TestCountVocabRules counts text with vocabularies recorded with other
// rules than this pwe's: one of an older pwe whose tokens this tokenizer
// still makes gives the counts of a new one, and records the new rules;
// one with a token it does not make (decomposed, or not folded), whatever
// its rules, or one of a newer pwe, is refused naming the file and the
// token, and no output appears.
func TestCountVocabRules(t *testing.T) {
	dir := t.TempDir()
	corpus := filepath.Join(dir, "docs.txt")
	if err := os.WriteFile(corpus, []byte("Café au lait\ncafe\u0301 noir, CAFÉ au lait\nau revoir\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	vocab := filepath.Join(dir, "vocab.parquet")
	if _, err := Tokenize(context.Background(), TokenizeConfig{Input: TextInput{Paths: []string{corpus}}, Output: vocab}); err != nil {
		t.Fatal(err)
	}
	rows, meta, err := formats.ReadVocab(vocab)
	if err != nil {
		t.Fatal(err)
	}
	made, err := vocabSettings(meta)
	if err != nil || made.Tokenizer.Rules != tokenize.Rules || made.Tokenizer.Unicode != unicode.Version {
		t.Fatalf("vocabulary made with rules %d and Unicode %q (%v), want %d and %s", made.Tokenizer.Rules, made.Tokenizer.Unicode, err, tokenize.Rules, unicode.Version)
	}
	count := func(name string, rows []formats.VocabRow, config any) (string, error) {
		path := filepath.Join(dir, name+".vocab.parquet")
		if err := formats.WriteVocab(path, rows, formats.Meta{Config: config}); err != nil {
			t.Fatal(err)
		}
		out := filepath.Join(dir, name, "counts.parquet")
		_, err := Count(context.Background(), CountConfig{Input: TextInput{Paths: []string{corpus}}, Vocab: path, Output: out, Window: 2, Seed: 3})
		return out, err
	}
	want, err := count("new", rows, made)
	if err != nil {
		t.Fatal(err)
	}
	wantRows, _ := readCountsFile(t, want)
	if len(wantRows) == 0 {
		t.Fatal("no counts")
	}

	old := made
	old.Tokenizer.Rules, old.Tokenizer.Unicode = 0, ""
	got, err := count("old", rows, old)
	if err != nil {
		t.Fatalf("older vocabulary of tokens this pwe makes: %v", err)
	}
	gotRows, gotMeta := readCountsFile(t, got)
	if !slices.Equal(gotRows, wantRows) {
		t.Errorf("older vocabulary: counts %v, want %v", gotRows, wantRows)
	}
	var recorded struct {
		Tokenizer TokenizerConfig `json:"tokenizer"`
	}
	if err := json.Unmarshal(gotMeta.Config.(json.RawMessage), &recorded); err != nil || recorded.Tokenizer.Rules != tokenize.Rules || recorded.Tokenizer.Unicode != unicode.Version {
		t.Errorf("counts record rules %d and Unicode %q (%v), want %d and %s", recorded.Tokenizer.Rules, recorded.Tokenizer.Unicode, err, tokenize.Rules, unicode.Version)
	}

	id := slices.IndexFunc(rows, func(r formats.VocabRow) bool { return r.Token == "caf\u00e9" })
	if id < 0 {
		t.Fatalf("no café in %v", rows)
	}
	replaced := func(token string) []formats.VocabRow {
		r := slices.Clone(rows)
		r[id].Token = token
		return r
	}
	newer := made
	newer.Tokenizer.Rules = tokenize.Rules + 1
	tables := made
	tables.Tokenizer.Unicode = "99.0.0"
	for _, c := range []struct {
		name   string
		rows   []formats.VocabRow
		config any
		msg    string
	}{
		{"decomposed", replaced("cafe\u0301"), old, fmt.Sprintf(`token_id %d, "cafe\u0301", is not a token this pwe makes (it would be "caf\u00e9"); the vocabulary was made by another pwe (of rules 0, this one has rules %d)`, id, tokenize.Rules)},
		// A vocabulary of a pwe whose Go had other Unicode tables.
		{"tables", replaced("cafe\u0301"), tables, "made by another pwe (with Unicode 99.0.0 tables, this one has " + unicode.Version},
		// The rules are this pwe's, but the token is not (a vocabulary of
		// a pwe built with other Unicode tables, or edited).
		{"current", replaced("cafe\u0301"), made, fmt.Sprintf(`token_id %d, "cafe\u0301", is not a token this pwe makes (it would be "caf\u00e9"); the vocabulary was made by another pwe (older, or built with other Unicode tables)`, id)},
		{"unfolded", replaced("Caf\u00e9"), nil, fmt.Sprintf(`token_id %d, "Caf\u00e9", is not a token this pwe makes (it would be "caf\u00e9"`, id)},
		{"newer", rows, newer, fmt.Sprintf("rules %d, of a newer pwe", tokenize.Rules+1)},
	} {
		out, err := count(c.name, c.rows, c.config)
		if !errors.Is(err, ErrVocabRules) || !strings.Contains(err.Error(), c.name+".vocab.parquet") || !strings.Contains(err.Error(), c.msg) {
			t.Errorf("%s: %v, want ErrVocabRules naming the file and %q", c.name, err, c.msg)
		}
		assertNoOutput(t, filepath.Dir(out))
	}

	// With case kept, a capital is a token.
	keep := old
	keep.Tokenizer.KeepCase = true
	if _, err := count("keep", replaced("Caf\u00e9"), keep); err != nil {
		t.Errorf("older vocabulary with case kept: %v", err)
	}
}

// TestCountDocumentPerFile: with --doc-sep file a file is one document, so
// windows run across its lines and never into the next file; count takes
// the separator from the vocabulary. By lines, no window crosses a line.
func TestCountDocumentPerFile(t *testing.T) {
	dir := t.TempDir()
	corpus := filepath.Join(dir, "corpus")
	if err := os.Mkdir(corpus, 0o755); err != nil {
		t.Fatal(err)
	}
	for name, text := range map[string]string{"1.txt": "a b\n\nc\n", "2.txt": "d\ne"} {
		if err := os.WriteFile(filepath.Join(corpus, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	pairs := func(sep string) map[[2]string]float64 {
		vocab := filepath.Join(dir, sep+".vocab.parquet")
		if _, err := Tokenize(context.Background(), TokenizeConfig{Input: TextInput{Paths: []string{corpus}, DocSep: sep}, Output: vocab}); err != nil {
			t.Fatal(err)
		}
		rows, _, err := formats.ReadVocab(vocab)
		if err != nil {
			t.Fatal(err)
		}
		out := filepath.Join(dir, sep+".counts.parquet")
		if _, err := Count(context.Background(), CountConfig{Input: TextInput{Paths: []string{corpus}}, Vocab: vocab, Output: out, Window: 2, Seed: 1}); err != nil {
			t.Fatal(err)
		}
		counts, _ := readCountsFile(t, out)
		got := make(map[[2]string]float64)
		for _, c := range counts {
			if c.NPos > 0 {
				got[[2]string{rows[c.TargetID].Token, rows[c.ContextID].Token}] = c.NPos
			}
		}
		return got
	}
	want := make(map[[2]string]float64)
	for _, doc := range [][]string{{"a", "b", "c"}, {"d", "e"}} {
		for i := range doc {
			for j := range doc {
				if i != j && j-i <= 2 && i-j <= 2 {
					want[[2]string{doc[i], doc[j]}]++
				}
			}
		}
	}
	if got := pairs(input.DocSepFile); !maps.Equal(got, want) {
		t.Errorf("by files: pairs %v, want %v", got, want)
	}
	byLine := map[[2]string]float64{{"a", "b"}: 1, {"b", "a"}: 1}
	if got := pairs(input.DocSepLine); !maps.Equal(got, byLine) {
		t.Errorf("by lines: pairs %v, want %v", got, byLine)
	}
}
