package tokenize

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
)

func toBytes(toks ...string) [][]byte {
	out := make([][]byte, len(toks))
	for i, t := range toks {
		out[i] = []byte(t)
	}
	return out
}

func TestVocabularyOrder(t *testing.T) {
	c := NewCounter()
	c.Add(toBytes("b", "a", "c", "b", "ab", "a", "b", "é", "é", "d"))
	// Counts: b 3; a 2, é 2; ab 1, c 1, d 1. Ties go by bytes: "a" < "é"
	// (0x61 < 0xc3), "ab" < "c" < "d".
	cases := []struct {
		maxVocab int
		minCount int64
		want     string
	}{
		{0, 0, "[{b 3} {a 2} {é 2} {ab 1} {c 1} {d 1}]"},
		{-1, 2, "[{b 3} {a 2} {é 2}]"},
		{2, 0, "[{b 3} {a 2}]"},
		{4, 1, "[{b 3} {a 2} {é 2} {ab 1}]"},
		{10, 3, "[{b 3}]"},
		{3, 4, "[]"},
	}
	for _, cs := range cases {
		if got := fmt.Sprint(c.Vocabulary(cs.maxVocab, cs.minCount)); got != cs.want {
			t.Errorf("Vocabulary(%d, %d) = %s, want %s", cs.maxVocab, cs.minCount, got, cs.want)
		}
	}
	if c.Len() != 6 || c.Count([]byte("é")) != 2 || c.Count([]byte("x")) != 0 {
		t.Errorf("Len %d, Count(é) %d, Count(x) %d; want 6, 2, 0", c.Len(), c.Count([]byte("é")), c.Count([]byte("x")))
	}
}

// TestVocabularyLongTies ranks tokens of equal count that share their first
// 8 bytes, or differ only by trailing NUL bytes, which the sort keys' padded
// prefixes cannot tell apart, against the naive order.
func TestVocabularyLongTies(t *testing.T) {
	toks := []string{"abcdefghij", "abcdefghi", "abcdefgh", "abcdefgh\x00", "abcdefgh\x00\x00x",
		"abc", "abc\x00", "ab\x00\x00", "abcdefgz", "\x00", "zz", "abcdefghij\xff"}
	rng := rand.New(rand.NewPCG(3, 4))
	var stream [][]byte
	for i, tok := range toks {
		for range 2 + i%3 {
			stream = append(stream, []byte(tok))
		}
	}
	rng.Shuffle(len(stream), func(i, j int) { stream[i], stream[j] = stream[j], stream[i] })
	c := NewCounter()
	c.Add(stream)
	for _, k := range []int{0, 1, 3, 5, 8, 11, 12, 20} {
		for _, minCount := range []int64{0, 3, 4, 5} {
			want := naiveVocabulary([][][]byte{stream}, k, minCount)
			if got := c.Vocabulary(k, minCount); !slices.Equal(got, want) {
				t.Errorf("Vocabulary(%d, %d) = %v, want %v", k, minCount, got, want)
			}
		}
	}
}

// TestVocabularySize compares VocabularySize with the length and the total
// count of Vocabulary's entries, for limits around the ranks where counts
// tie, minimum counts around those counts, and counts on both sides of
// kthCount's histogram cap.
func TestVocabularySize(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	for _, scale := range []int64{1, 3 * histCap} {
		c := NewCounter()
		for _, tok := range randomTokens(rng, 20000) {
			c.AddCount(tok, scale)
		}
		for _, tok := range randomTokens(rng, 3000) {
			c.AddCount(tok, 1)
		}
		counts := slices.Sorted(slices.Values(c.Counts()))
		slices.Reverse(counts)
		ks := []int{-1, 0, 1, 2, c.Len() - 1, c.Len(), c.Len() + 5}
		mins := []int64{0, 1, 2, scale, scale + 1, counts[0], counts[0] + 1}
		for _, r := range []int{3, 10, 40, 200, 1000} {
			ks = append(ks, r, r+1)
			mins = append(mins, counts[r], counts[r]+1)
		}
		for _, k := range ks {
			for _, m := range mins {
				entries := c.Vocabulary(k, m)
				var sum int64
				for _, e := range entries {
					sum += e.Count
				}
				if size, covered := c.VocabularySize(k, m); size != len(entries) || covered != sum {
					t.Fatalf("scale %d: VocabularySize(%d, %d) = %d, %d; Vocabulary has %d entries counted %d times",
						scale, k, m, size, covered, len(entries), sum)
				}
			}
		}
	}
}

