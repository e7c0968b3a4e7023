package pipeline

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"testing"

	"github.com/pwe-project/pwe/formats"
)

// duckdbDir holds package.json for `npm ci` and the script that runs SQL.
const duckdbDir = "../testdata/duckdb"

// readmeQueries extracts README.md's SQL recipes, each between
// "<!-- duckdb-test: NAME -->" and "<!-- /duckdb-test -->", so that the
// README and this test cannot drift apart.
func readmeQueries(t *testing.T) map[string]string {
	t.Helper()
	readme, err := os.ReadFile("../README.md")
	if err != nil {
		t.Fatal(err)
	}
	re := regexp.MustCompile("(?s)<!-- duckdb-test: (\\w+) -->\\s*```sql\\n(.*?)```\\s*<!-- /duckdb-test -->")
	qs := map[string]string{}
	for _, m := range re.FindAllSubmatch(readme, -1) {
		qs[string(m[1])] = string(m[2])
	}
	for _, name := range []string{"vocab", "pairs", "cosine", "rhat", "chains", "anchors"} {
		if qs[name] == "" {
			t.Fatalf("README.md lacks the SQL recipe %q between duckdb-test markers", name)
		}
	}
	return qs
}

// duckdb runs the queries through DuckDB's node package in dir and returns
// each one's rows.
func duckdb(t *testing.T, dir string, queries map[string]string) map[string][]map[string]any {
	t.Helper()
	in, _ := json.Marshal(queries)
	script, _ := filepath.Abs(filepath.Join(duckdbDir, "query.mjs"))
	cmd := exec.Command("node", script)
	cmd.Dir = dir
	cmd.Stdin = bytes.NewReader(in)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("duckdb: %v\n%s", err, stderr.String())
	}
	var rows map[string][]map[string]any
	if err := json.Unmarshal(out, &rows); err != nil {
		t.Fatalf("duckdb output: %v\n%s", err, out)
	}
	return rows
}

func requireDuckDB(t *testing.T) {
	t.Helper()
	if testing.Short() {
		t.Skip("runs a fit and DuckDB: not in short mode")
	}
	_, err := os.Stat(filepath.Join(duckdbDir, "node_modules", "@duckdb", "node-api"))
	if err == nil {
		_, err = exec.LookPath("node")
	}
	if err == nil {
		return
	}
	if os.Getenv("PWE_REQUIRE_DUCKDB") == "1" {
		t.Fatalf("PWE_REQUIRE_DUCKDB=1 but DuckDB is not installed (npm ci in testdata/duckdb): %v", err)
	}
	t.Skipf("DuckDB not installed (npm ci in testdata/duckdb): %v", err)
}

