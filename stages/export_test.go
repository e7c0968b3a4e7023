package stages

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/pwe-project/pwe/formats"
	"github.com/pwe-project/pwe/posterior"
)

// readWord2Vec parses word2vec text as gensim's KeyedVectors
// load_word2vec_format(binary=False) does, strictly: a header of two
// integers "V D", then exactly V lines, each stripped of trailing white
// space and split on single spaces into a word and exactly D numbers,
// UTF-8 throughout; a repeated word is an error here (gensim only warns).
func readWord2Vec(r io.Reader) (words []string, vecs [][]float64, err error) {
	data, err := io.ReadAll(r)
	if err != nil {
		return nil, nil, err
	}
	if !utf8.Valid(data) {
		return nil, nil, fmt.Errorf("not UTF-8")
	}
	lines := strings.Split(string(data), "\n")
	if lines[len(lines)-1] == "" {
		lines = lines[:len(lines)-1]
	}
	if len(lines) == 0 {
		return nil, nil, fmt.Errorf("empty file")
	}
	head := strings.Fields(lines[0])
	if len(head) != 2 {
		return nil, nil, fmt.Errorf("header %q, want two integers", lines[0])
	}
	v, err1 := strconv.Atoi(head[0])
	d, err2 := strconv.Atoi(head[1])
	if err1 != nil || err2 != nil {
		return nil, nil, fmt.Errorf("header %q, want two integers", lines[0])
	}
	if len(lines)-1 != v {
		return nil, nil, fmt.Errorf("header says %d vectors, file has %d lines", v, len(lines)-1)
	}
	seen := map[string]bool{}
	for n, line := range lines[1:] {
		parts := strings.Split(strings.TrimRight(line, " \t\r\n\v\f"), " ")
		if len(parts) != d+1 {
			return nil, nil, fmt.Errorf("invalid vector on line %d (is this really the text format?)", n+2)
		}
		if seen[parts[0]] {
			return nil, nil, fmt.Errorf("line %d: duplicate word %q", n+2, parts[0])
		}
		seen[parts[0]] = true
		vec := make([]float64, d)
		for k, s := range parts[1:] {
			if vec[k], err = strconv.ParseFloat(s, 64); err != nil {
				return nil, nil, fmt.Errorf("line %d: %w", n+2, err)
			}
		}
		words, vecs = append(words, parts[0]), append(vecs, vec)
	}
	return words, vecs, nil
}