// randomTokens draws n tokens from a Zipf-like law over a few thousand
// strings, some of them prefixes of others.
func randomTokens(rng *rand.Rand, n int) [][]byte {
	z := rand.NewZipf(rng, 1.1, 1, 5000)
	out := make([][]byte, n)
	for i := range out {
		k := z.Uint64()
		out[i] = []byte(strings.Repeat("x", int(k%3)) + fmt.Sprint(k))
	}
	return out
}

// naiveVocabulary counts with a map and sorts everything.
func naiveVocabulary(streams [][][]byte, maxVocab int, minCount int64) []Entry {
	m := map[string]int64{}
	for _, s := range streams {
		for _, tok := range s {
			m[string(tok)]++
		}
	}
	var out []Entry
	for tok, n := range m {
		if n >= minCount {
			out = append(out, Entry{tok, n})
		}
	}
	slices.SortFunc(out, func(a, b Entry) int {
		if a.Count != b.Count {
			return int(b.Count - a.Count)
		}
		return strings.Compare(a.Token, b.Token)
	})
	if maxVocab > 0 && len(out) > maxVocab {
		out = out[:maxVocab]
	}
	return out
}

func TestCounterMatchesNaive(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	streams := make([][][]byte, 4)
	for i := range streams {
		streams[i] = randomTokens(rng, 20000)
	}
	single := NewCounter()
	parts := make([]*Counter, len(streams))
	for i, s := range streams {
		single.Add(s)
		parts[i] = NewCounter()
		// Add in pieces, as a pipeline would, batch by batch.
		for j := 0; j < len(s); j += 1000 {
			parts[i].Add(s[j : j+1000])
		}
	}
	merged := NewCounter()
	for _, i := range []int{2, 0, 3, 1} {
		merged.Merge(parts[i])
	}
	for _, cs := range []struct {
		maxVocab int
		minCount int64
	}{{0, 0}, {0, 5}, {1, 0}, {100, 0}, {1000, 3}, {1 << 20, 2}} {
		want := naiveVocabulary(streams, cs.maxVocab, cs.minCount)
		for name, c := range map[string]*Counter{"single": single, "merged": merged} {
			if got := c.Vocabulary(cs.maxVocab, cs.minCount); !slices.Equal(got, want) {
				t.Errorf("%s Vocabulary(%d, %d): %d entries, first %v; want %d, first %v",
					name, cs.maxVocab, cs.minCount, len(got), got[:min(3, len(got))], len(want), want[:min(3, len(want))])
			}
		}
	}
	if single.Len() != merged.Len() || single.Len() != len(naiveVocabulary(streams, 0, 0)) {
		t.Errorf("Len: single %d, merged %d, naive %d", single.Len(), merged.Len(), len(naiveVocabulary(streams, 0, 0)))
	}
}

// TestCounterIDsAndReset checks AddID and AddCountID against ids numbered
// by first appearance in a map, on Zipf tokens of 1 to 13 bytes (so that
// the cache of short tokens' ids sees every kind of hit, miss and
// eviction), then again after Reset, which must forget everything.
func TestCounterIDsAndReset(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	c := NewCounter()
	for round := range 3 {
		toks := randomTokens(rng, 50000)
		for i := range toks {
			if i%5 == 0 {
				// Longer than the 7 bytes a slot holds inline.
				toks[i] = append(toks[i], "-longer"...)
			}
		}
		ids := map[string]uint32{}
		counts := map[string]int64{}
		for i, tok := range toks {
			n := int64(1)
			var got uint32
			if i%3 == 0 {
				n = int64(1 + i%7)
				got = c.AddCountID(tok, n)
			} else {
				got = c.AddID(tok)
			}
			want, ok := ids[string(tok)]
			if !ok {
				want = uint32(len(ids))
				ids[string(tok)] = want
			}
			counts[string(tok)] += n
			if got != want {
				t.Fatalf("round %d, token %d %q: id %d, want %d", round, i, tok, got, want)
			}
		}
		if c.Len() != len(ids) {
			t.Fatalf("round %d: Len %d, want %d", round, c.Len(), len(ids))
		}
		for tok, id := range ids {
			if got := string(c.Token(int(id))); got != tok {
				t.Fatalf("round %d: Token(%d) = %q, want %q", round, id, got, tok)
			}
			if got := c.Counts()[id]; got != counts[tok] {
				t.Fatalf("round %d: count of %q = %d, want %d", round, tok, got, counts[tok])
			}
		}
		c.Reset()
		if c.Len() != 0 || len(c.Counts()) != 0 {
			t.Fatalf("round %d: after Reset, Len %d and %d counts", round, c.Len(), len(c.Counts()))
		}
		for tok := range ids {
			if n := c.Count([]byte(tok)); n != 0 {
				t.Fatalf("round %d: after Reset, Count(%q) = %d", round, tok, n)
			}
		}
	}
}

