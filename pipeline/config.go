package pipeline

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strconv"
	"strings"

	"gopkg.in/yaml.v3"

	"github.com/pwe-project/pwe/stages"
)

// Config is a run's configuration file.
type Config struct {
	// Output is the directory that receives every output and manifest.json.
	Output string `yaml:"output"`
	// Seed fills the seed of every stage that does not set its own.
	Seed uint64 `yaml:"seed"`
	// Threads (0: every core) and Memory (e.g. "512MiB") apply to every
	// stage; they do not change the outputs.
	Threads int    `yaml:"threads"`
	Memory  Bytes  `yaml:"memory"`
	TempDir string `yaml:"temp_dir"`

	// Input is a text corpus, read by tokenize and count; MovieLens names
	// rating files instead. Exactly one of them is set.
	Input     *stages.TextInput       `yaml:"input"`
	MovieLens *stages.MovieLensConfig `yaml:"movielens"`

	Tokenize stages.TokenizeConfig `yaml:"tokenize"`
	Count    stages.CountConfig    `yaml:"count"`
	Fit      stages.FitConfig      `yaml:"fit"`
	// SkipFit stops after the counts.
	SkipFit bool `yaml:"skip_fit"`
	// Summarize runs after the fit when it asks for pairs or neighbours;
	// its files go into the fit directory.
	Summarize stages.SummarizeConfig `yaml:"summarize"`
	// Report writes the HTML report after the fit (and summarize): true
	// for report.html in the output directory, or a path, relative to the
	// output directory unless absolute.
	Report ReportPath `yaml:"report"`

	// file is the configuration file Load read, which a corpus directory
	// holding it does not take for text.
	file string
	// seeded names the stages whose section of the file sets a seed, 0
	// included; a stage without one takes Seed. (A Config made in code
	// has none: its stage seeds of 0 read as unset.)
	seeded map[string]bool
}

// ReportPath is the report setting: empty (no report) or where to write it.
type ReportPath string

// UnmarshalYAML accepts true, false or a path.
func (r *ReportPath) UnmarshalYAML(n *yaml.Node) error {
	var b bool
	if n.Tag == "!!bool" && n.Decode(&b) == nil {
		*r = ""
		if b {
			*r = stages.ReportFile
		}
		return nil
	}
	if n.Kind != yaml.ScalarNode {
		return fmt.Errorf("line %d: report: want true, false or a path", n.Line)
	}
	*r = ReportPath(n.Value)
	return nil
}

// Bytes is a size written as 512MiB, 1GiB, 500MB or a number of bytes.
type Bytes int64

// ParseBytes parses sizes such as 256MiB, 1GiB, 500MB or 1048576.
func ParseBytes(s string) (Bytes, error) {
	t := strings.TrimSpace(s)
	units := []struct {
		suffix string
		mult   float64
	}{
		{"KiB", 1 << 10}, {"MiB", 1 << 20}, {"GiB", 1 << 30}, {"TiB", 1 << 40},
		{"KB", 1e3}, {"MB", 1e6}, {"GB", 1e9}, {"TB", 1e12},
		{"K", 1 << 10}, {"M", 1 << 20}, {"G", 1 << 30}, {"B", 1},
	}
	mult := 1.0
	for _, u := range units {
		if strings.HasSuffix(strings.ToUpper(t), strings.ToUpper(u.suffix)) {
			t, mult = strings.TrimSpace(t[:len(t)-len(u.suffix)]), u.mult
			break
		}
	}
	v, err := strconv.ParseFloat(t, 64)
	if err != nil || !(v >= 0) || v*mult > 1<<62 {
		return 0, fmt.Errorf("%q is not a size (examples: 256MiB, 1GiB, 500MB)", s)
	}
	if v*mult < 1 {
		// A budget of nothing is never meant, and 0 would read as unset.
		return 0, fmt.Errorf("%q: a size must be at least a byte (examples: 256MiB, 1GiB, 500MB)", s)
	}
	return Bytes(v * mult), nil
}

