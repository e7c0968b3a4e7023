package stages

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"encoding/xml"
	"fmt"
	"image/png"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/pwe-project/pwe/formats/input"
)

// htmlDoc is what the test reads back from a report.
type htmlDoc struct {
	imgs     map[string]string // data-plot -> src
	queries  []string          // data-query of the neighbour tables
	settings []string          // text of the settings blocks
}

// parseReport walks the report with encoding/xml in its lenient HTML mode.
func parseReport(t *testing.T, path string) htmlDoc {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	dec := xml.NewDecoder(bytes.NewReader(data))
	dec.Strict, dec.AutoClose, dec.Entity = false, xml.HTMLAutoClose, xml.HTMLEntity
	doc := htmlDoc{imgs: map[string]string{}}
	inSettings := false
	for {
		tok, err := dec.Token()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		switch e := tok.(type) {
		case xml.StartElement:
			attr := map[string]string{}
			for _, a := range e.Attr {
				attr[a.Name.Local] = a.Value
			}
			switch {
			case e.Name.Local == "img" && attr["data-plot"] != "":
				doc.imgs[attr["data-plot"]] = attr["src"]
			case e.Name.Local == "table" && attr["data-query"] != "":
				doc.queries = append(doc.queries, attr["data-query"])
			case e.Name.Local == "pre" && attr["class"] == "settings":
				inSettings = true
				doc.settings = append(doc.settings, "")
			}
		case xml.CharData:
			if inSettings {
				doc.settings[len(doc.settings)-1] += string(e)
			}
		case xml.EndElement:
			if e.Name.Local == "pre" {
				inSettings = false
			}
		}
	}
	return doc
}

// checkPNG decodes a data URI and checks that it is a plot: a sensible
// size, and more than a blank canvas.
func checkPNG(t *testing.T, id, src string) {
	t.Helper()
	const prefix = "data:image/png;base64,"
	if !strings.HasPrefix(src, prefix) {
		t.Errorf("plot %s: src starts %.40q, want a PNG data URI", id, src)
		return
	}
	raw, err := base64.StdEncoding.DecodeString(src[len(prefix):])
	if err != nil {
		t.Errorf("plot %s: %v", id, err)
		return
	}
	img, err := png.Decode(bytes.NewReader(raw))
	if err != nil {
		t.Errorf("plot %s: %v", id, err)
		return
	}
	b := img.Bounds()
	if b.Dx() < 400 || b.Dy() < 200 || b.Dx() > 4000 || b.Dy() > 4000 {
		t.Errorf("plot %s is %dx%d pixels", id, b.Dx(), b.Dy())
	}
	inked := 0
	for y := b.Min.Y; y < b.Max.Y; y++ {
		for x := b.Min.X; x < b.Max.X; x++ {
			if r, g, bl, _ := img.At(x, y).RGBA(); r < 0xe000 || g < 0xe000 || bl < 0xe000 {
				inked++
			}
		}
	}
	// Axes, labels and data: well over 1% of the pixels.
	if frac := float64(inked) / float64(b.Dx()*b.Dy()); frac < 0.01 {
		t.Errorf("plot %s: only %.2f%% of the pixels are drawn", id, 100*frac)
	}
}

