package stages

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/pwe-project/pwe/formats"
	"github.com/pwe-project/pwe/formats/input"
	"github.com/pwe-project/pwe/posterior"
	"github.com/pwe-project/pwe/posterior/diag"
	"github.com/pwe-project/pwe/tokenize"
)

// Output file names of the summarize stage.
const (
	SimilarityFile = "similarity.parquet"
	NeighboursFile = "neighbours.parquet"
)

// SummarizeConfig configures the summarize stage: posterior summaries of
// quantities derived from the draws of a fit, computed draw by draw.
type SummarizeConfig struct {
	// Fit is the fit stage's output directory (it holds draws.parquet).
	Fit string `json:"-" yaml:"-"`
	// Pairs names a file of token pairs, two per line (tab-separated, or
	// space-separated when there is no tab); blank lines and lines
	// starting with # are skipped.
	Pairs string `json:"pairs,omitempty" yaml:"pairs"`
	// PairsAllAmong adds every pair (a, b) of these tokens with a listed
	// before b.
	PairsAllAmong []string `json:"pairs_all_among,omitempty" yaml:"pairs_all_among"`
	// Neighbours are the query tokens whose nearest neighbours by cosine
	// similarity are summarised; Top is K (default 10).
	Neighbours []string `json:"neighbours,omitempty" yaml:"neighbours"`
	Top        int      `json:"top" yaml:"top"`
	// Vectors is the kind of vector compared by cosine, dot product and
	// neighbours: "rho" (default), "alpha" or "sum". The co-occurrence
	// probability is always sigmoid(rho_a . alpha_b).
	Vectors string `json:"vectors" yaml:"vectors"`

	// Output is the directory that receives the files (default: Fit).
	Output string `json:"-" yaml:"-"`
	// Threads summarise quantities in parallel (0: every core).
	Threads int `json:"-" yaml:"-"`
	// OnDraw, if set, is called after each draw read, with the draws read
	// and their total, for progress reports.
	OnDraw func(done, total int) `json:"-" yaml:"-"`
}

// WithDefaults fills unset fields.
func (c SummarizeConfig) WithDefaults() SummarizeConfig {
	if c.Top == 0 {
		c.Top = 10
	}
	if c.Vectors == "" {
		c.Vectors = "rho"
	}
	if c.Output == "" {
		c.Output = c.Fit
	}
	c.Threads = threadsOrDefault(c.Threads)
	return c
}

// Wants reports whether the configuration asks for any quantity.
func (c SummarizeConfig) Wants() bool {
	return c.Pairs != "" || len(c.PairsAllAmong) > 0 || len(c.Neighbours) > 0
}

// Validate reports settings that cannot work.
func (c SummarizeConfig) Validate() error {
	c = c.WithDefaults()
	switch {
	case c.Fit == "":
		return errors.New("no fit directory: name the directory written by pwe fit")
	case !c.Wants():
		return errors.New("nothing to summarise: ask for --pairs, --pairs-all-among or --neighbours")
	case len(c.PairsAllAmong) == 1:
		return errors.New("pairs-all-among needs at least two tokens")
	case c.Top < 1:
		return fmt.Errorf("top %d, want at least 1", c.Top)
	}
	_, err := posterior.ParseVectorKind(c.Vectors)
	return err
}

// Outputs lists the files Summarize writes.
func (c SummarizeConfig) Outputs() []string {
	c = c.WithDefaults()
	var outs []string
	if c.Pairs != "" || len(c.PairsAllAmong) > 0 {
		outs = append(outs, filepath.Join(c.Output, SimilarityFile))
	}
	if len(c.Neighbours) > 0 {
		outs = append(outs, filepath.Join(c.Output, NeighboursFile))
	}
	return outs
}