// String formats b in the largest binary unit that divides it.
func (b Bytes) String() string {
	switch n := int64(b); {
	case n >= 1<<30 && n%(1<<30) == 0:
		return fmt.Sprintf("%dGiB", n>>30)
	case n >= 1<<20 && n%(1<<20) == 0:
		return fmt.Sprintf("%dMiB", n>>20)
	default:
		return strconv.FormatInt(n, 10)
	}
}

// Set implements flag.Value.
func (b *Bytes) Set(s string) error {
	v, err := ParseBytes(s)
	if err == nil {
		*b = v
	}
	return err
}

// UnmarshalYAML accepts a size string or a number of bytes.
func (b *Bytes) UnmarshalYAML(n *yaml.Node) error {
	v, err := ParseBytes(n.Value)
	if err != nil {
		return fmt.Errorf("line %d: %w", n.Line, err)
	}
	*b = v
	return nil
}

// Load reads a configuration file. Unknown keys are errors (a misspelt
// setting must not be silently ignored), and so are fractions where a
// whole number is wanted; relative paths are taken relative to the file's
// directory, the output directory's too. Every stage's settings are
// checked, so that a bad one stops the run before the first stage.
func Load(path string) (Config, error) {
	return LoadWithOutput(path, "")
}

// LoadWithOutput is Load with the file's output directory replaced by
// output, if not empty (pwe run -o), which a file then need not name.
func LoadWithOutput(path, output string) (Config, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return Config{}, err
	}
	var cfg Config
	dec := yaml.NewDecoder(bytes.NewReader(data))
	dec.KnownFields(true)
	if err := dec.Decode(&cfg); err != nil {
		if errors.Is(err, io.EOF) {
			err = errors.New("the file holds no settings")
		}
		return Config{}, fmt.Errorf("%s: %w", path, err)
	}
	var next yaml.Node
	if err := dec.Decode(&next); !errors.Is(err, io.EOF) {
		return Config{}, fmt.Errorf("%s: line %d: a second YAML document; pwe reads one configuration a file", path, next.Line)
	}
	var doc yaml.Node
	if err := yaml.Unmarshal(data, &doc); err == nil && len(doc.Content) > 0 {
		err = wholeNumbers(doc.Content[0], reflect.TypeFor[Config](), "")
		if err != nil {
			return Config{}, fmt.Errorf("%s: %w", path, err)
		}
	}
	settings, err := stageSettings(data)
	if err == nil {
		err = checkZeros(settings)
	}
	if err != nil {
		return Config{}, fmt.Errorf("%s: %w", path, err)
	}
	for _, st := range settings {
		if st.key == "seed" {
			if cfg.seeded == nil {
				cfg.seeded = make(map[string]bool)
			}
			cfg.seeded[st.stage] = true
		}
	}
	cfg.file = path
	base := filepath.Dir(path)
	rel := func(p string) string {
		if p == "" || p == "-" || filepath.IsAbs(p) || strings.HasPrefix(p, "builtin:") {
			return p
		}
		return filepath.Join(base, p)
	}
	if cfg.Input != nil {
		for i, p := range cfg.Input.Paths {
			cfg.Input.Paths[i] = rel(p)
		}
	}
	if cfg.MovieLens != nil {
		cfg.MovieLens.Ratings, cfg.MovieLens.Movies = rel(cfg.MovieLens.Ratings), rel(cfg.MovieLens.Movies)
	}
	cfg.Output = rel(cfg.Output)
	if output != "" {
		cfg.Output = output // a flag's path, relative to the working directory
	}
	cfg.TempDir = rel(cfg.TempDir)
	cfg.Summarize.Pairs = rel(cfg.Summarize.Pairs)
	cfg.Tokenize.Tokenizer.StopwordsFile = rel(cfg.Tokenize.Tokenizer.StopwordsFile)
	cfg.Fit.InitFrom = rel(cfg.Fit.InitFrom)
	if f := cfg.Fit.SaveDraws; f != "all" && f != "none" {
		cfg.Fit.SaveDraws = rel(f)
	}
	if err := cfg.Validate(); err != nil {
		return Config{}, fmt.Errorf("%s: %w", path, err)
	}
	return cfg, nil
}

