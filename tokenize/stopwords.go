package tokenize

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"unicode"
	"unicode/utf8"
)

// ErrStopword is wrapped by the errors of [ReadStopwords] about a malformed
// line.
var ErrStopword = errors.New("tokenize: bad stop word")

// A StopwordError reports a malformed line of a stop-word list.
type StopwordError struct {
	Line int // 1-based
	Err  error
}

func (e *StopwordError) Error() string { return fmt.Sprintf("line %d: %v", e.Line, e.Err) }

func (e *StopwordError) Unwrap() error { return e.Err }

// ReadStopwords reads a stop-word list: one word per line, with everything
// from a '#' to the end of the line a comment and surrounding white space
// (and a byte-order mark at the start) ignored. Words are returned as written; [New] folds them along with the
// tokens. A line holding white space inside the word or malformed UTF-8 is
// an error (a *StopwordError wrapping ErrStopword); the caller adds the file
// name.
func ReadStopwords(r io.Reader) (map[string]struct{}, error) {
	set := make(map[string]struct{})
	sc := bufio.NewScanner(r)
	line := 0
	for sc.Scan() {
		line++
		text := sc.Bytes()
		if line == 1 {
			// A byte-order mark, as Windows editors write, is not part of
			// the first word, as the corpus readers drop it from a text.
			text = bytes.TrimPrefix(text, []byte("\uFEFF"))
		}
		if k := bytes.IndexByte(text, '#'); k >= 0 {
			text = text[:k]
		}
		text = bytes.TrimSpace(text)
		switch {
		case len(text) == 0:
			continue
		case !utf8.Valid(text):
			return nil, &StopwordError{line, fmt.Errorf("%w: malformed UTF-8 %q", ErrStopword, text)}
		case bytes.ContainsFunc(text, unicode.IsSpace):
			return nil, &StopwordError{line, fmt.Errorf("%w: %q is more than one word", ErrStopword, text)}
		}
		set[string(text)] = struct{}{}
	}
	if err := sc.Err(); err != nil {
		return nil, &StopwordError{line + 1, fmt.Errorf("tokenize: reading stop words: %w", err)}
	}
	return set, nil
}