// SummarizeStats describe a summarize run.
type SummarizeStats struct {
	Chains        int     `json:"chains"`
	DrawsPerChain int     `json:"draws_per_chain"`
	Tokens        int     `json:"tokens"`
	Pairs         int     `json:"pairs"`
	Queries       int     `json:"queries"`
	Neighbours    int     `json:"neighbour_rows"`
	Seconds       float64 `json:"-"`
}

// Summarize runs the summarize stage. It reads draws.parquet draw by draw,
// holding the pairs' values for every draw and, for neighbours, one draw's
// vectors, a score matrix of queries x tokens and the nearest tokens of
// every draw and query (see neighbourPass); the draws are read a second
// time only if a candidate neighbour was not among those kept. A quantity that is the same in every
// draw (with Vectors "alpha", the cosine or dot product of two anchors,
// whose context vectors are fixed) gets sd 0 and NaN R-hat, ESS and MCSE,
// as package diag defines them for constant draws.
func Summarize(ctx context.Context, cfg SummarizeConfig) (SummarizeStats, error) {
	cfg = cfg.WithDefaults()
	if err := cfg.Validate(); err != nil {
		return SummarizeStats{}, err
	}
	start := time.Now()
	kind, _ := posterior.ParseVectorKind(cfg.Vectors)
	drawsPath := filepath.Join(cfg.Fit, DrawsFile)
	ds, err := openDraws(drawsPath)
	if err != nil {
		return SummarizeStats{}, err
	}
	defer ds.Close()
	index := ds.tokenIndex()
	pairs, err := resolvePairs(cfg, index, drawsPath)
	if err != nil {
		return SummarizeStats{}, err
	}
	queries, err := resolveTokens(cfg.Neighbours, index, "neighbours", drawsPath)
	if err != nil {
		return SummarizeStats{}, err
	}
	if err := os.MkdirAll(cfg.Output, 0o755); err != nil {
		return SummarizeStats{}, err
	}

	nb := newNeighbourPass(queries, len(ds.ids), cfg.Top, kind, ds.r.NumDraws())
	var pairVals []float64 // draw after draw, PairQuantities per pair
	per := posterior.PairQuantities * len(pairs)
	onDraw := func(int, int) {}
	if cfg.OnDraw != nil {
		onDraw = cfg.OnDraw
	}
	for read := 0; ds.Next(); read++ {
		onDraw(read, ds.r.NumDraws())
		if err := ctx.Err(); err != nil {
			return SummarizeStats{}, err
		}
		p := ds.Params()
		if per > 0 {
			off := len(pairVals)
			pairVals = slices.Grow(pairVals, per)[:off+per]
			posterior.PairValues(pairVals[off:], p, pairs, kind)
		}
		if nb != nil {
			nb.addDraw(p)
		}
	}
	if err := ds.Err(); err != nil {
		return SummarizeStats{}, err
	}
	onDraw(ds.r.NumDraws(), ds.r.NumDraws())
	chains, n, err := ds.DrawsPerChain()
	if err != nil {
		return SummarizeStats{}, err
	}
	st := SummarizeStats{Chains: chains, DrawsPerChain: n, Tokens: len(ds.ids), Pairs: len(pairs), Queries: len(queries)}
	var nrows []formats.NeighbourRow
	if nb != nil {
		reopen := func() (*drawStream, error) { return openDraws(drawsPath) }
		if nrows, err = nb.finish(ctx, chains, ds.ids, ds.tokens, reopen); err != nil {
			return st, err
		}
		st.Neighbours = len(nrows)
	}
	fps, err := fingerprintAll(drawsPath, cfg.Pairs)
	if err != nil {
		return st, err
	}
	meta := func(schema string) formats.Meta {
		return formats.Meta{Schema: schema, Config: cfg, Inputs: fps, Stats: st}
	}
	if per > 0 {
		stats := make([]formats.Stats, per)
		buf := make([][]float64, cfg.Threads)
		summarizeEach(stats, chains, cfg.Threads, func(t, k int) []float64 {
			buf[t] = buf[t][:0]
			for g := k; g < len(pairVals); g += per {
				buf[t] = append(buf[t], pairVals[g])
			}
			return buf[t]
		})
		quantities := [posterior.PairQuantities]string{formats.QuantityCosine, formats.QuantityDot, formats.QuantityCooccurrence}
		rows := make([]formats.SimilarityRow, per)
		for k, pr := range pairs {
			for q, name := range quantities {
				rows[k*len(quantities)+q] = formats.SimilarityRow{
					TokenA: ds.tokens[pr.A], TokenB: ds.tokens[pr.B], Quantity: name, Stats: stats[k*len(quantities)+q],
				}
			}
		}
		if err := formats.WriteAll(filepath.Join(cfg.Output, SimilarityFile), rows, meta(formats.SchemaSimilarity)); err != nil {
			return st, err
		}
	}
	if nb != nil {
		if err := formats.WriteAll(filepath.Join(cfg.Output, NeighboursFile), nrows, meta(formats.SchemaNeighbours)); err != nil {
			return st, err
		}
	}
	st.Seconds = time.Since(start).Seconds()
	return st, nil
}