// TestExport writes every estimate and format of a small fit, reads them
// back and compares with summary.parquet and map.parquet.
func TestExport(t *testing.T) {
	fit := fitFixture(t)
	mp, _, err := formats.ReadAll[formats.VectorRow](filepath.Join(fit, MapFile), formats.SchemaMap)
	if err != nil {
		t.Fatal(err)
	}
	sum, _, err := formats.ReadAll[formats.SummaryRow](filepath.Join(fit, SummaryFile), formats.SchemaSummary)
	if err != nil {
		t.Fatal(err)
	}
	// want[estimate][param][token][dim] from the source files.
	want := map[string]map[string][][]float64{"map": {}, "mean": {}}
	var tokens []string
	anchor := map[int32]bool{}
	for _, est := range []string{"map", "mean"} {
		for _, p := range []string{"rho", "alpha"} {
			want[est][p] = make([][]float64, len(mp)/2)
		}
	}
	for _, r := range mp {
		vec := make([]float64, len(r.Vector))
		for k, x := range r.Vector {
			vec[k] = float64(x)
		}
		want["map"][r.Param][r.TokenID] = vec
		if r.Param == "rho" {
			tokens = append(tokens, r.Token)
		}
		if r.Anchor {
			anchor[r.TokenID] = true
		}
	}
	// The anchors' context vectors are fixed (at a posterior draw, not at
	// the MAP), so their mean is their value in any draw.
	draws, _, err := formats.ReadAll[formats.DrawRow](filepath.Join(fit, DrawsFile), formats.SchemaDraws)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range draws {
		if r.Chain == 0 && r.Draw == 0 && r.Param == "alpha" && anchor[r.TokenID] {
			vec := make([]float64, len(r.Vector))
			for k, x := range r.Vector {
				vec[k] = float64(x)
			}
			want["mean"]["alpha"][r.TokenID] = vec
		}
	}
	d := len(mp[0].Vector)
	for _, r := range sum {
		w := want["mean"][r.Param]
		if w[r.TokenID] == nil {
			w[r.TokenID] = make([]float64, d)
		}
		w[r.TokenID][r.Dim] = r.Mean
	}
	if len(anchor) != d {
		t.Fatalf("%d anchors, want %d", len(anchor), d)
	}

	dir := t.TempDir()
	for _, est := range []string{"map", "mean"} {
		for _, vectors := range []string{"rho", "alpha", "sum"} {
			out := filepath.Join(dir, est+"-"+vectors+".txt")
			st, err := Export(context.Background(), ExportConfig{Fit: fit, Estimate: est, Vectors: vectors, Output: out})
			if err != nil {
				t.Fatal(err)
			}
			f, err := os.Open(out)
			if err != nil {
				t.Fatal(err)
			}
			words, vecs, err := readWord2Vec(f)
			f.Close()
			if err != nil {
				t.Fatalf("%s: %v", out, err)
			}
			if st.V != len(tokens) || len(words) != len(tokens) || st.D != d {
				t.Fatalf("%s: %d words (stats V=%d D=%d), want %d", out, len(words), st.V, st.D, len(tokens))
			}
			for i, w := range words {
				if w != tokens[i] {
					t.Fatalf("%s: word %d is %q, want %q", out, i, w, tokens[i])
				}
				for k, x := range vecs[i] {
					var src float64
					switch vectors {
					case "rho", "alpha":
						src = want[est][vectors][i][k]
					default:
						src = want[est]["rho"][i][k] + want[est]["alpha"][i][k]
					}
					// gensim reads float32: the file must give back the
					// float32 nearest the source value.
					if float32(x) != float32(src) {
						t.Fatalf("%s: %s[%d] = %v, want %v", out, w, k, x, float32(src))
					}
				}
			}
		}
		out := filepath.Join(dir, est+".parquet")
		if _, err := Export(context.Background(), ExportConfig{Fit: fit, Estimate: est, Format: "parquet", Output: out}); err != nil {
			t.Fatal(err)
		}
		rows, meta, err := formats.ReadAll[formats.VectorRow](out, formats.SchemaMap)
		if err != nil {
			t.Fatal(err)
		}
		if len(rows) != 2*len(tokens) || meta.Schema != formats.SchemaMap {
			t.Fatalf("%s: %d rows, want %d", out, len(rows), 2*len(tokens))
		}
		for _, r := range rows {
			if r.Token != tokens[r.TokenID] || r.Anchor != (r.Param == "alpha" && anchor[r.TokenID]) {
				t.Errorf("%s: row %+v", out, r)
			}
			for k, x := range r.Vector {
				if x != float32(want[est][r.Param][r.TokenID][k]) {
					t.Fatalf("%s: %s %s[%d] = %v, want %v", out, r.Param, r.Token, k, x, want[est][r.Param][r.TokenID][k])
				}
			}
		}
	}
	// -o naming the file the estimate is read from.
	src := filepath.Join(fit, MapFile)
	before, _ := os.ReadFile(src)
	_, err = Export(context.Background(), ExportConfig{Fit: fit, Estimate: "map", Format: "parquet", Output: src})
	if after, _ := os.ReadFile(src); err == nil || !strings.Contains(err.Error(), "is the input") || !bytes.Equal(before, after) {
		t.Errorf("export over map.parquet: %v", err)
	}

	// A summary that gives a coordinate twice, and one whose mean is not a
	// number, are refused with the row.
	_, sumMeta, err := formats.ReadAll[formats.SummaryRow](filepath.Join(fit, SummaryFile), formats.SchemaSummary)
	if err != nil {
		t.Fatal(err)
	}
	twice := append(slices.Clone(sum), sum[0])
	twice[len(twice)-1].Mean = 99
	notNumber := slices.Clone(sum)
	notNumber[3].Mean = math.NaN()
	for name, rows := range map[string][]formats.SummaryRow{"a second mean": twice, "NaN": notNumber} {
		bad := t.TempDir()
		if err := os.WriteFile(filepath.Join(bad, MapFile), before, 0o644); err != nil {
			t.Fatal(err)
		}
		if err := formats.WriteAll(filepath.Join(bad, SummaryFile), rows, sumMeta); err != nil {
			t.Fatal(err)
		}
		_, err := Export(context.Background(), ExportConfig{Fit: bad, Output: filepath.Join(bad, "v.txt")})
		if err == nil || !strings.Contains(err.Error(), SummaryFile+": row ") || !strings.Contains(err.Error(), name) {
			t.Errorf("%s: %v", name, err)
		}
	}
}

func TestWord2VecTokens(t *testing.T) {
	p := posterior.NewParams(3, 2)
	copy(p.Rho, []float64{1, -0.5, 1e-30, 3.25, 0.1, 2})
	var buf bytes.Buffer
	renamed, err := WriteWord2Vec(&buf, p, posterior.TargetVectors, []string{"Toy Story (1995)", "tab\there", "plain"})
	if err != nil || renamed != 2 {
		t.Fatalf("renamed %d, %v", renamed, err)
	}
	words, vecs, err := readWord2Vec(&buf)
	if err != nil {
		t.Fatal(err)
	}
	wantWords := []string{"Toy_Story_(1995)", "tab_here", "plain"}
	for i, w := range wantWords {
		if words[i] != w || float32(vecs[i][0]) != float32(p.Rho[2*i]) || float32(vecs[i][1]) != float32(p.Rho[2*i+1]) {
			t.Errorf("line %d: %q %v, want %q %v", i, words[i], vecs[i], w, p.Rho[2*i:2*i+2])
		}
	}
	if _, err := WriteWord2Vec(io.Discard, p, posterior.TargetVectors, []string{"a b", "a_b", "c"}); err == nil || !strings.Contains(err.Error(), `"a b" and "a_b"`) {
		t.Errorf("colliding tokens: %v", err)
	}
	if _, err := WriteWord2Vec(io.Discard, p, posterior.TargetVectors, []string{"a", "", "c"}); err == nil {
		t.Error("empty token accepted")
	}
}
