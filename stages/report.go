package stages

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"html/template"
	"image/color"
	"io"
	"math"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"sync"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/plotutil"
	"gonum.org/v1/plot/vg"

	"github.com/pwe-project/pwe/formats"
	"github.com/pwe-project/pwe/formats/input"
	"github.com/pwe-project/pwe/internal/atomicfile"
	"github.com/pwe-project/pwe/posterior"
)

// ReportFile is the report's default name.
const ReportFile = "report.html"

// ReportConfig configures pwe report: one self-contained HTML page about
// a fit.
type ReportConfig struct {
	// Fit is the fit stage's output directory; the summarize stage's files
	// in it are used when present, and manifest.json in its parent
	// directory (the layout of pwe run) supplies the run's settings when
	// that run made the fit.
	Fit string `json:"-" yaml:"-"`
	// Pairs names a pairs file (as summarize reads) whose similarity
	// densities are drawn; by default the pairs of similarity.parquet.
	Pairs string `json:"pairs,omitempty" yaml:"pairs"`
	// MaxPairs bounds the density plots (default 12).
	MaxPairs int `json:"max_pairs" yaml:"max_pairs"`
	// Output is the HTML file (default FIT/report.html); "-" writes the
	// page to Stdout (os.Stdout if nil) once it is whole.
	Output string    `json:"-" yaml:"-"`
	Stdout io.Writer `json:"-" yaml:"-"`
}

// WithDefaults fills unset fields.
func (c ReportConfig) WithDefaults() ReportConfig {
	if c.MaxPairs == 0 {
		c.MaxPairs = 12
	}
	if c.Output == "" && c.Fit != "" {
		c.Output = filepath.Join(c.Fit, ReportFile)
	}
	return c
}

// Validate reports settings that cannot work.
func (c ReportConfig) Validate() error {
	c = c.WithDefaults()
	switch {
	case c.Fit == "":
		return errors.New("no fit directory: name the directory written by pwe fit")
	case c.MaxPairs < 0:
		return fmt.Errorf("max-pairs %d is negative", c.MaxPairs)
	}
	return nil
}

// ReportStats describe a report.
type ReportStats struct {
	Plots  int `json:"plots"`
	Tables int `json:"tables"`
}

// reportPage is what the template shows.
type reportPage struct {
	Fit         string
	Notes       []string
	Diagnostics []figure
	Densities   []figure
	Similarity  []formats.SimilarityRow
	Neighbours  []neighbourTable
	Settings    []setting
}

type figure struct {
	ID, Title, Caption string
	Src                template.URL
}

type neighbourTable struct {
	Query string
	Top   int32
	Rows  []formats.NeighbourRow
}

type setting struct {
	Source, JSON string
}

// maxNeighbourRows bounds each query's table.
const maxNeighbourRows = 25

