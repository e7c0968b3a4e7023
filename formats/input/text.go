package input

import (
	"bytes"
	"errors"
	"fmt"
	"io"

	"github.com/pwe-project/pwe/internal/bytesize"
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
// errors into *ParseError with the line they interrupted. It finds the
// lines in its buffer itself: bufio.Scanner's split callback and bookkeeping
// cost more per line than finding the newline (tokenize reads 1.6 M lines of
// bench-raw).
type lineScanner struct {
	file *File
	buf  []byte
	// buf[start:end] is read and not yet scanned.
	start, end int
	tok        []byte // the current line
	line       int64
	max        int   // the longest line allowed, without its line ending
	readErr    error // what ended the reading: io.EOF or an error
	scanErr    error // a line too long, or readErr if not io.EOF
	// left, where not negative, is how many more bytes scan may take
	// (a WARC record's content): it reports no more lines once they are
	// taken, ends included (a last line may take its ending past them).
	left int64
}

// initialLineBuffer is the scanner's first buffer; it grows (up to the line
// limit) only for longer lines.
const initialLineBuffer = 1 << 20

func newLineBuffer(maxLine int) []byte {
	return make([]byte, min(initialLineBuffer, maxLine+2))
}

func newLineScanner(f *File, buf []byte, maxLine int) *lineScanner {
	return &lineScanner{file: f, buf: buf, max: maxLine, left: -1}
}

var errSplitTooLong = errors.New("line exceeds limit")

// maxEmptyReads bounds the reads in a row that return nothing, as
// bufio.Scanner does, before the reader is taken to be broken.
const maxEmptyReads = 100

// scan moves to the next line and reports whether there is one.
func (s *lineScanner) scan() bool {
	if s.left == 0 {
		return false
	}
	for empty := 0; ; {
		if i := bytes.IndexByte(s.buf[s.start:s.end], '\n'); i >= 0 {
			line := s.buf[s.start : s.start+i]
			s.start += i + 1
			if s.left > 0 {
				s.left = max(0, s.left-int64(i+1))
			}
			return s.take(line)
		}
		if s.readErr != nil {
			// Without a newline, a final line counts only if the stream
			// really ended; after a read error it is a fragment of a longer
			// line and is left out, so the error is reported at the
			// fragment's line.
			if s.start < s.end && s.file.err == nil {
				line := s.buf[s.start:s.end]
				s.start = s.end
				if s.left > 0 {
					s.left = max(0, s.left-int64(len(line)))
				}
				return s.take(line)
			}
			if s.readErr != io.EOF && s.scanErr == nil {
				s.scanErr = s.readErr
			}
			return false
		}
		if s.scanErr != nil {
			return false
		}
		if n := s.fill(); n == 0 && s.readErr == nil {
			if empty++; empty == maxEmptyReads {
				s.readErr = io.ErrNoProgress
			}
		}
	}
}

// take makes line, less a final '\r', the current line, if it is not too
// long.
func (s *lineScanner) take(line []byte) bool {
	if n := len(line); n > 0 && line[n-1] == '\r' {
		line = line[:n-1]
	}
	if len(line) > s.max {
		s.scanErr = errSplitTooLong
		return false
	}
	s.tok = line
	s.line++
	return true
}

// fill reads more after the unscanned bytes, which it first moves to the
// front of the buffer, growing the buffer when they fill it (up to room for
// the longest line allowed and "\r\n"), and returns how many bytes it read.
func (s *lineScanner) fill() int {
	if s.start > 0 {
		s.end = copy(s.buf, s.buf[s.start:s.end])
		s.start = 0
	}
	if s.end == len(s.buf) {
		if len(s.buf) >= s.max+2 {
			s.scanErr = errSplitTooLong
			return 0
		}
		grown := make([]byte, min(2*len(s.buf), s.max+2))
		copy(grown, s.buf[:s.end])
		s.buf = grown
	}
	n, err := s.file.Read(s.buf[s.end:])
	s.end += n
	if err != nil {
		s.readErr = err
	}
	return n
}

// bytes returns the current line without its line ending, and without the
// byte-order mark some editors put at the start of a UTF-8 file.
func (s *lineScanner) bytes() []byte {
	b := s.tok
	if s.line == 1 {
		b = bytes.TrimPrefix(b, []byte("\xef\xbb\xbf"))
	}
	return b
}

// err returns io.EOF after a clean end, or the error with the line it hit.
func (s *lineScanner) err() error {
	err := s.scanErr
	switch {
	case err == nil:
		return io.EOF
	case errors.Is(err, errSplitTooLong):
		return &ParseError{Path: s.file.path, Line: s.line + 1, Err: fmt.Errorf("%w (limit %s)", ErrLineTooLong, bytesize.Format(int64(s.max)))}
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

// textMode is how a textSource makes documents of its lines.
type textMode uint8

const (
	byLine      textMode = iota // each non-blank line
	byParagraph                 // blank-line-separated paragraphs
	byInput                     // the whole input's non-blank lines
)

func textModeOf(docSep string) textMode {
	switch docSep {
	case DocSepBlank:
		return byParagraph
	case DocSepFile:
		return byInput
	}
	return byLine
}

// textSource yields non-blank lines, blank-line-separated paragraphs or the
// whole input as documents.
type textSource struct {
	lines *lineScanner
	mode  textMode
	para  []byte
}

func (s *textSource) next() ([]byte, int64, error) {
	if s.mode == byLine {
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
			if start > 0 && s.mode == byParagraph {
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
			what := "paragraph"
			if s.mode == byInput {
				what = "document (the whole input, with --doc-sep file)"
			}
			return nil, 0, &ParseError{Path: s.lines.file.path, Line: start,
				Err: fmt.Errorf("%w: %s longer than %s", ErrLineTooLong, what, bytesize.Format(int64(s.lines.max)))}
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
