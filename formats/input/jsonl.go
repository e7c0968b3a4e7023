package input

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"unicode/utf16"
	"unicode/utf8"
)

// jsonlSource yields one string field of each JSON object line: a
// top-level one, or one inside nested objects (see extract).
type jsonlSource struct {
	lines    *lineScanner
	field    string
	name     string // the part of field keyRank looks for
	nskipped int64
	text     []byte     // unescaped text, reused
	key      []byte     // unescaped key, reused
	started  bool       // a record was read
	array    *jsonArray // the elements of a file that is one JSON array
}

func (s *jsonlSource) next() ([]byte, int64, error) {
	if s.array != nil {
		return s.nextElement()
	}
	for s.lines.scan() {
		t := s.lines.bytes()
		if isBlank(t) {
			continue
		}
		if i := skipSpace(t, 0); !s.started && i < len(t) && t[i] == '[' {
			// A JSON array: its elements are the records.
			s.array = &jsonArray{rest: t[i+1:]}
			return s.nextElement()
		}
		text, ok, err := s.extract(t)
		if err != nil {
			return nil, 0, &ParseError{Path: s.lines.file.path, Line: s.lines.line, Err: err}
		}
		s.started = true
		if !ok {
			s.nskipped++
			continue
		}
		return text, s.lines.line, nil
	}
	return nil, 0, s.lines.err()
}

func (s *jsonlSource) skipped() int64 { return s.nskipped }

func (s *jsonlSource) fingerprint() (Fingerprint, error) { return s.lines.file.Fingerprint(), nil }

func (s *jsonlSource) close() error { return s.lines.file.Close() }

// extract returns the value of the field in the JSON object on line, false
// if the field is missing or null. If the key occurs more than once the
// last occurrence wins, as with encoding/json. A field name with dots that
// is not a key of the object is a path: "meta.body" is the member body of
// the object meta, and so on down, a key equal to the rest of the path
// taken first at each level.
func (s *jsonlSource) extract(line []byte) ([]byte, bool, error) {
	w := jsonWalker{b: line}
	s.name = s.field
	value, rank, isObject, ok := w.object(s.keyRank)
	switch {
	case !ok:
		// The walker only says where the syntax fails; encoding/json,
		// run on this rare path alone, words the error.
		var v any
		if err := json.Unmarshal(line, &v); err != nil {
			return nil, false, fmt.Errorf("%w: %v", ErrInvalidJSON, err)
		}
		return nil, false, ErrInvalidJSON
	case !isObject:
		return nil, false, fmt.Errorf("%w (found %s)", ErrNotObject, jsonKind(line[skipSpace(line, 0)]))
	}
	for rank == rankPart && value[0] != 'n' {
		// The walk checked the whole line, so the member is valid JSON.
		part, rest, _ := strings.Cut(s.name, ".")
		if value[0] != '{' {
			return nil, false, fmt.Errorf("%w: %q: %q is %s, not an object", ErrNotString, s.field, part, jsonKind(value[0]))
		}
		w = jsonWalker{b: value}
		s.name = rest
		value, rank, _, _ = w.object(s.keyRank)
	}
	switch {
	case value == nil || value[0] == 'n':
		return nil, false, nil
	case value[0] != '"':
		return nil, false, fmt.Errorf("%w: %q is %s", ErrNotString, s.field, jsonKind(value[0]))
	}
	raw := value[1 : len(value)-1]
	if bytes.IndexByte(raw, '\\') < 0 {
		return raw, true, nil
	}
	s.text = unescape(s.text[:0], raw)
	return s.text, true, nil
}

// The ranks of keyRank: a key that is the name wins over one that is the
// first part of the name, a path.
const (
	rankPart = 1 + iota
	rankWhole
)

