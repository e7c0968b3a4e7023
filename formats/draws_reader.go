package formats

import (
	"cmp"
	"errors"
	"fmt"
	"os"
	"strings"

	"github.com/parquet-go/parquet-go"
)

// ErrNoDraws is returned by OpenDraws for a draws file without rows.
var ErrNoDraws = errors.New("formats: no draws")

// DrawsReader reads a draws file, in either layout (SchemaDraws or
// SchemaDrawsLong), one posterior draw at a time. It decodes the columns
// page by page instead of building a DrawRow per row, which costs about
// what copying the floats does, and holds one page per column and one
// draw in memory. The token column is read for the first draw only.
//
// The rows must be in the order the fit stage writes them: draws by chain,
// then draw (from 0, without gaps); within a draw the target vectors of
// some tokens in increasing token id, then their context vectors in the
// same order, each of the same length D; in the long layout a vector is D
// consecutive rows of coordinates 0 to D-1. The first draw fixes the
// tokens and D, and every later draw must repeat them.
//
// Use it like bufio.Scanner: Next, then Chain, Draw and Values, and Err
// once Next has returned false.
type DrawsReader struct {
	path string
	f    *os.File
	pf   *parquet.File
	meta Meta
	long bool

	ids    []int32
	tokens []string
	dim    int

	vals        []float32 // the current draw
	chain, draw int
	perChain    []int
	pending     bool // Next has yet to return the first draw
	err         error

	// The row stream.
	cols                               []*leaf
	chainCol, drawCol, paramCol, idCol *leaf
	tokenCol, vecCol, dimCol, valueCol *leaf
	groups                             []parquet.RowGroup
	group                              int   // row groups opened
	left                               int64 // rows left in the current one
	row                                int64 // index of the current row
	held                               bool  // the current row is to be read again
	cur                                drawRow
	one                                [1]float32
}

// drawRow is one row of either layout: the values of the vector (param,
// id) from coordinate dim on.
type drawRow struct {
	chain, draw int
	param       int // 0 rho, 1 alpha, -1 another name
	id          int32
	token       string
	dim         int
	vals        []float32
}

// OpenDraws opens the draws file at path, checks its schema and reads its
// first draw, which fixes the tokens and the dimension.
func OpenDraws(path string) (_ *DrawsReader, err error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	var r *DrawsReader
	defer func() {
		switch {
		case err == nil:
		case r != nil:
			r.Close()
		default:
			f.Close()
		}
	}()
	defer recoverDamaged(&err, path, -1)
	st, err := f.Stat()
	if err != nil {
		return nil, err
	}
	pf, err := openParquetFile(f, path, st.Size(), parquet.SkipPageIndex(true), parquet.SkipBloomFilters(true), parquet.ReadBufferSize(1<<18))
	if err != nil {
		return nil, err
	}
	r = &DrawsReader{path: path, f: f, pf: pf, meta: readMeta(pf), row: -1, groups: pf.RowGroups()}
	if err := r.bindColumns(); err != nil {
		return nil, err
	}
	if err := r.readFirst(); err != nil {
		return nil, err
	}
	return r, nil
}

// bindColumns checks the schema and finds the columns to read.
func (r *DrawsReader) bindColumns() error {
	var want *parquet.Schema
	switch r.meta.Schema {
	case SchemaDraws:
		want = parquet.SchemaOf(new(DrawRow))
	case SchemaDrawsLong:
		want, r.long = parquet.SchemaOf(new(DrawLongRow)), true
	default:
		got := r.meta.Schema
		if got == "" {
			got = "none"
		}
		return fmt.Errorf("%s: %w: want pwe.schema %q or %q, file has %s", r.path, ErrNotPwe, SchemaDraws, SchemaDrawsLong, got)
	}
	have := r.pf.Schema()
	if err := checkColumns(have, want); err != nil {
		return fmt.Errorf("%s: %w", r.path, err)
	}
	var err error
	bind := func(repeated bool, path ...string) *leaf {
		l, _ := have.Lookup(path...)
		name := strings.Join(path, ".")
		if (l.MaxRepetitionLevel == 1) != repeated || l.MaxRepetitionLevel > 1 {
			err = cmp.Or(err, fmt.Errorf("%s: %w: column %q has repetition level %d", r.path, ErrNotPwe, name, l.MaxRepetitionLevel))
		}
		c := &leaf{name: name, index: l.ColumnIndex, maxDef: byte(l.MaxDefinitionLevel)}
		r.cols = append(r.cols, c)
		return c
	}
	r.chainCol, r.drawCol, r.paramCol = bind(false, "chain"), bind(false, "draw"), bind(false, "param")
	r.idCol, r.tokenCol = bind(false, "token_id"), bind(false, "token")
	if r.long {
		r.dimCol, r.valueCol = bind(false, "dim"), bind(false, "value")
	} else {
		r.vecCol = bind(true, "vector", "list", "element")
	}
	return err
}

