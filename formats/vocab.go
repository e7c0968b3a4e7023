package formats

import (
	"fmt"
	"hash/maphash"
	"io"
	"math"
	"slices"
	"unicode/utf8"

	"github.com/parquet-go/parquet-go"
	"github.com/parquet-go/parquet-go/encoding"
)

// Schema names and versions.
const (
	SchemaVocab  = "pwe.vocab/1"
	SchemaCounts = "pwe.counts/1"
)

// VocabRow is one token of vocab.parquet. Ids are 0-based and ordered by
// descending count.
type VocabRow struct {
	TokenID    int32  `parquet:"token_id"`
	Token      string `parquet:"token"`
	Count      int64  `parquet:"count"`
	ExternalID *int64 `parquet:"external_id,optional"`
}

// CountRow is one (target, context) pair of counts.parquet; rows are sorted
// by (target_id, context_id) and unique.
//
// The sorted ids are delta-encoded and the counts, whole numbers with few
// distinct values, dictionary-encoded: under zstd this writes about five
// times faster than plain encoding and gives a smaller file. Counts with
// many distinct values (expected negatives) are written byte-stream-split
// instead (see CreateCounts), where a dictionary would only grow. DuckDB,
// pandas (pyarrow) and Spark read every one of these encodings. The struct
// tags describe the file to readers; CountsWriter writes it column by
// column.
type CountRow struct {
	TargetID  int32   `parquet:"target_id,delta"`
	ContextID int32   `parquet:"context_id,delta"`
	NPos      float64 `parquet:"n_pos,dict"`
	NNeg      float64 `parquet:"n_neg,dict"`
}

// WriteVocab writes vocab.parquet.
func WriteVocab(path string, rows []VocabRow, meta Meta) error {
	meta.Schema = SchemaVocab
	return WriteAll(path, rows, meta)
}

// CreateVocab starts writing vocab.parquet, for a caller that finishes it
// apart from publishing it (Writer.Finish).
func CreateVocab(path string, meta Meta) (*Writer[VocabRow], error) {
	meta.Schema = SchemaVocab
	return Create[VocabRow](path, meta)
}

// ReadVocab reads vocab.parquet and checks that ids run 0..V-1 in order,
// tokens are unique non-empty UTF-8 and counts are non-negative.
func ReadVocab(path string) (rows []VocabRow, meta Meta, err error) {
	return readVocab(path, checkVocab)
}

// ReadVocabRows is ReadVocab for a caller that indexes the tokens, and so
// finds a repeated one itself (tokenize.NewIndex): it does not check that
// they are unique, which took 2-3 ms of count's start for 65 536 tokens.
func ReadVocabRows(path string) (rows []VocabRow, meta Meta, err error) {
	return readVocab(path, checkVocabRows)
}

func readVocab(path string, check func(string, []VocabRow) error) (rows []VocabRow, meta Meta, err error) {
	r, err := openChecked[VocabRow](path, SchemaVocab)
	if err != nil {
		return nil, Meta{}, err
	}
	defer r.Close()
	defer recoverDamaged(&err, path, -1)
	rows, err = readVocabColumns(r.pf)
	if err != nil {
		return nil, r.meta, fmt.Errorf("%s: %w", path, err)
	}
	if err := check(path, rows); err != nil {
		return nil, r.meta, err
	}
	return rows, r.meta, nil
}

