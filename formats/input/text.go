package input

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
)

// docSource yields the documents of one input.
type docSource interface {
	// next returns the next document and the line or row where it starts;
	// io.EOF at the end, any other error is a *ParseError.
	next() (text []byte, line int64, err error)
	// skipped counts records passed over because their text was null or missing.
	skipped() int64
	// fingerprint describes the raw input; valid once next returned io.EOF.
	fingerprint() (Fingerprint, error)
	close() error
}

// lineScanner splits a File into lines, numbering them and turning reader
// failures into errors that carry the line.
type lineScanner struct {
	file *File
	sc   *bufio.Scanner
	line int64
	max  int
}

// initialLineBuffer is the scanner's first buffer; it grows (up to the line
// limit) only for longer lines.
const initialLineBuffer = 1 << 20

func newLineBuffer(maxLine int) []byte {
	return make([]byte, min(initialLineBuffer, maxLine+2))
}

func newLineScanner(f *File, buf []byte, maxLine int) *lineScanner {
	s := &lineScanner{file: f, sc: bufio.NewScanner(f), max: maxLine}
	// Room for the longest allowed line plus "\r\n"; split rejects anything
	// longer that still fits the buffer.
	s.sc.Buffer(buf, maxLine+2)
	s.sc.Split(s.split)
	return s
}

var errSplitTooLong = errors.New("line exceeds limit")

func (s *lineScanner) split(data []byte, atEOF bool) (int, []byte, error) {
	if i := bytes.IndexByte(data, '\n'); i >= 0 {
		return s.token(data[:i], i+1)
	}
	// Without a newline, a final line counts only if the stream really
	// ended; after a read error it is a fragment of a longer line and is
	// left out, so the error is reported at the fragment's line.
	if atEOF && len(data) > 0 && s.file.err == nil {
		return s.token(data, len(data))
	}
	return 0, nil, nil
}

func (s *lineScanner) token(line []byte, advance int) (int, []byte, error) {
	if n := len(line); n > 0 && line[n-1] == '\r' {
		line = line[:n-1]
	}
	if len(line) > s.max {
		return 0, nil, errSplitTooLong
	}
	return advance, line, nil
}

func (s *lineScanner) scan() bool {
	if !s.sc.Scan() {
		return false
	}
	s.line++
	return true
}

// bytes returns the current line without its line ending, and without the
// byte-order mark some editors put at the start of a UTF-8 file.
func (s *lineScanner) bytes() []byte {
	b := s.sc.Bytes()
	if s.line == 1 {
		b = bytes.TrimPrefix(b, []byte("\xef\xbb\xbf"))
	}
	return b
}

// err returns io.EOF after a clean end, or the error with the line it hit.
func (s *lineScanner) err() error {
	err := s.sc.Err()
	switch {
	case err == nil:
		return io.EOF
	case errors.Is(err, errSplitTooLong), errors.Is(err, bufio.ErrTooLong):
		return &ParseError{Path: s.file.path, Line: s.line + 1, Err: fmt.Errorf("%w (limit %d bytes)", ErrLineTooLong, s.max)}
	}
	return atLine(s.file.path, s.line+1, err)
}

// atLine attaches a position to err, reusing the *ParseError that File
// already wraps its errors in.
func atLine(path string, line int64, err error) error {
	var pe *ParseError
	if errors.As(err, &pe) && pe.Path == path && pe.Line == 0 {
		return &ParseError{Path: path, Line: line, Err: pe.Err}
	}
	return &ParseError{Path: path, Line: line, Err: err}
}

// isBlank reports whether a line holds nothing but spaces and tabs (or
// other ASCII white space).
func isBlank(b []byte) bool {
	for _, c := range b {
		switch c {
		case ' ', '\t', '\r', '\f', '\v':
		default:
			return false
		}
	}
	return true
}

// textSource yields non-blank lines or blank-line-separated paragraphs.
type textSource struct {
	lines      *lineScanner
	paragraphs bool
	para       []byte
}

func (s *textSource) next() ([]byte, int64, error) {
	if !s.paragraphs {
		for s.lines.scan() {
			if t := s.lines.bytes(); !isBlank(t) {
				return t, s.lines.line, nil
			}
		}
		return nil, 0, s.lines.err()
	}
	var start int64
	s.para = s.para[:0]
	for s.lines.scan() {
		t := s.lines.bytes()
		if isBlank(t) {
			if start > 0 {
				return s.para, start, nil
			}
			continue
		}
		if start == 0 {
			start = s.lines.line
		} else {
			s.para = append(s.para, '\n')
		}
		if len(s.para)+len(t) > s.lines.max {
			return nil, 0, &ParseError{Path: s.lines.file.path, Line: start,
				Err: fmt.Errorf("%w: paragraph longer than %d bytes", ErrLineTooLong, s.lines.max)}
		}
		s.para = append(s.para, t...)
	}
	err := s.lines.err()
	if err == io.EOF && start > 0 {
		return s.para, start, nil
	}
	return nil, 0, err
}

func (s *textSource) skipped() int64 { return 0 }

func (s *textSource) fingerprint() (Fingerprint, error) { return s.lines.file.Fingerprint(), nil }

func (s *textSource) close() error { return s.lines.file.Close() }