// absolute returns c with its paths absolute and clean, so that a run
// started from another directory, or given the same output directory
// spelled another way (out, ./out, /data/out), records the same settings
// and finds its stages up to date.
func (c Config) absolute() (Config, error) {
	var err error
	abs := func(p *string) {
		if *p == "" || *p == "-" || strings.HasPrefix(*p, "builtin:") || err != nil {
			return
		}
		*p, err = filepath.Abs(*p)
	}
	abs(&c.Output)
	abs(&c.TempDir)
	abs(&c.file)
	if c.Input != nil {
		in := *c.Input
		in.Paths = slices.Clone(in.Paths)
		for i := range in.Paths {
			abs(&in.Paths[i])
		}
		c.Input = &in
	}
	if c.MovieLens != nil {
		ml := *c.MovieLens
		abs(&ml.Ratings)
		abs(&ml.Movies)
		c.MovieLens = &ml
	}
	abs(&c.Summarize.Pairs)
	abs(&c.Tokenize.Tokenizer.StopwordsFile)
	abs(&c.Fit.InitFrom)
	if f := c.Fit.SaveDraws; f != "all" && f != "none" {
		abs(&c.Fit.SaveDraws)
	}
	return c, err
}

// wholeNumbers refuses a fraction given for an integer setting, which the
// YAML decoder would cut to its whole part (dim: 2.5 ran with 2, window:
// 0.4 with the default, as 0). n is the node decoded into a t.
func wholeNumbers(n *yaml.Node, t reflect.Type, name string) error {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	switch {
	case n.Kind == yaml.MappingNode && t.Kind() == reflect.Struct:
		for i := 0; i+1 < len(n.Content); i += 2 {
			key := n.Content[i].Value
			for _, f := range reflect.VisibleFields(t) {
				if tag, _, _ := strings.Cut(f.Tag.Get("yaml"), ","); tag == key && f.IsExported() {
					if err := wholeNumbers(n.Content[i+1], f.Type, key); err != nil {
						return err
					}
				}
			}
		}
	case n.Kind == yaml.SequenceNode && (t.Kind() == reflect.Slice || t.Kind() == reflect.Array):
		for _, c := range n.Content {
			if err := wholeNumbers(c, t.Elem(), name); err != nil {
				return err
			}
		}
	case n.Kind == yaml.ScalarNode && n.Tag == "!!float":
		switch t.Kind() {
		case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
			reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
			if v, err := strconv.ParseFloat(n.Value, 64); err != nil || v != math.Trunc(v) {
				return fmt.Errorf("line %d: %s %s: want a whole number", n.Line, name, n.Value)
			}
		}
	}
	return nil
}

// setting is one key: value of a stage's section of a configuration file.
type setting struct {
	stage, key string
	val        *yaml.Node
}

// stageSettings lists the settings of every section of a configuration
// file that decoded.
func stageSettings(data []byte) ([]setting, error) {
	var doc yaml.Node
	if err := yaml.Unmarshal(data, &doc); err != nil || len(doc.Content) == 0 {
		return nil, err
	}
	var out []setting
	top := doc.Content[0]
	for i := 0; i+1 < len(top.Content); i += 2 {
		stage, section := top.Content[i].Value, top.Content[i+1]
		for j := 0; j+1 < len(section.Content); j += 2 {
			out = append(out, setting{stage, section.Content[j].Value, section.Content[j+1]})
		}
	}
	return out, nil
}

