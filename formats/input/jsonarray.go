package input

import (
	"errors"
	"fmt"
	"io"

	"github.com/pwe-project/pwe/internal/bytesize"
)

// jsonArray cuts the elements out of a JSON array read line by line: a
// .json file holding one array of objects, as many exports do, read as
// JSON Lines would be, an element for a line. Only the array's commas and
// brackets are found here; each element is checked whole by
// jsonlSource.extract, as a line of JSON Lines is.
type jsonArray struct {
	state int
	depth int  // brackets open inside the element
	str   bool // inside a string
	esc   bool // after a backslash inside a string
	elem  []byte
	line  int64  // where the element starts
	rest  []byte // the part of the current line not yet cut
}

// The states of jsonArray between its elements.
const (
	arrayOpen  = iota // after '[': an element or ']'
	arrayElem         // inside an element
	arrayComma        // after ',': an element
	arrayEnd          // after ']': nothing but white space
)

var errArraySyntax = errors.New("the array's commas and brackets do not match")

// nextElement returns the next element's document, as next does for a
// line of JSON Lines.
func (s *jsonlSource) nextElement() ([]byte, int64, error) {
	a := s.array
	for {
		if len(a.rest) == 0 {
			if !s.lines.scan() {
				err := s.lines.err()
				if err == io.EOF && a.state != arrayEnd {
					return nil, 0, s.arrayError(s.lines.line, errors.New("unexpected end of JSON input"))
				}
				return nil, 0, err
			}
			a.rest = s.lines.bytes()
			if a.state == arrayElem {
				a.elem = append(a.elem, '\n')
			}
			if len(a.rest) == 0 {
				continue
			}
		}
		elem, err := a.cut(s.lines.line)
		if err != nil {
			return nil, 0, s.arrayError(s.lines.line, err)
		}
		if len(a.elem) > s.lines.max {
			return nil, 0, &ParseError{Path: s.lines.file.path, Line: a.line, Err: fmt.Errorf("%w (limit %s)", ErrLineTooLong, bytesize.Format(int64(s.lines.max)))}
		}
		if !elem {
			continue
		}
		text, ok, err := s.extract(a.elem)
		if err != nil {
			return nil, 0, &ParseError{Path: s.lines.file.path, Line: a.line, Err: err}
		}
		if !ok {
			s.nskipped++
			continue
		}
		return text, a.line, nil
	}
}

// cut goes through the rest of the line, on line, up to the end of the
// next element (true) or of the line (false).
func (a *jsonArray) cut(line int64) (bool, error) {
	b := a.rest
	i, from := 0, 0
	for ; i < len(b); i++ {
		c := b[i]
		switch a.state {
		case arrayOpen, arrayComma:
			switch c {
			case ' ', '\t', '\r', '\n':
				continue
			case ']':
				if a.state == arrayComma {
					return false, errArraySyntax
				}
				a.state = arrayEnd
				continue
			case ',':
				return false, errArraySyntax
			}
			a.state, a.depth, a.str, a.esc = arrayElem, 0, false, false
			a.elem, a.line, from = a.elem[:0], line, i
			i-- // the byte again, inside the element
		case arrayElem:
			switch {
			case a.esc:
				a.esc = false
			case a.str:
				a.esc, a.str = c == '\\', c != '"'
			case c == '"':
				a.str = true
			case c == '{' || c == '[':
				a.depth++
			case (c == ']' || c == ',') && a.depth == 0:
				a.elem = append(a.elem, b[from:i]...)
				a.state = arrayComma
				if c == ']' {
					a.state = arrayEnd
				}
				a.rest = b[i+1:]
				return true, nil
			case c == '}' || c == ']':
				a.depth--
			}
		case arrayEnd:
			if c != ' ' && c != '\t' && c != '\r' && c != '\n' {
				return false, errors.New("invalid character after the array")
			}
		}
	}
	if a.state == arrayElem {
		a.elem = append(a.elem, b[from:]...)
	}
	a.rest = nil
	return false, nil
}

func (s *jsonlSource) arrayError(line int64, err error) error {
	return &ParseError{Path: s.lines.file.path, Line: line, Err: fmt.Errorf("%w: %v", ErrInvalidJSON, err)}
}
