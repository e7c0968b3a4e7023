package tokenize

import (
	"math/rand/v2"
	"slices"
	"testing"
)

// docsMatch tokenizes the documents of text from start, ending at ends,
// with AppendDocs and one at a time with AppendTokens, and fails unless the
// tokens, each document's number of them and the statistics agree.
func docsMatch(t *testing.T, opt Options, text []byte, start int, ends []int) {
	t.Helper()
	together, alone := New(opt), New(opt)
	got, lens := together.AppendDocs(nil, text, start, ends, []int32{-1})
	if lens[0] != -1 || len(lens) != len(ends)+1 {
		t.Fatalf("%d documents, %d lengths appended after the one there", len(ends), len(lens)-1)
	}
	var want [][]byte
	from := start
	for k, end := range ends {
		n := len(want)
		want = alone.AppendTokens(want, text[from:end:end])
		if int(lens[k+1]) != len(want)-n {
			t.Fatalf("document %d %q of %q: %d tokens together, %d alone (%q)", k, text[from:end], text[start:], lens[k+1], len(want)-n, want[n:])
		}
		from = end
	}
	if !slices.EqualFunc(got, want, func(a, b []byte) bool { return string(a) == string(b) }) {
		t.Fatalf("documents %q at %v: tokens together %q, alone %q", text[start:], ends, got, want)
	}
	if together.Stats() != alone.Stats() {
		t.Fatalf("documents %q at %v: statistics together %+v, alone %+v", text[start:], ends, together.Stats(), alone.Stats())
	}
}

// TestAppendDocs checks AppendDocs against one document at a time on
// random documents back to back, built from the pieces that break or join
// tokens (joining marks, digits, underscores, case, white space, non-ASCII
// and invalid bytes), so that documents end inside would-be tokens and
// joins, at every offset of a 64-byte block, and hold no token at all.
func TestAppendDocs(t *testing.T) {
	pieces := []string{"a", "B", "x", "7", "3", "_", "'", ".", ":", ",", " ", "\t", "\r", "-", "don", "t", "e.g", "1.5",
		"The", "é", "日本", "\xff", "U.S", "__", "a_1", "  ", "?!"}
	opts := []Options{{}, {KeepCase: true}, {MinLength: 2}, {Stopwords: map[string]struct{}{"the": {}, "a": {}, "don't": {}}}}
	rng := rand.New(rand.NewPCG(5, 6))
	for trial := range 3000 {
		var text []byte
		start := rng.IntN(3)
		for range start {
			text = append(text, pieces[rng.IntN(len(pieces))][0])
		}
		start = len(text)
		nonASCII := trial%3 == 0
		var ends []int
		for range 1 + rng.IntN(12) {
			for range rng.IntN(20) {
				p := pieces[rng.IntN(len(pieces))]
				if !nonASCII && p[0] >= 0x80 {
					continue
				}
				text = append(text, p...)
			}
			ends = append(ends, len(text))
		}
		docsMatch(t, opts[trial%len(opts)], text, start, ends)
	}
}

func FuzzAppendDocs(f *testing.F) {
	f.Add([]byte("don't e.g. 3.14 The_end a:b"), []byte{3, 4, 9, 1}, false)
	f.Add([]byte("Café 日本 x\xffy U.S.A. 1,000"), []byte{5, 0, 7, 2}, true)
	f.Fuzz(func(t *testing.T, text, cuts []byte, keepCase bool) {
		var ends []int
		at := 0
		for _, c := range cuts {
			at = min(len(text), at+int(c%80))
			ends = append(ends, at)
		}
		if len(ends) == 0 || ends[len(ends)-1] != len(text) {
			ends = append(ends, len(text))
		}
		docsMatch(t, Options{KeepCase: keepCase, Stopwords: map[string]struct{}{"the": {}}}, text, 0, ends)
	})
}