func TestCounterAddDoesNotAllocate(t *testing.T) {
	toks := toBytes("the", "cat", "sat", "on", "the", "mat")
	c := NewCounter()
	c.Add(toks)
	if n := testing.AllocsPerRun(100, func() { c.Add(toks) }); n != 0 {
		t.Errorf("Add of seen tokens: %v allocations", n)
	}
}

func TestIndex(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	seen := map[string]bool{}
	var tokens []string
	for _, tok := range randomTokens(rng, 5000) {
		if !seen[string(tok)] {
			seen[string(tok)] = true
			tokens = append(tokens, string(tok))
		}
	}
	tokens = append(tokens, "")
	x, err := NewIndex(tokens)
	if err != nil {
		t.Fatal(err)
	}
	if x.Len() != len(tokens) {
		t.Errorf("Len = %d, want %d", x.Len(), len(tokens))
	}
	for i, tok := range tokens {
		if id, ok := x.ID([]byte(tok)); !ok || id != int32(i) {
			t.Errorf("ID(%q) = %d, %v; want %d, true", tok, id, ok, i)
		}
	}
	for _, tok := range []string{"y1", "xxx1", "nope"} {
		if id, ok := x.ID([]byte(tok)); ok {
			t.Errorf("ID(%q) = %d, true for a token not in the index", tok, id)
		}
	}
	if n := testing.AllocsPerRun(100, func() { x.ID([]byte(tokens[7])) }); n != 0 {
		t.Errorf("ID: %v allocations", n)
	}
	_, err = NewIndex([]string{"a", "b", "a"})
	if !errors.Is(err, ErrDuplicateToken) || !strings.Contains(err.Error(), "ids 0 and 2") {
		t.Errorf("duplicate token: error %v", err)
	}
	// NewIndex inserts addBlock tokens at a time: a repeat in a later block.
	many := make([]string, 3*addBlock)
	for i := range many {
		many[i] = fmt.Sprintf("t%d", i)
	}
	many[2*addBlock+1] = many[5]
	_, err = NewIndex(many)
	if want := fmt.Sprintf("ids 5 and %d", 2*addBlock+1); !errors.Is(err, ErrDuplicateToken) || !strings.Contains(err.Error(), want) {
		t.Errorf("duplicate token in another block: error %v, want %q", err, want)
	}
}

func ExampleCounter() {
	tk := New(Options{})
	c := NewCounter()
	for _, line := range []string{"The cat sat on the mat.", "The dog sat."} {
		c.Add(tk.Tokens(nil, []byte(line)))
	}
	fmt.Println(c.Vocabulary(3, 2))
	// Output: [{the 3} {sat 2}]
}

func ExampleIndex() {
	x, err := NewIndex([]string{"the", "cat", "sat"})
	if err != nil {
		panic(err)
	}
	for _, tok := range []string{"sat", "dog"} {
		id, ok := x.ID([]byte(tok))
		fmt.Println(tok, id, ok)
	}
	// Output:
	// sat 2 true
	// dog -1 false
}

// TestCounterSize: a Counter made for n tokens takes n distinct tokens
// without growing its table, and counts them as any Counter does.
func TestCounterSize(t *testing.T) {
	const n = 5000
	sized, grown := NewCounterSize(n), NewCounter()
	slots := len(sized.tab.slots)
	for i := range n {
		tok := fmt.Appendf(nil, "tok%d", i)
		if a, b := sized.AddID(tok), grown.AddID(tok); a != b {
			t.Fatalf("token %d: id %d in the sized Counter, %d in the other", i, a, b)
		}
	}
	if len(sized.tab.slots) != slots {
		t.Errorf("the table for %d tokens grew from %d to %d slots", n, slots, len(sized.tab.slots))
	}
	if len(grown.tab.slots) <= minSlots {
		t.Errorf("the unsized table did not grow: %d slots", len(grown.tab.slots))
	}
}

