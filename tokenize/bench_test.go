package tokenize

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"testing"
	"unicode/utf8"

	"github.com/klauspost/compress/zstd"
)

// dataDir holds the shared corpora (see its README.md); PWE_DATA_DIR
// overrides it.
func dataDir() string {
	if d := os.Getenv("PWE_DATA_DIR"); d != "" {
		return d
	}
	return "/work/shared/data"
}

// corpus returns up to limit bytes (all if limit <= 0) of a zstd-compressed
// corpus, cut at the end of a line, or skips the test if it is absent.
func corpus(tb testing.TB, name string, limit int64) []byte {
	tb.Helper()
	f, err := os.Open(filepath.Join(dataDir(), name))
	if os.IsNotExist(err) {
		tb.Skipf("corpus %s not found (set PWE_DATA_DIR)", name)
	}
	if err != nil {
		tb.Fatal(err)
	}
	defer f.Close()
	zr, err := zstd.NewReader(f)
	if err != nil {
		tb.Fatal(err)
	}
	defer zr.Close()
	var r io.Reader = zr
	if limit > 0 {
		r = io.LimitReader(zr, limit)
	}
	data, err := io.ReadAll(r)
	if err != nil {
		tb.Fatalf("%s: %v", name, err)
	}
	if limit > 0 && int64(len(data)) == limit {
		data = data[:bytes.LastIndexByte(data, '\n')+1]
	}
	return data
}

// lines splits text into lines, each keeping its newline, as documents
// whose capacity ends with them, as input.Reader gives them.
func lines(text []byte) [][]byte {
	var out [][]byte
	for len(text) > 0 {
		n := bytes.IndexByte(text, '\n') + 1
		if n == 0 {
			n = len(text)
		}
		out = append(out, text[:n:n])
		text = text[n:]
	}
	return out
}

func BenchmarkTokens(b *testing.B) {
	for _, c := range []struct {
		name, file string
		limit      int64
	}{
		{"bench-raw-8MB", "bench-raw.txt.zst", 8 << 20},
		{"austen", "austen.txt.zst", 0},
		{"bench-raw-non-ASCII-lines", "bench-raw.txt.zst", 0},
	} {
		b.Run(c.name, func(b *testing.B) {
			docs := lines(corpus(b, c.file, c.limit))
			if c.limit == 0 && c.file == "bench-raw.txt.zst" {
				docs = slices.DeleteFunc(docs, func(d []byte) bool { return asciiPrefix(d) == len(d) })
			}
			size := 0
			for _, d := range docs {
				size += len(d)
			}
			tk := New(Options{})
			var toks [][]byte
			b.SetBytes(int64(size))
			b.ResetTimer()
			for b.Loop() {
				for _, d := range docs {
					toks = tk.Tokens(toks[:0], d)
				}
			}
			st := tk.Stats()
			b.ReportMetric(float64(st.Tokens)/b.Elapsed().Seconds(), "tokens/s")
		})
	}
}

// corpusTokens returns the tokens of a corpus, copied out of the tokenizer
// back to back into one buffer, so that reading them touches memory in order
// as reading them from the documents would.
func corpusTokens(b *testing.B, name string, limit int64) [][]byte {
	tk := New(Options{})
	var buf []byte
	var ends []int
	for _, doc := range lines(corpus(b, name, limit)) {
		for _, tok := range tk.Tokens(nil, doc) {
			buf = append(buf, tok...)
			ends = append(ends, len(buf))
		}
	}
	toks := make([][]byte, len(ends))
	start := 0
	for i, end := range ends {
		toks[i] = buf[start:end:end]
		start = end
	}
	return toks
}

func BenchmarkCounterAdd(b *testing.B) {
	toks := corpusTokens(b, "bench-raw.txt.zst", 8<<20)
	b.ResetTimer()
	var c *Counter
	for b.Loop() {
		c = NewCounter()
		c.Add(toks)
	}
	b.ReportMetric(float64(b.N*len(toks))/b.Elapsed().Seconds(), "tokens/s")
	b.ReportMetric(float64(c.Len()), "distinct")
}

// BenchmarkCounterAddMap is the baseline the Counter's hash table is
// measured against: a map from token to an index into a slice of counts (a
// map[string]int64 allocates on every m[string(b)]++).
func BenchmarkCounterAddMap(b *testing.B) {
	toks := corpusTokens(b, "bench-raw.txt.zst", 8<<20)
	b.ResetTimer()
	for b.Loop() {
		m := map[string]int32{}
		var counts []int64
		for _, tok := range toks {
			if id, ok := m[string(tok)]; ok {
				counts[id]++
			} else {
				m[string(tok)] = int32(len(counts))
				counts = append(counts, 1)
			}
		}
	}
	b.ReportMetric(float64(b.N*len(toks))/b.Elapsed().Seconds(), "tokens/s")
}

