package stages

import (
	"archive/tar"
	"archive/zip"
	"bytes"
	"compress/gzip"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/pwe-project/pwe/formats"
)

// TestArchiveCorpus tokenizes and counts a corpus of many files from its
// directory, from a .tar.gz and from a .zip of the same files: the
// vocabularies and the counts (on two threads) are the same.
func TestArchiveCorpus(t *testing.T) {
	text, err := os.ReadFile(fixture)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	tree := filepath.Join(dir, "corpus")
	// The fixture's lines in files of ten, in subdirectories whose names
	// sort as the walk takes them.
	lines := strings.Split(string(text), "\n")
	var names []string
	for i := 0; i < len(lines); i += 10 {
		name := fmt.Sprintf("part%02d/doc%03d.txt", i/60, i)
		p := filepath.Join(tree, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(strings.Join(lines[i:min(i+10, len(lines))], "\n")), 0o644); err != nil {
			t.Fatal(err)
		}
		names = append(names, name)
	}
	var tb, zb bytes.Buffer
	gz := gzip.NewWriter(&tb)
	tw, zw := tar.NewWriter(gz), zip.NewWriter(&zb)
	for _, name := range names {
		data, err := os.ReadFile(filepath.Join(tree, filepath.FromSlash(name)))
		if err != nil {
			t.Fatal(err)
		}
		if err := tw.WriteHeader(&tar.Header{Name: "corpus/" + name, Mode: 0o644, Size: int64(len(data)), Typeflag: tar.TypeReg}); err != nil {
			t.Fatal(err)
		}
		w, err := zw.Create(name)
		if err != nil {
			t.Fatal(err)
		}
		for _, w := range []interface{ Write([]byte) (int, error) }{tw, w} {
			if _, err := w.Write(data); err != nil {
				t.Fatal(err)
			}
		}
	}
	for _, c := range []interface{ Close() error }{tw, gz, zw} {
		if err := c.Close(); err != nil {
			t.Fatal(err)
		}
	}
	tgz, zipPath := filepath.Join(dir, "corpus.tar.gz"), filepath.Join(dir, "corpus.zip")
	if err := os.WriteFile(tgz, tb.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(zipPath, zb.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}

	type result struct {
		vocab  []formats.VocabRow
		counts []formats.CountRow
	}
	// A zip archive compressed is copied to --temp-dir to be read.
	zipGz, temp := filepath.Join(dir, "corpus.zip.gz"), filepath.Join(dir, "temp")
	var zgz bytes.Buffer
	gz = gzip.NewWriter(&zgz)
	if _, err := gz.Write(zb.Bytes()); err != nil || gz.Close() != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(zipGz, zgz.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(temp, 0o755); err != nil {
		t.Fatal(err)
	}
	run := func(in string) result {
		out := filepath.Join(dir, filepath.Base(in)+".out")
		input := TextInput{Paths: []string{in}}
		vocab := filepath.Join(out, "vocab.parquet")
		if _, err := Tokenize(context.Background(), TokenizeConfig{Input: input, MaxVocab: 300, Output: vocab, TempDir: temp}); err != nil {
			t.Fatalf("%s: %v", in, err)
		}
		counts := filepath.Join(out, "counts.parquet")
		st, err := Count(context.Background(), CountConfig{Input: input, Vocab: vocab, Output: counts, Window: 3, Negatives: intp(1), Seed: 5, Threads: 2, TempDir: temp})
		if err != nil {
			t.Fatalf("%s: %v", in, err)
		}
		if st.Documents < int64(len(lines))/2 {
			t.Fatalf("%s: %d documents from %d lines", in, st.Documents, len(lines))
		}
		v, _, err := formats.ReadAll[formats.VocabRow](vocab, formats.SchemaVocab)
		if err != nil {
			t.Fatal(err)
		}
		c, _ := readCountsFile(t, counts)
		return result{v, c}
	}
	want := run(tree)
	for _, in := range []string{tgz, zipPath, zipGz} {
		got := run(in)
		if !slices.Equal(got.vocab, want.vocab) {
			t.Errorf("%s: vocabulary of %d tokens differs from the directory's (%d)", in, len(got.vocab), len(want.vocab))
		}
		if !slices.Equal(got.counts, want.counts) {
			t.Errorf("%s: %d count rows differ from the directory's %d", in, len(got.counts), len(want.counts))
		}
	}
	if left, err := os.ReadDir(temp); err != nil || len(left) != 0 {
		t.Errorf("left in --temp-dir: %v %v", left, err)
	}
	// The copy goes to --temp-dir: where there can be none (below a file),
	// the error says so.
	file := filepath.Join(dir, "file")
	if err := os.WriteFile(file, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	nowhere := filepath.Join(file, "no-such-dir")
	_, err = Tokenize(context.Background(), TokenizeConfig{Input: TextInput{Paths: []string{zipGz}}, MaxVocab: 300, Output: filepath.Join(dir, "v.parquet"), TempDir: nowhere})
	if err == nil || !strings.Contains(err.Error(), nowhere) {
		t.Errorf("tokenize with --temp-dir %s: %v", nowhere, err)
	}
}
