package stages

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/pwe-project/pwe/formats"
	"github.com/pwe-project/pwe/posterior/diag"
)

// fitFixtureChains is the number of chains of fitFixture's fit.
const fitFixtureChains = 2

// fitFixture runs a small Gibbs fit on the Austen fixture and returns its
// directory.
func fitFixture(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	vocab, counts := countFixture(t, dir, 60)
	w := 20
	cfg := FitConfig{Counts: counts, Vocab: vocab, Output: filepath.Join(dir, "fit"), Dim: 3, Anchors: "first",
		Chains: fitFixtureChains, Warmup: &w, Draws: 60, Seed: 11, Memory: 1 << 20}
	if _, err := Fit(context.Background(), cfg); err != nil {
		t.Fatal(err)
	}
	return cfg.Output
}

// naiveDraws holds every draw of draws.parquet: draws[g][param][token] with
// g = chain*n + draw.
type naiveDraws struct {
	chains, n int
	tokens    []string
	draws     []map[string][][]float64
}

func readNaive(t *testing.T, fit string) naiveDraws {
	t.Helper()
	rows, _, err := formats.ReadAll[formats.DrawRow](filepath.Join(fit, DrawsFile), formats.SchemaDraws)
	if err != nil {
		t.Fatal(err)
	}
	var nd naiveDraws
	byKey := map[[2]int]map[string][][]float64{}
	maxTok := 0
	for _, r := range rows {
		nd.chains = max(nd.chains, int(r.Chain)+1)
		nd.n = max(nd.n, int(r.Draw)+1)
		maxTok = max(maxTok, int(r.TokenID)+1)
	}
	nd.tokens = make([]string, maxTok)
	for _, r := range rows {
		k := [2]int{int(r.Chain), int(r.Draw)}
		if byKey[k] == nil {
			byKey[k] = map[string][][]float64{"rho": make([][]float64, maxTok), "alpha": make([][]float64, maxTok)}
		}
		v := make([]float64, len(r.Vector))
		for i, x := range r.Vector {
			v[i] = float64(x)
		}
		byKey[k][r.Param][r.TokenID] = v
		nd.tokens[r.TokenID] = r.Token
	}
	for c := range nd.chains {
		for d := range nd.n {
			nd.draws = append(nd.draws, byKey[[2]int{c, d}])
		}
	}
	return nd
}

func (nd naiveDraws) id(t *testing.T, tok string) int {
	for i, s := range nd.tokens {
		if s == tok {
			return i
		}
	}
	t.Fatalf("token %q not in the draws", tok)
	return -1
}

func cosine(x, y []float64) float64 {
	var xy, xx, yy float64
	for d := range x {
		xy += x[d] * y[d]
		xx += x[d] * x[d]
		yy += y[d] * y[d]
	}
	// Rounded as the stage rounds: with an even number of draws the two
	// middle ones fold to the same distance from the median, so R-hat of
	// the folded draws sees one-ulp differences.
	return xy / math.Sqrt(xx*yy)
}

func (nd naiveDraws) chainsOf(f func(g int) float64) [][]float64 {
	out := make([][]float64, nd.chains)
	for c := range out {
		for d := range nd.n {
			out[c] = append(out[c], f(c*nd.n+d))
		}
	}
	return out
}

func closeStats(t *testing.T, what string, got, want formats.Stats) {
	t.Helper()
	g, w := reflect.ValueOf(got), reflect.ValueOf(want)
	for i := range g.NumField() {
		a, b := g.Field(i).Float(), w.Field(i).Float()
		if math.IsNaN(a) && math.IsNaN(b) {
			continue
		}
		if !(math.Abs(a-b) <= 1e-9*max(1, math.Abs(b))) {
			t.Errorf("%s: %s = %v, want %v", what, g.Type().Field(i).Name, a, b)
		}
	}
}