// keyRank ranks a (still escaped) key against s.name: rankWhole if it is
// the name, rankPart if it is the name's part before its first dot, else
// 0.
func (s *jsonlSource) keyRank(key []byte) int {
	if bytes.IndexByte(key, '\\') >= 0 {
		s.key = unescape(s.key[:0], key)
		key = s.key
	}
	switch {
	case string(key) == s.name:
		return rankWhole
	case len(key) < len(s.name) && s.name[len(key)] == '.' && string(key) == s.name[:len(key)]:
		return rankPart
	}
	return 0
}

func jsonKind(c byte) string {
	switch c {
	case '{':
		return "an object"
	case '[':
		return "an array"
	case '"':
		return "a string"
	case 't', 'f':
		return "a boolean"
	case 'n':
		return "null"
	}
	return "a number"
}

// jsonMaxDepth is encoding/json's nesting limit, kept so that both agree
// on what is valid.
const jsonMaxDepth = 10000

// jsonWalker checks the syntax of one JSON text (RFC 8259, as json.Valid
// does) in a single pass without allocating, and finds a top-level field on
// the way; it is several times faster than json.Valid followed by a search.
type jsonWalker struct {
	b []byte
}

// at returns b[i], or 0 past the end: NUL is never valid JSON, so running
// off the end fails like any other bad byte.
func (w *jsonWalker) at(i int) byte {
	if i < len(w.b) {
		return w.b[i]
	}
	return 0
}

// object walks the whole text. ok reports whether it is valid JSON,
// isObject whether it is an object, and value is the raw value of the last
// member whose (still escaped) key rank ranks highest, rank > 0, if any.
func (w *jsonWalker) object(rank func(key []byte) int) (value []byte, best int, isObject, ok bool) {
	i := skipSpace(w.b, 0)
	if w.at(i) != '{' {
		end, ok := w.value(i, 0)
		return nil, 0, false, ok && skipSpace(w.b, end) == len(w.b)
	}
	i = skipSpace(w.b, i+1)
	if w.at(i) == '}' {
		return nil, 0, true, skipSpace(w.b, i+1) == len(w.b)
	}
	for {
		if w.at(i) != '"' {
			return nil, 0, true, false
		}
		end, ok := w.str(i)
		if !ok {
			return nil, 0, true, false
		}
		key := w.b[i+1 : end-1]
		i = skipSpace(w.b, end)
		if w.at(i) != ':' {
			return nil, 0, true, false
		}
		i = skipSpace(w.b, i+1)
		end, ok = w.value(i, 1)
		if !ok {
			return nil, 0, true, false
		}
		if r := rank(key); r > 0 && r >= best {
			value, best = w.b[i:end], r
		}
		i = skipSpace(w.b, end)
		switch w.at(i) {
		case ',':
			i = skipSpace(w.b, i+1)
		case '}':
			return value, best, true, skipSpace(w.b, i+1) == len(w.b)
		default:
			return nil, 0, true, false
		}
	}
}

// value checks the value starting at b[i], inside depth open containers,
// and returns the index just past it.
func (w *jsonWalker) value(i, depth int) (int, bool) {
	switch c := w.at(i); c {
	case '"':
		return w.str(i)
	case '{', '[':
		if depth >= jsonMaxDepth {
			return i, false
		}
		closing := byte('}')
		if c == '[' {
			closing = ']'
		}
		i = skipSpace(w.b, i+1)
		if w.at(i) == closing {
			return i + 1, true
		}
		for {
			if c == '{' {
				if w.at(i) != '"' {
					return i, false
				}
				end, ok := w.str(i)
				if !ok {
					return end, false
				}
				i = skipSpace(w.b, end)
				if w.at(i) != ':' {
					return i, false
				}
				i = skipSpace(w.b, i+1)
			}
			end, ok := w.value(i, depth+1)
			if !ok {
				return end, false
			}
			i = skipSpace(w.b, end)
			switch w.at(i) {
			case ',':
				i = skipSpace(w.b, i+1)
			case closing:
				return i + 1, true
			default:
				return i, false
			}
		}
	case 't':
		return w.literal(i, "true")
	case 'f':
		return w.literal(i, "false")
	case 'n':
		return w.literal(i, "null")
	}
	return w.number(i)
}