// statsOf converts diag's summary into the statistic columns.
func statsOf(s diag.Summary) formats.Stats {
	return formats.Stats{
		Mean: s.Mean, Median: s.Median, SD: s.SD, MAD: s.MAD, Q5: s.Q5, Q95: s.Q95,
		MCSEMean: s.MCSEMean, ESSBulk: s.ESSBulk, ESSTail: s.ESSTail, Rhat: s.Rhat,
	}
}

// summarizeEach fills dst[k] with the summary of the draws column(t, k)
// returns (chain after chain), using threads goroutines; t is the
// goroutine's number, for per-goroutine buffers.
func summarizeEach(dst []formats.Stats, chains, threads int, column func(t, k int) []float64) {
	var wg sync.WaitGroup
	per := (len(dst) + threads - 1) / threads
	for t := 0; t*per < len(dst); t++ {
		wg.Add(1)
		go func(t int) {
			defer wg.Done()
			var sz diag.Summarizer
			for k := t * per; k < min((t+1)*per, len(dst)); k++ {
				dst[k] = statsOf(sz.SummarizeFlat(column(t, k), chains))
			}
		}(t)
	}
	wg.Wait()
}

// neighbourCacheBytes bounds the memory of the nearest tokens kept per
// draw and query (8 bytes each) between the two passes of neighbourPass,
// and neighbourKeepMax their number: selecting and sorting more than about
// a thousand per draw costs more than it saves.
var (
	neighbourCacheBytes = 64 << 20
	neighbourKeepMax    = 1024
)

// neighbourPass finds the nearest neighbours of the queries draw by draw.
// The first pass (addDraw) scores every token against every query by one
// matrix product, counts the tokens among each query's top K and keeps,
// per draw and query, the M nearest tokens and their scores (M >= K, as
// many as neighbourCacheBytes allows). The candidates, the tokens among a
// query's top K in at least one draw, are known only after the last draw;
// finish then needs every candidate's score and rank in every draw. A
// candidate among the M kept has both exactly: the kept tokens are all
// those scoring at least the M-th score, so every token scoring above a
// kept candidate is kept too, and its rank is 1 + the number of kept
// tokens above it. Only the draws where some candidate fell outside the M
// kept are scored again, in a second pass over the draws, and scored
// exactly as in the first, from the same float32 values by the same code.
type neighbourPass struct {
	queries []int
	v, top  int
	keep    int // M
	scorer  posterior.CosineScorer
	scores  []float64 // queries x v of the current draw
	counts  []int32   // queries x v: draws with the token among the top K
	sel     []int
	// The kept tokens of draw g and query q are nearID[end[i-1]:end[i]]
	// with i = g*len(queries)+q, nearest first.
	nearID    []int32
	nearScore []float32
	end       []int
	draws     int
}

