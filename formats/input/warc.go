package input

import (
	"bytes"
	"fmt"
	"io"
	"strconv"
	"strings"
)

// WARC files (ISO 28500) hold a web crawl as records, each a version line
// ("WARC/1.0"), header lines up to a blank line, Content-Length bytes of
// content and a blank line. Common Crawl's WET files (.warc.wet.gz) hold
// the text of each page it crawled as a "conversion" record, after a
// "warcinfo" record describing the crawl: the corpus many word embeddings
// are trained on. Read as plain text, their headers (URLs, dates, digests,
// lengths) would become tokens; warcSource reads only the conversion
// records' text.

// isWARCHead reports whether a file whose content begins with head is a
// WARC file.
func isWARCHead(head []byte) bool {
	return bytes.HasPrefix(head, []byte("WARC/1.0\r\n")) || bytes.HasPrefix(head, []byte("WARC/1.1\r\n"))
}

// warcSource yields the documents of a WARC file's conversion records, and
// of its resource records of Content-Type text/plain: each record's
// content is read as text (lines, paragraphs, or with --doc-sep file the
// whole record), and the documents of one record never run into the
// next's. Other records (warcinfo, request, metadata) are passed over;
// response records and other resource records, which hold pages as
// fetched, are an error.
type warcSource struct {
	text textSource // over the current record's content (lines.left)
	// inRecord is set while the content of a record of text is read.
	inRecord bool
}

func newWARCSource(lines *lineScanner, mode textMode) *warcSource {
	return &warcSource{text: textSource{lines: lines, mode: mode}}
}

func (s *warcSource) next() ([]byte, int64, error) {
	lines := s.text.lines
	for {
		if s.inRecord {
			t, line, err := s.text.next()
			if err != io.EOF {
				return t, line, err
			}
			if err := s.endRecord(); err != nil {
				return nil, 0, err
			}
		}
		kind, ctype, length, err := s.header()
		if err != nil {
			return nil, 0, err
		}
		lines.left = length
		switch {
		case kind == "conversion", kind == "resource" && isPlainText(ctype):
			s.inRecord = true
		case kind == "response", kind == "resource":
			return nil, 0, &ParseError{Path: lines.file.path, Line: lines.line, Err: fmt.Errorf("%w (a %q record of %q)", ErrWARCNotText, kind, ctype)}
		default:
			for lines.scan() {
			}
			if err := lines.err(); err != io.EOF {
				return nil, 0, err
			}
			if err := s.endRecord(); err != nil {
				return nil, 0, err
			}
		}
	}
}

// endRecord ends a record whose content was read to its end, or to the end
// of the file, which is an error.
func (s *warcSource) endRecord() error {
	lines := s.text.lines
	if lines.left > 0 {
		return s.errorf(lines.line, "the file ends inside a record's content (%d bytes short of its Content-Length)", lines.left)
	}
	lines.left = -1
	s.inRecord = false
	return nil
}

// isPlainText reports whether a Content-Type is text/plain, whatever its
// parameters (a charset).
func isPlainText(ctype string) bool {
	media, _, _ := strings.Cut(ctype, ";")
	return strings.EqualFold(strings.TrimSpace(media), "text/plain")
}

// header reads the next record's version line and headers, and returns its
// WARC-Type, Content-Type and Content-Length; io.EOF at the end of the
// file.
func (s *warcSource) header() (kind, ctype string, length int64, err error) {
	lines := s.text.lines
	// Records are separated by blank lines (the one after a record's
	// content, and the one ending content without a final newline).
	for {
		if !lines.scan() {
			// io.EOF: the file's head holds a version line, so its end
			// comes after a record.
			return "", "", 0, lines.err()
		}
		if len(lines.bytes()) > 0 {
			break
		}
	}
	start := lines.line
	if v := lines.bytes(); !bytes.HasPrefix(v, []byte("WARC/")) {
		return "", "", 0, s.errorf(start, "want a record's version line (WARC/1.0), found %q: is a Content-Length wrong?", v[:min(len(v), 40)])
	}
	length = -1
	for {
		if !lines.scan() {
			if err := lines.err(); err != io.EOF {
				return "", "", 0, err
			}
			return "", "", 0, s.errorf(lines.line, "the file ends inside the headers of the record at line %d", start)
		}
		h := lines.bytes()
		if len(h) == 0 {
			break
		}
		name, value, ok := bytes.Cut(h, []byte(":"))
		if !ok {
			return "", "", 0, s.errorf(lines.line, "a WARC header without a colon: %q", h[:min(len(h), 40)])
		}
		value = bytes.TrimSpace(value)
		switch {
		case bytes.EqualFold(name, []byte("WARC-Type")):
			kind = string(bytes.ToLower(value))
		case bytes.EqualFold(name, []byte("Content-Type")):
			ctype = string(value)
		case bytes.EqualFold(name, []byte("Content-Length")):
			n, err := strconv.ParseInt(string(value), 10, 64)
			if err != nil || n < 0 {
				return "", "", 0, s.errorf(lines.line, "Content-Length %q is not a length", value)
			}
			length = n
		}
	}
	if length < 0 {
		return "", "", 0, s.errorf(start, "the record has no Content-Length")
	}
	return kind, ctype, length, nil
}

func (s *warcSource) errorf(line int64, format string, args ...any) error {
	return &ParseError{Path: s.text.lines.file.path, Line: line, Err: fmt.Errorf("%w: %s", ErrBadWARC, fmt.Sprintf(format, args...))}
}

func (s *warcSource) skipped() int64 { return 0 }

func (s *warcSource) fingerprint() (Fingerprint, error) { return s.text.fingerprint() }

func (s *warcSource) close() error { return s.text.close() }