// TestAddIDsMatchesAddID checks the batched lookups against AddID and
// AddCountID one token at a time: the same ids, counts and tokens, over
// calls of every size around the block, with tokens too long to be inline
// or cached, and a token repeated within a block before the table knows it.
func TestAddIDsMatchesAddID(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	toks := randomTokens(rng, 30000)
	for i := range toks {
		switch i % 7 {
		case 0:
			toks[i] = append(toks[i], "-longer"...)
		case 3:
			toks[i] = []byte(strings.Repeat("y", 250+i%10) + fmt.Sprint(i%13))
		}
	}
	one, many := NewCounter(), NewCounter()
	var want []uint32
	for _, tok := range toks {
		want = append(want, one.AddID(tok))
	}
	got := []uint32{99} // the ids are appended
	for start := 0; start < len(toks); {
		end := min(len(toks), start+rng.IntN(3*addBlock))
		got = many.AddIDs(got, toks[start:end])
		start = end
	}
	if got[0] != 99 || len(got) != len(want)+1 {
		t.Fatalf("%d ids after the one there for %d tokens", len(got)-1, len(want))
	}
	for i := range want {
		if got[i+1] != want[i] {
			t.Fatalf("token %d %q: id %d in a block, %d alone", i, toks[i], got[i+1], want[i])
		}
	}
	if !slices.Equal(many.Counts(), one.Counts()) {
		t.Fatal("the counts differ")
	}
	for id := range one.Len() {
		if a, b := one.Token(id), many.Token(id); string(a) != string(b) {
			t.Fatalf("id %d: %q in blocks, %q alone", id, b, a)
		}
	}
}

// TestCounterEmptyToken counts the empty token, which the tokenizer never
// makes but a caller of the package may, through every way of adding, and
// checks its ids and counts against a naive count: its slot body is 0, as
// an empty cache entry's is.
func TestCounterEmptyToken(t *testing.T) {
	toks := toBytes("the", "", "cat", "", "the", "a", "")
	want := map[string]int64{}
	for _, tok := range toks {
		want[string(tok)]++
	}
	check := func(how string, c *Counter, ids []uint32) {
		t.Helper()
		if c.Len() != len(want) {
			t.Errorf("%s: Len %d, want %d", how, c.Len(), len(want))
		}
		for tok, n := range want {
			if got := c.Count([]byte(tok)); got != n {
				t.Errorf("%s: Count(%q) = %d, want %d", how, tok, got, n)
			}
		}
		for i, id := range ids {
			if got := string(c.Token(int(id))); got != string(toks[i]) {
				t.Errorf("%s: token %d has id %d, which is %q, want %q", how, i, id, got, toks[i])
			}
		}
	}
	c := NewCounter()
	c.Add(toks)
	check("Add", c, nil)
	c = NewCounter()
	var ids []uint32
	for _, tok := range toks {
		ids = append(ids, c.AddID(tok))
	}
	check("AddID", c, ids)
	c = NewCounter()
	check("AddIDs", c, c.AddIDs(nil, toks))
	// Half through AddIDs, the rest through a Lookup, which finds some of
	// its tokens and leaves the others to Settle.
	c = NewCounter()
	l := c.NewLookup()
	half := len(toks) / 2
	ids = c.AddIDs(nil, toks[:half])
	var p Pending
	l.Begin(&p)
	rest := l.IDs(nil, toks[half:], &p)
	if !c.Settle(rest, &p) {
		t.Fatal("Settle refused a batch with no reset since Begin")
	}
	check("Lookup", c, append(ids, rest...))
}

// TestCounterFree checks that Free lets go of every large slice of a
// Counter that has grown past its first table, so that the collector can
// take them back even while the Counter is still referenced.
func TestCounterFree(t *testing.T) {
	c := NewCounter()
	first := len(c.tab.slots)
	for i := 0; len(c.tab.slots) == first; i++ {
		c.AddCount([]byte(fmt.Sprintf("token%d", i)), 1)
	}
	if c.tab.memory() == 0 || len(c.counts) == 0 {
		t.Fatal("the Counter holds nothing before Free")
	}
	c.Free()
	if m := c.tab.memory(); m != 0 || c.counts != nil || c.recent != nil || c.misses != nil {
		t.Fatalf("after Free: table of %d bytes, counts %v, cache %v, misses %v", m, c.counts != nil, c.recent != nil, c.misses != nil)
	}
}