// readVocabColumns reads the rows of a vocabulary a column at a time into
// rows whose tokens share one string. A page of a required column that is
// not dictionary-coded is read as one slice of its type; any other page
// value by value. The generic row reader rebuilds every row by reflection
// and allocates every token on its own (BenchmarkReadVocab).
func readVocabColumns(pf *parquet.File) ([]VocabRow, error) {
	// The rows grow with the first column's values, from room for the
	// number of rows the footer claims up to 4 Mi of them: a damaged
	// footer can claim more than memory holds.
	n := pf.NumRows()
	rows := make([]VocabRow, 0, max(0, min(n, 1<<22)))
	var text []byte
	var ends []int
	var external []int64
	for _, name := range []string{"token_id", "token", "count", "external_id"} {
		leaf, _ := pf.Schema().Lookup(name)
		optional := name == "external_id"
		// grow checks a batch of k values at row at, and returns the rows
		// it fills.
		grow := func(at, k int) ([]VocabRow, error) {
			if int64(at+k) > n {
				return nil, fmt.Errorf("column %q has more values than the file has rows", name)
			}
			if name == "token_id" {
				rows = slices.Grow(rows, k)[:at+k]
			}
			if name == "token" && ends == nil {
				ends = make([]int, len(rows))
			}
			return rows[at : at+k], nil
		}
		err := columnPages(pf, leaf.ColumnIndex, func(at, k int, v encoding.Values) (bool, error) {
			if optional {
				return false, nil
			}
			switch name {
			case "token_id":
				if v.Kind() != encoding.Int32 || len(v.Int32()) != k {
					return false, nil
				}
				return true, setRows(grow, at, v.Int32(), func(r *VocabRow, id int32) { r.TokenID = id })
			case "token":
				if v.Kind() != encoding.ByteArray {
					return false, nil
				}
				data, offsets := v.ByteArray()
				if len(offsets) != k+1 {
					return false, nil
				}
				if _, err := grow(at, k); err != nil {
					return true, err
				}
				base := len(text) - int(offsets[0])
				text = append(text, data[offsets[0]:offsets[k]]...)
				for i, o := range offsets[1:] {
					ends[at+i] = base + int(o)
				}
				return true, nil
			default:
				if v.Kind() != encoding.Int64 || len(v.Int64()) != k {
					return false, nil
				}
				return true, setRows(grow, at, v.Int64(), func(r *VocabRow, n int64) { r.Count = n })
			}
		}, func(at int, vs []parquet.Value) error {
			part, err := grow(at, len(vs))
			if err != nil {
				return err
			}
			for i := 0; i < len(vs) && !optional; i++ {
				if vs[i].IsNull() {
					return fmt.Errorf("row %d: %q is null", at+i, name)
				}
			}
			switch name {
			case "token_id":
				for i, v := range vs {
					part[i].TokenID = v.Int32()
				}
			case "token":
				for i, v := range vs {
					text = append(text, v.ByteArray()...)
					ends[at+i] = len(text)
				}
			case "count":
				for i, v := range vs {
					part[i].Count = v.Int64()
				}
			default:
				for i, v := range vs {
					if v.IsNull() {
						continue
					}
					if external == nil {
						external = make([]int64, len(rows))
					}
					external[at+i] = v.Int64()
					part[i].ExternalID = &external[at+i]
				}
			}
			return nil
		})
		if err != nil {
			return nil, err
		}
	}
	all := string(text)
	start := 0
	for i, end := range ends {
		rows[i].Token = all[start:end]
		start = end
	}
	return rows, nil
}

// setRows sets a field, with set, of the rows from at on to the values of
// a page, through grow, which checks them and returns the rows.
func setRows[T any](grow func(at, k int) ([]VocabRow, error), at int, vals []T, set func(*VocabRow, T)) error {
	part, err := grow(at, len(vals))
	for i, x := range vals[:len(part)] {
		set(&part[i], x)
	}
	return err
}

// columnPages reads column col page by page, with the row of each page's
// first value: a page that holds one value per row and no dictionary goes
// to data, as its k values; if data declines it (returns false), or the page
// is another kind, its values go to fn in batches. It stops at the first
// error; a column with fewer values than the file has rows is an error.
func columnPages(pf *parquet.File, col int, data func(row, k int, v encoding.Values) (bool, error), fn func(row int, vs []parquet.Value) error) error {
	buf := make([]parquet.Value, 1024)
	row := 0
	for _, rg := range pf.RowGroups() {
		pages := rg.ColumnChunks()[col].Pages()
		err := func() error {
			defer pages.Close()
			for {
				p, err := pages.ReadPage()
				if err == io.EOF {
					return nil
				}
				if err != nil {
					return err
				}
				if p.Dictionary() == nil && p.NumNulls() == 0 && p.NumValues() == p.NumRows() {
					done, err := data(row, int(p.NumValues()), p.Data())
					if done {
						row += int(p.NumValues())
						parquet.Release(p)
						if err != nil {
							return err
						}
						continue
					}
				}
				err = pageValues(p, buf, func(vs []parquet.Value) error {
					err := fn(row, vs)
					row += len(vs)
					return err
				})
				if err != nil {
					return err
				}
			}
		}()
		if err != nil {
			return err
		}
	}
	if int64(row) != pf.NumRows() {
		return fmt.Errorf("row %d: %w", row, errColumnShort)
	}
	return nil
}

