package stages

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"
)

// TestFirstInvalidUTF8 puts bytes of invalid UTF-8 in three lines of a
// corpus of several reading batches, none in the first batch: tokenize,
// with and without a token stream, and count from the text must name the
// earliest of the three lines whatever the number of threads, as workers
// finish batches in any order.
func TestFirstInvalidUTF8(t *testing.T) {
	dir := t.TempDir()
	var b bytes.Buffer
	bad := map[int]bool{14000: true, 16000: true, 35000: true}
	first := 0 // the byte where the first bad line starts
	for line := 1; line <= 40000; line++ {
		if bad[line] {
			if first == 0 {
				first = b.Len()
			}
			fmt.Fprintf(&b, "line %d has a bad \xff byte in it\n", line)
			continue
		}
		fmt.Fprintf(&b, "line %d of the corpus with a few more words\n", line)
	}
	if first < batchBytes || b.Len() < 3*batchBytes {
		t.Fatalf("the corpus (%d bytes) does not spread over batches of %d as the test needs", b.Len(), batchBytes)
	}
	corpus := filepath.Join(dir, "corpus.txt")
	if err := os.WriteFile(corpus, b.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	want := corpus + ":14000"
	ctx := context.Background()
	for _, threads := range []int{1, 2, 4} {
		for _, stream := range []bool{false, true} {
			out := filepath.Join(dir, fmt.Sprintf("%d-%v", threads, stream))
			cfg := TokenizeConfig{Input: TextInput{Paths: []string{corpus}}, MaxVocab: 100, Output: out + ".vocab.parquet", Threads: threads}
			if stream {
				cfg.Tokens = out + ".tokens.bin"
			}
			st, err := Tokenize(ctx, cfg)
			if err != nil || st.InvalidUTF8 != 3 || st.FirstInvalidUTF8 != want {
				t.Errorf("tokenize, %d threads, stream %v: %d bytes, the first at %q (%v); want 3 at %q",
					threads, stream, st.InvalidUTF8, st.FirstInvalidUTF8, err, want)
			}
		}
		cs, err := Count(ctx, CountConfig{Input: TextInput{Paths: []string{corpus}}, Vocab: filepath.Join(dir, "1-false.vocab.parquet"),
			Output: filepath.Join(dir, fmt.Sprintf("%d-counts.parquet", threads)), Threads: threads})
		if err != nil || cs.InvalidUTF8 != 3 || cs.FirstInvalidUTF8 != want {
			t.Errorf("count, %d threads: %d bytes, the first at %q (%v); want 3 at %q", threads, cs.InvalidUTF8, cs.FirstInvalidUTF8, err, want)
		}
	}
}
