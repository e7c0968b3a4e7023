package formats

import (
	"bytes"
	"errors"
	"io"

	"github.com/parquet-go/parquet-go"
)

// errColumnShort reports a column chunk with fewer values than its row
// group has rows: a damaged or truncated file.
var errColumnShort = errors.New("column ends before the row group does")

// errNullValue reports a null value, or an empty or null vector, which no
// pwe writer produces.
var errNullValue = errors.New("null value or empty vector")

// leaf streams the values of one leaf column of a row group, a page at a
// time, so that reading costs a copy out of the decoded page rather than
// the reflection of parquet-go's row reader. Nulls are refused: a page
// with one is read up to the row that holds it, where values and levels
// are still aligned, and the error is met there.
type leaf struct {
	name   string // dotted column path, for errors
	index  int    // column index in the schema
	maxDef byte

	pages parquet.Pages
	page  parquet.Page
	n, i  int  // usable values in the page, next value
	null  bool // the page has a null at value n

	ints   []int32   // INT32 values
	floats []float32 // FLOAT values
	rep    []byte    // repetition levels of a repeated column
	// BYTE_ARRAY values: dictionary indices into strs, or plain values.
	codes      []int32
	strs       []string
	data       []byte
	offsets    []uint32
	dict       parquet.Dictionary // the dictionary strs, ints or floats were made from
	dictInts   []int32
	dictFloats []float32
	scratch    []float32 // a list that spans pages
	mapped     []int32   // INT32 values looked up in a dictionary
	mappedF    []float32 // FLOAT values looked up in a dictionary
}

// open starts reading the column in row group rg.
func (c *leaf) open(rg parquet.RowGroup) {
	c.close()
	c.pages = rg.ColumnChunks()[c.index].Pages()
}

// close releases the current page and the column chunk.
func (c *leaf) close() {
	c.release()
	if c.pages != nil {
		c.pages.Close()
		c.pages = nil
	}
}

func (c *leaf) release() {
	if c.page != nil {
		parquet.Release(c.page)
		c.page = nil
	}
	c.n, c.i, c.null = 0, 0, false
}

// load moves to the next non-empty page.
func (c *leaf) load() error {
	if c.null {
		return errNullValue
	}
	c.release()
	for {
		p, err := c.pages.ReadPage()
		if err == io.EOF {
			return errColumnShort
		}
		if err != nil {
			return err
		}
		if p.NumValues() == 0 {
			parquet.Release(p)
			continue
		}
		c.page = p
		c.n, c.i = int(p.NumValues()), 0
		c.rep = p.RepetitionLevels()
		if p.NumNulls() > 0 {
			c.null = true
			def := p.DefinitionLevels()
			c.n = 0
			for def[c.n] == c.maxDef {
				c.n++
			}
			for c.rep != nil && c.n > 0 && c.rep[c.n] != 0 {
				c.n--
			}
			if c.n == 0 {
				return errNullValue
			}
		}
		values := p.Data()
		dict := p.Dictionary()
		switch p.Type().Kind() {
		case parquet.Int32:
			if dict == nil {
				c.ints = values.Int32()
				break
			}
			c.dictInts = dictTable(c, dict, c.dictInts, parquet.Value.Int32)
			c.mapped = gather(c.mapped, c.dictInts, values.Int32())
			c.ints = c.mapped
		case parquet.Float:
			if dict == nil {
				c.floats = values.Float()
				break
			}
			c.dictFloats = dictTable(c, dict, c.dictFloats, parquet.Value.Float)
			c.mappedF = gather(c.mappedF, c.dictFloats, values.Int32())
			c.floats = c.mappedF
		case parquet.ByteArray:
			if dict == nil {
				c.codes = nil
				c.data, c.offsets = values.ByteArray()
				break
			}
			c.strs = dictTable(c, dict, c.strs, func(v parquet.Value) string { return string(v.ByteArray()) })
			c.codes = values.Int32()
		}
		return nil
	}
}

// dictTable returns the values of dict, decoded by value into table; a
// column chunk has one dictionary for all its pages, so the table is
// rebuilt only when the dictionary changes.
func dictTable[T any](c *leaf, dict parquet.Dictionary, table []T, value func(parquet.Value) T) []T {
	if c.dict == dict {
		return table
	}
	c.dict, table = dict, table[:0]
	for k := range int32(dict.Len()) {
		table = append(table, value(dict.Index(k)))
	}
	return table
}

// gather looks the dictionary indices idx up in table, reusing dst.
func gather[T any](dst, table []T, idx []int32) []T {
	dst = dst[:0]
	for _, k := range idx {
		dst = append(dst, table[k])
	}
	return dst
}

func (c *leaf) int32() (int32, error) {
	if c.i == c.n {
		if err := c.load(); err != nil {
			return 0, err
		}
	}
	x := c.ints[c.i]
	c.i++
	return x, nil
}

func (c *leaf) float() (float32, error) {
	if c.i == c.n {
		if err := c.load(); err != nil {
			return 0, err
		}
	}
	x := c.floats[c.i]
	c.i++
	return x, nil
}

// param returns 0 for "rho", 1 for "alpha" and -1 for anything else.
func (c *leaf) param() (int, error) {
	s, err := c.str()
	if err != nil {
		return 0, err
	}
	switch s {
	case ParamRho:
		return 0, nil
	case ParamAlpha:
		return 1, nil
	}
	return -1, nil
}

// paramName returns the value param just classified as -1, for errors.
func (c *leaf) paramName() string { return c.value(c.i - 1) }

func (c *leaf) str() (string, error) {
	if c.i == c.n {
		if err := c.load(); err != nil {
			return "", err
		}
	}
	c.i++
	return c.value(c.i - 1), nil
}

// value returns the k-th string of the current BYTE_ARRAY page.
func (c *leaf) value(k int) string {
	if c.codes != nil {
		return c.strs[c.codes[k]]
	}
	return string(c.data[c.offsets[k]:c.offsets[k+1]])
}

// list returns the values of the next row of a repeated FLOAT column,
// valid until the next call. The row ends at the next repetition level 0,
// which is usually in the same page; a row that continues on later pages
// is gathered into scratch. last tells that the row group has no further
// rows, so that the last list ends with the column chunk.
func (c *leaf) list(last bool) ([]float32, error) {
	if c.i == c.n {
		if err := c.load(); err != nil {
			return nil, err
		}
	}
	start := c.i
	if c.rep[start] != 0 {
		return nil, errors.New("column does not start a row where the others do")
	}
	// A page with a null ends its usable values at a row start, so the
	// search past n stops there.
	if end := bytes.IndexByte(c.rep[start+1:], 0); end >= 0 {
		c.i = start + 1 + end
		return c.floats[start:c.i], nil
	}
	c.scratch = append(c.scratch[:0], c.floats[start:c.n]...)
	for {
		if err := c.load(); err != nil {
			if err == errColumnShort && last {
				return c.scratch, nil
			}
			return nil, err
		}
		end := bytes.IndexByte(c.rep[:c.n], 0)
		if end < 0 {
			c.scratch = append(c.scratch, c.floats[:c.n]...)
			continue
		}
		c.scratch = append(c.scratch, c.floats[:end]...)
		c.i = end
		return c.scratch, nil
	}
}
