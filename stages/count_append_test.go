package stages

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/pwe-project/pwe/formats"
	"github.com/pwe-project/pwe/formats/input"
	"github.com/pwe-project/pwe/tokenize"
)

// halveFixture writes the first and second half of the fixture's lines, and
// both, as three corpora of one document per line.
func halveFixture(t *testing.T, dir string) (a, b, ab string) {
	t.Helper()
	data, err := os.ReadFile(fixture)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.SplitAfter(string(data), "\n")
	half := len(lines) / 2
	a, b, ab = filepath.Join(dir, "a.txt"), filepath.Join(dir, "b.txt"), filepath.Join(dir, "ab.txt")
	for _, f := range []struct {
		path  string
		lines []string
	}{{a, lines[:half]}, {b, lines[half:]}, {ab, lines}} {
		if err := os.WriteFile(f.path, []byte(strings.Join(f.lines, "")), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return a, b, ab
}

type pair struct{ t, c int32 }

func byPair(rows []formats.CountRow) map[pair]formats.CountRow {
	m := make(map[pair]formats.CountRow, len(rows))
	for _, r := range rows {
		m[pair{r.TargetID, r.ContextID}] = r
	}
	return m
}

// TestAppend counts corpus A, appends corpus B, and compares with counting
// A and B as one corpus. The rule for negatives: B's are drawn as a plain
// count of B with the seed AppendSeed(seed, A's pwe.inputs) draws them, and
// added to A's.
func TestAppend(t *testing.T) {
	t.Setenv("SOURCE_DATE_EPOCH", "0")
	ctx := context.Background()
	dir := t.TempDir()
	vocab := tokenizeFixture(t, dir)
	a, b, ab := halveFixture(t, dir)
	const k = 2
	for _, weights := range []string{"uniform", "harmonic"} {
		t.Run(weights, func(t *testing.T) {
			count := func(paths []string, out, appendTo string, seed uint64) CountStats {
				t.Helper()
				st, err := Count(ctx, CountConfig{
					Input: TextInput{Paths: paths, DocSep: "line"}, Vocab: vocab, Output: out, Append: appendTo,
					Window: 3, Weighting: weights, Negatives: intp(k), Seed: seed, Threads: 2,
				})
				if err != nil {
					t.Fatal(err)
				}
				return st
			}
			sub := t.TempDir()
			oldPath := filepath.Join(sub, "a.parquet")
			count([]string{a}, oldPath, "", 1)
			oldRows, oldMeta := readCountsFile(t, oldPath)
			appended := filepath.Join(sub, "appended.parquet")
			st := count([]string{b}, appended, oldPath, 2)
			joint := filepath.Join(sub, "joint.parquet")
			count([]string{ab}, joint, "", 1)
			bAlone := filepath.Join(sub, "b.parquet")
			count([]string{b}, bAlone, "", AppendSeed(2, oldMeta.Inputs.(json.RawMessage)))

			got, meta := readCountsFile(t, appended)
			jointRows, _ := readCountsFile(t, joint)
			bRows, _ := readCountsFile(t, bAlone)

			// Positives: exactly those of the joint count, bit for bit.
			gotBy, jointBy := byPair(got), byPair(jointRows)
			for p, r := range jointBy {
				if r.NPos > 0 && gotBy[p].NPos != r.NPos {
					t.Fatalf("pair %v: n_pos %v appended, %v counted together", p, gotBy[p].NPos, r.NPos)
				}
			}
			for p, r := range gotBy {
				if r.NPos > 0 && jointBy[p].NPos == 0 {
					t.Fatalf("pair %v: n_pos %v appended, none counted together", p, r.NPos)
				}
			}
			// Every count: A's plus B's drawn with the append seed.
			want := byPair(oldRows)
			for _, r := range bRows {
				w := want[pair{r.TargetID, r.ContextID}]
				w.TargetID, w.ContextID = r.TargetID, r.ContextID
				w.NPos += r.NPos
				w.NNeg += r.NNeg
				want[pair{r.TargetID, r.ContextID}] = w
			}
			wantRows := make([]formats.CountRow, 0, len(want))
			for _, r := range want {
				wantRows = append(wantRows, r)
			}
			slices.SortFunc(wantRows, func(x, y formats.CountRow) int {
				if x.TargetID != y.TargetID {
					return int(x.TargetID - y.TargetID)
				}
				return int(x.ContextID - y.ContextID)
			})
			if weights == "uniform" {
				sameRows(t, "appended counts", got, wantRows)
				// Whole-number weights: each target's negatives are exactly K
				// times its positives, in A, in B, and so in the sum.
				pos, neg := map[int32]float64{}, map[int32]float64{}
				for _, r := range got {
					pos[r.TargetID] += r.NPos
					neg[r.TargetID] += r.NNeg
				}
				for tgt, p := range pos {
					if neg[tgt] != k*p {
						t.Errorf("target %d: %v negatives, want %d x %v", tgt, neg[tgt], k, p)
					}
				}
			} else {
				// Harmonic positives summed as floats may differ from the
				// exact sum in the last bit; the negatives are whole draws.
				for _, r := range got {
					w := want[pair{r.TargetID, r.ContextID}]
					if r.NNeg != w.NNeg || r.NPos != jointBy[pair{r.TargetID, r.ContextID}].NPos {
						t.Fatalf("row %+v, want n_neg %v", r, w.NNeg)
					}
				}
				if len(got) != len(want) {
					t.Fatalf("%d rows, want %d", len(got), len(want))
				}
			}

			// Metadata: inputs are A's counts, then B, then the vocabulary.
			var inputs []input.Fingerprint
			if err := json.Unmarshal(meta.Inputs.(json.RawMessage), &inputs); err != nil {
				t.Fatal(err)
			}
			if len(inputs) != 3 || inputs[0].Path != oldPath || inputs[1].Path != b || inputs[2].Path != vocab {
				t.Errorf("inputs %+v", inputs)
			}
			if fp, _ := input.FingerprintFile(oldPath); inputs[0] != fp {
				t.Errorf("earlier counts fingerprint %+v, want %+v", inputs[0], fp)
			}
			var stats CountStats
			if err := json.Unmarshal(meta.Stats.(json.RawMessage), &stats); err != nil {
				t.Fatal(err)
			}
			if stats.OldRows != int64(len(oldRows)) || stats.UniquePairs != int64(len(jointByPos(jointRows))) {
				t.Errorf("stats: appended to %d rows, %d unique pairs; want %d and %d", stats.OldRows, stats.UniquePairs, len(oldRows), len(jointByPos(jointRows)))
			}
			if !slices.Equal(stats.TopOOV, st.TopOOV) || len(stats.TopOOV) == 0 {
				t.Errorf("top_oov in the file %v, returned %v", stats.TopOOV, st.TopOOV)
			}
			checkOOV(t, b, vocab, stats)

			// The output may replace the earlier counts.
			inPlace := filepath.Join(sub, "in-place.parquet")
			if err := os.Link(oldPath, inPlace); err != nil {
				t.Fatal(err)
			}
			count([]string{b}, inPlace, inPlace, 2)
			rows, _ := readCountsFile(t, inPlace)
			sameRows(t, "appended in place", rows, got)
		})
	}
}

func jointByPos(rows []formats.CountRow) []formats.CountRow {
	var out []formats.CountRow
	for _, r := range rows {
		if r.NPos > 0 {
			out = append(out, r)
		}
	}
	return out
}

// checkOOV recounts the out-of-vocabulary tokens of corpus naively.
func checkOOV(t *testing.T, corpus, vocab string, st CountStats) {
	t.Helper()
	rows, _, err := formats.ReadVocab(vocab)
	if err != nil {
		t.Fatal(err)
	}
	known := map[string]bool{}
	for _, r := range rows {
		known[r.Token] = true
	}
	data, err := os.ReadFile(corpus)
	if err != nil {
		t.Fatal(err)
	}
	tk := tokenize.New(tokenize.Options{})
	n := map[string]int64{}
	var total int64
	for _, line := range strings.Split(string(data), "\n") {
		for _, tok := range tk.Tokens(nil, []byte(line)) {
			if !known[string(tok)] {
				n[string(tok)]++
				total++
			}
		}
	}
	var all []TokenCount
	for tok, c := range n {
		all = append(all, TokenCount{tok, c})
	}
	slices.SortFunc(all, func(x, y TokenCount) int {
		if x.Count != y.Count {
			return int(y.Count - x.Count)
		}
		return strings.Compare(x.Token, y.Token)
	})
	if total != st.OOVTokens || !slices.Equal(st.TopOOV, all[:TopOOVTokens]) {
		t.Errorf("%d OOV tokens, top %v; recounted %d, top %v", st.OOVTokens, st.TopOOV, total, all[:TopOOVTokens])
	}
}

// TestAppendOOVWithinLimit appends a corpus of many distinct
// out-of-vocabulary tokens, from text and from a token stream, with a
// tally limit that makes it spill: the most frequent of them, with ties at
// the cut, and the output's bytes are those of a run that holds them all.
func TestAppendOOVWithinLimit(t *testing.T) {
	t.Setenv("SOURCE_DATE_EPOCH", "0")
	ctx := context.Background()
	dir := t.TempDir()
	vocab := tokenizeFixture(t, dir)
	a, _, _ := halveFixture(t, dir)
	old := filepath.Join(dir, "old.parquet")
	if _, err := Count(ctx, CountConfig{Input: TextInput{Paths: []string{a}, DocSep: "line"}, Vocab: vocab, Output: old}); err != nil {
		t.Fatal(err)
	}
	// Thirteen tokens seen 1540 times each (a tie across the cut of ten)
	// and 20 020 seen once, among words of the vocabulary, in documents of
	// two reading batches.
	corpus := filepath.Join(dir, "new.txt")
	var text strings.Builder
	for i := range 13 * 1540 {
		fmt.Fprintf(&text, "the zq%d of zr%05x and\n\n", i%13, i*7919)
	}
	if err := os.WriteFile(corpus, []byte(text.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	_, tokens := tokenizeWithStream(t, t.TempDir(), corpus, 1)
	for _, from := range []string{"text", "stream"} {
		var outs [2][]byte
		for i, spillAt := range []int64{0, 4 << 10} {
			cfg := CountConfig{Vocab: vocab, Append: old, Output: filepath.Join(dir, fmt.Sprintf("%s%d.parquet", from, i)),
				Threads: 1 + 2*i, oovSpillAt: spillAt}
			if from == "text" {
				cfg.Input = TextInput{Paths: []string{corpus}, DocSep: "blank"}
			} else {
				cfg.Tokens = tokens
			}
			st, err := Count(ctx, cfg)
			if err != nil {
				t.Fatalf("%s, tally limit %d: %v", from, spillAt, err)
			}
			if (st.oovSpills > 0) != (spillAt > 0) {
				t.Errorf("%s, tally limit %d: %d spills", from, spillAt, st.oovSpills)
			}
			checkOOV(t, corpus, vocab, st)
			if outs[i], err = os.ReadFile(cfg.Output); err != nil {
				t.Fatal(err)
			}
		}
		if !bytes.Equal(outs[0], outs[1]) {
			t.Errorf("%s: the output with a spilled tally differs from the one held in memory", from)
		}
	}
}

// TestAppendRefused checks that counts made with another vocabulary or
// other settings are not summed, and that nothing is written then.
func TestAppendRefused(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	vocab := tokenizeFixture(t, dir)
	a, b, _ := halveFixture(t, dir)
	base := CountConfig{Input: TextInput{Paths: []string{a}}, Vocab: vocab, Output: filepath.Join(dir, "a.parquet"), Window: 3, Negatives: intp(1), Seed: 1}
	if _, err := Count(ctx, base); err != nil {
		t.Fatal(err)
	}
	other := filepath.Join(dir, "other-vocab.parquet")
	if _, err := Tokenize(ctx, TokenizeConfig{Input: TextInput{Paths: []string{fixture}}, MaxVocab: 200, Output: other}); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "out.parquet")
	for _, c := range []struct {
		change func(*CountConfig)
		want   string
	}{
		{func(c *CountConfig) { c.Vocab = other }, "counted with the vocabulary " + vocab},
		{func(c *CountConfig) { c.Window = 2 }, "counted with --window 3, this run has 2"},
		{func(c *CountConfig) { c.Weighting = "linear" }, "--weights uniform, this run has linear"},
		{func(c *CountConfig) { c.Negatives = intp(2) }, "--negatives 1, this run has 2"},
		{func(c *CountConfig) { c.NegativesMode = "expected" }, "--negatives-mode sampled"},
		{func(c *CountConfig) { c.OOV = "keep" }, "--oov drop"},
	} {
		cfg := base
		cfg.Input.Paths, cfg.Append, cfg.Output = []string{b}, base.Output, out
		c.change(&cfg)
		_, err := Count(ctx, cfg)
		if !errors.Is(err, ErrAppendMismatch) || !strings.Contains(err.Error(), c.want) || !strings.HasPrefix(err.Error(), base.Output+": ") {
			t.Errorf("error %v, want %q", err, c.want)
		}
		if _, err := os.Stat(out); err == nil {
			t.Fatalf("a refused append wrote %s", out)
		}
	}
	// Counts, but split's: no count settings to grow them with.
	if _, err := Split(ctx, SplitConfig{Counts: base.Output, TestFraction: 0.2, Seed: 1, Output: filepath.Join(dir, "split")}); err != nil {
		t.Fatal(err)
	}
	train := filepath.Join(dir, "split", TrainFile)
	cfg := base
	cfg.Input.Paths, cfg.Append, cfg.Output = []string{b}, train, out
	if _, err := Count(ctx, cfg); !errors.Is(err, ErrAppendMismatch) || !strings.Contains(err.Error(), "not written by pwe count") {
		t.Errorf("split's counts appended to: %v", err)
	}
	// Not counts at all.
	cfg = base
	cfg.Input.Paths, cfg.Append, cfg.Output = []string{b}, vocab, out
	if _, err := Count(ctx, cfg); !errors.Is(err, formats.ErrNotPwe) {
		t.Errorf("vocabulary as earlier counts: %v", err)
	}
}

// TestAppendSeed checks the properties the seed rule is for: reruns agree,
// and neither the user's seed nor another history's seed is reused.
func TestAppendSeed(t *testing.T) {
	a := []byte(`[{"path":"a.txt","size":1,"sha256":"00"}]`)
	b := []byte(`[{"path":"b.txt","size":1,"sha256":"00"}]`)
	if s1, s2 := AppendSeed(1, a), AppendSeed(1, append([]byte(nil), a...)); s1 != s2 {
		t.Errorf("AppendSeed of the same arguments: %d, then %d", s1, s2)
	}
	seen := map[uint64]bool{}
	for _, s := range []uint64{AppendSeed(1, a), AppendSeed(2, a), AppendSeed(1, b), 1, 2} {
		if seen[s] {
			t.Errorf("seed %d repeats", s)
		}
		seen[s] = true
	}
}