// Report writes the report.
func Report(ctx context.Context, cfg ReportConfig) (ReportStats, error) {
	cfg = cfg.WithDefaults()
	if err := cfg.Validate(); err != nil {
		return ReportStats{}, err
	}
	page := reportPage{Fit: cfg.Fit}
	var st ReportStats
	exists := func(name string) bool {
		_, err := os.Stat(filepath.Join(cfg.Fit, name))
		return err == nil
	}
	if _, err := os.Stat(filepath.Join(cfg.Fit, MapFile)); err != nil {
		return st, fmt.Errorf("%s is not a fit directory: %w", cfg.Fit, err)
	}
	var inputs []string
	for _, name := range []string{MapFile, SummaryFile, SampleStatsFile, SimilarityFile, NeighboursFile, DrawsFile} {
		inputs = append(inputs, filepath.Join(cfg.Fit, name))
	}
	if err := checkOutputs(append(inputs, cfg.Pairs, runManifest(cfg.Fit)), cfg.Output); err != nil {
		return st, err
	}

	if exists(SampleStatsFile) {
		fig, err := traceFigure(filepath.Join(cfg.Fit, SampleStatsFile))
		if err != nil {
			return st, err
		}
		page.Diagnostics = append(page.Diagnostics, fig)
	} else {
		page.Notes = append(page.Notes, "No sample_stats.parquet: a MAP-only fit has no traces.")
	}
	if exists(SummaryFile) {
		figs, err := diagnosticFigures(filepath.Join(cfg.Fit, SummaryFile))
		if err != nil {
			return st, err
		}
		page.Diagnostics = append(page.Diagnostics, figs...)
	}
	vectors := "rho"
	var pairs [][2]string
	var lines []int // of the pairs in the pairs file
	if exists(SimilarityFile) {
		rows, meta, err := formats.ReadAll[formats.SimilarityRow](filepath.Join(cfg.Fit, SimilarityFile), formats.SchemaSimilarity)
		if err != nil {
			return st, err
		}
		page.Similarity = rows
		st.Tables++
		if raw, ok := meta.Config.(json.RawMessage); ok {
			var sc SummarizeConfig
			if json.Unmarshal(raw, &sc) == nil && sc.Vectors != "" {
				vectors = sc.Vectors
			}
		}
		for _, r := range rows {
			if r.Quantity == formats.QuantityCosine {
				pairs = append(pairs, [2]string{r.TokenA, r.TokenB})
			}
		}
	}
	if cfg.Pairs != "" {
		var err error
		if pairs, lines, err = readPairNames(cfg.Pairs); err != nil {
			return st, err
		}
	}
	if len(pairs) > cfg.MaxPairs {
		page.Notes = append(page.Notes, fmt.Sprintf("Densities are drawn for the first %d of %d pairs.", cfg.MaxPairs, len(pairs)))
		pairs = pairs[:cfg.MaxPairs]
	}
	if len(pairs) > 0 {
		if !exists(DrawsFile) {
			page.Notes = append(page.Notes, "No draws.parquet: the similarity densities need the draws.")
		} else {
			figs, err := densityFigures(ctx, filepath.Join(cfg.Fit, DrawsFile), pairs, vectors, cfg.Pairs, lines)
			if err != nil {
				return st, err
			}
			page.Densities = figs
		}
	}
	if exists(NeighboursFile) {
		rows, _, err := formats.ReadAll[formats.NeighbourRow](filepath.Join(cfg.Fit, NeighboursFile), formats.SchemaNeighbours)
		if err != nil {
			return st, err
		}
		for _, r := range rows {
			n := len(page.Neighbours)
			if n == 0 || page.Neighbours[n-1].Query != r.Query {
				page.Neighbours = append(page.Neighbours, neighbourTable{Query: r.Query, Top: r.Top})
				n++
			}
			if t := &page.Neighbours[n-1]; len(t.Rows) < maxNeighbourRows {
				t.Rows = append(t.Rows, r)
			}
		}
		st.Tables += len(page.Neighbours)
	}
	settings, err := runSettings(cfg.Fit)
	if err != nil {
		return st, err
	}
	page.Settings = settings
	st.Plots = len(page.Diagnostics) + len(page.Densities)

	if cfg.Output == StdioPath {
		var buf bytes.Buffer
		if err := reportTemplate().Execute(&buf, page); err != nil {
			return st, err
		}
		if _, err := buf.WriteTo(stdoutOr(cfg.Stdout)); err != nil {
			return st, fmt.Errorf("standard output: %w", err)
		}
		return st, nil
	}
	f, err := atomicfile.Create(cfg.Output)
	if err != nil {
		return st, err
	}
	defer f.Abort()
	if err := reportTemplate().Execute(f, page); err != nil {
		return st, fmt.Errorf("%s: %w", cfg.Output, err)
	}
	return st, f.Commit()
}

// pngFigure renders p as an embedded PNG.
func pngFigure(p *plot.Plot, id, title, caption string) (figure, error) {
	wt, err := p.WriterTo(7*vg.Inch, 3.5*vg.Inch, "png")
	if err != nil {
		return figure{}, fmt.Errorf("report: plot %s: %w", id, err)
	}
	var buf bytes.Buffer
	if _, err := wt.WriteTo(&buf); err != nil {
		return figure{}, fmt.Errorf("report: plot %s: %w", id, err)
	}
	src := "data:image/png;base64," + base64.StdEncoding.EncodeToString(buf.Bytes())
	return figure{ID: id, Title: title, Caption: caption, Src: template.URL(src)}, nil
}

