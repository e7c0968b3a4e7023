package input

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
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

// TestExpandSkippingFile leaves a file (pwe run's configuration, in the
// corpus directory) out of walks, patterns and "**" patterns, and takes it
// when it is named itself.
func TestExpandSkippingFile(t *testing.T) {
	dir := t.TempDir()
	for _, name := range []string{"a.txt", "run.yaml", "sub/run.yaml"} {
		writeFile(t, dir, name, []byte("text\n"))
	}
	p := func(name string) string { return filepath.Join(dir, name) }
	got, err := ExpandSkipping([]string{dir, p("*"), p("**/*.yaml"), p("run.yaml")}, p("run.yaml"))
	want := []string{p("a.txt"), p("sub/run.yaml"), p("a.txt"), p("sub/run.yaml"), p("sub/run.yaml"), p("run.yaml")}
	if err != nil || !slices.Equal(got, want) {
		t.Errorf("got  %q, %v\nwant %q", got, err, want)
	}
}

// TestExpandGlobStar checks patterns whose "**" segments match any number
// of directories, against the files a walk of the tree keeps.
func TestExpandGlobStar(t *testing.T) {
	dir := t.TempDir()
	for _, name := range []string{
		"corpus/b.txt", "corpus/a.txt.gz", "corpus/sub/c.txt", "corpus/sub/deeper/d.jsonl",
		"corpus/sub/deeper/sub/g.txt", "corpus/.hidden.txt", "corpus/.git/config.txt",
		"corpus/sub/.cache/e.txt", "corpus/Z.txt", "corpus/2024/01/h.txt", "corpus/2024/02/i.md",
		"other/2024/01/j.txt", "out/k.txt", ".hiddenroot/f.txt", "top.txt",
	} {
		writeFile(t, dir, name, []byte("text\n"))
	}
	if err := os.Symlink(filepath.Join(dir, "top.txt"), filepath.Join(dir, "corpus", "link.txt")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(dir, "other"), filepath.Join(dir, "corpus", "linkdir")); err != nil {
		t.Fatal(err)
	}
	p := func(name string) string { return filepath.Join(dir, name) }
	ps := func(names ...string) []string {
		out := make([]string, len(names))
		for i, n := range names {
			out[i] = p(n)
		}
		return out
	}
	cases := []struct {
		pattern string
		want    []string
	}{
		// Zero directories or several; hidden names and links to
		// directories are not followed, links to files are kept.
		{"corpus/**/*.txt", ps("corpus/2024/01/h.txt", "corpus/Z.txt", "corpus/b.txt", "corpus/link.txt",
			"corpus/sub/c.txt", "corpus/sub/deeper/sub/g.txt")},
		// A trailing "**" reads the directory whole, as naming it does.
		{"corpus/**", ps("corpus/2024/01/h.txt", "corpus/2024/02/i.md", "corpus/Z.txt", "corpus/a.txt.gz",
			"corpus/b.txt", "corpus/link.txt", "corpus/sub/c.txt", "corpus/sub/deeper/d.jsonl",
			"corpus/sub/deeper/sub/g.txt")},
		// A matched directory is read whole; a file is listed once
		// however many of its directories match.
		{"corpus/**/sub", ps("corpus/sub/c.txt", "corpus/sub/deeper/d.jsonl", "corpus/sub/deeper/sub/g.txt")},
		{"corpus/**/**/deeper/**", ps("corpus/sub/deeper/d.jsonl", "corpus/sub/deeper/sub/g.txt")},
		// Metacharacters before the "**", and after it in several segments.
		{"*/**/20??/0[1-9]/*.txt", ps("corpus/2024/01/h.txt", "other/2024/01/j.txt")},
		{"c*s/**/2024/*/*", ps("corpus/2024/01/h.txt", "corpus/2024/02/i.md")},
		{"**/j.txt", ps("other/2024/01/j.txt")},
		// A segment that spells the dot matches a hidden name, as in the
		// shell and Python's glob; "**" still passes over them.
		{"corpus/**/.cache/*.txt", ps("corpus/sub/.cache/e.txt")},
		{"corpus/**/.*", ps("corpus/.git/config.txt", "corpus/.hidden.txt", "corpus/sub/.cache/e.txt")}, // directories read whole
		{"corpus/**/.*/*", ps("corpus/.git/config.txt", "corpus/sub/.cache/e.txt")},
		{"corpus//**/", ps("corpus/2024/01/h.txt", "corpus/2024/02/i.md", "corpus/Z.txt", "corpus/a.txt.gz",
			"corpus/b.txt", "corpus/link.txt", "corpus/sub/c.txt", "corpus/sub/deeper/d.jsonl",
			"corpus/sub/deeper/sub/g.txt")},
	}
	for _, c := range cases {
		pattern := p(c.pattern)
		if strings.HasPrefix(c.pattern, "**") {
			pattern = dir + string(filepath.Separator) + c.pattern
		}
		got, err := Expand([]string{pattern})
		if err != nil || !slices.Equal(got, c.want) {
			t.Errorf("Expand(%s):\ngot  %q, %v\nwant %q", c.pattern, got, err, c.want)
		}
	}

	// A relative pattern gives relative paths; the skipped directory is
	// left out.
	t.Chdir(dir)
	got, err := ExpandSkipping([]string{"**/k.txt", "**/j.txt"}, "other")
	if err == nil {
		t.Errorf("ExpandSkipping found %q below a skipped directory", got)
	}
	wantParseError(t, err, "**/j.txt", 0, ErrNoMatch)
	got, err = ExpandSkipping([]string{"**/0?/*.txt", "top.txt"}, "other")
	if want := []string{"corpus/2024/01/h.txt", "top.txt"}; err != nil || !slices.Equal(got, want) {
		t.Errorf("relative pattern: got %q, %v; want %q", got, err, want)
	}

	for _, c := range []struct {
		pattern string
		target  error
	}{
		{"corpus/**/*.csv", ErrNoMatch},
		{"missing/**/*.txt", ErrNoMatch},
		{"corpus/**/e.txt", ErrNoMatch}, // "**" does not enter hidden directories
		{"corpus/**/[x", filepath.ErrBadPattern},
		{"[x/**", filepath.ErrBadPattern},
	} {
		_, err := Expand([]string{c.pattern})
		if err == nil {
			t.Errorf("Expand(%q) succeeded", c.pattern)
			continue
		}
		wantParseError(t, err, c.pattern, 0, c.target)
	}
}