// TestCounterCachedCounts checks that the counts AddIDs keeps in its cache
// entries (recentEntry.n) reach every reader of the counts, read between
// blocks as tokenize reads them: Count, Counts, Vocabulary, VocabularySize,
// Merge and a spill, each against a map; that reading them does not count
// anything twice; and that an entry's count carries into the token's count
// when it passes 2^32.
func TestCounterCachedCounts(t *testing.T) {
	rng := rand.New(rand.NewPCG(11, 12))
	toks := randomTokens(rng, 40000)
	c := NewCounter()
	want := map[string]int64{}
	runs := NewRuns(t.TempDir())
	defer runs.Close()
	check := func(step int) {
		t.Helper()
		switch step % 6 {
		case 0:
			for tok, n := range want {
				if got := c.Count([]byte(tok)); got != n {
					t.Fatalf("step %d: Count(%q) = %d, want %d", step, tok, got, n)
				}
			}
		case 1:
			var sum, total int64
			for _, n := range c.Counts() {
				sum += n
			}
			for _, n := range want {
				total += n
			}
			if sum != total {
				t.Fatalf("step %d: Counts sum to %d, want %d", step, sum, total)
			}
		case 2:
			for _, e := range c.Vocabulary(0, 1) {
				if e.Count != want[e.Token] {
					t.Fatalf("step %d: Vocabulary: %q counted %d, want %d", step, e.Token, e.Count, want[e.Token])
				}
			}
		case 3:
			var total int64
			for _, n := range want {
				total += n
			}
			if size, covered := c.VocabularySize(0, 1); size != len(want) || covered != total {
				t.Fatalf("step %d: VocabularySize: %d tokens covering %d, want %d covering %d", step, size, covered, len(want), total)
			}
		case 4:
			m := NewCounter()
			m.Merge(c)
			for tok, n := range want {
				if got := m.Count([]byte(tok)); got != n {
					t.Fatalf("step %d: after Merge, Count(%q) = %d, want %d", step, tok, got, n)
				}
			}
		case 5:
			if err := runs.Spill(c); err != nil {
				t.Fatal(err)
			}
			one := NewRuns(t.TempDir())
			defer one.Close()
			if err := one.Spill(c); err != nil {
				t.Fatal(err)
			}
			got, _, err := one.Vocabulary(0, 1, 1<<30)
			if err != nil {
				t.Fatal(err)
			}
			if len(got) != len(want) {
				t.Fatalf("step %d: the spill holds %d tokens, want %d", step, len(got), len(want))
			}
			for _, e := range got {
				if e.Count != want[e.Token] {
					t.Fatalf("step %d: spilled %q counted %d, want %d", step, e.Token, e.Count, want[e.Token])
				}
			}
		}
	}
	step := 0
	for start := 0; start < len(toks); step++ {
		end := min(len(toks), start+rng.IntN(4*addBlock))
		c.AddIDs(nil, toks[start:end])
		for _, tok := range toks[start:end] {
			want[string(tok)]++
		}
		start = end
		check(step)
	}

	// A cached token whose entry holds 2^32-2 occurrences not yet counted,
	// taken off its count so that the total stays true: three more pass
	// 2^32.
	tok := toks[0]
	e := c.cached(inlineBody(tok))
	if !cacheable(tok) || e.body != inlineBody(tok) {
		t.Fatalf("%q is not in the cache", tok)
	}
	c.Flush()
	e.n = math.MaxUint32 - 1
	c.counts[e.id] -= math.MaxUint32 - 1
	c.AddIDs(nil, [][]byte{tok, tok, tok})
	want[string(tok)] += 3
	if e.n != 1 {
		t.Fatalf("the entry holds %d occurrences after passing 2^32, want 1", e.n)
	}
	for step := range 6 {
		check(step)
	}
}

// TestCounterReadsAfterFlush reads a Counter's counts on two goroutines at
// once after Flush, as tokenize does while it closes the token stream and
// ranks the vocabulary; under the race detector (CI runs it) a read that
// still flushed would be a write, and a race.
func TestCounterReadsAfterFlush(t *testing.T) {
	rng := rand.New(rand.NewPCG(13, 14))
	toks := randomTokens(rng, 20000)
	c := NewCounter()
	c.AddIDs(nil, toks)
	c.Flush()
	var sum [2]int64
	done := make(chan struct{})
	go func() {
		for _, n := range c.Counts() {
			sum[0] += n
		}
		close(done)
	}()
	for _, e := range c.Vocabulary(0, 1) {
		sum[1] += e.Count
	}
	<-done
	if sum[0] != int64(len(toks)) || sum[1] != int64(len(toks)) {
		t.Fatalf("counts sum to %d and %d, want %d", sum[0], sum[1], len(toks))
	}
}