// traceFigure plots the log posterior of every draw, one line per chain.
func traceFigure(path string) (figure, error) {
	rows, _, err := formats.ReadAll[formats.SampleStatsRow](path, formats.SchemaSampleStats)
	if err != nil {
		return figure{}, err
	}
	byChain := map[int16]plotter.XYs{}
	var chains []int16
	for _, r := range rows {
		if _, ok := byChain[r.Chain]; !ok {
			chains = append(chains, r.Chain)
		}
		if !math.IsInf(r.LogPosterior, 0) && !math.IsNaN(r.LogPosterior) {
			byChain[r.Chain] = append(byChain[r.Chain], plotter.XY{X: float64(r.Draw), Y: r.LogPosterior})
		}
	}
	p := plot.New()
	p.X.Label.Text = "draw"
	p.Y.Label.Text = "log posterior"
	for k, c := range chains {
		l, err := plotter.NewLine(byChain[c])
		if err != nil {
			return figure{}, fmt.Errorf("%s: chain %d: %w", path, c, err)
		}
		l.Color = plotutil.Color(k)
		p.Add(l)
		p.Legend.Add(fmt.Sprintf("chain %d", c), l)
	}
	p.Legend.Top = true
	return pngFigure(p, "trace", "Log-posterior traces",
		"Log posterior of every kept draw, one line per chain. Chains that settle at different levels have not mixed.")
}

// preciseTicks labels gonum's default ticks with enough digits to tell
// R-hat values such as 1.005 and 1.01 apart.
type preciseTicks struct{}

func (preciseTicks) Ticks(lo, hi float64) []plot.Tick {
	ticks := plot.DefaultTicks{}.Ticks(lo, hi)
	for i := range ticks {
		if ticks[i].Label != "" {
			ticks[i].Label = strconv.FormatFloat(ticks[i].Value, 'g', 6, 64)
		}
	}
	return ticks
}

// diagnosticFigures draws histograms of the R-hat and bulk ESS of every
// sampled coordinate. summary.parquet is streamed; two float32 per
// coordinate are kept.
func diagnosticFigures(path string) ([]figure, error) {
	r, err := formats.Open[formats.SummaryRow](path, formats.SchemaSummary)
	if err != nil {
		return nil, err
	}
	defer r.Close()
	// The reference lines are the fit's rule (convergence): R-hat above
	// 1.01, or a bulk ESS below 100 per chain, the chains the summary's
	// settings record (4 if they do not).
	fit := FitConfig{Chains: 4}
	if raw, ok := r.Meta().Config.(json.RawMessage); ok {
		_ = json.Unmarshal(raw, &fit)
	}
	minESS := float64(essPerChainMinimum * max(fit.Chains, 1))
	var rhat, ess []float32
	undefined := 0
	buf := make([]formats.SummaryRow, 4096)
	for {
		n, err := r.Read(buf)
		for _, row := range buf[:n] {
			if math.IsNaN(row.Rhat) || math.IsNaN(row.ESSBulk) {
				undefined++
				continue
			}
			rhat, ess = append(rhat, float32(row.Rhat)), append(ess, float32(row.ESSBulk))
		}
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, err
		}
	}
	if len(rhat) == 0 {
		return nil, nil
	}
	note := ""
	if undefined > 0 {
		note = fmt.Sprintf(" %d coordinates with undefined diagnostics (constant draws) are left out.", undefined)
	}
	var figs []figure
	for _, h := range []struct {
		id, title, label, caption string
		vals                      []float32
		line                      float64
		bad                       func(float64) bool
	}{
		{"rhat", "R-hat of every coordinate", "rank-normalised split R-hat",
			fmt.Sprintf("The dashed line marks %g; coordinates to its right have not converged.", rhatThreshold), rhat, rhatThreshold, func(x float64) bool { return x > rhatThreshold }},
		{"ess", "Bulk ESS of every coordinate", "bulk effective sample size",
			fmt.Sprintf("The dashed line marks %.0f (%d per chain); coordinates to its left have too few effective draws.", minESS, essPerChainMinimum), ess, minESS, func(x float64) bool { return x < minESS }},
	} {
		vals := make(plotter.Values, len(h.vals))
		bad := 0
		for i, x := range h.vals {
			vals[i] = float64(x)
			if h.bad(vals[i]) {
				bad++
			}
		}
		hist, err := plotter.NewHist(vals, 40)
		if err != nil {
			return nil, fmt.Errorf("report: %s: %w", h.id, err)
		}
		top := 0.0
		for _, b := range hist.Bins {
			top = max(top, b.Weight)
		}
		mark, err := plotter.NewLine(plotter.XYs{{X: h.line, Y: 0}, {X: h.line, Y: top}})
		if err != nil {
			return nil, err
		}
		mark.Color = color.RGBA{R: 200, A: 255}
		mark.Dashes = []vg.Length{vg.Points(5), vg.Points(3)}
		mark.Width = vg.Points(1.5)
		p := plot.New()
		p.X.Label.Text = h.label
		p.X.Tick.Marker = preciseTicks{}
		p.Y.Label.Text = "coordinates"
		p.Add(hist, mark)
		caption := fmt.Sprintf("%s %d of %d coordinates are on the wrong side.%s", h.caption, bad, len(vals), note)
		fig, err := pngFigure(p, h.id, h.title, caption)
		if err != nil {
			return nil, err
		}
		figs = append(figs, fig)
	}
	return figs, nil
}