// TestExpandGlobHidden: a pattern's wildcards do not match hidden names,
// as in the shell and Python's glob (and in pwe's walks and "**"), unless
// the pattern's segment begins with '.'.
func TestExpandGlobHidden(t *testing.T) {
	dir := t.TempDir()
	for _, name := range []string{"top.txt", "a/mid.txt", "a/.hf.txt", ".h/hid.txt"} {
		writeFile(t, dir, name, []byte("text\n"))
	}
	p := func(name string) string { return filepath.Join(dir, name) }
	for pattern, want := range map[string][]string{
		"a/*.txt":   {p("a/mid.txt")},
		"[a]/*.txt": {p("a/mid.txt")},
		"*":         {p("a/mid.txt"), p("top.txt")},
		"a/.h*.txt": {p("a/.hf.txt")},
		".h/*":      {p(".h/hid.txt")},
		"*/*.txt":   {p("a/mid.txt")},
	} {
		got, err := Expand([]string{p(pattern)})
		if err != nil || !slices.Equal(got, want) {
			t.Errorf("%s: got %q, %v; want %q", pattern, got, err, want)
		}
	}
	if _, err := Expand([]string{p("a/*hf.txt")}); !errors.Is(err, ErrNoMatch) {
		t.Errorf("a pattern matching only a hidden file: %v, want ErrNoMatch", err)
	}
}

// TestExpandOnce refuses a file named twice, whatever the names that reach
// it, and names the arguments; distinct files are kept in order.
func TestExpandOnce(t *testing.T) {
	dir := t.TempDir()
	for _, name := range []string{"c/a.txt", "c/sub/b.txt", "other.txt"} {
		writeFile(t, dir, name, []byte("text\n"))
	}
	p := func(name string) string { return filepath.Join(dir, name) }
	if err := os.Symlink(p("c/a.txt"), p("link.txt")); err != nil {
		t.Fatal(err)
	}
	got, err := ExpandOnce([]string{p("c"), p("other.txt"), "-"})
	if want := []string{p("c/a.txt"), p("c/sub/b.txt"), p("other.txt"), "-"}; err != nil || !slices.Equal(got, want) {
		t.Errorf("distinct files: %q, %v; want %q", got, err, want)
	}
	for _, c := range []struct {
		args      []string
		path, say string
	}{
		{[]string{p("c"), p("c/**/*.txt")}, p("c/a.txt"), fmt.Sprintf("%q and %q", p("c"), p("c/**/*.txt"))},
		{[]string{p("c/a.txt"), p("c/sub/../a.txt")}, p("c/sub/../a.txt"), "and"},
		{[]string{p("other.txt"), p("other.txt")}, p("other.txt"), "twice"},
		{[]string{p("c/a.txt"), p("link.txt")}, p("link.txt"), "and"},
	} {
		_, err := ExpandOnce(c.args)
		wantParseError(t, err, c.path, 0, ErrNamedTwice)
		if err != nil && !strings.Contains(err.Error(), c.say) {
			t.Errorf("ExpandOnce(%q): %v does not say %s", c.args, err, c.say)
		}
	}
}