// TestDuckDBReadsREADMERecipes runs README's first command (with shorter
// chains) and README's SQL on its outputs, and checks every answer against
// the same quantity computed in Go from the files.
func TestDuckDBReadsREADMERecipes(t *testing.T) {
	requireDuckDB(t)
	queries := readmeQueries(t)
	cfg, err := Load("../examples/quickstart.yaml")
	if err != nil {
		t.Fatal(err)
	}
	work := t.TempDir()
	cfg.Output = filepath.Join(work, "quickstart")
	warmup := 40
	cfg.Fit.Warmup, cfg.Fit.Draws = &warmup, 40
	if _, err := Run(context.Background(), cfg, Options{}); err != nil {
		t.Fatal(err)
	}
	out := cfg.Output
	vocab, _, err := formats.ReadAll[formats.VocabRow](filepath.Join(out, VocabFile), formats.SchemaVocab)
	if err != nil {
		t.Fatal(err)
	}
	counts, _, err := formats.ReadAll[formats.CountRow](filepath.Join(out, CountsFile), formats.SchemaCounts)
	if err != nil {
		t.Fatal(err)
	}
	fit := filepath.Join(out, FitDir)
	mapRows, _, err := formats.ReadAll[formats.VectorRow](filepath.Join(fit, "map.parquet"), formats.SchemaMap)
	if err != nil {
		t.Fatal(err)
	}
	draws, _, err := formats.ReadAll[formats.DrawRow](filepath.Join(fit, "draws.parquet"), formats.SchemaDraws)
	if err != nil {
		t.Fatal(err)
	}
	stats, _, err := formats.ReadAll[formats.SampleStatsRow](filepath.Join(fit, "sample_stats.parquet"), formats.SchemaSampleStats)
	if err != nil {
		t.Fatal(err)
	}
	summary, _, err := formats.ReadAll[formats.SummaryRow](filepath.Join(fit, "summary.parquet"), formats.SchemaSummary)
	if err != nil {
		t.Fatal(err)
	}
	rowCounts := map[string]int{
		"vocab.parquet": len(vocab), "counts.parquet": len(counts), "fit/map.parquet": len(mapRows),
		"fit/draws.parquet": len(draws), "fit/sample_stats.parquet": len(stats), "fit/summary.parquet": len(summary),
	}
	for f := range rowCounts {
		queries["rows "+f] = fmt.Sprintf("SELECT count(*) AS n FROM 'quickstart/%s'", f)
	}
	res := duckdb(t, work, queries)

	for f, n := range rowCounts {
		if got := res["rows "+f][0]["n"]; got != strconv.Itoa(n) {
			t.Errorf("DuckDB counts %v rows in %s, Go %d", got, f, n)
		}
	}

	for i, r := range res["vocab"] {
		v := vocab[i]
		if r["token_id"] != float64(v.TokenID) || r["token"] != v.Token || r["count"] != strconv.FormatInt(v.Count, 10) {
			t.Errorf("vocab row %d: DuckDB %v, Go %+v", i, r, v)
		}
	}
	if len(res["vocab"]) != min(10, len(vocab)) {
		t.Errorf("vocab query gave %d rows", len(res["vocab"]))
	}

	pairs := slices.Clone(counts)
	slices.SortStableFunc(pairs, func(a, b formats.CountRow) int { return cmp.Compare(b.NPos, a.NPos) })
	for i, r := range res["pairs"] {
		p := pairs[i]
		if r["target"] != vocab[p.TargetID].Token || r["context"] != vocab[p.ContextID].Token || r["n_pos"] != p.NPos || r["n_neg"] != p.NNeg {
			t.Errorf("pair %d: DuckDB %v, Go %+v", i, r, p)
		}
	}

	checkCosine(t, res["cosine"], draws, cfg.Fit.Dim)

	top := slices.Clone(summary)
	slices.SortFunc(top, func(a, b formats.SummaryRow) int {
		return cmp.Or(cmp.Compare(b.Rhat, a.Rhat), cmp.Compare(a.Param, b.Param), cmp.Compare(a.TokenID, b.TokenID), cmp.Compare(a.Dim, b.Dim))
	})
	for i, r := range res["rhat"] {
		s := top[i]
		if r["token"] != s.Token || r["param"] != s.Param || r["dim"] != float64(s.Dim) || r["rhat"] != s.Rhat || r["ess_bulk"] != s.ESSBulk {
			t.Errorf("R-hat row %d: DuckDB %v, Go %+v", i, r, s)
		}
	}

	perChain := map[int16][]float64{}
	for _, s := range stats {
		perChain[s.Chain] = append(perChain[s.Chain], s.LogLik)
	}
	if len(res["chains"]) != cfg.Fit.Chains {
		t.Errorf("chains query gave %d rows, want %d", len(res["chains"]), cfg.Fit.Chains)
	}
	for _, r := range res["chains"] {
		ll := perChain[int16(r["chain"].(float64))]
		mean := 0.0
		for _, x := range ll {
			mean += x / float64(len(ll))
		}
		// Sums in another order: a few ulps of the terms.
		if r["draws"] != strconv.Itoa(len(ll)) || len(ll) != cfg.Fit.Draws || math.Abs(r["mean_log_lik"].(float64)-mean) > 1e-12*math.Abs(mean)*float64(len(ll)) {
			t.Errorf("chain row %v: Go %d draws, mean log lik %v", r, len(ll), mean)
		}
	}

	var anchors []formats.VectorRow
	for _, m := range mapRows {
		if m.Anchor {
			anchors = append(anchors, m)
		}
	}
	slices.SortFunc(anchors, func(a, b formats.VectorRow) int { return cmp.Compare(a.TokenID, b.TokenID) })
	if len(res["anchors"]) != len(anchors) || len(anchors) != cfg.Fit.Dim {
		t.Fatalf("anchors: DuckDB %d rows, Go %d, want D = %d", len(res["anchors"]), len(anchors), cfg.Fit.Dim)
	}
	for i, r := range res["anchors"] {
		vec, _ := r["vector"].([]any)
		ok := r["token"] == anchors[i].Token && len(vec) == len(anchors[i].Vector)
		for k := 0; ok && k < len(vec); k++ {
			ok = float32(vec[k].(float64)) == anchors[i].Vector[k]
		}
		if !ok {
			t.Errorf("anchor %d: DuckDB %v, Go %+v", i, r, anchors[i])
		}
	}
}

