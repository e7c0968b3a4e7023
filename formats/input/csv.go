package input

import (
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"strings"
)

// csvSuffix returns the field separator of a file named as CSV or TSV,
// compressed or not ("reviews.csv.gz"), and 0 for other names.
func csvSuffix(path string) rune {
	name := strings.ToLower(filepath.Base(path))
	if ext := filepath.Ext(name); codecFromExt(name) != codecNone {
		name = strings.TrimSuffix(name, ext)
	}
	switch filepath.Ext(name) {
	case ".csv":
		return ','
	case ".tsv", ".tab":
		return '\t'
	}
	return 0
}

// csvSource yields one column of each record of a CSV (RFC 4180) or TSV
// file with a header row, which names the column. Quoted fields may hold
// separators and newlines; every record has as many fields as the header.
// An empty or blank field is skipped and counted, as a null is in
// Parquet. The document's line is where its field starts.
type csvSource struct {
	file     *File
	cr       *csv.Reader
	limit    *csvLimit
	col      int
	text     []byte
	nskipped int64
	nextLine int // the line after the last record read, where errors past it are reported
}

// csvLimit bounds the bytes the CSV reader takes for one record, which an
// unclosed quote would otherwise let grow to the whole file: it fails a
// read once more than max bytes were read since the last record.
type csvLimit struct {
	r   io.Reader
	n   int
	max int
}

var errRecordTooLong = errors.New("record exceeds limit")

func (l *csvLimit) Read(p []byte) (int, error) {
	if l.n > l.max {
		return 0, errRecordTooLong
	}
	n, err := l.r.Read(p)
	l.n += n
	return n, err
}

func newCSVSource(f *File, column string, comma rune, maxRecord int) (*csvSource, error) {
	// The reader's own buffer (4 KiB) may hold the start of the next
	// record when one ends.
	limit := &csvLimit{r: f, max: maxRecord + 4<<10}
	cr := csv.NewReader(limit)
	cr.Comma = comma
	cr.ReuseRecord = true
	s := &csvSource{file: f, cr: cr, limit: limit, nextLine: 1}
	header, err := s.read()
	if err != nil {
		if err == io.EOF {
			err = &ParseError{Path: f.path, Err: fmt.Errorf("%w: the file is empty, without a header row naming column %q", ErrInvalidCSV, column)}
		}
		return nil, s.error(err)
	}
	if len(header) > 0 {
		header[0] = strings.TrimPrefix(header[0], "\ufeff")
	}
	s.col = -1
	for i, h := range header {
		if h == column {
			s.col = i
			break
		}
	}
	if s.col < 0 {
		return nil, &ParseError{Path: f.path, Line: 1, Err: fmt.Errorf("%w %q in the header row (columns: %s)", ErrNoColumn, column, strings.Join(header, ", "))}
	}
	return s, nil
}

func (s *csvSource) next() ([]byte, int64, error) {
	for {
		rec, err := s.read()
		if err != nil {
			return nil, 0, s.error(err)
		}
		line, _ := s.cr.FieldPos(s.col)
		if strings.Trim(rec[s.col], " \t\r\n\f\v") == "" {
			// Blank, as the text reader's blank lines.
			s.nskipped++
			continue
		}
		s.text = append(s.text[:0], rec[s.col]...)
		return s.text, int64(line), nil
	}
}

// read reads a record, and notes the line after it.
func (s *csvSource) read() ([]string, error) {
	s.limit.n = 0
	rec, err := s.cr.Read()
	if err == nil && len(rec) > 0 {
		last := len(rec) - 1
		line, _ := s.cr.FieldPos(last)
		s.nextLine = line + strings.Count(rec[last], "\n") + 1
	}
	return rec, err
}

// error turns the CSV reader's errors into *ParseError at the record's
// line: syntax errors where the reader found them, read errors (the
// limit's, the file's) at the line after the last record read.
func (s *csvSource) error(err error) error {
	var ce *csv.ParseError
	switch {
	case err == io.EOF:
		return io.EOF
	case errors.As(err, &ce):
		return &ParseError{Path: s.file.path, Line: int64(ce.StartLine), Err: fmt.Errorf("%w: %v", ErrInvalidCSV, ce.Err)}
	case errors.Is(err, errRecordTooLong):
		err = fmt.Errorf("%w (limit %d bytes; an unclosed quote?)", ErrLineTooLong, s.limit.max-4<<10)
	}
	return atLine(s.file.path, int64(s.nextLine), err)
}

func (s *csvSource) skipped() int64 { return s.nskipped }

func (s *csvSource) fingerprint() (Fingerprint, error) { return s.file.Fingerprint(), nil }

func (s *csvSource) close() error { return s.file.Close() }
