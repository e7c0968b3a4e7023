package input

import (
	"bytes"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"strings"

	"github.com/pwe-project/pwe/internal/bytesize"
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
// file with a header row, which names the column. In CSV, quoted fields
// may hold separators and newlines. A TSV record is a line, and its
// fields are separated by tabs (IANA's text/tab-separated-values, as GLUE,
// PostgreSQL and most corpora write it): quotes are text, since such
// files leave them bare, except around a whole field (tsvField). Every
// record has as many fields as the header.
// An empty or blank field is skipped and counted, as a null is in
// Parquet. The document's line is where its field starts.
//
// CSV records are parsed as encoding/csv parses them (its default
// settings: "\r\n" read as "\n", empty lines skipped, quotes only around
// whole fields), on the text reader's lines, without a string for each
// record: the benchmark text as CSV took 0.93-1.05 CPU-s of tokenize
// against 1.20-2.03 through encoding/csv (BENCHMARKS.md, session 39).
// FuzzCSVReader checks CSV against encoding/csv, and TSV against a
// regular expression's reading.
type csvSource struct {
	lines    *lineScanner
	comma    byte
	col      int // the column's index; -1 while the header is read
	header   []string
	nfields  int
	max      int    // the longest record allowed
	text     []byte // the quoted field being read
	field    []byte // the column's field, copied: later lines move the line buffer
	nskipped int64
}

func newCSVSource(f *File, lineBuf []byte, column string, comma byte, maxRecord int) (*csvSource, error) {
	s := &csvSource{lines: newLineScanner(f, lineBuf, maxRecord), comma: comma, col: -1, max: maxRecord}
	_, _, err := s.record()
	switch {
	case err == io.EOF:
		return nil, &ParseError{Path: f.path, Line: 1, Err: fmt.Errorf("%w: the file is empty, without a header row naming column %q", ErrInvalidCSV, column)}
	case err != nil:
		return nil, err
	}
	for i, h := range s.header {
		if h != column {
			continue
		}
		if s.col >= 0 {
			return nil, &ParseError{Path: f.path, Line: 1, Err: fmt.Errorf("%w: the header row names column %q twice (fields %d and %d), so which holds the text is unclear",
				ErrInvalidCSV, column, s.col+1, i+1)}
		}
		s.col = i
	}
	if s.col < 0 {
		return nil, &ParseError{Path: f.path, Line: 1, Err: fmt.Errorf("%w %q in the header row (columns: %s)", ErrNoColumn, column, strings.Join(s.header, ", "))}
	}
	return s, nil
}

func (s *csvSource) next() ([]byte, int64, error) {
	for {
		text, line, err := s.record()
		if err != nil {
			return nil, 0, err
		}
		if len(bytes.Trim(text, " \t\r\n\f\v")) == 0 {
			// Blank, as the text reader's blank lines.
			s.nskipped++
			continue
		}
		return text, line, nil
	}
}

// record reads the next record, and returns its field in the column, with
// the line where that starts; the header's fields, while there is no
// column, go to s.header. io.EOF at the end.
func (s *csvSource) record() (text []byte, textLine int64, err error) {
	var line []byte
	for {
		if !s.lines.scan() {
			return nil, 0, s.lines.err()
		}
		if line = s.lines.bytes(); len(line) > 0 {
			break // an empty line is no record
		}
	}
	start := s.lines.line
	n := 0 // fields so far
	for {
		keep := n == s.col || s.col < 0
		fieldLine := s.lines.line
		var field []byte
		end := false
		if s.comma == '\t' {
			field, line, end = s.tsvField(line)
		} else if len(line) == 0 || line[0] != '"' {
			i := bytes.IndexByte(line, s.comma)
			if field = line; i >= 0 {
				field = line[:i]
				line = line[i+1:]
			} else {
				end = true
			}
			if bytes.IndexByte(field, '"') >= 0 {
				return nil, 0, s.syntax(start, csv.ErrBareQuote)
			}
		} else {
			// A quoted field, perhaps over several lines: its text is
			// copied, quotes undoubled, line ends as "\n".
			line = line[1:]
			s.text = s.text[:0]
			for {
				i := bytes.IndexByte(line, '"')
				if i < 0 {
					s.text = append(append(s.text, line...), '\n')
					if !s.lines.scan() {
						if err := s.lines.err(); err != io.EOF {
							if errors.Is(err, ErrLineTooLong) {
								return nil, 0, s.tooLong(start)
							}
							return nil, 0, err
						}
						return nil, 0, s.syntax(start, csv.ErrQuote)
					}
					line = s.lines.bytes()
					if len(s.text)+len(line) > s.max {
						return nil, 0, s.tooLong(start)
					}
					continue
				}
				s.text = append(s.text, line[:i]...)
				line = line[i+1:]
				switch {
				case len(line) > 0 && line[0] == '"':
					s.text = append(s.text, '"')
					line = line[1:]
					continue
				case len(line) == 0:
					end = true
				case line[0] == s.comma:
					line = line[1:]
				default:
					return nil, 0, s.syntax(start, csv.ErrQuote)
				}
				break
			}
			field = s.text
		}
		if keep {
			if s.col < 0 {
				s.header = append(s.header, string(field))
			} else {
				s.field = append(s.field[:0], field...)
				text, textLine = s.field, fieldLine
			}
		}
		n++
		if end {
			break
		}
	}
	switch {
	case s.nfields == 0:
		s.nfields = n
	case n != s.nfields && s.comma == '\t':
		return nil, 0, s.syntax(start, fmt.Errorf("%w (%d, the header has %d; a TSV record is one line, whose quotes are text unless around a whole field)", csv.ErrFieldCount, n, s.nfields))
	case n != s.nfields:
		return nil, 0, s.syntax(start, csv.ErrFieldCount)
	}
	return text, textLine, nil
}

// tsvField cuts the first field off a TSV line, and returns it, the rest
// of the line and whether the field ends the line. A field runs to the
// next tab, quotes included, except that a field quoted whole ("...",
// then a tab or the line's end, each quote inside doubled), as spreadsheets
// and pandas write a field holding a tab or a quote, is read unquoted.
func (s *csvSource) tsvField(line []byte) (field, rest []byte, end bool) {
	if len(line) > 0 && line[0] == '"' {
	scan:
		for i := 1; i < len(line); i++ {
			switch {
			case line[i] != '"':
			case i+1 < len(line) && line[i+1] == '"':
				i++ // a doubled quote
			case i+1 < len(line) && line[i+1] != '\t':
				break scan // a quote in the text: no quoted field
			default:
				s.text = s.text[:0]
				for q := line[1:i]; len(q) > 0; {
					j := bytes.IndexByte(q, '"')
					if j < 0 {
						s.text = append(s.text, q...)
						break
					}
					s.text = append(s.text, q[:j+1]...)
					q = q[j+2:]
				}
				if i+1 == len(line) {
					return s.text, nil, true
				}
				return s.text, line[i+2:], false
			}
		}
	}
	if i := bytes.IndexByte(line, '\t'); i >= 0 {
		return line[:i], line[i+1:], false
	}
	return line, nil, true
}

// syntax reports a CSV syntax error in the record starting at line.
func (s *csvSource) syntax(line int64, err error) error {
	return &ParseError{Path: s.lines.file.path, Line: line, Err: fmt.Errorf("%w: %w", ErrInvalidCSV, err)}
}

// tooLong reports a record, starting at line, longer than the limit.
func (s *csvSource) tooLong(line int64) error {
	return &ParseError{Path: s.lines.file.path, Line: line, Err: fmt.Errorf("%w (limit %s; an unclosed quote?)", ErrLineTooLong, bytesize.Format(int64(s.max)))}
}

func (s *csvSource) skipped() int64 { return s.nskipped }

func (s *csvSource) fingerprint() (Fingerprint, error) { return s.lines.file.Fingerprint(), nil }

func (s *csvSource) close() error { return s.lines.file.Close() }