// checkCosine compares DuckDB's posterior of the cosine similarity of
// rho_elinor and rho_marianne with the same computed in float64 from the
// float32 draws. DuckDB works in float32, so each draw's cosine may differ
// by the rounding of sums of D products and a division: a few (D + 2)
// units of float32's last place; the mean and the interpolated quantiles,
// weighted averages of those, by no more.
func checkCosine(t *testing.T, rows []map[string]any, draws []formats.DrawRow, dim int) {
	t.Helper()
	type key struct {
		chain int16
		draw  int32
	}
	vec := map[string]map[key][]float32{"elinor": {}, "marianne": {}}
	for _, d := range draws {
		if m, ok := vec[d.Token]; ok && d.Param == formats.ParamRho {
			m[key{d.Chain, d.Draw}] = d.Vector
		}
	}
	var cos []float64
	for k, a := range vec["elinor"] {
		b, ok := vec["marianne"][k]
		if !ok {
			continue
		}
		var ab, aa, bb float64
		for i := range a {
			ab += float64(a[i]) * float64(b[i])
			aa += float64(a[i]) * float64(a[i])
			bb += float64(b[i]) * float64(b[i])
		}
		cos = append(cos, ab/math.Sqrt(aa*bb))
	}
	if len(cos) == 0 {
		t.Fatal("no draws of both elinor and marianne: the README's example tokens are not in the quickstart vocabulary")
	}
	slices.Sort(cos)
	mean := 0.0
	for _, c := range cos {
		mean += c / float64(len(cos))
	}
	// quantile_cont interpolates linearly between order statistics
	// (Hyndman and Fan's type 7).
	q := func(p float64) float64 {
		h := p * float64(len(cos)-1)
		lo := math.Floor(h)
		hi := math.Min(lo+1, float64(len(cos)-1))
		return cos[int(lo)] + (h-lo)*(cos[int(hi)]-cos[int(lo)])
	}
	if len(rows) != 1 {
		t.Fatalf("cosine query gave %d rows", len(rows))
	}
	r := rows[0]
	if r["draws"] != strconv.Itoa(len(cos)) {
		t.Errorf("cosine over %v draws in DuckDB, %d in Go", r["draws"], len(cos))
	}
	tol := 4 * float64(dim+2) * 0x1p-24
	for name, want := range map[string]float64{"mean": mean, "q5": q(0.05), "median": q(0.5), "q95": q(0.95)} {
		got, ok := r[name].(float64)
		if !ok || math.Abs(got-want) > tol {
			t.Errorf("cosine %s: DuckDB %v, Go %.9f (tolerance %.2g)", name, r[name], want, tol)
		}
	}
	if q(0.95)-q(0.05) < 100*tol {
		t.Errorf("cosine interval [%g, %g] too narrow to tell the statistics apart at this tolerance", q(0.05), q(0.95))
	}
}

// TestDuckDBReadsLargeCounts writes counts.parquet pages of every kind the
// writer makes (Huffman-only zstd frames for dictionary indices and context
// ids, klauspost's zstd for the rest, a dictionary that overflows into
// PLAIN pages) and checks DuckDB's aggregates, through its own zstd
// decoder, against the rows written.
func TestDuckDBReadsLargeCounts(t *testing.T) {
	requireDuckDB(t)
	dir := t.TempDir()
	const n = 3*formats.RowGroupRows/2 + 12345
	w, err := formats.CreateCounts(filepath.Join(dir, "counts.parquet"), formats.Meta{}, false)
	if err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(3, 4))
	var sumPos, sumNeg, wPos, wNeg, sumT float64
	rows := make([]formats.CountRow, 0, 1000)
	ctx := int32(0)
	for i := range n {
		r := formats.CountRow{TargetID: int32(i / 300)}
		if i%300 == 0 {
			ctx = 0
		}
		ctx += 1 + int32(rng.IntN(50))
		r.ContextID = ctx
		// Mostly small whole numbers, with a long tail; n_neg runs past
		// the dictionary's cap in the second row group.
		r.NPos = float64(rng.IntN(3) * (1 + rng.IntN(2)*rng.IntN(1000)))
		if i < formats.RowGroupRows {
			r.NNeg = float64(rng.IntN(4))
		} else {
			r.NNeg = float64(i) / 4
		}
		sumPos, sumNeg, sumT = sumPos+r.NPos, sumNeg+r.NNeg, sumT+float64(r.TargetID)
		wPos += r.NPos * float64(r.ContextID%97)
		wNeg += r.NNeg * float64(r.ContextID%89)
		if rows = append(rows, r); len(rows) == cap(rows) || i == n-1 {
			if err := w.Write(rows); err != nil {
				t.Fatal(err)
			}
			rows = rows[:0]
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	res := duckdb(t, dir, map[string]string{"agg": `SELECT count(*)::DOUBLE AS n, sum(n_pos) AS sp, sum(n_neg) AS sn,
		sum(n_pos * (context_id % 97)) AS wp, sum(n_neg * (context_id % 89)) AS wn, sum(target_id)::DOUBLE AS st
		FROM 'counts.parquet'`})
	got := res["agg"][0]
	want := map[string]float64{"n": n, "sp": sumPos, "sn": sumNeg, "wp": wPos, "wn": wNeg, "st": sumT}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("DuckDB %s = %v, Go %v", k, got[k], v)
		}
	}
}