// checkZeros refuses the settings of stages.ZeroIsUnset given as 0: the
// stage would take them for unset and run with the default.
func checkZeros(settings []setting) error {
	for _, st := range settings {
		if v, err := strconv.ParseFloat(st.val.Value, 64); err == nil && v == 0 && slices.Contains(stages.ZeroIsUnset[st.stage], st.key) {
			return fmt.Errorf("line %d: %s: %s 0: pwe reads 0 as not set and would use the default; give the value you mean",
				st.val.Line, st.stage, st.key)
		}
	}
	return nil
}

// Validate reports a configuration that cannot run.
func (c Config) Validate() error {
	switch {
	case c.Threads < 0:
		return fmt.Errorf("threads %d: want 0 (every core) or more", c.Threads)
	case c.Output == "":
		return errors.New("no output directory: set output, or pass -o")
	case (c.Input == nil) == (c.MovieLens == nil):
		return errors.New("name exactly one input: input (a text corpus) or movielens (rating files)")
	case c.Input != nil && len(c.Input.Paths) == 0:
		return errors.New("input: no paths")
	case c.MovieLens != nil && c.MovieLens.Ratings == "":
		return errors.New("movielens: no ratings file")
	case (c.Summarize.Wants() || c.Report != "") && c.SkipFit:
		return errors.New("summarize and report need the fit: remove skip_fit")
	case c.Summarize.Wants() && (c.Fit.Method == "map" || c.Fit.SaveDraws == "none"):
		return errors.New("summarize needs posterior draws: use fit method gibbs and keep save_draws")
	}
	return c.validateStages()
}

// validateStages checks each stage's settings as the stage would when it
// starts, so that a bad one in a late stage is found before the early
// ones have run for hours. The files are named as in plan; none is read.
func (c Config) validateStages() error {
	var errs []error
	check := func(stage string, err error) {
		if err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", stage, err))
		}
	}
	vocab, counts := filepath.Join(c.Output, VocabFile), filepath.Join(c.Output, CountsFile)
	if c.MovieLens != nil {
		ml := *c.MovieLens
		ml.Output, ml.Memory = c.staging("movielens"), int64(c.Memory)
		check("movielens", ml.Validate())
	} else {
		tk := c.Tokenize
		tk.Input, tk.Output, tk.Memory = *c.Input, filepath.Join(c.staging("tokenize"), VocabFile), int64(c.Memory)
		check("tokenize", tk.WithDefaults().Validate())
		ct := c.Count
		ct.Tokens, ct.Vocab, ct.Output, ct.Memory = filepath.Join(c.Output, TokensFile), vocab, filepath.Join(c.staging("count"), CountsFile), int64(c.Memory)
		check("count", ct.WithDefaults().Validate())
	}
	if !c.SkipFit {
		ft := c.Fit
		ft.Counts, ft.Vocab, ft.Output, ft.Memory = counts, vocab, c.staging("fit"), int64(c.Memory)
		check("fit", ft.WithDefaults().Validate())
		if c.Summarize.Wants() {
			sm := c.Summarize
			sm.Fit, sm.Output = filepath.Join(c.Output, FitDir), c.staging("summarize")
			check("summarize", sm.Validate())
		}
	}
	return errors.Join(errs...)
}

// checkFiles refuses files that the settings name and that are missing:
// they are read only when their stage runs, perhaps after hours of the
// stages before, so Run looks for them before the first.
func (c Config) checkFiles() error {
	var errs []error
	exists := func(stage, key, path string) {
		if path == "" {
			return
		}
		if _, err := os.Stat(path); err != nil {
			errs = append(errs, fmt.Errorf("%s: %s: %w", stage, key, err))
		}
	}
	if c.MovieLens == nil {
		exists("tokenize", "tokenizer.stopwords_file", c.Tokenize.Tokenizer.StopwordsFile)
	}
	if !c.SkipFit {
		if sd := c.Fit.SaveDraws; sd != "" && sd != "all" && sd != "none" {
			exists("fit", "save_draws", sd)
		}
		if c.Summarize.Wants() {
			exists("summarize", "pairs", c.Summarize.Pairs)
		}
	}
	return errors.Join(errs...)
}