func newNeighbourPass(queries []int, v, top int, kind posterior.VectorKind, draws int) *neighbourPass {
	if len(queries) == 0 {
		return nil
	}
	q := len(queries)
	keep := neighbourCacheBytes / (8 * q * max(draws, 1))
	keep = max(top, min(keep, neighbourKeepMax, v-1))
	return &neighbourPass{
		queries: queries, v: v, top: top, keep: keep, scorer: posterior.CosineScorer{Kind: kind},
		scores: make([]float64, q*v), counts: make([]int32, q*v),
	}
}

// score writes the current draw's scores, rounded to float32 (the
// precision of the draws) before anything is decided, so that both passes
// decide on the same numbers.
func (nb *neighbourPass) score(p *posterior.Params) []float64 {
	s := nb.scorer.Scores(nb.scores, p, nb.queries)
	for i, x := range s {
		s[i] = float64(float32(x))
	}
	return s
}

// addDraw scores one draw, counts the top K and keeps the M nearest.
func (nb *neighbourPass) addDraw(p *posterior.Params) {
	s := nb.score(p)
	for q, query := range nb.queries {
		row := s[q*nb.v : (q+1)*nb.v]
		nb.sel = posterior.TopK(nb.sel[:0], row, nb.keep, query)
		rank := 0
		for n, j := range nb.sel {
			if n == 0 || row[j] != row[nb.sel[n-1]] {
				rank = n + 1
			}
			if rank <= nb.top {
				nb.counts[q*nb.v+j]++
			}
			nb.nearID = append(nb.nearID, int32(j))
			nb.nearScore = append(nb.nearScore, float32(row[j]))
		}
		nb.end = append(nb.end, len(nb.nearID))
	}
	nb.draws++
}

// finish ranks the candidates in every draw and summarises them, ordered
// by query, then by descending probability of being in the top K, rank
// and token id. reopen opens the draws again for the second pass.
func (nb *neighbourPass) finish(ctx context.Context, chains int, ids []int32, tokens []string, reopen func() (*drawStream, error)) ([]formats.NeighbourRow, error) {
	nq, g := len(nb.queries), nb.draws
	cands := make([][]int, nq)
	sims := make([][]float64, nq) // candidate-major: sims[q][c*g+draw]
	ranks := make([][]float64, nq)
	slot := make([]int32, nq*nb.v) // candidate index of token j for query q, or -1
	for q := range nq {
		for j, n := range nb.counts[q*nb.v : (q+1)*nb.v] {
			slot[q*nb.v+j] = -1
			if n > 0 {
				slot[q*nb.v+j] = int32(len(cands[q]))
				cands[q] = append(cands[q], j)
			}
		}
		sims[q] = make([]float64, len(cands[q])*g)
		ranks[q] = make([]float64, len(cands[q])*g)
	}
	again := make([]bool, g) // draws to score again
	rescore := false
	for d := range g {
		for q := range nq {
			i := d*nq + q
			from := 0
			if i > 0 {
				from = nb.end[i-1]
			}
			found, rank := 0, 0
			for n := from; n < nb.end[i]; n++ {
				x := nb.nearScore[n]
				if n == from || x != nb.nearScore[n-1] {
					rank = n - from + 1
				}
				if c := slot[q*nb.v+int(nb.nearID[n])]; c >= 0 {
					sims[q][int(c)*g+d] = float64(x)
					ranks[q][int(c)*g+d] = float64(rank)
					found++
				}
			}
			if found < len(cands[q]) {
				again[d], rescore = true, true
			}
		}
	}
	if rescore {
		if err := nb.rescore(ctx, again, cands, sims, ranks, reopen); err != nil {
			return nil, err
		}
	}
	var rows []formats.NeighbourRow
	var sz diag.Summarizer
	ind := make([]float64, g)
	sorted := make([]float64, g)
	for q, query := range nb.queries {
		start := len(rows)
		for c, j := range cands[q] {
			sim := sz.SummarizeFlat(sims[q][c*g:(c+1)*g], chains)
			rk := ranks[q][c*g : (c+1)*g]
			for d, x := range rk {
				ind[d] = 0
				if x <= float64(nb.top) {
					ind[d] = 1
				}
			}
			pt := sz.SummarizeFlat(ind, chains)
			mcse := pt.MCSEMean
			if pt.Mean == 0 || pt.Mean == 1 {
				mcse = 0
			}
			copy(sorted, rk)
			sort.Float64s(sorted)
			rows = append(rows, formats.NeighbourRow{
				Query: tokens[query], QueryID: ids[query], Neighbour: tokens[j], NeighbourID: ids[j],
				Top: int32(nb.top), PTop: pt.Mean, PTopMCSE: mcse,
				RankMedian: diag.Quantile(sorted, 0.5), RankQ5: diag.Quantile(sorted, 0.05), RankQ95: diag.Quantile(sorted, 0.95),
				SimMean: sim.Mean, SimMedian: sim.Median, SimQ5: sim.Q5, SimQ95: sim.Q95, SimRhat: sim.Rhat, SimESSBulk: sim.ESSBulk,
			})
		}
		part := rows[start:]
		sort.SliceStable(part, func(a, b int) bool {
			x, y := part[a], part[b]
			if x.PTop != y.PTop {
				return x.PTop > y.PTop
			}
			if x.RankMedian != y.RankMedian {
				return x.RankMedian < y.RankMedian
			}
			return x.NeighbourID < y.NeighbourID
		})
	}
	return rows, nil
}

