package stages

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"sort"

	"github.com/pwe-project/pwe/formats"
	"github.com/pwe-project/pwe/formats/input"
	"github.com/pwe-project/pwe/internal/atomicfile"
	"github.com/pwe-project/pwe/internal/sample"
	"github.com/pwe-project/pwe/tokenize"
)

// ErrEmptyCorpus is returned when the inputs hold no token at all.
var ErrEmptyCorpus = errors.New("stages: empty corpus")

// makeTempDir makes the directory that spills go to, if missing, as fit
// makes its own, when a stage starts: a --temp-dir that cannot be made or
// is a file fails then, not at the first spill.
func makeTempDir(dir string) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("temporary directory %s: %w", dir, err)
	}
	return nil
}

// outputsNotDirs refuses output paths that name directories before a stage
// reads its inputs, rather than after them, when the file could not take
// the directory's place.
func outputsNotDirs(paths ...string) error {
	for _, p := range paths {
		if p == "" || p == StdioPath {
			continue
		}
		if err := atomicfile.NotDir(p); err != nil {
			return err
		}
	}
	return nil
}

// TextInput says where a corpus is and how it splits into documents.
type TextInput struct {
	// Paths are files, directories (read recursively), glob patterns, or "-"
	// for standard input.
	Paths []string `json:"paths" yaml:"paths"`
	// Format is "text" (default), "jsonl" or "parquet"; TextField and
	// TextColumn imply the latter two.
	Format string `json:"format,omitempty" yaml:"format"`
	// DocSep is "line" (default: a document per line), "blank" (paragraphs
	// separated by blank lines) or "file" (a document per file, archive
	// member or WARC record). Text only.
	DocSep string `json:"doc_sep,omitempty" yaml:"doc_sep"`
	// TextField names the JSONL field holding the text.
	TextField string `json:"text_field,omitempty" yaml:"text_field"`
	// TextColumn names the Parquet column holding the text.
	TextColumn string `json:"text_column,omitempty" yaml:"text_column"`
	// Skip names directories and files that the walks of Paths (and their
	// patterns) leave out: pwe run's output directory and its
	// configuration file. Not a setting of the corpus, so not recorded.
	Skip []string `json:"-" yaml:"-"`
	// TempDir is where a zip archive on standard input or compressed is
	// copied to be read (the stage's --temp-dir); not recorded either.
	TempDir string `json:"-" yaml:"-"`
}

func (t TextInput) options() (input.Options, error) {
	o := input.Options{DocSep: t.DocSep, TextField: t.TextField, TextColumn: t.TextColumn, TempDir: t.TempDir}
	if t.Format != "" {
		f, err := input.ParseFormat(t.Format)
		if err != nil {
			return o, err
		}
		o.Format = f
	}
	return o, o.Validate()
}

// Validate reports a missing input or contradictory format settings.
func (t TextInput) Validate() error {
	if len(t.Paths) == 0 {
		return errors.New("no input: name files, directories, glob patterns or - for standard input")
	}
	_, err := t.options()
	return err
}

// open expands the input paths and opens a document reader over them,
// reporting its reading to p (if not nil); it also returns the inputs' size
// as stored (0 if unknown: standard input). It first refuses outputs that
// name a file of the corpus or one of the stage's other inputs
// (checkOutputs).
func (t TextInput) open(p ReadProgress, others []string, outputs ...string) (*input.Reader, int64, error) {
	opts, err := t.options()
	if err != nil {
		return nil, 0, err
	}
	paths, err := input.ExpandOnce(t.Paths, t.Skip...)
	if err != nil {
		return nil, 0, err
	}
	if err := checkOutputs(append(slices.Clone(paths), others...), outputs...); err != nil {
		return nil, 0, err
	}
	r := input.NewReader(paths, opts)
	size := rawSize(paths)
	if p != nil {
		p.SetTotal(size)
		r.OnRead(p.Add)
	}
	return r, size, nil
}

// checkOutputs refuses outputs that name one of the inputs, or each other:
// an output is written under a temporary name and renamed over its final
// name when complete, which would replace the input (`pwe tokenize
// corpus.txt -o corpus.txt`) or the other output. Empty paths and standard
// input and output are skipped.
func checkOutputs(inputs []string, outputs ...string) error {
	named := func(p string) bool { return p != "" && p != StdioPath }
	// The inputs are looked at once, and only if an output exists: a
	// corpus may be many thousands of files.
	var inputInfo []fs.FileInfo
	statInputs := func() {
		inputInfo = make([]fs.FileInfo, len(inputs))
		for j, in := range inputs {
			if !named(in) {
				continue
			}
			if fi, err := os.Stat(in); err == nil {
				inputInfo[j] = fi
			}
		}
	}
	for i, out := range outputs {
		if !named(out) {
			continue
		}
		for _, prev := range outputs[:i] {
			if named(prev) && samePath(prev, out) {
				return fmt.Errorf("%s is named as two outputs; name two files", out)
			}
		}
		fo, err := os.Stat(out)
		if err != nil {
			continue // no file yet, so none of the inputs
		}
		if inputInfo == nil {
			statInputs()
		}
		for j, in := range inputs {
			if fi := inputInfo[j]; fi != nil && os.SameFile(fi, fo) {
				return fmt.Errorf("the output %s is the input %s, which writing it would replace; name another output", out, in)
			}
		}
	}
	return nil
}

// samePath reports whether two paths name the same place, whether or not a
// file is there.
func samePath(a, b string) bool {
	a, errA := filepath.Abs(a)
	b, errB := filepath.Abs(b)
	return errA == nil && errB == nil && a == b
}