// TestSummarizeAgainstNaive recomputes every derived quantity of a small
// fit from all its draws with plain loops and checks similarity.parquet
// and neighbours.parquet against them; it also reads the same draws in the
// long layout and expects the same files.
func TestSummarizeAgainstNaive(t *testing.T) {
	fit := fitFixture(t)
	nd := readNaive(t, fit)
	pairsFile := filepath.Join(t.TempDir(), "pairs.txt")
	// The first (anchor) tokens: with kind alpha their cosine is constant.
	a, b, c := nd.tokens[0], nd.tokens[1], nd.tokens[20]
	// With a byte-order mark, and a pair named twice: it is summarised once.
	if err := os.WriteFile(pairsFile, []byte("\uFEFF"+a+"\t"+b+"\n# pairs\n\n"+c+" "+a+"\n"+c+"\t"+a+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	queries := []string{nd.tokens[5], nd.tokens[30]}
	const top = 4
	out := filepath.Join(t.TempDir(), "out")
	// Tokens named twice count once: no pair of c with itself, and the
	// neighbours of the first query once.
	cfg := SummarizeConfig{Fit: fit, Pairs: pairsFile, PairsAllAmong: []string{nd.tokens[7], c, nd.tokens[40], c},
		Neighbours: append(slices.Clone(queries), queries[0]), Top: top, Output: out}
	st, err := Summarize(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	if st.Chains != nd.chains || st.DrawsPerChain != nd.n || st.Pairs != 5 {
		t.Errorf("stats %+v", st)
	}

	sims, meta, err := formats.ReadAll[formats.SimilarityRow](filepath.Join(out, SimilarityFile), formats.SchemaSimilarity)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(meta.Config.(json.RawMessage)), `"top":4`) {
		t.Errorf("pwe.config %s lacks the settings", meta.Config)
	}
	wantPairs := [][2]string{{a, b}, {c, a}, {nd.tokens[7], c}, {nd.tokens[7], nd.tokens[40]}, {c, nd.tokens[40]}}
	if len(sims) != 3*len(wantPairs) {
		t.Fatalf("similarity.parquet has %d rows, want %d", len(sims), 3*len(wantPairs))
	}
	for k, pr := range wantPairs {
		ia, ib := nd.id(t, pr[0]), nd.id(t, pr[1])
		for q, name := range []string{"cosine", "dot", "cooccurrence_prob"} {
			r := sims[3*k+q]
			if r.TokenA != pr[0] || r.TokenB != pr[1] || r.Quantity != name {
				t.Fatalf("row %d is (%s, %s, %s), want (%s, %s, %s)", 3*k+q, r.TokenA, r.TokenB, r.Quantity, pr[0], pr[1], name)
			}
			want := nd.chainsOf(func(g int) float64 {
				x, y := nd.draws[g]["rho"][ia], nd.draws[g]["rho"][ib]
				switch name {
				case "cosine":
					return cosine(x, y)
				case "dot":
					return x[0]*y[0] + x[1]*y[1] + x[2]*y[2]
				}
				al := nd.draws[g]["alpha"][ib]
				// The two-sided form of the stage: R-hat of the folded draws
				// sees one-ulp differences between the middle draws.
				if l := x[0]*al[0] + x[1]*al[1] + x[2]*al[2]; l < 0 {
					return math.Exp(l) / (1 + math.Exp(l))
				} else {
					return 1 / (1 + math.Exp(-l))
				}
			})
			var sz diag.Summarizer
			closeStats(t, pr[0]+"/"+pr[1]+" "+name, r.Stats, statsOf(sz.Summarize(want)))
		}
	}

	nbs, _, err := formats.ReadAll[formats.NeighbourRow](filepath.Join(out, NeighboursFile), formats.SchemaNeighbours)
	if err != nil {
		t.Fatal(err)
	}
	var wantRows int
	for _, query := range queries {
		qi := nd.id(t, query)
		// scores[g][j], rounded to float32 as the stage documents.
		scores := make([][]float64, len(nd.draws))
		for g, dr := range nd.draws {
			scores[g] = make([]float64, len(nd.tokens))
			for j := range nd.tokens {
				scores[g][j] = float64(float32(cosine(dr["rho"][qi], dr["rho"][j])))
			}
		}
		rank := func(g, j int) float64 {
			r := 1
			for k, x := range scores[g] {
				if k != qi && x > scores[g][j] {
					r++
				}
			}
			return float64(r)
		}
		got := map[string]formats.NeighbourRow{}
		var order []formats.NeighbourRow
		for _, r := range nbs {
			if r.Query == query {
				got[r.Neighbour] = r
				order = append(order, r)
			}
		}
		if !sort.SliceIsSorted(order, func(i, j int) bool { return order[i].PTop > order[j].PTop }) {
			t.Errorf("%s: rows not in descending order of p_top", query)
		}
		for j, tok := range nd.tokens {
			if j == qi {
				continue
			}
			ranks := nd.chainsOf(func(g int) float64 { return rank(g, j) })
			var in, all []float64
			for _, ch := range ranks {
				for _, r := range ch {
					all = append(all, r)
					if r <= top {
						in = append(in, 1)
					}
				}
			}
			pTop := float64(len(in)) / float64(len(all))
			r, ok := got[tok]
			if pTop == 0 {
				if ok {
					t.Errorf("%s: %s listed with p_top %v, but never in the top %d", query, tok, r.PTop, top)
				}
				continue
			}
			wantRows++
			if !ok {
				t.Errorf("%s: %s missing (p_top %v)", query, tok, pTop)
				continue
			}
			sort.Float64s(all)
			sim := statsOf(new(diag.Summarizer).Summarize(nd.chainsOf(func(g int) float64 { return scores[g][j] })))
			checks := []struct {
				name      string
				got, want float64
			}{
				{"p_top", r.PTop, pTop}, {"rank_median", r.RankMedian, diag.Quantile(all, 0.5)},
				{"rank_q5", r.RankQ5, diag.Quantile(all, 0.05)}, {"rank_q95", r.RankQ95, diag.Quantile(all, 0.95)},
				{"similarity_median", r.SimMedian, sim.Median}, {"similarity_q5", r.SimQ5, sim.Q5},
				{"similarity_q95", r.SimQ95, sim.Q95}, {"similarity_mean", r.SimMean, sim.Mean},
			}
			for _, ch := range checks {
				if math.Abs(ch.got-ch.want) > 1e-9 {
					t.Errorf("%s -> %s: %s = %v, want %v", query, tok, ch.name, ch.got, ch.want)
				}
			}
			if int(r.Top) != top || r.QueryID != int32(qi) || r.NeighbourID != int32(j) {
				t.Errorf("%s -> %s: top %d ids %d %d", query, tok, r.Top, r.QueryID, r.NeighbourID)
			}
		}
	}
	if len(nbs) != wantRows {
		t.Errorf("neighbours.parquet has %d rows, want %d", len(nbs), wantRows)
	}

	// The same draws in the long layout give the same summaries.
	long := filepath.Join(t.TempDir(), "fit")
	writeLongCopy(t, fit, long)
	out2 := filepath.Join(t.TempDir(), "out")
	cfg.Fit, cfg.Output = long, out2
	if _, err := Summarize(context.Background(), cfg); err != nil {
		t.Fatal(err)
	}
	sims2, _, err := formats.ReadAll[formats.SimilarityRow](filepath.Join(out2, SimilarityFile), formats.SchemaSimilarity)
	if err != nil {
		t.Fatal(err)
	}
	nbs2, _, err := formats.ReadAll[formats.NeighbourRow](filepath.Join(out2, NeighboursFile), formats.SchemaNeighbours)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(sims, sims2) || !reflect.DeepEqual(nbs, nbs2) {
		t.Error("the long layout gives other summaries than the vector layout")
	}
}

func writeLongCopy(t *testing.T, fit, dst string) {
	t.Helper()
	rows, _, err := formats.ReadAll[formats.DrawRow](filepath.Join(fit, DrawsFile), formats.SchemaDraws)
	if err != nil {
		t.Fatal(err)
	}
	var long []formats.DrawLongRow
	for _, r := range rows {
		for d, x := range r.Vector {
			long = append(long, formats.DrawLongRow{Chain: r.Chain, Draw: r.Draw, Param: r.Param, TokenID: r.TokenID, Token: r.Token, Dim: int16(d), Value: x})
		}
	}
	if err := os.MkdirAll(dst, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := formats.WriteAll(filepath.Join(dst, DrawsFile), long, formats.Meta{Schema: formats.SchemaDrawsLong}); err != nil {
		t.Fatal(err)
	}
}

// TestSummarizeErrors checks that bad requests name the file and line.
func TestSummarizeErrors(t *testing.T) {
	fit := fitFixture(t)
	nd := readNaive(t, fit)
	dir := t.TempDir()
	pairs := filepath.Join(dir, "pairs.txt")
	os.WriteFile(pairs, []byte(nd.tokens[0]+" "+nd.tokens[1]+"\n\n"+nd.tokens[2]+" zzzunknown\n"), 0o644)
	_, err := Summarize(context.Background(), SummarizeConfig{Fit: fit, Pairs: pairs, Output: dir})
	if err == nil || !strings.Contains(err.Error(), pairs+":3:") || !strings.Contains(err.Error(), `"zzzunknown"`) {
		t.Errorf("unknown token: %v", err)
	}
	os.WriteFile(pairs, []byte(nd.tokens[0]+" "+nd.tokens[1]+" "+nd.tokens[2]+"\n"), 0o644)
	_, err = Summarize(context.Background(), SummarizeConfig{Fit: fit, Pairs: pairs, Output: dir})
	if err == nil || !strings.Contains(err.Error(), pairs+":1:") {
		t.Errorf("three tokens on a line: %v", err)
	}
	_, err = Summarize(context.Background(), SummarizeConfig{Fit: fit, Neighbours: []string{nd.tokens[0], "zzzunknown"}, Output: dir})
	if err == nil || !strings.Contains(err.Error(), `neighbours: token 2, "zzzunknown"`) {
		t.Errorf("unknown query: %v", err)
	}
	os.WriteFile(pairs, []byte("# no pairs yet\n\n"), 0o644)
	_, err = Summarize(context.Background(), SummarizeConfig{Fit: fit, Pairs: pairs, Output: dir})
	if err == nil || !strings.Contains(err.Error(), pairs+": no pairs") {
		t.Errorf("a file without pairs: %v", err)
	}
	if _, err := os.Stat(filepath.Join(dir, NeighboursFile)); !os.IsNotExist(err) {
		t.Errorf("a failed run left %s: %v", NeighboursFile, err)
	}
}

// TestSummarizeConstant compares the context vectors of two anchors, which
// are fixed: their cosine and dot product are the same in every draw, so
// the spread is zero and R-hat and ESS are undefined (NaN), while the
// co-occurrence probability, through the anchor's target vector, varies.
func TestSummarizeConstant(t *testing.T) {
	fit := fitFixture(t) // anchors "first": tokens 0, 1 and 2
	nd := readNaive(t, fit)
	out := t.TempDir()
	if _, err := Summarize(context.Background(), SummarizeConfig{Fit: fit, PairsAllAmong: nd.tokens[:2], Vectors: "alpha", Output: out}); err != nil {
		t.Fatal(err)
	}
	rows, _, err := formats.ReadAll[formats.SimilarityRow](filepath.Join(out, SimilarityFile), formats.SchemaSimilarity)
	if err != nil {
		t.Fatal(err)
	}
	a0, a1 := nd.draws[0]["alpha"][0], nd.draws[0]["alpha"][1]
	wantCos := cosine(a0, a1)
	for _, r := range rows {
		switch r.Quantity {
		case "cosine", "dot":
			want := wantCos
			if r.Quantity == "dot" {
				want = a0[0]*a1[0] + a0[1]*a1[1] + a0[2]*a1[2]
			}
			if math.Abs(r.Mean-want) > 1e-12 || r.SD > 1e-12 || r.Q5 != r.Q95 || !math.IsNaN(r.Rhat) || !math.IsNaN(r.ESSBulk) {
				t.Errorf("%s of two anchors: %+v, want constant %v with NaN R-hat and ESS", r.Quantity, r.Stats, want)
			}
		default:
			if !(r.SD > 0) || math.IsNaN(r.Rhat) {
				t.Errorf("%s: %+v, want a spread and an R-hat", r.Quantity, r.Stats)
			}
		}
	}
}

// TestTokenHint checks the hint given for a token a user names that the
// vocabulary lacks, and that Summarize gives it for a capitalised query.
func TestTokenHint(t *testing.T) {
	index := map[string]int{"caf\u00e9": 0, "don't": 1, "paris": 2}
	for _, c := range []struct{ token, want string }{
		{"Cafe\u0301", `it has "café"`},
		{"DON\u2019T", `it has "don't"`},
		{"Paris", `it has "paris"`},
		{"london", ""},
		{"Londres", ""},
	} {
		got := tokenHint(c.token, index)
		if c.want == "" && got != "" || !strings.Contains(got, c.want) {
			t.Errorf("tokenHint(%q) = %q, want %q", c.token, got, c.want)
		}
	}

	fit := fitFixture(t)
	nd := readNaive(t, fit)
	var query string
	for _, tok := range nd.tokens {
		if up := strings.ToUpper(tok); up != tok {
			query = up
			break
		}
	}
	_, err := Summarize(context.Background(), SummarizeConfig{Fit: fit, Neighbours: []string{query}, Top: 3, Output: filepath.Join(t.TempDir(), "out")})
	if err == nil || !strings.Contains(err.Error(), fmt.Sprintf("it has %q", strings.ToLower(query))) {
		t.Errorf("neighbours of %q: error %v, want the hint naming %q", query, err, strings.ToLower(query))
	}
}
