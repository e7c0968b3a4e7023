package formats

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/parquet-go/parquet-go"
)

// drawsSpec describes a synthetic fit's draws: the saved token ids (a
// subset, as --save-draws writes), D, chains x draws, and anchors whose
// context vectors are the same in every draw.
type drawsSpec struct {
	ids     []int32
	dim     int
	chains  int
	draws   int
	anchors map[int32]bool
}

// rows returns the draws in the fit stage's order, with standard normal
// coordinates from a fixed seed.
func (s drawsSpec) rows() []DrawRow {
	rng := rand.New(rand.NewPCG(3, uint64(s.dim)))
	fixed := map[int32][]float32{}
	for id := range s.anchors {
		v := make([]float32, s.dim)
		for k := range v {
			v[k] = float32(rng.NormFloat64())
		}
		fixed[id] = v
	}
	var rows []DrawRow
	for c := range s.chains {
		for g := range s.draws {
			for _, param := range []string{ParamRho, ParamAlpha} {
				for _, id := range s.ids {
					v := make([]float32, s.dim)
					for k := range v {
						v[k] = float32(rng.NormFloat64())
					}
					if param == ParamAlpha && s.anchors[id] {
						v = fixed[id]
					}
					rows = append(rows, DrawRow{Chain: int16(c), Draw: int32(g), Param: param, TokenID: id, Token: fmt.Sprintf("tok %d", id), Vector: v})
				}
			}
		}
	}
	return rows
}

func longRows(rows []DrawRow) []DrawLongRow {
	var out []DrawLongRow
	for _, r := range rows {
		for k, x := range r.Vector {
			out = append(out, DrawLongRow{Chain: r.Chain, Draw: r.Draw, Param: r.Param, TokenID: r.TokenID, Token: r.Token, Dim: int16(k), Value: x})
		}
	}
	return out
}

// writeSmallGroups writes rows as Create does, but with row groups of
// groupRows rows and pages of about pageBytes, so that small files
// exercise the reader's row group and page boundaries.
func writeSmallGroups[T any](t testing.TB, path, schema string, rows []T, groupRows int64, pageBytes int) {
	t.Helper()
	kv, err := Meta{Schema: schema}.pairs()
	if err != nil {
		t.Fatal(err)
	}
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	opts := []parquet.WriterOption{parquet.Compression(&zstdFastest), parquet.MaxRowsPerRowGroup(groupRows), parquet.PageBufferSize(pageBytes)}
	for _, p := range kv {
		opts = append(opts, parquet.KeyValueMetadata(p[0], p[1]))
	}
	w := parquet.NewGenericWriter[T](f, opts...)
	if _, err := w.Write(rows); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
}

type refDraw struct {
	chain, draw int
	vals        []float32
}

// referenceDraws groups the rows ReadAll returns into draws, the naive
// reading the column reader must reproduce.
func referenceDraws(t *testing.T, path string, long bool) (draws []refDraw, ids []int32, tokens []string) {
	t.Helper()
	type cell struct {
		chain, draw int
		param       string
		id          int32
		token       string
		vals        []float32
	}
	var cells []cell
	if long {
		rows, _, err := ReadAll[DrawLongRow](path, SchemaDrawsLong)
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range rows {
			cells = append(cells, cell{int(r.Chain), int(r.Draw), r.Param, r.TokenID, r.Token, []float32{r.Value}})
		}
	} else {
		rows, _, err := ReadAll[DrawRow](path, SchemaDraws)
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range rows {
			cells = append(cells, cell{int(r.Chain), int(r.Draw), r.Param, r.TokenID, r.Token, r.Vector})
		}
	}
	for _, c := range cells {
		n := len(draws)
		if n == 0 || draws[n-1].chain != c.chain || draws[n-1].draw != c.draw {
			draws = append(draws, refDraw{chain: c.chain, draw: c.draw})
			n++
		}
		draws[n-1].vals = append(draws[n-1].vals, c.vals...)
		if n == 1 && c.param == ParamRho && (len(ids) == 0 || ids[len(ids)-1] != c.id) {
			ids, tokens = append(ids, c.id), append(tokens, c.token)
		}
	}
	return draws, ids, tokens
}