// ReadProgress follows a stage's reading of its input files, counted in raw
// bytes as stored (compressed bytes for a compressed file), so that the
// total is known from the files' sizes before reading starts.
// pipeline.Progress implements it.
type ReadProgress interface {
	// SetTotal announces the bytes the stage will read in all, 0 when
	// unknown (standard input). The stage may correct it as it learns
	// more: a MovieLens file found unsorted is read a different number of
	// times.
	SetTotal(rawBytes int64)
	// Add records rawBytes more bytes read; it may be called from any
	// goroutine.
	Add(rawBytes int64)
}

// rawSize returns the bytes stored in paths in all, or 0 if one of them
// has no size known in advance (standard input).
func rawSize(paths []string) int64 {
	var total int64
	for _, p := range paths {
		switch p {
		case StdioPath:
			return 0
		case sample.Name:
			total += int64(len(sample.AustenZst))
			continue
		}
		info, err := os.Stat(p)
		if err != nil {
			return 0
		}
		total += info.Size()
	}
	return total
}

// TokenizerConfig is the part of the tokenize stage's settings that the
// count stage must repeat exactly; count reads it from vocab.parquet.
type TokenizerConfig struct {
	// KeepCase turns Unicode case folding off.
	KeepCase bool `json:"keep_case" yaml:"keep_case"`
	// MinLength drops tokens shorter than this many runes (0: no minimum).
	MinLength int `json:"min_length" yaml:"min_length"`
	// Stopwords are dropped before counting. StopwordsFile, when set, is read
	// into Stopwords by Load.
	Stopwords     []string `json:"stopwords,omitempty" yaml:"stopwords"`
	StopwordsFile string   `json:"-" yaml:"stopwords_file"`
	// Rules is the generation of the tokenizer's rules (tokenize.Rules),
	// which the tokenize stage sets and records; 0 in files from before
	// it was recorded. It is not a setting.
	Rules int `json:"rules,omitempty" yaml:"-"`
	// Unicode is the version of the Unicode tables the tokenizer was built
	// with (tokenize.Unicode), set and recorded with Rules: pwe run makes
	// a vocabulary again when a pwe built with other tables runs it, and
	// count names both versions when it refuses a token. "" in files from
	// before it was recorded.
	Unicode string `json:"unicode,omitempty" yaml:"-"`
}

// ErrVocabRules is returned for text counted with a vocabulary that has a
// token the tokenizer of this pwe does not make, or that was made by the
// newer rules of a later pwe.
var ErrVocabRules = errors.New("stages: the vocabulary's tokens were made by other tokenizer rules")

// checkRules lets text be counted with a vocabulary only if every token of
// it is one this pwe's tokenizer makes, and records this pwe's rules in c.
// A vocabulary of older rules, or made by a pwe built with other Unicode
// tables (the Go version's), so still serves where the difference does not
// touch it (an ASCII corpus); a vocabulary of newer rules is refused.
func (c *TokenizerConfig) checkRules(path string, vocab []formats.VocabRow) error {
	if c.Rules > tokenize.Rules {
		return fmt.Errorf("%s: %w: rules %d, of a newer pwe (this one has rules %d); count with the pwe that made it, or make it again", path, ErrVocabRules, c.Rules, tokenize.Rules)
	}
	opt := c.options()
	for id, v := range vocab {
		if want := tokenize.Normalize(v.Token, opt); want != v.Token {
			return fmt.Errorf("%s: %w: token_id %d, %+q, is not a token this pwe makes (it would be %+q); the vocabulary was made by another pwe (%s) or by hand: make it again with pwe tokenize",
				path, ErrVocabRules, id, v.Token, want, c.madeBy())
		}
	}
	c.Rules, c.Unicode = tokenize.Rules, tokenize.Unicode
	return nil
}

// madeBy says how the pwe that made a vocabulary with tokenizer settings
// c differs from this one, as far as its recorded rules and Unicode
// version tell.
func (c *TokenizerConfig) madeBy() string {
	switch {
	case c.Unicode != "" && c.Unicode != tokenize.Unicode:
		return fmt.Sprintf("with Unicode %s tables, this one has %s: the Go version that built it chooses them", c.Unicode, tokenize.Unicode)
	case c.Rules < tokenize.Rules:
		return fmt.Sprintf("of rules %d, this one has rules %d", c.Rules, tokenize.Rules)
	}
	return "older, or built with other Unicode tables"
}

// load reads StopwordsFile into Stopwords, sorted and without repeats, so the
// configuration recorded in the output names the words themselves.
func (c *TokenizerConfig) load() error {
	if c.StopwordsFile == "" {
		return nil
	}
	f, err := os.Open(c.StopwordsFile)
	if err != nil {
		return fmt.Errorf("stop words: %w", err)
	}
	defer f.Close()
	words, err := tokenize.ReadStopwords(f)
	if err != nil {
		return fmt.Errorf("stop words %s: %w", c.StopwordsFile, err)
	}
	for w := range words {
		c.Stopwords = append(c.Stopwords, w)
	}
	sort.Strings(c.Stopwords)
	c.Stopwords = compactStrings(c.Stopwords)
	c.StopwordsFile = ""
	return nil
}

func compactStrings(s []string) []string {
	out := s[:0]
	for i, w := range s {
		if i == 0 || w != s[i-1] {
			out = append(out, w)
		}
	}
	return out
}

func (c TokenizerConfig) options() tokenize.Options {
	o := tokenize.Options{KeepCase: c.KeepCase, MinLength: c.MinLength}
	if len(c.Stopwords) > 0 {
		o.Stopwords = make(map[string]struct{}, len(c.Stopwords))
		for _, w := range c.Stopwords {
			o.Stopwords[w] = struct{}{}
		}
	}
	return o
}

func threadsOrDefault(n int) int {
	if n <= 0 {
		return runtime.GOMAXPROCS(0)
	}
	return n
}