// BenchmarkCounterMemory counts every token of the whole bench-raw corpus and
// reports the heap held per distinct token, by the Counter and by the
// map-based baseline of BenchmarkCounterAddMap.
func BenchmarkCounterMemory(b *testing.B) {
	if testing.Short() {
		b.Skip("reads the whole corpus")
	}
	toks := corpusTokens(b, "bench-raw.txt.zst", 0)
	heapGrowth := func(f func() int) (bytesPerDistinct float64) {
		var before, after runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&before)
		distinct := f()
		runtime.GC()
		runtime.ReadMemStats(&after)
		return float64(after.HeapAlloc-before.HeapAlloc) / float64(distinct)
	}
	b.Run("Counter", func(b *testing.B) {
		for b.Loop() {
			var c *Counter
			perToken := heapGrowth(func() int {
				c = NewCounter()
				c.Add(toks)
				return c.Len()
			})
			tokenBytes := 0
			for id := range c.Len() {
				tokenBytes += len(c.tab.str(id))
			}
			b.ReportMetric(float64(c.Len()), "distinct")
			b.ReportMetric(perToken, "heapB/distinct")
			b.ReportMetric(float64(c.MemoryBytes())/float64(c.Len()), "B/distinct")
			b.ReportMetric(float64(tokenBytes)/float64(c.Len()), "tokenB/distinct")
			runtime.KeepAlive(c)
		}
	})
	b.Run("map", func(b *testing.B) {
		for b.Loop() {
			var m map[string]int32
			var counts []int64
			perToken := heapGrowth(func() int {
				m = map[string]int32{}
				for _, tok := range toks {
					if id, ok := m[string(tok)]; ok {
						counts[id]++
					} else {
						m[string(tok)] = int32(len(counts))
						counts = append(counts, 1)
					}
				}
				return len(m)
			})
			b.ReportMetric(perToken, "heapB/distinct")
			runtime.KeepAlive(m)
			runtime.KeepAlive(counts)
		}
	})
}

func BenchmarkIndexID(b *testing.B) {
	toks := corpusTokens(b, "bench-raw.txt.zst", 8<<20)
	c := NewCounter()
	c.Add(toks)
	for _, size := range []int{10000, 100000} {
		var vocab []string
		for _, e := range c.Vocabulary(size, 0) {
			vocab = append(vocab, e.Token)
		}
		b.Run(fmt.Sprintf("table-%d", size), func(b *testing.B) {
			x, err := NewIndex(vocab)
			if err != nil {
				b.Fatal(err)
			}
			found := 0
			for b.Loop() {
				for _, tok := range toks {
					if _, ok := x.ID(tok); ok {
						found++
					}
				}
			}
			b.ReportMetric(float64(b.N*len(toks))/b.Elapsed().Seconds(), "lookups/s")
		})
		b.Run(fmt.Sprintf("map-%d", size), func(b *testing.B) {
			m := make(map[string]int32, len(vocab))
			for i, tok := range vocab {
				m[tok] = int32(i)
			}
			found := 0
			for b.Loop() {
				for _, tok := range toks {
					if _, ok := m[string(tok)]; ok {
						found++
					}
				}
			}
			b.ReportMetric(float64(b.N*len(toks))/b.Elapsed().Seconds(), "lookups/s")
		})
	}
}

// BenchmarkNewIndex builds the index of a vocabulary of 65 536 tokens from
// bench-raw, as count does at its start.
func BenchmarkNewIndex(b *testing.B) {
	c := NewCounter()
	c.Add(corpusTokens(b, "bench-raw.txt.zst", 32<<20))
	var vocab []string
	for _, e := range c.Vocabulary(1<<16, 0) {
		vocab = append(vocab, e.Token)
	}
	if len(vocab) != 1<<16 {
		b.Fatalf("%d tokens, want 65536", len(vocab))
	}
	for b.Loop() {
		if _, err := NewIndex(vocab); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkSegment compares the hand-written ASCII segmenter with the
// library on the same ASCII text.
func BenchmarkSegment(b *testing.B) {
	text := corpus(b, "bench-raw.txt.zst", 8<<20)
	text = bytes.Map(func(r rune) rune {
		if r >= utf8.RuneSelf {
			return '?'
		}
		return r
	}, text)
	for _, c := range []struct {
		name string
		f    SegmentFunc
	}{{"ASCII", SegmentASCII}, {"Unicode", SegmentUnicode}} {
		b.Run(c.name, func(b *testing.B) {
			b.SetBytes(int64(len(text)))
			for b.Loop() {
				for data := text; len(data) > 0; {
					data = data[c.f(data):]
				}
			}
		})
	}
}

// BenchmarkVocabulary ranks the vocabulary of bench-raw's tokens, as
// tokenize does at its end (serially, on one core).
func BenchmarkVocabulary(b *testing.B) {
	text := corpus(b, "bench-raw.txt.zst", 0)
	tk := New(Options{})
	c := NewCounter()
	var toks [][]byte
	for _, line := range lines(text) {
		toks = tk.Tokens(toks[:0], line)
		c.Add(toks)
	}
	b.Logf("%d distinct tokens", c.Len())
	for _, k := range []int{65536, 0} {
		b.Run(fmt.Sprint("max-vocab=", k), func(b *testing.B) {
			for b.Loop() {
				c.Vocabulary(k, 1)
			}
		})
	}
}

// BenchmarkCounterAddIDs counts the tokens of the whole bench-raw corpus
// with AddIDs, as tokenize does on one thread: its 323 thousand distinct
// tokens make counts and a table larger than the core's caches, as the
// 8 MB of BenchmarkCounterAdd do not. The Counter's memory is reused, so
// that the figure is the lookups' alone.
func BenchmarkCounterAddIDs(b *testing.B) {
	toks := corpusTokens(b, "bench-raw.txt.zst", 0)
	var ids []uint32
	c := NewCounter()
	b.ResetTimer()
	for b.Loop() {
		c.Reset() // keeping the memory of the run before
		ids = ids[:0]
		for start := 0; start < len(toks); start += 4096 {
			ids = c.AddIDs(ids, toks[start:min(len(toks), start+4096)])
		}
		_ = c.Counts()
	}
	b.ReportMetric(float64(b.N*len(toks))/b.Elapsed().Seconds(), "tokens/s")
}