// densityFigures recomputes the cosine of every pair in every draw and
// draws one kernel density per chain. The pairs come from pairsFile, at
// lines, or from similarity.parquet where pairsFile is "".
func densityFigures(ctx context.Context, drawsPath string, names [][2]string, vectors, pairsFile string, lines []int) ([]figure, error) {
	kind, err := posterior.ParseVectorKind(vectors)
	if err != nil {
		return nil, err
	}
	ds, err := openDraws(drawsPath)
	if err != nil {
		return nil, err
	}
	defer ds.Close()
	index := ds.tokenIndex()
	pairs := make([]posterior.Pair, len(names))
	for k, pr := range names {
		a, okA := index[pr[0]]
		b, okB := index[pr[1]]
		if !okA || !okB {
			src := fmt.Sprintf("%s: pair %d", SimilarityFile, k+1)
			if pairsFile != "" {
				src = fmt.Sprintf("%s:%d: pair", pairsFile, lines[k])
			}
			missing := pr[0]
			if okA {
				missing = pr[1]
			}
			return nil, fmt.Errorf("%s (%q, %q) is not among the tokens of %s%s", src, pr[0], pr[1], drawsPath, tokenHint(missing, index))
		}
		pairs[k] = posterior.Pair{A: a, B: b}
	}
	// Only the cosines are drawn: keep those of each draw (vals[g*len(pairs)+k]).
	scratch := make([]float64, posterior.PairQuantities*len(pairs))
	var vals []float64
	var chainOf []int
	for ds.Next() {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		posterior.PairValues(scratch, ds.Params(), pairs, kind)
		for k := range pairs {
			vals = append(vals, scratch[posterior.PairQuantities*k])
		}
		chainOf = append(chainOf, ds.Chain())
	}
	if err := ds.Err(); err != nil {
		return nil, err
	}
	var figs []figure
	for k, pr := range names {
		byChain := map[int][]float64{}
		var all []float64
		for g, c := range chainOf {
			x := vals[g*len(pairs)+k]
			byChain[c] = append(byChain[c], x)
			all = append(all, x)
		}
		lo, hi := minMax(all)
		pad := max(0.05*(hi-lo), 1e-3)
		p := plot.New()
		p.X.Label.Text = fmt.Sprintf("cosine similarity (%s vectors)", kind)
		p.Y.Label.Text = "density"
		chains := make([]int, 0, len(byChain))
		for c := range byChain {
			chains = append(chains, c)
		}
		sort.Ints(chains)
		for i, c := range chains {
			l, err := plotter.NewLine(kernelDensity(byChain[c], lo-pad, hi+pad, 200))
			if err != nil {
				return nil, err
			}
			l.Color = plotutil.Color(i)
			p.Add(l)
			p.Legend.Add(fmt.Sprintf("chain %d", c), l)
		}
		p.Legend.Top = true
		id := fmt.Sprintf("density-%d", k)
		fig, err := pngFigure(p, id, fmt.Sprintf("%s / %s", pr[0], pr[1]),
			fmt.Sprintf("Posterior density of the cosine similarity, per chain (%d draws in all); chains that disagree have not mixed.", len(all)))
		if err != nil {
			return nil, err
		}
		figs = append(figs, fig)
	}
	return figs, nil
}

func minMax(x []float64) (lo, hi float64) {
	lo, hi = math.Inf(1), math.Inf(-1)
	for _, v := range x {
		lo, hi = min(lo, v), max(hi, v)
	}
	return lo, hi
}

