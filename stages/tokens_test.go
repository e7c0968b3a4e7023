package stages

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/pwe-project/pwe/counts"
	"github.com/pwe-project/pwe/formats"
	"github.com/pwe-project/pwe/formats/input"
	"github.com/pwe-project/pwe/tokenize"
)

// tokenizeWithStream tokenizes corpus as tokenizeFixture does the fixture
// and also writes its token stream.
func tokenizeWithStream(t *testing.T, dir, corpus string, threads int) (vocab, tokens string) {
	t.Helper()
	vocab = filepath.Join(dir, "vocab.parquet")
	tokens = filepath.Join(dir, "tokens.bin")
	_, err := Tokenize(context.Background(), TokenizeConfig{
		Input:    TextInput{Paths: []string{corpus}, DocSep: "blank"},
		MaxVocab: 300,
		Output:   vocab,
		Tokens:   tokens,
		Threads:  threads,
	})
	if err != nil {
		t.Fatal(err)
	}
	return vocab, tokens
}

// bigFixture writes the fixture 250 times over, with a line of its own
// before each copy so that documents differ, into a corpus of several
// reading batches.
func bigFixture(t *testing.T, dir string) string {
	t.Helper()
	text, err := os.ReadFile(fixture)
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	for i := range 250 {
		fmt.Fprintf(&b, "copy %d of the fixture\n%s\n\n", i, text)
	}
	if b.Len() < 2*batchBytes {
		t.Fatalf("the big fixture has %d bytes, fewer than two batches", b.Len())
	}
	p := filepath.Join(dir, "big.txt")
	if err := os.WriteFile(p, b.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// TestTokenStreamIsTheText checks that the stream written by tokenize holds
// exactly the corpus's documents and tokens, whatever the number of threads,
// and that the vocabulary written beside it is the one tokenize writes alone.
func TestTokenStreamIsTheText(t *testing.T) {
	t.Setenv("SOURCE_DATE_EPOCH", "0")
	dir := t.TempDir()
	corpus := bigFixture(t, dir)
	plainVocab := filepath.Join(dir, "plain", "vocab.parquet")
	if _, err := Tokenize(context.Background(), TokenizeConfig{
		Input: TextInput{Paths: []string{corpus}, DocSep: "blank"}, MaxVocab: 300, Output: plainVocab,
	}); err != nil {
		t.Fatal(err)
	}
	plain, err := os.ReadFile(plainVocab)
	if err != nil {
		t.Fatal(err)
	}
	var first []byte
	for _, threads := range []int{1, 2, 3} {
		d := filepath.Join(dir, "t", string(rune('0'+threads)))
		vocab, tokens := tokenizeWithStream(t, d, corpus, threads)
		got, err := os.ReadFile(vocab)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, plain) {
			t.Errorf("threads %d: vocab.parquet written with --tokens differs from the one written without", threads)
		}
		stream, err := os.ReadFile(tokens)
		if err != nil {
			t.Fatal(err)
		}
		if first == nil {
			first = stream
			checkStreamAgainstText(t, tokens, corpus, false)
		} else if !bytes.Equal(stream, first) {
			t.Errorf("threads %d: the token stream's bytes differ from threads 1", threads)
		}
	}
}

// TestTokenizeSpills tokenizes the big fixture with tables spilled after
// nearly every batch, with and without a token stream, on 1 to 3 threads.
// The vocabulary must be byte for byte the one tokenize writes in memory;
// the stream must hold the text, its bytes must not depend on the number of
// threads, and counting it must give the rows the unspilled stream gives.
// No temporary file may be left.
func TestTokenizeSpills(t *testing.T) {
	t.Setenv("SOURCE_DATE_EPOCH", "0")
	dir := t.TempDir()
	corpus := bigFixture(t, dir)
	refVocab, refTokens := tokenizeWithStream(t, filepath.Join(dir, "ref"), corpus, 1)
	want, err := os.ReadFile(refVocab)
	if err != nil {
		t.Fatal(err)
	}
	tmp := t.TempDir()
	var first []byte
	for _, threads := range []int{1, 2, 3} {
		for _, withStream := range []bool{false, true} {
			d := filepath.Join(dir, fmt.Sprintf("t%d-%v", threads, withStream))
			cfg := TokenizeConfig{
				Input: TextInput{Paths: []string{corpus}, DocSep: "blank"}, MaxVocab: 300,
				Output: filepath.Join(d, "vocab.parquet"), Threads: threads, TempDir: tmp, spillAt: 8 << 10,
			}
			if withStream {
				cfg.Tokens = filepath.Join(d, "tokens.bin")
			}
			st, err := Tokenize(context.Background(), cfg)
			if err != nil {
				t.Fatal(err)
			}
			if st.Spills < 2 {
				t.Fatalf("threads %d, stream %v: %d spills; the test no longer spills several times", threads, withStream, st.Spills)
			}
			got, err := os.ReadFile(cfg.Output)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(got, want) {
				t.Errorf("threads %d, stream %v: vocab.parquet differs from the one written without spills", threads, withStream)
			}
			if !withStream {
				continue
			}
			stream, err := os.ReadFile(cfg.Tokens)
			if err != nil {
				t.Fatal(err)
			}
			if first != nil {
				if !bytes.Equal(stream, first) {
					t.Errorf("threads %d: the spilled token stream's bytes differ from threads 1", threads)
				}
				continue
			}
			first = stream
			checkStreamAgainstText(t, cfg.Tokens, corpus, true)
			ref := CountConfig{Tokens: refTokens, Vocab: refVocab, Output: filepath.Join(d, "ref.parquet"), Seed: 9, Negatives: intp(1)}
			spilled := ref
			spilled.Tokens, spilled.Output = cfg.Tokens, filepath.Join(d, "spilled.parquet")
			countTextAndStream(t, "spilled dictionary", ref, spilled)
		}
	}
	if left, _ := os.ReadDir(tmp); len(left) != 0 {
		t.Errorf("tokenize left %d files in its temporary directory", len(left))
	}

	// A corpus that fails after spills leaves no output and no temporary
	// file either.
	cut := gzipCopy(t, corpus, t.TempDir())
	if fi, err := os.Stat(cut); err != nil {
		t.Fatal(err)
	} else if err := os.Truncate(cut, fi.Size()*3/4); err != nil {
		t.Fatal(err)
	}
	for _, threads := range []int{1, 2} {
		out := filepath.Join(dir, "failed", "vocab.parquet")
		_, err = Tokenize(context.Background(), TokenizeConfig{
			Input: TextInput{Paths: []string{corpus, cut}, DocSep: "blank"}, MaxVocab: 300, Output: out,
			Tokens: filepath.Join(dir, "failed", "tokens.bin"), Threads: threads, TempDir: tmp, spillAt: 8 << 10,
		})
		if err == nil || !strings.Contains(err.Error(), filepath.Base(cut)) {
			t.Fatalf("threads %d: a truncated gzip after spills gave %v", threads, err)
		}
		assertNoOutput(t, filepath.Dir(out))
		if left, _ := os.ReadDir(tmp); len(left) != 0 {
			t.Errorf("threads %d: a failed tokenize left %d files in its temporary directory", threads, len(left))
		}
	}
}

// checkStreamAgainstText decodes the stream and compares it with a naive
// tokenization of the fixture: paragraphs split at blank lines, each
// tokenized on its own. Each id's count in the dictionary must be its
// number of occurrences, and unless the dictionary was spilled in parts,
// the ids must number the tokens by first appearance.
func checkStreamAgainstText(t *testing.T, path, corpus string, spilled bool) {
	t.Helper()
	text, err := os.ReadFile(corpus)
	if err != nil {
		t.Fatal(err)
	}
	tk := TokenizerConfig{}.options()
	var docs [][]string
	for _, para := range splitParagraphs(string(text)) {
		var doc []string
		for _, tok := range tokenize.New(tk).Tokens(nil, []byte(para)) {
			doc = append(doc, string(tok))
		}
		docs = append(docs, doc)
	}
	s, err := formats.OpenTokenStream(path)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	var dict []string
	var dictCounts []int64
	if err := s.Dictionary(func(_ int, tok []byte, n int64) error {
		dict, dictCounts = append(dict, string(tok)), append(dictCounts, n)
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	var got [][]string
	occurrences := make([]int64, len(dict))
	chunks := 0
	for {
		var c formats.TokenChunk
		ok, err := s.NextChunk(&c)
		if err != nil {
			t.Fatal(err)
		}
		if !ok {
			break
		}
		if c.DocSeq != int64(len(got)) {
			t.Errorf("chunk at byte %d starts at document %d, want %d", c.Offset, c.DocSeq, len(got))
		}
		if err := c.Decode(); err != nil {
			t.Fatal(err)
		}
		chunks++
		ids := c.IDs
		for _, n := range c.DocLens {
			var doc []string
			for _, id := range ids[:n] {
				doc = append(doc, dict[id])
				occurrences[id]++
			}
			got = append(got, doc)
			ids = ids[n:]
		}
	}
	if chunks < 2 {
		t.Errorf("the stream has %d chunk; the test no longer covers several", chunks)
	}
	if len(got) != len(docs) {
		t.Fatalf("stream holds %d documents, the text %d", len(got), len(docs))
	}
	var order []string
	seen := map[string]bool{}
	for d := range docs {
		if !reflect.DeepEqual(got[d], docs[d]) && !(len(got[d]) == 0 && len(docs[d]) == 0) {
			t.Fatalf("document %d: stream %q, text %q", d, got[d], docs[d])
		}
		for _, tok := range docs[d] {
			if !seen[tok] {
				order = append(order, tok)
			}
			seen[tok] = true
		}
	}
	if !spilled && !reflect.DeepEqual(dict, order) {
		t.Errorf("dictionary is not in order of first appearance: %q..., want %q...", dict[:min(5, len(dict))], order[:min(5, len(order))])
	}
	for id, tok := range dict {
		if dictCounts[id] != occurrences[id] {
			t.Errorf("dictionary count of id %d (%q) is %d, but the stream holds it %d times", id, tok, dictCounts[id], occurrences[id])
		}
	}
}

// splitParagraphs splits text at blank lines (lines of only white space),
// as --doc-sep blank does, dropping empty paragraphs.
func splitParagraphs(text string) []string {
	var paras []string
	var cur []string
	flush := func() {
		if len(cur) > 0 {
			paras = append(paras, strings.Join(cur, "\n"))
			cur = nil
		}
	}
	for _, line := range strings.Split(text, "\n") {
		if strings.TrimSpace(line) == "" {
			flush()
			continue
		}
		cur = append(cur, line)
	}
	flush()
	return paras
}

// TestCountFromTokenStream checks that counting the token stream gives the
// rows and statistics that counting the text gives, for every window
// weighting, both OOV modes, subsampling, expected negatives, several
// threads and a budget small enough to spill.
func TestCountFromTokenStream(t *testing.T) {
	dir := t.TempDir()
	corpus := bigFixture(t, dir)
	vocab, tokens := tokenizeWithStream(t, dir, corpus, 2)
	cases := []CountConfig{
		{Window: 3, Negatives: intp(1), Seed: 5},
		{Window: 4, Weighting: "harmonic", OOV: "keep", Negatives: intp(2), Seed: 6, Threads: 3},
		{Window: 5, Weighting: "linear", Subsample: 1e-3, Negatives: intp(1), Seed: 7, Threads: 2, Memory: 256 << 10},
		{Window: 2, NegativesMode: "expected", Negatives: intp(1), Seed: 8},
		// Too many of the dictionary's tokens to gather: all are looked up.
		{Window: 3, Negatives: intp(1), Seed: 5, candidateLimit: 3},
	}
	for i, base := range cases {
		text, stream := base, base
		text.Input = TextInput{Paths: []string{corpus}}
		text.Vocab, text.Output, text.TempDir = vocab, filepath.Join(dir, "text.parquet"), dir
		stream.Tokens = tokens
		stream.Vocab, stream.Output, stream.TempDir = vocab, filepath.Join(dir, "stream.parquet"), dir
		meta := countTextAndStream(t, fmt.Sprintf("case %d", i), text, stream)
		inputs, _ := meta.Inputs.(json.RawMessage)
		if !bytes.Contains(inputs, []byte("tokens.bin")) || !bytes.Contains(inputs, []byte("big.txt")) {
			t.Errorf("case %d: pwe.inputs %s does not name the stream and its corpus", i, inputs)
		}
		// The stream's fingerprint, taken as its chunks were read, is the
		// file's.
		var fps []input.Fingerprint
		if err := json.Unmarshal(inputs, &fps); err != nil {
			t.Fatal(err)
		}
		want, err := input.FingerprintFile(tokens)
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Contains(fps, want) {
			t.Errorf("case %d: pwe.inputs %s lacks the stream's fingerprint %+v", i, inputs, want)
		}
	}
}

// TestCountTokenStreamOtherVocabulary counts the stream of the fixture with
// the vocabulary of the big fixture, where every token is counted 250 times
// as often: the stream's counts are all below the vocabulary's, so the
// vocabulary's tokens are found only by looking every token up. The rows
// must be those of the text counted with that vocabulary.
func TestCountTokenStreamOtherVocabulary(t *testing.T) {
	dir := t.TempDir()
	bigVocab, _ := tokenizeWithStream(t, filepath.Join(dir, "big"), bigFixture(t, dir), 1)
	_, tokens := tokenizeWithStream(t, filepath.Join(dir, "small"), fixture, 1)
	text := CountConfig{Input: TextInput{Paths: []string{fixture}}, Vocab: bigVocab, Output: filepath.Join(dir, "text.parquet"), Seed: 4, TempDir: dir}
	stream := CountConfig{Tokens: tokens, Vocab: bigVocab, Output: filepath.Join(dir, "stream.parquet"), Seed: 4, TempDir: dir}
	countTextAndStream(t, "other vocabulary", text, stream)
}

// countTextAndStream counts with the configuration for the text and with
// the one for its token stream, and checks that they give the same
// statistics and the same rows; it returns the metadata of the stream's
// counts.
func countTextAndStream(t *testing.T, what string, text, stream CountConfig) formats.Meta {
	t.Helper()
	ts, err := Count(context.Background(), text)
	if err != nil {
		t.Fatal(err)
	}
	ss, err := Count(context.Background(), stream)
	if err != nil {
		t.Fatal(err)
	}
	// Spills depend on how documents fell to the workers, not on the
	// content.
	for _, st := range []*CountStats{&ts, &ss} {
		st.Seconds, st.Spills, st.SpilledBytes = 0, 0, 0
	}
	if !reflect.DeepEqual(ts, ss) {
		t.Errorf("%s: stats from the stream %+v, from the text %+v", what, ss, ts)
	}
	want, _ := readCountsFile(t, text.Output)
	got, meta := readCountsFile(t, stream.Output)
	if len(want) == 0 || !reflect.DeepEqual(got, want) {
		t.Errorf("%s: %d rows from the stream differ from the %d rows from the text", what, len(got), len(want))
	}
	return meta
}

// TestCountFromTokenStreamAppend checks an append run from a stream
// against the same run from the text, top out-of-vocabulary tokens
// included.
func TestCountFromTokenStreamAppend(t *testing.T) {
	dir := t.TempDir()
	vocab, tokens := tokenizeWithStream(t, dir, fixture, 1)
	first := filepath.Join(dir, "first.parquet")
	if _, err := Count(context.Background(), CountConfig{Input: TextInput{Paths: []string{fixture}}, Vocab: vocab, Output: first, Seed: 3}); err != nil {
		t.Fatal(err)
	}
	text, err := Count(context.Background(), CountConfig{Input: TextInput{Paths: []string{fixture}}, Vocab: vocab, Append: first,
		Output: filepath.Join(dir, "text.parquet"), Seed: 3, Threads: 2})
	if err != nil {
		t.Fatal(err)
	}
	stream, err := Count(context.Background(), CountConfig{Tokens: tokens, Vocab: vocab, Append: first,
		Output: filepath.Join(dir, "stream.parquet"), Seed: 3, Threads: 2})
	if err != nil {
		t.Fatal(err)
	}
	if len(text.TopOOV) == 0 || !reflect.DeepEqual(stream.TopOOV, text.TopOOV) {
		t.Errorf("top OOV from the stream %v, from the text %v", stream.TopOOV, text.TopOOV)
	}
	want, _ := readCountsFile(t, filepath.Join(dir, "text.parquet"))
	got, _ := readCountsFile(t, filepath.Join(dir, "stream.parquet"))
	if !reflect.DeepEqual(got, want) {
		t.Errorf("appended rows from the stream differ from those from the text")
	}
}

// TestCountTokenStreamRefused checks the errors of streams that do not fit:
// another tokenizer's settings, a damaged file, and the corpus given twice.
func TestCountTokenStreamRefused(t *testing.T) {
	dir := t.TempDir()
	vocab, tokens := tokenizeWithStream(t, dir, fixture, 1)
	other := filepath.Join(dir, "cased")
	if _, err := Tokenize(context.Background(), TokenizeConfig{
		Input: TextInput{Paths: []string{fixture}, DocSep: "blank"}, Tokenizer: TokenizerConfig{KeepCase: true},
		Output: filepath.Join(other, "vocab.parquet"), Tokens: filepath.Join(other, "tokens.bin"),
	}); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(tokens)
	if err != nil {
		t.Fatal(err)
	}
	cut := filepath.Join(dir, "cut.bin")
	if err := os.WriteFile(cut, data[:len(data)/2], 0o644); err != nil {
		t.Fatal(err)
	}
	flipped := bytes.Clone(data)
	flipped[100] ^= 0x10
	bad := filepath.Join(dir, "flipped.bin")
	if err := os.WriteFile(bad, flipped, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name  string
		cfg   CountConfig
		wants []string
		is    error
	}{
		{"other tokenizer", CountConfig{Tokens: filepath.Join(other, "tokens.bin")}, []string{"keep_case", "one pwe tokenize run"}, nil},
		{"truncated", CountConfig{Tokens: cut}, []string{"cut.bin", "truncated"}, formats.ErrTokenStream},
		{"corrupt chunk", CountConfig{Tokens: bad}, []string{"flipped.bin", "byte 8", "checksum"}, formats.ErrTokenStream},
		{"missing", CountConfig{Tokens: filepath.Join(dir, "nope.bin")}, []string{"nope.bin"}, os.ErrNotExist},
		{"corpus twice", CountConfig{Tokens: tokens, Input: TextInput{Paths: []string{fixture}}}, []string{"given twice"}, nil},
		{"text format", CountConfig{Tokens: tokens, Input: TextInput{DocSep: "blank"}}, []string{"--doc-sep", "split into documents already"}, nil},
	} {
		t.Run(c.name, func(t *testing.T) {
			cfg := c.cfg
			cfg.Vocab, cfg.Output = vocab, filepath.Join(dir, "out", "counts.parquet")
			_, err := Count(context.Background(), cfg)
			if err == nil {
				t.Fatal("no error")
			}
			for _, w := range c.wants {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not mention %q", err, w)
				}
			}
			if c.is != nil && !errors.Is(err, c.is) {
				t.Errorf("error %q does not wrap %v", err, c.is)
			}
			assertNoOutput(t, filepath.Dir(cfg.Output))
		})
	}
}

// TestCountTokenStreamBudget checks that the map from a stream's ids to
// the vocabulary comes off count's memory budget: 40,000 distinct tokens
// need 160,000 bytes, more than half of the smallest budget, which is
// refused with the numbers, and fit a budget of 1 MiB.
func TestCountTokenStreamBudget(t *testing.T) {
	dir := t.TempDir()
	corpus := filepath.Join(dir, "many.txt")
	var b strings.Builder
	for i := range 40000 {
		fmt.Fprintf(&b, "w%05d common", i)
		b.WriteString(map[bool]string{true: "\n\n", false: " "}[i%10 == 9])
	}
	if err := os.WriteFile(corpus, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	vocab, tokens := tokenizeWithStream(t, dir, corpus, 1)
	cfg := CountConfig{Tokens: tokens, Vocab: vocab, Output: filepath.Join(dir, "out", "counts.parquet"), Memory: counts.MinMemory}
	_, err := Count(context.Background(), cfg)
	if err == nil || !strings.Contains(err.Error(), "40001 distinct tokens needs 156KiB of the memory budget of 256KiB") || !strings.Contains(err.Error(), "--memory") {
		t.Fatalf("count with the smallest budget: %v; want the dictionary's share of the budget refused", err)
	}
	assertNoOutput(t, filepath.Dir(cfg.Output))
	cfg.Memory = 1 << 20
	if _, err := Count(context.Background(), cfg); err != nil {
		t.Fatalf("count with 1 MiB: %v", err)
	}
	// Appending keeps a table of out-of-vocabulary counts per worker and
	// stream id: 64 of them do not fit 1 MiB, so fewer workers count, and
	// they count what one thread does.
	t.Setenv("SOURCE_DATE_EPOCH", "0")
	var outs [2][]byte
	for i, threads := range []int{1, 64} {
		app := cfg
		app.Append, app.Threads = cfg.Output, threads
		app.Output = filepath.Join(dir, fmt.Sprintf("appended%d.parquet", threads))
		st, err := Count(context.Background(), app)
		if err != nil {
			t.Fatalf("appending on %d threads with 1 MiB: %v", threads, err)
		}
		if st.Threads != threads || st.Workers < 1 || st.Workers > threads || threads == 64 && st.Workers == threads {
			t.Errorf("appending on %d threads with 1 MiB: %d workers of %d threads", threads, st.Workers, st.Threads)
		}
		if outs[i], err = os.ReadFile(app.Output); err != nil {
			t.Fatal(err)
		}
	}
	if !bytes.Equal(outs[0], outs[1]) {
		t.Error("appending on 64 threads gave other bytes than on one")
	}
}

// TestInspectTokenStream checks that formats.Dump (pwe inspect) shows a
// token stream's metadata and its first documents as tokens.
func TestInspectTokenStream(t *testing.T) {
	_, tokens := tokenizeWithStream(t, t.TempDir(), fixture, 1)
	var out bytes.Buffer
	if err := formats.Dump(&out, tokens, formats.DumpOptions{Rows: 2}); err != nil {
		t.Fatal(err)
	}
	text, err := os.ReadFile(fixture)
	if err != nil {
		t.Fatal(err)
	}
	tk := tokenize.New(TokenizerConfig{}.options())
	var docs []string
	for _, para := range splitParagraphs(string(text))[:3] {
		var toks []string
		for _, b := range tk.Tokens(nil, []byte(para)) {
			toks = append(toks, string(b))
		}
		docs = append(docs, strings.Join(toks, " "))
	}
	got := out.String()
	for _, want := range []string{formats.TokenStreamSchema, `"documents": 21`, "\n  0: " + docs[0] + "\n", "\n  1: " + docs[1] + "\n"} {
		if !strings.Contains(got, want) {
			t.Errorf("dump does not contain %q:\n%s", want, got)
		}
	}
	if strings.Contains(got, "\n  2: ") {
		t.Errorf("dump shows a third document with Rows 2:\n%s", got)
	}
}

// TestCountSpilledDictionaryRepeats counts a stream whose dictionary was
// spilled between a part where the vocabulary's tokens are frequent and a
// last part where they are rare: the last listing of each falls below the
// rarest vocabulary count, yet its occurrences must be counted, as from
// the text.
func TestCountSpilledDictionaryRepeats(t *testing.T) {
	dir := t.TempDir()
	corpus := filepath.Join(dir, "parts.txt")
	var b strings.Builder
	for range 20000 {
		b.WriteString("alpha beta gamma alpha beta alpha\n\n")
	}
	for i := range 120000 {
		fmt.Fprintf(&b, "w%06d x%06d\n\n", i, i)
	}
	b.WriteString("beta alpha beta\n")
	if err := os.WriteFile(corpus, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	vocab, tokens := filepath.Join(dir, "vocab.parquet"), filepath.Join(dir, "tokens.bin")
	st, err := Tokenize(context.Background(), TokenizeConfig{
		Input: TextInput{Paths: []string{corpus}, DocSep: "blank"}, MaxVocab: 3,
		Output: vocab, Tokens: tokens, TempDir: dir, spillAt: 64 << 10,
	})
	if err != nil {
		t.Fatal(err)
	}
	if st.Spills < 1 {
		t.Fatal("no spill: the test no longer splits the dictionary")
	}
	text := CountConfig{Input: TextInput{Paths: []string{corpus}}, Vocab: vocab, Output: filepath.Join(dir, "text.parquet"), Window: 2, Seed: 3}
	stream := text
	stream.Input, stream.Tokens, stream.Output = TextInput{}, tokens, filepath.Join(dir, "stream.parquet")
	countTextAndStream(t, "repeated listings", text, stream)
}
