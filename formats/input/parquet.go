package input

import (
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"sync/atomic"

	"github.com/parquet-go/parquet-go"

	"github.com/pwe-project/pwe/internal/pqfooter"
)

// parquetSource yields the values of one string column, one page at a
// time: memory holds a single page, whatever the size of the file.
type parquetSource struct {
	path   string
	osFile *os.File
	file   *parquet.File
	column int
	groups []parquet.RowGroup
	group  int // index of the next row group to open

	pages  parquet.Pages // of the current row group's column chunk
	page   parquet.Page  // current page, released when the next is read
	values parquet.ValueReader
	buf    []parquet.Value
	pos, n int   // buf[pos:n] are not yet returned
	row    int64 // rows passed so far in the file

	nskipped int64
}

// parquetBatch is how many values are decoded from a page at a time.
const parquetBatch = 1024

// openParquet opens the column; onRead, if set, is told the bytes read
// (see Reader.OnRead).
func openParquet(path, column string, onRead func(int64)) (src *parquetSource, err error) {
	if path == "-" {
		return nil, &ParseError{Path: path, Err: ErrParquetStream}
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, &ParseError{Path: path, Err: unwrapPathError(err)}
	}
	defer func() {
		if err != nil {
			f.Close()
		}
	}()
	// parquet-go trusts the footer; a damaged file can make it panic, which
	// for this reader is bad input, not a bug in pwe.
	defer recoverAs(path, 0, &err)
	info, err := f.Stat()
	if err != nil {
		return nil, &ParseError{Path: path, Err: unwrapPathError(err)}
	}
	var at io.ReaderAt = f
	if onRead != nil {
		at = &countingReaderAt{r: f, size: info.Size(), onRead: onRead}
	}
	if err := pqfooter.Check(f, info.Size()); err != nil {
		return nil, &ParseError{Path: path, Err: fmt.Errorf("%w: %v", ErrNotParquet, err)}
	}
	pf, err := parquet.OpenFile(at, info.Size(), parquet.SkipPageIndex(true), parquet.SkipBloomFilters(true), parquet.ReadBufferSize(1<<20))
	if err != nil {
		return nil, &ParseError{Path: path, Err: fmt.Errorf("%w: %v", ErrNotParquet, err)}
	}
	leaf, ok := pf.Schema().Lookup(column)
	if !ok && strings.Contains(column, ".") {
		leaf, ok = pf.Schema().Lookup(strings.Split(column, ".")...)
	}
	if !ok {
		var names []string
		for _, p := range pf.Schema().Columns() {
			names = append(names, strings.Join(p, "."))
		}
		return nil, &ParseError{Path: path, Err: fmt.Errorf("%w %q (columns: %s)", ErrNoColumn, column, strings.Join(names, ", "))}
	}
	if k := leaf.Node.Type().Kind(); k != parquet.ByteArray {
		return nil, &ParseError{Path: path, Err: fmt.Errorf("%w: column %q has type %v", ErrColumnType, column, leaf.Node.Type())}
	}
	if leaf.MaxRepetitionLevel > 0 {
		return nil, &ParseError{Path: path, Err: fmt.Errorf("%w: column %q is repeated (a list)", ErrColumnType, column)}
	}
	return &parquetSource{
		path:   path,
		osFile: f,
		file:   pf,
		column: leaf.ColumnIndex,
		groups: pf.RowGroups(),
		buf:    make([]parquet.Value, parquetBatch),
	}, nil
}

// countingReaderAt reports the bytes parquet-go reads, up to the file's
// size in all: the footer is read more than once, and a progress report
// must not pass the size it announced.
type countingReaderAt struct {
	r      io.ReaderAt
	size   int64
	read   atomic.Int64
	onRead func(int64)
}

func (c *countingReaderAt) ReadAt(p []byte, off int64) (int, error) {
	n, err := c.r.ReadAt(p, off)
	if n > 0 {
		total := c.read.Add(int64(n))
		if d := min(total, c.size) - min(total-int64(n), c.size); d > 0 {
			c.onRead(d)
		}
	}
	return n, err
}

func recoverAs(path string, row int64, err *error) {
	if v := recover(); v != nil {
		*err = &ParseError{Path: path, Line: row, Err: fmt.Errorf("%w: damaged file: %v", ErrNotParquet, v)}
	}
}

func (s *parquetSource) next() (text []byte, row int64, err error) {
	defer recoverAs(s.path, s.row+1, &err)
	for {
		if s.pos < s.n {
			v := s.buf[s.pos]
			s.pos++
			s.row++
			if v.IsNull() {
				s.nskipped++
				continue
			}
			return v.ByteArray(), s.row, nil
		}
		if s.values != nil {
			n, err := s.values.ReadValues(s.buf)
			s.pos, s.n = 0, n
			switch {
			case err == io.EOF:
				s.values = nil
			case err != nil:
				return nil, 0, &ParseError{Path: s.path, Line: s.row + 1, Err: err}
			}
			continue
		}
		if s.page != nil {
			parquet.Release(s.page)
			s.page = nil
		}
		if s.pages != nil {
			page, err := s.pages.ReadPage()
			switch {
			case err == io.EOF:
				err = s.pages.Close()
				s.pages = nil
				if err != nil {
					return nil, 0, &ParseError{Path: s.path, Line: s.row + 1, Err: err}
				}
			case err != nil:
				return nil, 0, &ParseError{Path: s.path, Line: s.row + 1, Err: err}
			default:
				s.page = page
				s.values = page.Values()
			}
			continue
		}
		if s.group == len(s.groups) {
			if s.row != s.file.NumRows() {
				return nil, 0, &ParseError{Path: s.path, Line: s.row + 1,
					Err: fmt.Errorf("%w: column %d has %d values, file has %d rows", ErrNotParquet, s.column, s.row, s.file.NumRows())}
			}
			return nil, 0, io.EOF
		}
		s.pages = s.groups[s.group].ColumnChunks()[s.column].Pages()
		s.group++
	}
}

func (s *parquetSource) skipped() int64 { return s.nskipped }

// fingerprint hashes the file separately: parquet-go reads it out of order,
// so the bytes cannot be hashed on the way through.
func (s *parquetSource) fingerprint() (Fingerprint, error) { return FingerprintFile(s.path) }

func (s *parquetSource) close() error {
	var errs []error
	if s.page != nil {
		parquet.Release(s.page)
		s.page = nil
	}
	if s.pages != nil {
		errs = append(errs, s.pages.Close())
		s.pages = nil
	}
	if s.osFile != nil {
		errs = append(errs, s.osFile.Close())
		s.osFile = nil
	}
	return errors.Join(errs...)
}