func (w *jsonWalker) literal(i int, lit string) (int, bool) {
	if len(w.b)-i >= len(lit) && string(w.b[i:i+len(lit)]) == lit {
		return i + len(lit), true
	}
	return i, false
}

// number checks -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?
func (w *jsonWalker) number(i int) (int, bool) {
	if w.at(i) == '-' {
		i++
	}
	switch c := w.at(i); {
	case c == '0':
		i++
	case '1' <= c && c <= '9':
		i = w.digits(i)
	default:
		return i, false
	}
	if w.at(i) == '.' {
		j := w.digits(i + 1)
		if j == i+1 {
			return j, false
		}
		i = j
	}
	if c := w.at(i); c == 'e' || c == 'E' {
		i++
		if c := w.at(i); c == '+' || c == '-' {
			i++
		}
		j := w.digits(i)
		if j == i {
			return j, false
		}
		i = j
	}
	return i, true
}

func (w *jsonWalker) digits(i int) int {
	for i < len(w.b) && '0' <= w.b[i] && w.b[i] <= '9' {
		i++
	}
	return i
}

// str checks the string starting at b[i] == '"' and returns the index just
// past its closing quote. Bytes of 0x80 and above are not checked for UTF-8
// validity, as in json.Valid.
func (w *jsonWalker) str(i int) (int, bool) {
	b := w.b
	for i++; i < len(b); {
		c := b[i]
		switch {
		case c == '"':
			return i + 1, true
		case c == '\\':
			switch w.at(i + 1) {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
				i += 2
			case 'u':
				for k := i + 2; k < i+6; k++ {
					if !isHex(w.at(k)) {
						return k, false
					}
				}
				i += 6
			default:
				return i, false
			}
		case c < 0x20:
			return i, false
		default:
			i++
		}
	}
	return i, false
}

func isHex(c byte) bool {
	return '0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F'
}

func skipSpace(b []byte, i int) int {
	for i < len(b) {
		switch b[i] {
		case ' ', '\t', '\r', '\n':
			i++
		default:
			return i
		}
	}
	return i
}

// unescape appends the JSON string body raw (syntax already checked) to dst
// with its escapes decoded. Bytes that are not valid UTF-8 pass through
// unchanged; the tokenizer decides what to do with them. A lone UTF-16
// surrogate becomes U+FFFD, as in encoding/json.
func unescape(dst, raw []byte) []byte {
	for i := 0; i < len(raw); {
		j := bytes.IndexByte(raw[i:], '\\')
		if j < 0 {
			return append(dst, raw[i:]...)
		}
		dst = append(dst, raw[i:i+j]...)
		i += j + 1
		c := raw[i]
		i++
		switch c {
		case 'b':
			dst = append(dst, '\b')
		case 'f':
			dst = append(dst, '\f')
		case 'n':
			dst = append(dst, '\n')
		case 'r':
			dst = append(dst, '\r')
		case 't':
			dst = append(dst, '\t')
		case 'u':
			r := rune(hex4(raw[i:]))
			i += 4
			if utf16.IsSurrogate(r) {
				r2 := utf8.RuneError
				if i+6 <= len(raw) && raw[i] == '\\' && raw[i+1] == 'u' {
					r2 = rune(hex4(raw[i+2:]))
				}
				if d := utf16.DecodeRune(r, r2); d != utf8.RuneError {
					r = d
					i += 6
				} else {
					r = utf8.RuneError
				}
			}
			dst = utf8.AppendRune(dst, r)
		default: // '"', '\\', '/'
			dst = append(dst, c)
		}
	}
	return dst
}

func hex4(b []byte) uint16 {
	var v uint16
	for _, c := range b[:4] {
		v <<= 4
		switch {
		case c >= '0' && c <= '9':
			v |= uint16(c - '0')
		case c >= 'a' && c <= 'f':
			v |= uint16(c - 'a' + 10)
		default:
			v |= uint16(c - 'A' + 10)
		}
	}
	return v
}