func TestDrawsReaderMatchesReadAll(t *testing.T) {
	specs := []struct {
		name string
		spec drawsSpec
	}{
		{"d1", drawsSpec{ids: []int32{0, 1, 2, 3, 4}, dim: 1, chains: 2, draws: 4}},
		{"d7-subset-anchors", drawsSpec{ids: []int32{0, 2, 3, 7, 11, 12}, dim: 7, chains: 3, draws: 5, anchors: map[int32]bool{7: true, 12: true}}},
		{"d7-one-token", drawsSpec{ids: []int32{5}, dim: 7, chains: 1, draws: 3}},
	}
	for _, sp := range specs {
		rows := sp.spec.rows()
		for _, long := range []bool{false, true} {
			for _, group := range []int64{5, 64, 1 << 20} {
				name := fmt.Sprintf("%s/long=%v/group=%d", sp.name, long, group)
				t.Run(name, func(t *testing.T) {
					path := filepath.Join(t.TempDir(), "draws.parquet")
					switch {
					case group == 1<<20 && long:
						if err := WriteAll(path, longRows(rows), Meta{Schema: SchemaDrawsLong}); err != nil {
							t.Fatal(err)
						}
					case group == 1<<20:
						if err := WriteAll(path, rows, Meta{Schema: SchemaDraws}); err != nil {
							t.Fatal(err)
						}
					case long:
						writeSmallGroups(t, path, SchemaDrawsLong, longRows(rows), group, 64)
					default:
						writeSmallGroups(t, path, SchemaDraws, rows, group, 64)
					}
					checkAgainstReference(t, path, long, sp.spec)
				})
			}
		}
	}
}

func checkAgainstReference(t *testing.T, path string, long bool, spec drawsSpec) {
	t.Helper()
	want, ids, tokens := referenceDraws(t, path, long)
	r, err := OpenDraws(path)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	if r.Long() != long || r.Dim() != spec.dim || !slices.Equal(r.TokenIDs(), ids) || !slices.Equal(r.Tokens(), tokens) {
		t.Fatalf("long %v dim %d ids %v tokens %q, want %v %d %v %q", r.Long(), r.Dim(), r.TokenIDs(), r.Tokens(), long, spec.dim, ids, tokens)
	}
	if r.NumDraws() != len(want) {
		t.Errorf("NumDraws %d, want %d", r.NumDraws(), len(want))
	}
	n := 0
	for r.Next() {
		if n >= len(want) {
			t.Fatalf("draw %d beyond the %d of the file", n, len(want))
		}
		w := want[n]
		if r.Chain() != w.chain || r.Draw() != w.draw {
			t.Fatalf("draw %d is chain %d draw %d, want %d %d", n, r.Chain(), r.Draw(), w.chain, w.draw)
		}
		got := r.Values()
		if len(got) != len(w.vals) {
			t.Fatalf("draw %d: %d values, want %d", n, len(got), len(w.vals))
		}
		for k := range got {
			if math.Float32bits(got[k]) != math.Float32bits(w.vals[k]) {
				t.Fatalf("draw %d value %d: %v, want %v", n, k, got[k], w.vals[k])
			}
		}
		n++
	}
	if err := r.Err(); err != nil {
		t.Fatal(err)
	}
	if n != len(want) {
		t.Fatalf("%d draws, want %d", n, len(want))
	}
	per := slices.Repeat([]int{spec.draws}, spec.chains)
	if !slices.Equal(r.DrawsPerChain(), per) {
		t.Errorf("draws per chain %v, want %v", r.DrawsPerChain(), per)
	}
}