// kernelDensity evaluates a Gaussian kernel density estimate of x on n
// points of [lo, hi], with Silverman's rule-of-thumb bandwidth
// 0.9 min(sd, IQR/1.34) len(x)^(-1/5), floored so constant draws still
// give a visible spike.
func kernelDensity(x []float64, lo, hi float64, n int) plotter.XYs {
	s := append([]float64(nil), x...)
	sort.Float64s(s)
	var mean, ss float64
	for _, v := range s {
		mean += v
	}
	mean /= float64(len(s))
	for _, v := range s {
		ss += (v - mean) * (v - mean)
	}
	sd := math.Sqrt(ss / float64(max(1, len(s)-1)))
	iqr := s[len(s)*3/4] - s[len(s)/4]
	spread := sd
	if iqr > 0 {
		spread = min(sd, iqr/1.34)
	}
	h := max(0.9*spread*math.Pow(float64(len(s)), -0.2), (hi-lo)/float64(n))
	out := make(plotter.XYs, n)
	norm := 1 / (float64(len(s)) * h * math.Sqrt(2*math.Pi))
	for i := range out {
		t := lo + (hi-lo)*float64(i)/float64(n-1)
		var d float64
		for _, v := range s {
			z := (t - v) / h
			d += math.Exp(-z * z / 2)
		}
		out[i] = plotter.XY{X: t, Y: d * norm}
	}
	return out
}

// runSettings returns the settings of every stage from the manifest of the
// pwe run that made the fit (manifestSettings), or else the pwe.config of
// each file of the fit directory.
func runSettings(fit string) ([]setting, error) {
	if out := manifestSettings(fit); out != nil {
		return out, nil
	}
	var out []setting
	for _, f := range []struct {
		name string
		meta func(string) (formats.Meta, error)
	}{
		{MapFile, fileMeta[formats.VectorRow](formats.SchemaMap)},
		{SimilarityFile, fileMeta[formats.SimilarityRow](formats.SchemaSimilarity)},
		{NeighboursFile, fileMeta[formats.NeighbourRow](formats.SchemaNeighbours)},
	} {
		path := filepath.Join(fit, f.name)
		if _, err := os.Stat(path); err != nil {
			continue
		}
		meta, err := f.meta(path)
		if err != nil {
			return nil, err
		}
		raw, _ := meta.Config.(json.RawMessage)
		var pretty bytes.Buffer
		if err := json.Indent(&pretty, raw, "", "  "); err != nil {
			pretty.Write(raw)
		}
		out = append(out, setting{Source: fmt.Sprintf("%s (pwe.config, pwe %s)", f.name, meta.Version), JSON: pretty.String()})
	}
	return out, nil
}

// runManifest is where pwe run keeps the manifest of the run a fit
// directory belongs to: beside it.
func runManifest(fit string) string {
	return filepath.Join(filepath.Dir(filepath.Clean(fit)), "manifest.json")
}

// manifestSettings returns the settings of every stage of the run whose
// manifest lies beside fit, or nil unless that manifest is pwe run's and
// records fit's map.parquet, as it is now, as an output of its fit stage:
// a fit made later into a run's directory by pwe fit, or a manifest.json
// of another program, says nothing of this fit.
func manifestSettings(fit string) []setting {
	data, err := os.ReadFile(runManifest(fit))
	if err != nil {
		return nil
	}
	var m struct {
		Stages []struct {
			Name     string              `json:"name"`
			Settings json.RawMessage     `json:"settings"`
			Seed     uint64              `json:"seed"`
			Seconds  float64             `json:"seconds"`
			Version  string              `json:"pwe_version"`
			Outputs  []input.Fingerprint `json:"outputs"`
		} `json:"stages"`
	}
	if json.Unmarshal(data, &m) != nil {
		return nil
	}
	mapPath := filepath.Join(fit, MapFile)
	fi, err := os.Stat(mapPath)
	if err != nil {
		return nil
	}
	ours := false
	for _, st := range m.Stages {
		for _, o := range st.Outputs {
			if st.Name != "fit" || filepath.Base(o.Path) != MapFile || o.Size != fi.Size() {
				continue
			}
			if oi, err := os.Stat(o.Path); err == nil && os.SameFile(fi, oi) {
				fp, err := input.FingerprintFile(mapPath)
				ours = ours || err == nil && fp.SHA256 == o.SHA256
			}
		}
	}
	if !ours {
		return nil
	}
	var out []setting
	for _, s := range m.Stages {
		var pretty bytes.Buffer
		if err := json.Indent(&pretty, s.Settings, "", "  "); err != nil {
			pretty.Write(s.Settings)
		}
		out = append(out, setting{
			Source: fmt.Sprintf("%s stage (manifest.json; seed %d, %.2fs, pwe %s)", s.Name, s.Seed, s.Seconds, s.Version),
			JSON:   pretty.String(),
		})
	}
	return out
}