// nextRow reads the next row into r.cur; it returns false at the end of
// the file.
func (r *DrawsReader) nextRow() (ok bool, err error) {
	defer recoverDamaged(&err, r.path, r.row+1)
	if r.held {
		r.held = false
		return true, nil
	}
	for r.left == 0 {
		if r.group == len(r.groups) {
			return false, nil
		}
		g := r.groups[r.group]
		r.group++
		for _, c := range r.cols {
			c.open(g)
		}
		r.left = g.NumRows()
	}
	r.left--
	r.row++
	c := &r.cur
	var x int32
	if x, err = r.chainCol.int32(); err != nil {
		return false, r.columnErr(r.chainCol, err)
	}
	c.chain = int(x)
	if x, err = r.drawCol.int32(); err != nil {
		return false, r.columnErr(r.drawCol, err)
	}
	c.draw = int(x)
	if c.param, err = r.paramCol.param(); err != nil {
		return false, r.columnErr(r.paramCol, err)
	}
	if c.id, err = r.idCol.int32(); err != nil {
		return false, r.columnErr(r.idCol, err)
	}
	if r.tokenCol != nil {
		if c.token, err = r.tokenCol.str(); err != nil {
			return false, r.columnErr(r.tokenCol, err)
		}
	}
	if !r.long {
		if c.vals, err = r.vecCol.list(r.left == 0); err != nil {
			return false, r.columnErr(r.vecCol, err)
		}
		return true, nil
	}
	if x, err = r.dimCol.int32(); err != nil {
		return false, r.columnErr(r.dimCol, err)
	}
	c.dim = int(x)
	if r.one[0], err = r.valueCol.float(); err != nil {
		return false, r.columnErr(r.valueCol, err)
	}
	c.vals = r.one[:]
	return true, nil
}

func (r *DrawsReader) columnErr(c *leaf, err error) error {
	return fmt.Errorf("%s: row %d: column %s: %w", r.path, r.row, c.name, err)
}

func (r *DrawsReader) rowErr(format string, args ...any) error {
	return fmt.Errorf("%s: row %d: "+format, append([]any{r.path, r.row}, args...)...)
}

// paramName names r.cur's param for errors.
func (r *DrawsReader) paramName() string {
	switch r.cur.param {
	case 0:
		return ParamRho
	case 1:
		return ParamAlpha
	}
	return fmt.Sprintf("%q", r.paramCol.paramName())
}

// readFirst reads the first draw and fixes the tokens and the dimension.
func (r *DrawsReader) readFirst() error {
	nrho, nalpha := 0, 0
	cur := 0 // coordinates of the current vector so far
	curParam, curID, curRow := 0, int32(0), int64(0)
	finish := func() error {
		switch {
		case r.dim == 0:
			r.dim = cur
		case cur != r.dim:
			return fmt.Errorf("%s: row %d: %s of token %d has %d coordinates, the first vector %d", r.path, curRow, paramNames[curParam], curID, cur, r.dim)
		}
		return nil
	}
	for {
		ok, err := r.nextRow()
		if err != nil {
			return err
		}
		if !ok {
			break
		}
		c := &r.cur
		if c.chain != 0 || c.draw != 0 {
			if r.row == 0 {
				return r.rowErr("first draw is chain %d draw %d, want chain 0 draw 0", c.chain, c.draw)
			}
			r.held = true
			break
		}
		if c.param < 0 {
			return r.rowErr("param %s, want rho or alpha", r.paramName())
		}
		if r.long && c.dim != 0 {
			if nrho == 0 || c.param != curParam || c.id != curID || c.dim != cur {
				return r.rowErr("coordinate %d of %s of token %d, want coordinate %d of %s of token %d or coordinate 0 of the next vector",
					c.dim, r.paramName(), c.id, cur, paramNames[curParam], curID)
			}
		} else {
			if nrho > 0 {
				if err := finish(); err != nil {
					return err
				}
			}
			cur, curParam, curID = 0, c.param, c.id
			switch {
			case c.param == 0 && nalpha > 0:
				return r.rowErr("rho of token %d after alpha vectors; want the target vectors, then the context vectors", c.id)
			case c.param == 0 && nrho > 0 && c.id <= r.ids[nrho-1]:
				return r.rowErr("rho of token %d after rho of token %d; want increasing token ids", c.id, r.ids[nrho-1])
			case c.param == 0:
				r.ids, r.tokens = append(r.ids, c.id), append(r.tokens, c.token)
				nrho++
			case nalpha >= nrho || c.id != r.ids[nalpha]:
				want := "no more context vectors"
				if nalpha < nrho {
					want = fmt.Sprintf("alpha of token %d", r.ids[nalpha])
				}
				return r.rowErr("alpha of token %d, want %s: the context vectors follow the target vectors in the same order", c.id, want)
			default:
				nalpha++
			}
		}
		r.vals = append(r.vals, c.vals...)
		cur += len(c.vals)
		curRow = r.row
	}
	if nrho == 0 {
		return fmt.Errorf("%s: %w", r.path, ErrNoDraws)
	}
	if err := finish(); err != nil {
		return err
	}
	if nalpha != nrho {
		return fmt.Errorf("%s: first draw: %d target vectors but %d context vectors", r.path, nrho, nalpha)
	}
	// The tokens are known; later draws are checked by token id.
	r.tokenCol.close()
	r.cols = r.cols[:0]
	for _, c := range []*leaf{r.chainCol, r.drawCol, r.paramCol, r.idCol, r.vecCol, r.dimCol, r.valueCol} {
		if c != nil {
			r.cols = append(r.cols, c)
		}
	}
	r.tokenCol = nil
	r.perChain = []int{0}
	r.pending = true
	return nil
}