// TestDrawsReaderErrors damages files in the ways a reader must notice and
// checks that the error names the file and the row.
func TestDrawsReaderErrors(t *testing.T) {
	spec := drawsSpec{ids: []int32{1, 2, 4}, dim: 7, chains: 2, draws: 3}
	perDraw := 2 * len(spec.ids)
	cases := []struct {
		name   string
		edit   func([]DrawRow) []DrawRow
		atOpen bool   // the error comes from the first draw
		want   string // a fragment of the message, row included
	}{
		{"short vector in a later draw", func(r []DrawRow) []DrawRow {
			r[perDraw+4].Vector = r[perDraw+4].Vector[:6]
			return r
		}, false, fmt.Sprintf("row %d: vector of length 6, want 7", perDraw+4)},
		{"long vector in the first draw", func(r []DrawRow) []DrawRow {
			r[2].Vector = append(r[2].Vector, 1)
			return r
		}, true, "row 2: rho of token 4 has 8 coordinates, the first vector 7"},
		{"empty vector", func(r []DrawRow) []DrawRow {
			r[perDraw+1].Vector = nil
			return r
		}, false, fmt.Sprintf("row %d: column vector.list.element: null value or empty vector", perDraw+1)},
		{"last draw incomplete", func(r []DrawRow) []DrawRow { return r[:len(r)-1] }, false, "the last draw (chain 1 draw 2) is incomplete"},
		{"draws out of order", func(r []DrawRow) []DrawRow {
			for k := range perDraw {
				r[perDraw+k].Draw = 2
				r[2*perDraw+k].Draw = 1
			}
			return r
		}, false, fmt.Sprintf("row %d: chain 0 draw 2 follows chain 0 draw 0; want draws in order", perDraw)},
		{"tokens swapped in a later draw", func(r []DrawRow) []DrawRow {
			r[perDraw+1], r[perDraw+2] = r[perDraw+2], r[perDraw+1]
			return r
		}, false, fmt.Sprintf("row %d: rho of token 4 (coordinate 0), want rho of token 2 (coordinate 0) as in the first draw", perDraw+1)},
		{"ids decreasing in the first draw", func(r []DrawRow) []DrawRow {
			r[0], r[1] = r[1], r[0]
			return r
		}, true, "row 1: rho of token 1 after rho of token 2; want increasing token ids"},
		{"alpha before rho", func(r []DrawRow) []DrawRow {
			r[2], r[3] = r[3], r[2]
			return r
		}, true, "row 3: rho of token 4 after alpha vectors"},
		{"alpha of another token", func(r []DrawRow) []DrawRow {
			r[4].TokenID = 5
			return r
		}, true, "row 4: alpha of token 5, want alpha of token 2"},
		{"unknown param", func(r []DrawRow) []DrawRow {
			r[perDraw+3].Param = "beta"
			return r
		}, false, fmt.Sprintf(`row %d: "beta" of token 1`, perDraw+3)},
		{"chain does not start at 0", func(r []DrawRow) []DrawRow {
			for k := range r {
				r[k].Chain++
			}
			return r
		}, true, "row 0: first draw is chain 1 draw 0, want chain 0 draw 0"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "draws.parquet")
			writeSmallGroups(t, path, SchemaDraws, tc.edit(spec.rows()), 4, 64)
			err := readAllDraws(path)
			if err == nil {
				t.Fatal("no error")
			}
			if msg := err.Error(); !strings.HasPrefix(msg, path+": ") || !strings.Contains(msg, tc.want) {
				t.Fatalf("error %q, want %q after the path", msg, tc.want)
			}
			_, openErr := OpenDraws(path)
			if (openErr != nil) != tc.atOpen {
				t.Errorf("OpenDraws error %v; want one: %v", openErr, tc.atOpen)
			}
		})
	}
}

// readAllDraws opens path and reads every draw, returning the first error.
func readAllDraws(path string) error {
	r, err := OpenDraws(path)
	if err != nil {
		return err
	}
	defer r.Close()
	for r.Next() {
	}
	return r.Err()
}

func TestDrawsReaderLongErrors(t *testing.T) {
	spec := drawsSpec{ids: []int32{0, 1}, dim: 3, chains: 1, draws: 2}
	perDraw := 2 * len(spec.ids) * spec.dim
	cases := []struct {
		name string
		edit func([]DrawLongRow) []DrawLongRow
		want string
	}{
		{"coordinate skipped in the first draw", func(r []DrawLongRow) []DrawLongRow {
			return slices.Delete(r, 4, 5)
		}, "row 4: coordinate 2 of rho of token 1, want coordinate 1 of rho of token 1"},
		{"coordinates swapped in a later draw", func(r []DrawLongRow) []DrawLongRow {
			r[perDraw+1], r[perDraw+2] = r[perDraw+2], r[perDraw+1]
			return r
		}, fmt.Sprintf("row %d: rho of token 0 (coordinate 2), want rho of token 0 (coordinate 1)", perDraw+1)},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "draws.parquet")
			writeSmallGroups(t, path, SchemaDrawsLong, tc.edit(longRows(spec.rows())), 5, 64)
			err := readAllDraws(path)
			if err == nil || !strings.HasPrefix(err.Error(), path+": ") || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error %v, want %q after the path", err, tc.want)
			}
		})
	}
}

