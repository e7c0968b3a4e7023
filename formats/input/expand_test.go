package input

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"testing"
)

func TestExpand(t *testing.T) {
	dir := t.TempDir()
	for _, name := range []string{
		"corpus/b.txt", "corpus/a.txt.gz", "corpus/sub/c.txt", "corpus/sub/deeper/d.jsonl",
		"corpus/.hidden.txt", "corpus/.git/config", "corpus/sub/.cache/e.txt", "corpus/Z.txt",
		"x1.txt", "x2.txt", "x10.txt", "y.txt", ".hiddenroot/f.txt",
	} {
		writeFile(t, dir, name, []byte("text\n"))
	}
	if err := os.MkdirAll(filepath.Join(dir, "corpus", "emptysub"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(dir, "empty", "nested"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(dir, "y.txt"), filepath.Join(dir, "corpus", "link.txt")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(dir, "empty"), filepath.Join(dir, "corpus", "linkdir")); err != nil {
		t.Fatal(err)
	}
	p := func(name string) string { return filepath.Join(dir, name) }

	got, err := Expand([]string{p("y.txt"), p("corpus"), "-", p("x*.txt"), p(".hiddenroot")})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{
		p("y.txt"),
		p("corpus/Z.txt"), p("corpus/a.txt.gz"), p("corpus/b.txt"), p("corpus/link.txt"),
		p("corpus/sub/c.txt"), p("corpus/sub/deeper/d.jsonl"),
		"-",
		p("x1.txt"), p("x10.txt"), p("x2.txt"),
		p(".hiddenroot/f.txt"), // named explicitly, so not skipped
	}
	if !slices.Equal(got, want) {
		t.Errorf("Expand:\ngot  %q\nwant %q", got, want)
	}

	// A glob that matches a directory walks it; a file named twice is kept twice.
	got, err = Expand([]string{p("corpus/su?"), p("y.txt"), p("y.txt")})
	if err != nil {
		t.Fatal(err)
	}
	want = []string{p("corpus/sub/c.txt"), p("corpus/sub/deeper/d.jsonl"), p("y.txt"), p("y.txt")}
	if !slices.Equal(got, want) {
		t.Errorf("Expand:\ngot  %q\nwant %q", got, want)
	}

	if got, err := Expand(nil); err != nil || len(got) != 0 {
		t.Errorf("Expand(nil) = %q, %v", got, err)
	}

	errCases := []struct {
		args   []string
		path   string
		target error
	}{
		{[]string{p("y.txt"), p("missing.txt")}, p("missing.txt"), os.ErrNotExist},
		{[]string{p("*.csv")}, p("*.csv"), ErrNoMatch},
		{[]string{p("empty")}, p("empty"), ErrNoFiles},
		{[]string{p("corpus/emptysub")}, p("corpus/emptysub"), ErrNoFiles},
		{[]string{"-", p("y.txt"), "-"}, "-", ErrStdinTwice},
		{[]string{p("[x")}, p("[x"), nil},
	}
	for _, c := range errCases {
		_, err := Expand(c.args)
		if err == nil {
			t.Errorf("Expand(%q) succeeded", c.args)
			continue
		}
		wantParseError(t, err, c.path, 0, c.target)
	}
}

// TestExpandSkipping leaves an output directory out of the walks above
// it, whichever name reaches it, while a file named inside it is kept and
// naming the directory itself is an error.
func TestExpandSkipping(t *testing.T) {
	dir := t.TempDir()
	for _, name := range []string{"a.txt", "out/vocab.parquet", "out/fit/map.parquet", "sub/b.txt", "outer.txt"} {
		writeFile(t, dir, name, []byte("text\n"))
	}
	p := func(name string) string { return filepath.Join(dir, name) }
	if err := os.Symlink(p("out"), p("sub/outlink")); err != nil {
		t.Fatal(err)
	}
	for _, skip := range []string{p("out"), p("sub/../out/"), p("missing")} {
		got, err := ExpandSkipping([]string{dir, p("o*"), p("out/vocab.parquet")}, skip)
		want := []string{p("a.txt"), p("outer.txt"), p("sub/b.txt"), p("outer.txt"), p("out/vocab.parquet")}
		if skip == p("missing") {
			// Nothing to skip: the walk and the glob take the directory.
			want = []string{p("a.txt"), p("out/fit/map.parquet"), p("out/vocab.parquet"), p("outer.txt"), p("sub/b.txt"),
				p("out/fit/map.parquet"), p("out/vocab.parquet"), p("outer.txt"), p("out/vocab.parquet")}
		}
		if err != nil || !slices.Equal(got, want) {
			t.Errorf("skipping %s:\ngot  %q, %v\nwant %q", skip, got, err, want)
		}
	}
	for _, arg := range []string{p("out"), p("sub/outlink")} {
		_, err := ExpandSkipping([]string{arg}, p("out"))
		var pe *ParseError
		if !errors.Is(err, ErrSkippedDir) || !errors.As(err, &pe) || pe.Path != arg {
			t.Errorf("naming %s: %v", arg, err)
		}
	}
}
