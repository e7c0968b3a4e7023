package tokenize

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
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
// (and a byte-order mark at the start) ignored. Words are returned as
// written; [New] folds them along with the tokens. A line holding white
// space inside the word, malformed UTF-8, or a word that is not one token
// as the tokenizer reads it ("e-mail" is two, "C++" the token "C"), which
// would never match a token, is an error (a *StopwordError wrapping
// ErrStopword); the caller adds the file name.
func ReadStopwords(r io.Reader) (map[string]struct{}, error) {
	set := make(map[string]struct{})
	tok := New(Options{KeepCase: true})
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
		if toks := tok.Tokens(nil, text); len(toks) != 1 || string(toks[0]) != Normalize(string(text), Options{KeepCase: true}) {
			return nil, &StopwordError{line, fmt.Errorf("%w: %q is never a token: the tokenizer reads it as %s", ErrStopword, text, tokenList(toks))}
		}
		set[string(text)] = struct{}{}
	}
	if err := sc.Err(); err != nil {
		return nil, &StopwordError{line + 1, fmt.Errorf("tokenize: reading stop words: %w", err)}
	}
	return set, nil
}

// tokenList describes tokens for an error message.
func tokenList(toks [][]byte) string {
	if len(toks) == 0 {
		return "no token (it has no letter or digit)"
	}
	q := make([]string, len(toks))
	for i, t := range toks {
		q[i] = strconv.Quote(string(t))
	}
	return strings.Join(q, ", ")
}