// rescore reads the draws again and, in the draws marked in again, ranks
// every candidate among all the scores.
func (nb *neighbourPass) rescore(ctx context.Context, again []bool, cands [][]int, sims, ranks [][]float64, reopen func() (*drawStream, error)) error {
	ds, err := reopen()
	if err != nil {
		return err
	}
	defer ds.Close()
	g := len(again)
	var rk []int
	d := 0
	for ; ds.Next(); d++ {
		if err := ctx.Err(); err != nil {
			return err
		}
		if d >= g {
			break
		}
		if !again[d] {
			continue
		}
		s := nb.score(ds.Params())
		for q, query := range nb.queries {
			row := s[q*nb.v : (q+1)*nb.v]
			rk = posterior.Ranks(slices.Grow(rk[:0], len(cands[q]))[:len(cands[q])], row, cands[q], query)
			for c, j := range cands[q] {
				sims[q][c*g+d] = row[j]
				ranks[q][c*g+d] = float64(rk[c])
			}
		}
	}
	if err := ds.Err(); err != nil {
		return err
	}
	if d != g {
		return fmt.Errorf("%s: changed while being read: %d draws, then %d", ds.path, g, d)
	}
	return nil
}

// resolvePairs reads the pairs file and expands PairsAllAmong into rows of
// the draws.
func resolvePairs(cfg SummarizeConfig, index map[string]int, drawsPath string) ([]posterior.Pair, error) {
	var pairs []posterior.Pair
	if cfg.Pairs != "" {
		names, lines, err := readPairNames(cfg.Pairs)
		if err != nil {
			return nil, err
		}
		if len(names) == 0 {
			return nil, fmt.Errorf("%s: no pairs (two tokens a line)", cfg.Pairs)
		}
		for n, pr := range names {
			var ids [2]int
			for k, t := range pr {
				i, ok := index[t]
				if !ok {
					return nil, fmt.Errorf("%s:%d: token %q is not among the tokens of %s%s", cfg.Pairs, lines[n], t, drawsPath, tokenHint(t, index))
				}
				ids[k] = i
			}
			pairs = append(pairs, posterior.Pair{A: ids[0], B: ids[1]})
		}
	}
	among, err := resolveTokens(cfg.PairsAllAmong, index, "pairs-all-among", drawsPath)
	if err != nil {
		return nil, err
	}
	for a := range among {
		for b := a + 1; b < len(among); b++ {
			pairs = append(pairs, posterior.Pair{A: among[a], B: among[b]})
		}
	}
	// A pair named twice (in the file and among the tokens) is summarised
	// once, where first named. (b, a) is another pair: the co-occurrence
	// probability is not symmetric.
	seen := make(map[posterior.Pair]bool, len(pairs))
	return slices.DeleteFunc(pairs, func(p posterior.Pair) bool {
		dup := seen[p]
		seen[p] = true
		return dup
	}), nil
}