func TestDrawsReaderFiles(t *testing.T) {
	dir := t.TempDir()
	spec := drawsSpec{ids: []int32{0, 1, 2}, dim: 4, chains: 1, draws: 40}
	good := filepath.Join(dir, "draws.parquet")
	if err := WriteAll(good, spec.rows(), Meta{Schema: SchemaDraws}); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(good)
	if err != nil {
		t.Fatal(err)
	}
	truncated := filepath.Join(dir, "truncated.parquet")
	if err := os.WriteFile(truncated, data[:len(data)/2], 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := OpenDraws(truncated); err == nil || !strings.HasPrefix(err.Error(), truncated+": not a readable Parquet file") {
		t.Errorf("truncated file: error %v", err)
	}
	other := filepath.Join(dir, "map.parquet")
	if err := WriteAll(other, []VectorRow{{Param: ParamRho, Vector: []float32{1}}}, Meta{Schema: SchemaMap}); err != nil {
		t.Fatal(err)
	}
	if _, err := OpenDraws(other); !errors.Is(err, ErrNotPwe) || !strings.Contains(err.Error(), SchemaMap) {
		t.Errorf("map file: error %v, want ErrNotPwe naming %s", err, SchemaMap)
	}
	empty := filepath.Join(dir, "empty.parquet")
	if err := WriteAll(empty, []DrawRow{}, Meta{Schema: SchemaDraws}); err != nil {
		t.Fatal(err)
	}
	if _, err := OpenDraws(empty); !errors.Is(err, ErrNoDraws) || !strings.HasPrefix(err.Error(), empty) {
		t.Errorf("empty file: error %v, want ErrNoDraws", err)
	}
}

// foreignDrawRow stores draws as other writers may: dictionary-encoded
// integers, nullable columns without nulls.
type foreignDrawRow struct {
	Chain   int16     `parquet:"chain,dict"`
	Draw    *int32    `parquet:"draw,optional"`
	Param   string    `parquet:"param"`
	TokenID int32     `parquet:"token_id,dict"`
	Token   *string   `parquet:"token,optional"`
	Vector  []float32 `parquet:"vector,list"`
}

func TestDrawsReaderForeignEncodings(t *testing.T) {
	spec := drawsSpec{ids: []int32{2, 3, 8}, dim: 7, chains: 2, draws: 3, anchors: map[int32]bool{3: true}}
	var rows []foreignDrawRow
	for _, r := range spec.rows() {
		rows = append(rows, foreignDrawRow{Chain: r.Chain, Draw: &r.Draw, Param: r.Param, TokenID: r.TokenID, Token: &r.Token, Vector: r.Vector})
	}
	path := filepath.Join(t.TempDir(), "draws.parquet")
	writeSmallGroups(t, path, SchemaDraws, rows, 7, 64)
	checkAgainstReference(t, path, false, spec)
}

// foreignDrawLongRow dictionary-encodes the coordinates of the long
// layout.
type foreignDrawLongRow struct {
	Chain   int16   `parquet:"chain"`
	Draw    int32   `parquet:"draw"`
	Param   string  `parquet:"param"`
	TokenID int32   `parquet:"token_id"`
	Token   string  `parquet:"token"`
	Dim     int16   `parquet:"dim,dict"`
	Value   float32 `parquet:"value,dict"`
}

func TestDrawsReaderForeignLong(t *testing.T) {
	spec := drawsSpec{ids: []int32{0, 1}, dim: 3, chains: 1, draws: 4, anchors: map[int32]bool{1: true}}
	var rows []foreignDrawLongRow
	for _, r := range longRows(spec.rows()) {
		rows = append(rows, foreignDrawLongRow(r))
	}
	path := filepath.Join(t.TempDir(), "draws.parquet")
	writeSmallGroups(t, path, SchemaDrawsLong, rows, 10, 64)
	checkAgainstReference(t, path, true, spec)
}