// pageValues calls fn with the values of page p, read into buf, a buffer
// at a time, and releases the page.
func pageValues(p parquet.Page, buf []parquet.Value, fn func(vs []parquet.Value) error) error {
	defer parquet.Release(p)
	values := p.Values()
	for {
		n, err := values.ReadValues(buf)
		if n > 0 {
			if ferr := fn(buf[:n]); ferr != nil {
				return ferr
			}
		}
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return err
		}
	}
}

// checkVocab checks the rows of the vocabulary read from name.
func checkVocab(name string, rows []VocabRow) error {
	if err := checkVocabRows(name, rows); err != nil {
		return err
	}
	seen := newTokenSet(len(rows))
	for i, r := range rows {
		if j := seen.add(rows, i); j >= 0 {
			return fmt.Errorf("%s: row %d: token %q repeats row %d", name, i, r.Token, j)
		}
	}
	return nil
}

// checkVocabRows is checkVocab's check of each row alone.
func checkVocabRows(name string, rows []VocabRow) error {
	if len(rows) == 0 {
		return fmt.Errorf("%s: empty vocabulary", name)
	}
	for i, r := range rows {
		switch {
		case int(r.TokenID) != i:
			return fmt.Errorf("%s: row %d: token_id %d, want %d (ids must run 0..V-1 in order)", name, i, r.TokenID, i)
		case r.Token == "" || !utf8.ValidString(r.Token):
			return fmt.Errorf("%s: row %d: token is empty or not UTF-8", name, i)
		case r.Count < 0:
			return fmt.Errorf("%s: row %d: negative count %d", name, i, r.Count)
		}
	}
	return nil
}

// tokenSet finds repeated tokens among a vocabulary's rows: an
// open-addressing table of row numbers, probed linearly, at most half
// full. It serves checkVocab, where a map[string]int took more time and
// more fresh memory: BenchmarkReadVocab's 65 536 tokens were read in 16.7
// ms against 19.9 (medians of 5), and the 0.5 MB of slots replace the
// map's 3 MB, which took about 10 ms of page faults at count's start on
// a host where each costs 11 us (BENCHMARKS.md, session 31).
type tokenSet struct {
	slots []uint32 // row number + 1, or 0 for an empty slot
	seed  maphash.Seed
}

func newTokenSet(n int) tokenSet {
	size := 1
	for size < 2*n {
		size *= 2
	}
	return tokenSet{slots: make([]uint32, size), seed: maphash.MakeSeed()}
}

// add adds row i's token and returns -1, or the row holding the token
// already.
func (s tokenSet) add(rows []VocabRow, i int) int {
	tok := rows[i].Token
	mask := uint64(len(s.slots) - 1)
	for k := maphash.String(s.seed, tok) & mask; ; k = (k + 1) & mask {
		j := int(s.slots[k]) - 1
		switch {
		case j < 0:
			s.slots[k] = uint32(i + 1)
			return -1
		case rows[j].Token == tok:
			return j
		}
	}
}

// CheckCountRow validates one counts row against a vocabulary of size v and
// the previous row (prev is nil for the first row): ids in range, counts
// finite and non-negative, rows strictly increasing in (target, context).
func CheckCountRow(r CountRow, prev *CountRow, v int) error {
	switch {
	case r.TargetID < 0 || int(r.TargetID) >= v:
		return fmt.Errorf("target_id %d outside the vocabulary (size %d)", r.TargetID, v)
	case r.ContextID < 0 || int(r.ContextID) >= v:
		return fmt.Errorf("context_id %d outside the vocabulary (size %d)", r.ContextID, v)
	case !(r.NPos >= 0) || math.IsInf(r.NPos, 0):
		return fmt.Errorf("n_pos %v is not a finite non-negative number", r.NPos)
	case !(r.NNeg >= 0) || math.IsInf(r.NNeg, 0):
		return fmt.Errorf("n_neg %v is not a finite non-negative number", r.NNeg)
	}
	if prev != nil && (r.TargetID < prev.TargetID || r.TargetID == prev.TargetID && r.ContextID <= prev.ContextID) {
		return fmt.Errorf("pair (%d, %d) follows (%d, %d): rows must be sorted by (target_id, context_id) and unique",
			r.TargetID, r.ContextID, prev.TargetID, prev.ContextID)
	}
	return nil
}