// TestReport renders the report of a small fit with similarities and
// neighbours, and checks every plot, table and the settings.
func TestReport(t *testing.T) {
	fit := fitFixture(t)
	nd := readNaive(t, fit)
	queries := []string{nd.tokens[4], nd.tokens[9]}
	if _, err := Summarize(context.Background(), SummarizeConfig{
		Fit: fit, PairsAllAmong: []string{nd.tokens[0], nd.tokens[1], nd.tokens[10]}, Neighbours: queries, Top: 3,
	}); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(t.TempDir(), "report.html")
	st, err := Report(context.Background(), ReportConfig{Fit: fit, Output: out})
	if err != nil {
		t.Fatal(err)
	}
	doc := parseReport(t, out)
	want := []string{"trace", "rhat", "ess", "density-0", "density-1", "density-2"}
	if len(doc.imgs) != len(want) || st.Plots != len(want) {
		t.Errorf("plots %v (stats %d), want %v", keys(doc.imgs), st.Plots, want)
	}
	for _, id := range want {
		src, ok := doc.imgs[id]
		if !ok {
			t.Errorf("plot %s missing", id)
			continue
		}
		checkPNG(t, id, src)
	}
	if strings.Join(doc.queries, ",") != strings.Join(queries, ",") {
		t.Errorf("neighbour tables for %v, want %v", doc.queries, queries)
	}
	// No manifest: the settings come from the files' pwe.config.
	if len(doc.settings) != 3 || !strings.Contains(doc.settings[0], `"dim": 3`) || !strings.Contains(doc.settings[0], `"seed": 11`) ||
		!strings.Contains(doc.settings[2], `"top": 3`) {
		t.Errorf("settings %q lack the fit's and summarize's settings", doc.settings)
	}

	// The ESS histogram's line is fit's rule for the fit's chains.
	page, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	if want := fmt.Sprintf("marks %d (100 per chain)", 100*fitFixtureChains); !strings.Contains(string(page), want) {
		t.Errorf("the ESS caption does not say %q", want)
	}

	// With a manifest beside the fit directory, as pwe run leaves it: its
	// settings are the run's only if its fit stage wrote this map.parquet.
	mapFP, err := input.FingerprintFile(filepath.Join(fit, MapFile))
	if err != nil {
		t.Fatal(err)
	}
	manifestPath := filepath.Join(filepath.Dir(fit), "manifest.json")
	writeManifest := func(fp input.Fingerprint) {
		t.Helper()
		outs, _ := json.Marshal([]input.Fingerprint{fp})
		manifest := `{"stages": [{"name": "fit", "settings": {"dim": 3, "chains": 2, "prior_sd": 0.75}, "seed": 11, "seconds": 1.5, "pwe_version": "test", "outputs": ` + string(outs) + `}]}`
		if err := os.WriteFile(manifestPath, []byte(manifest), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	writeManifest(mapFP)
	// Densities of the pairs of a file, in place of similarity.parquet's.
	pairs := filepath.Join(t.TempDir(), "pairs.txt")
	os.WriteFile(pairs, []byte(nd.tokens[3]+"\t"+nd.tokens[8]+"\n"), 0o644)
	if _, err := Report(context.Background(), ReportConfig{Fit: fit, Output: out, Pairs: pairs}); err != nil {
		t.Fatal(err)
	}
	doc = parseReport(t, out)
	if len(doc.settings) != 1 || !strings.Contains(doc.settings[0], `"prior_sd": 0.75`) {
		t.Errorf("settings %q, want the manifest's", doc.settings)
	}
	if _, ok := doc.imgs["density-1"]; ok || doc.imgs["density-0"] == "" {
		t.Errorf("plots %v, want one density", keys(doc.imgs))
	}
	checkPNG(t, "density-0", doc.imgs["density-0"])

	// A manifest of another fit, or of another program: the files' settings.
	other := mapFP
	other.SHA256 = strings.Repeat("0", 64)
	for name, write := range map[string]func(){
		"another fit's map": func() { writeManifest(other) },
		"not pwe's":         func() { os.WriteFile(manifestPath, []byte(`{"stages": "none"}`), 0o644) },
	} {
		write()
		if _, err := Report(context.Background(), ReportConfig{Fit: fit, Output: out}); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if doc := parseReport(t, out); len(doc.settings) != 3 || strings.Contains(doc.settings[0], "prior_sd\": 0.75") {
			t.Errorf("%s: settings %q, want the files'", name, doc.settings)
		}
	}

	// Standard output gets the page, whole; no file named "-" appears.
	var stdout bytes.Buffer
	t.Chdir(t.TempDir())
	if _, err := Report(context.Background(), ReportConfig{Fit: fit, Output: StdioPath, Stdout: &stdout}); err != nil {
		t.Fatal(err)
	}
	if !bytes.HasPrefix(stdout.Bytes(), []byte("<!DOCTYPE html>")) || !bytes.HasSuffix(bytes.TrimSpace(stdout.Bytes()), []byte("</html>")) {
		t.Errorf("standard output holds %d bytes, not the page", stdout.Len())
	}
	if _, err := os.Stat(StdioPath); err == nil {
		t.Error("a file named - was written")
	}

	// The report never replaces the files it reads.
	for _, name := range []string{DrawsFile, MapFile, SummaryFile} {
		before, _ := os.ReadFile(filepath.Join(fit, name))
		_, err := Report(context.Background(), ReportConfig{Fit: fit, Output: filepath.Join(fit, name)})
		after, _ := os.ReadFile(filepath.Join(fit, name))
		if err == nil || !bytes.Equal(before, after) {
			t.Errorf("-o %s: %v", name, err)
		}
	}

	os.WriteFile(pairs, []byte("# pairs\n\n"+nd.tokens[3]+"\t"+nd.tokens[8]+"\n"+nd.tokens[3]+"\tzzzunknown\n"), 0o644)
	if _, err := Report(context.Background(), ReportConfig{Fit: fit, Output: out, Pairs: pairs}); err == nil || !strings.Contains(err.Error(), pairs+":4:") {
		t.Errorf("unknown token on line 4: %v", err)
	}
}

func keys(m map[string]string) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	return out
}