// readPairNames reads a pairs file: two tokens per line, separated by a
// tab, or by spaces when the tokens have none; blank lines and lines
// starting with # are skipped. It returns each pair's line number too.
func readPairNames(path string) (pairs [][2]string, lines []int, err error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, nil, fmt.Errorf("pairs: %w", err)
	}
	for n, line := range strings.Split(strings.TrimPrefix(string(data), "\uFEFF"), "\n") { // as readTokenLines
		line = strings.TrimRight(line, "\r")
		if t := strings.TrimSpace(line); t == "" || strings.HasPrefix(t, "#") {
			continue
		}
		fields := strings.Fields(line)
		if strings.Contains(line, "\t") {
			fields = strings.Split(line, "\t")
		}
		if len(fields) != 2 {
			return nil, nil, fmt.Errorf("%s:%d: want two tokens separated by a tab (or by spaces when the tokens have none), got %d fields", path, n+1, len(fields))
		}
		pairs = append(pairs, [2]string{strings.TrimSpace(fields[0]), strings.TrimSpace(fields[1])})
		lines = append(lines, n+1)
	}
	return pairs, lines, nil
}

// resolveTokens maps tokens to rows of the draws, a token named twice once
// (--pairs-all-among her,her,his would pair her with herself, and
// --neighbours her,her list her neighbours twice).
func resolveTokens(tokens []string, index map[string]int, what, drawsPath string) ([]int, error) {
	rows := make([]int, 0, len(tokens))
	for n, t := range tokens {
		i, ok := index[t]
		if !ok {
			return nil, fmt.Errorf("%s: token %d, %q, is not among the tokens of %s%s", what, n+1, t, drawsPath, tokenHint(t, index))
		}
		if !slices.Contains(rows, i) {
			rows = append(rows, i)
		}
	}
	return rows, nil
}

// tokenHint returns, for a token a user named that index lacks, the
// token as tokenize writes it where index has that: tokens are case-folded
// and composed (NFC), so "Paris" is "paris" in most vocabularies.
func tokenHint(t string, index map[string]int) string {
	n := tokenize.Normalize(t, tokenize.Options{})
	if _, ok := index[n]; ok && n != t {
		return fmt.Sprintf(" (tokenize folds case and composes accents: it has %q)", n)
	}
	return ""
}

// ReadTokenFile reads a list of tokens, one per line (blank lines and
// lines starting with # skipped), for options that take TOKENS as @FILE.
func ReadTokenFile(path string) ([]string, error) {
	tokens, _, err := readTokenLines(path)
	return tokens, err
}

// readTokenLines is ReadTokenFile that also returns each token's line
// number, for errors about a token.
func readTokenLines(path string) (tokens []string, lines []int, err error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, nil, err
	}
	// A byte-order mark, as Windows editors write, is not part of the
	// first token.
	for n, line := range strings.Split(strings.TrimPrefix(string(data), "\uFEFF"), "\n") {
		line = strings.TrimSpace(line)
		if line != "" && !strings.HasPrefix(line, "#") {
			tokens = append(tokens, line)
			lines = append(lines, n+1)
		}
	}
	return tokens, lines, nil
}

func fingerprintAll(paths ...string) ([]input.Fingerprint, error) {
	var fps []input.Fingerprint
	for _, p := range paths {
		if p == "" {
			continue
		}
		fp, err := input.FingerprintFile(p)
		if err != nil {
			return nil, err
		}
		fps = append(fps, fp)
	}
	return fps, nil
}
