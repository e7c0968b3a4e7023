package tokenize

import (
	"maps"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestRunsVocabulary spills the counts of random tokens in parts of random
// sizes, one Counter each, as a table past its budget spills, and checks
// the vocabulary merged from the runs, and its count of distinct tokens,
// against the naive ranking of all the tokens: for limits around the ranks
// where counts tie, minimum counts around those counts, and counts on both
// sides of the histogram's cap (every occurrence counted scale times).
func TestRunsVocabulary(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	for _, scale := range []int64{1, 3 * histCap} {
		dir := t.TempDir()
		runs := NewRuns(dir)
		// The empty token, which no tokenizer makes, is a token too.
		all := append(randomTokens(rng, 30000), nil, nil, nil)
		rng.Shuffle(len(all), func(i, j int) { all[i], all[j] = all[j], all[i] })
		rest := all
		for len(rest) > 0 {
			n := min(len(rest), 1+rng.IntN(8000))
			c := NewCounter()
			for _, tok := range rest[:n] {
				c.AddCount(tok, scale)
			}
			if err := runs.Spill(c); err != nil {
				t.Fatal(err)
			}
			rest = rest[n:]
		}
		if runs.Len() < 4 {
			t.Fatalf("%d runs; the test no longer merges several", runs.Len())
		}
		counts := naiveVocabulary([][][]byte{all}, 0, 0)
		distinct := len(counts)
		ks := []int{-1, 0, 1, 2, distinct - 1, distinct, distinct + 5}
		mins := []int64{0, 1, 2, scale, scale + 1, counts[0].Count*scale + 1}
		for _, r := range []int{3, 10, 40, 200, 1000} {
			ks = append(ks, r, r+1)
			mins = append(mins, counts[r].Count*scale, counts[r].Count*scale+1)
		}
		for _, k := range ks {
			for _, m := range mins {
				// Scaled counts reach m when the plain ones reach m/scale.
				want := naiveVocabulary([][][]byte{all}, k, (m+scale-1)/scale)
				for i := range want {
					want[i].Count *= scale
				}
				got, n, err := runs.Vocabulary(k, m, 1<<30)
				if err != nil {
					t.Fatal(err)
				}
				if n != distinct || !slices.Equal(got, want) {
					t.Fatalf("scale %d: Vocabulary(%d, %d) gives %d entries of %d distinct tokens, want %d of %d",
						scale, k, m, len(got), n, len(want), distinct)
				}
			}
		}
		if err := runs.Close(); err != nil {
			t.Fatal(err)
		}
		if left, _ := os.ReadDir(dir); len(left) != 0 {
			t.Errorf("Close left %d files in the directory", len(left))
		}
	}
}

// TestRunsRefuse checks the errors of the merge: a vocabulary beyond the
// limit, and a run cut short, which names its file.
func TestRunsRefuse(t *testing.T) {
	runs := NewRuns(t.TempDir())
	defer runs.Close()
	c := NewCounter()
	c.Add(toBytes("alpha", "beta", "gamma", "beta"))
	if err := runs.Spill(c); err != nil {
		t.Fatal(err)
	}
	if _, _, err := runs.Vocabulary(0, 1, 10); err == nil || !strings.Contains(err.Error(), "--max-vocab") {
		t.Errorf("a vocabulary over the limit gave %v", err)
	}
	name := runs.files[0].Name()
	if err := runs.files[0].Truncate(7); err != nil {
		t.Fatal(err)
	}
	_, _, err := runs.Vocabulary(0, 1, 1<<20)
	if err == nil || !strings.Contains(err.Error(), filepath.Base(name)) {
		t.Errorf("a truncated run gave %v, want an error naming %s", err, name)
	}
}

// TestSortedByBytes checks the radix sort of a spill against a naive sort
// of the tokens: tokens that share their first 8 bytes, that differ only by
// trailing NUL bytes (equal padded prefixes), of every length from 0 to 20,
// and in tables where every token shares some bytes (which the sort skips).
func TestSortedByBytes(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 10))
	special := []string{"", "abcdefghij", "abcdefghi", "abcdefgh", "abcdefgh\x00", "abcdefgh\x00\x00x",
		"abc", "abc\x00", "ab\x00\x00", "abcdefgz", "\x00", "zz", "abcdefghij\xff", "\xff\xff\xff\xff\xff\xff\xff\xff\xff"}
	for _, shared := range []string{"", "w", "commonprefix"} {
		c := NewCounter()
		want := map[string]bool{}
		add := func(tok string) {
			c.Add(toBytes(tok))
			want[tok] = true
		}
		for _, tok := range special {
			add(shared + tok)
		}
		for range 3000 {
			b := make([]byte, 1+rng.IntN(20))
			for i := range b {
				b[i] = "ab\x00\xffz"[rng.IntN(5)]
			}
			add(shared + string(b))
		}
		var got []string
		for _, k := range c.sortedByBytes() {
			tok := c.Token(int(k.id))
			if int(k.len) != len(tok) || k.prefix != prefix8(tok) {
				t.Fatalf("key of %q: prefix %x, length %d", tok, k.prefix, k.len)
			}
			got = append(got, string(tok))
		}
		sorted := slices.Sorted(maps.Keys(want))
		if !slices.Equal(got, sorted) {
			for i := range min(len(got), len(sorted)) {
				if got[i] != sorted[i] {
					t.Errorf("shared %q: %d tokens (want %d) out of byte order from %d: %q, want %q", shared, len(got), len(sorted), i, got[i], sorted[i])
					break
				}
			}
		}
	}
}