// Next reads the next draw; it returns false at the end of the file or on
// an error (see Err).
func (r *DrawsReader) Next() bool {
	if r.err != nil {
		return false
	}
	if r.pending {
		r.pending = false
		r.perChain[0] = 1
		return true
	}
	v, d := len(r.ids), r.dim
	per := d
	if r.long {
		per = 1
	}
	for pos := 0; pos < 2*v*d; pos += per {
		ok, err := r.nextRow()
		if err != nil {
			r.err = err
			return false
		}
		if !ok {
			if pos > 0 {
				r.err = fmt.Errorf("%s: the last draw (chain %d draw %d) is incomplete: the file ends after row %d", r.path, r.chain, r.draw, r.row)
			}
			return false
		}
		c := &r.cur
		if pos == 0 {
			if r.err = r.startDraw(); r.err != nil {
				return false
			}
		}
		k := pos / d
		param, i := 0, k
		if k >= v {
			param, i = 1, k-v
		}
		switch {
		case c.chain != r.chain || c.draw != r.draw:
			r.err = r.rowErr("chain %d draw %d starts before chain %d draw %d is complete", c.chain, c.draw, r.chain, r.draw)
		case c.param != param || c.id != r.ids[i] || c.dim != pos%d:
			r.err = r.rowErr("%s of token %d (coordinate %d), want %s of token %d (coordinate %d) as in the first draw",
				r.paramName(), c.id, c.dim, paramNames[param], r.ids[i], pos%d)
		case len(c.vals) != per:
			r.err = r.rowErr("vector of length %d, want %d", len(c.vals), d)
		}
		if r.err != nil {
			return false
		}
		copy(r.vals[pos:pos+per], c.vals)
	}
	return true
}

// startDraw checks that r.cur, the first row of a draw, continues the
// sequence: the next draw of the chain, or draw 0 of the next chain.
func (r *DrawsReader) startDraw() error {
	c := &r.cur
	switch {
	case c.chain == r.chain && c.draw == r.draw+1:
	case c.chain == r.chain+1 && c.draw == 0:
		r.perChain = append(r.perChain, 0)
	default:
		return r.rowErr("chain %d draw %d follows chain %d draw %d; want draws in order", c.chain, c.draw, r.chain, r.draw)
	}
	r.chain, r.draw = c.chain, c.draw
	r.perChain[c.chain]++
	return nil
}

// Values returns the current draw, overwritten by the next call to Next:
// the target vectors of the tokens in the order of TokenIDs, then their
// context vectors, Dim values each, so that the target vector of the k-th
// token is Values()[k*Dim:(k+1)*Dim] and its context vector starts at
// (len(TokenIDs)+k)*Dim.
func (r *DrawsReader) Values() []float32 { return r.vals }

// Chain and Draw return the current draw's chain and draw number.
func (r *DrawsReader) Chain() int { return r.chain }

// Draw returns the current draw's number within its chain.
func (r *DrawsReader) Draw() int { return r.draw }

// TokenIDs returns the ids of the tokens whose draws the file holds.
func (r *DrawsReader) TokenIDs() []int32 { return r.ids }

// Tokens returns the tokens of TokenIDs.
func (r *DrawsReader) Tokens() []string { return r.tokens }

// Dim returns the length of every vector.
func (r *DrawsReader) Dim() int { return r.dim }

// Long reports whether the file has the long layout (one row per
// coordinate).
func (r *DrawsReader) Long() bool { return r.long }

// NumDraws returns the number of draws the file's row count makes room
// for.
func (r *DrawsReader) NumDraws() int {
	rows := int64(2 * len(r.ids))
	if r.long {
		rows *= int64(r.dim)
	}
	return int(r.pf.NumRows() / rows)
}

// DrawsPerChain returns the number of draws of every chain read so far.
func (r *DrawsReader) DrawsPerChain() []int { return r.perChain }

// Meta returns the file's metadata.
func (r *DrawsReader) Meta() Meta { return r.meta }

// Path returns the file's path.
func (r *DrawsReader) Path() string { return r.path }

// Err returns the first error met by Next.
func (r *DrawsReader) Err() error { return r.err }

// Close releases the file.
func (r *DrawsReader) Close() error {
	for _, c := range r.cols {
		c.close()
	}
	if r.tokenCol != nil {
		r.tokenCol.close()
	}
	return r.f.Close()
}

// paramNames are the param column's values by the index leaf.param gives.
var paramNames = [2]string{ParamRho, ParamAlpha}