// fileMeta returns a function reading the metadata of a file of rows T.
func fileMeta[T any](schema string) func(string) (formats.Meta, error) {
	return func(path string) (formats.Meta, error) {
		r, err := formats.Open[T](path, schema)
		if err != nil {
			return formats.Meta{}, err
		}
		defer r.Close()
		return r.Meta(), nil
	}
}

// reportTemplate is parsed on first use: at init it took 0.5 ms of every
// pwe command's start.
var reportTemplate = sync.OnceValue(func() *template.Template {
	return template.Must(template.New("report").Funcs(template.FuncMap{
		"num": func(x float64) string {
			if math.IsNaN(x) {
				return "–"
			}
			return fmt.Sprintf("%.4g", x)
		},
		"pct": func(x float64) string { return fmt.Sprintf("%.0f%%", 100*x) },
	}).Parse(`<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8"/>
<title>pwe report: {{.Fit}}</title>
<style>
body { font-family: sans-serif; max-width: 60em; margin: 2em auto; color: #222; }
figure { margin: 1.5em 0; }
figcaption { font-size: 0.9em; color: #555; }
img { max-width: 100%; }
table { border-collapse: collapse; margin: 1em 0; font-size: 0.9em; }
th, td { border-bottom: 1px solid #ddd; padding: 0.2em 0.6em; text-align: right; }
th:first-child, td:first-child, td.tok { text-align: left; }
pre { background: #f6f6f6; padding: 0.8em; overflow-x: auto; }
</style>
</head>
<body>
<h1>pwe report</h1>
<p>Fit directory: <code>{{.Fit}}</code></p>
{{range .Notes}}<p class="note">{{.}}</p>
{{end}}
<h2>Convergence</h2>
{{range .Diagnostics}}<figure id="{{.ID}}">
<h3>{{.Title}}</h3>
<img data-plot="{{.ID}}" alt="{{.Title}}" src="{{.Src}}"/>
<figcaption>{{.Caption}}</figcaption>
</figure>
{{end}}
{{if .Similarity}}<h2>Similarities</h2>
<table id="similarity">
<tr><th>token a</th><th>token b</th><th>quantity</th><th>mean</th><th>median</th><th>q5</th><th>q95</th><th>R-hat</th><th>bulk ESS</th></tr>
{{range .Similarity}}<tr><td class="tok">{{.TokenA}}</td><td class="tok">{{.TokenB}}</td><td class="tok">{{.Quantity}}</td><td>{{num .Mean}}</td><td>{{num .Median}}</td><td>{{num .Q5}}</td><td>{{num .Q95}}</td><td>{{num .Rhat}}</td><td>{{num .ESSBulk}}</td></tr>
{{end}}</table>
<p>R-hat and ESS are undefined (–) for a quantity that is the same in every draw, such as the cosine of two anchors' context vectors.</p>
{{end}}
{{range .Densities}}<figure id="{{.ID}}">
<h3>{{.Title}}</h3>
<img data-plot="{{.ID}}" alt="{{.Title}}" src="{{.Src}}"/>
<figcaption>{{.Caption}}</figcaption>
</figure>
{{end}}
{{if .Neighbours}}<h2>Nearest neighbours</h2>
{{range .Neighbours}}<h3>{{.Query}}</h3>
<table class="neighbours" data-query="{{.Query}}">
<tr><th>neighbour</th><th>P(top {{.Top}})</th><th>median rank</th><th>rank 90%</th><th>median cosine</th><th>cosine 90%</th><th>R-hat</th></tr>
{{range .Rows}}<tr><td class="tok">{{.Neighbour}}</td><td>{{pct .PTop}}</td><td>{{num .RankMedian}}</td><td>{{num .RankQ5}}–{{num .RankQ95}}</td><td>{{num .SimMedian}}</td><td>{{num .SimQ5}}–{{num .SimQ95}}</td><td>{{num .SimRhat}}</td></tr>
{{end}}</table>
{{end}}{{end}}
<h2>Settings</h2>
{{range .Settings}}<h3>{{.Source}}</h3>
<pre class="settings">{{.JSON}}</pre>
{{end}}
</body>
</html>
`))
})
