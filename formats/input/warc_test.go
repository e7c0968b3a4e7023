package input

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

type warcRecord struct {
	kind    string
	content string
	headers string // more header lines, each ending "\r\n"
	ctype   string // Content-Type, if not text/plain
}

// warcFile writes records as Common Crawl's WET files have them, and
// returns the file and, by a reading written for the test, the documents
// of its conversion records (lines, paragraphs, or whole records) with
// their lines.
func warcFile(recs []warcRecord, path string, mode textMode) ([]byte, []doc) {
	var b bytes.Buffer
	var docs []doc
	line := int64(1)
	for i, r := range recs {
		ctype := r.ctype
		if ctype == "" {
			ctype = "text/plain"
		}
		fmt.Fprintf(&b, "WARC/1.0\r\nWARC-Type: %s\r\nWARC-Target-URI: http://example.com/%d\r\nWARC-Date: 2024-02-21T09:05:11Z\r\n%sContent-Type: %s\r\nContent-Length: %d\r\n\r\n",
			r.kind, i, r.headers, ctype, len(r.content))
		line += int64(7 + strings.Count(r.headers, "\n"))
		if r.kind == "conversion" || r.kind == "resource" && r.ctype == "" {
			var para []string
			var paraLine int64
			flush := func() {
				if len(para) > 0 {
					docs = append(docs, doc{strings.Join(para, "\n"), path, paraLine})
					para = nil
				}
			}
			last := strings.Count(r.content, "\n")
			for k, l := range strings.Split(r.content, "\n") {
				if k == last && l == "" {
					break // after the content's last newline
				}
				if k < last {
					// A last line without its newline ends with the
					// record's "\r\n", whose '\r' alone is dropped.
					l = strings.TrimSuffix(l, "\r")
				}
				if strings.Trim(l, " \t\r\f\v") == "" { // ASCII white space, as text lines
					if mode == byParagraph {
						flush()
					}
					continue
				}
				if mode == byLine {
					docs = append(docs, doc{l, path, line + int64(k)})
					continue
				}
				if len(para) == 0 {
					paraLine = line + int64(k)
				}
				para = append(para, l)
			}
			flush()
		}
		b.WriteString(r.content)
		b.WriteString("\r\n\r\n")
		line += int64(strings.Count(r.content+"\r\n\r\n", "\n"))
	}
	return b.Bytes(), docs
}

// wetRecords are a WET file's records: its warcinfo, pages of text in
// every shape (no final newline, CRLF, blank lines, empty, a line that
// looks like a record's start), and records of other kinds to pass over.
var wetRecords = []warcRecord{
	{kind: "warcinfo", content: "isPartOf: CC-MAIN-2024-10\r\npublisher: Common Crawl\r\nformat: WARC File Format 1.1\r\n"},
	{kind: "conversion", content: "First page, its title\nand a paragraph of text.\n\nAnother paragraph.\n", headers: "WARC-Identified-Content-Language: eng\r\n"},
	{kind: "conversion", content: "a page without a final newline"},
	{kind: "conversion", content: "lines\r\nending\r\nin CRLF\r\n"},
	{kind: "conversion", content: ""},
	{kind: "request", content: "GET / HTTP/1.1\r\nHost: example.com\r\n\r\n"},
	{kind: "conversion", content: "text\nWARC/1.0\nWARC-Type: conversion\nContent-Length: 5\n\n   \nmore text after blanks\n"},
	{kind: "metadata", content: "fetchTimeMs: 123\r\n"},
	{kind: "resource", content: "a text file kept whole:\nits two lines\n"},
	{kind: "conversion", content: "é ü ß: UTF-8 text\n\n\nlast"},
}

// TestWARC reads a WET file, plain and as gzip members (one a record, as
// Common Crawl writes them), by lines, by paragraphs and by records: the
// documents are the conversion records' text, at their lines in the file.
func TestWARC(t *testing.T) {
	dir := t.TempDir()
	for mode, sep := range []string{DocSepLine, DocSepBlank, DocSepFile} {
		opt := Options{DocSep: sep}
		path := filepath.Join(dir, "a.warc.wet")
		data, want := warcFile(wetRecords, path, textMode(mode))
		if err := os.WriteFile(path, data, 0o644); err != nil {
			t.Fatal(err)
		}
		equalDocs(t, mustReadAll(t, []string{path}, opt), want)

		var members []byte
		for _, r := range wetRecords {
			one, _ := warcFile([]warcRecord{r}, "", byLine)
			members = append(members, gzipBytes(t, one)...)
		}
		gz := filepath.Join(dir, "a.warc.wet.gz")
		if err := os.WriteFile(gz, members, 0o644); err != nil {
			t.Fatal(err)
		}
		_, want = warcFile(wetRecords, gz, textMode(mode))
		equalDocs(t, mustReadAll(t, []string{gz}, opt), want)
	}
}

// TestWARCErrors checks that a damaged WARC file, or one of web pages as
// fetched, is an error naming the file and the line.
func TestWARCErrors(t *testing.T) {
	good, _ := warcFile(wetRecords[:3], "", byLine)
	second := bytes.Index(good[1:], []byte("WARC/1.0")) + 1
	secondLine := int64(bytes.Count(good[:second], []byte("\n")) + 1)
	lengthLine := secondLine + 6
	// The second record's length, and others.
	n := len(wetRecords[1].content)
	length := func(k int) []byte { return []byte(fmt.Sprintf("Content-Length: %d", k)) }
	with := func(old, new []byte) []byte { return bytes.Replace(good, old, new, 1) }
	html, _ := warcFile([]warcRecord{wetRecords[1], {kind: "resource", content: "<p>a page</p>\n", ctype: "text/html; charset=utf-8"}}, "", byLine)
	cases := []struct {
		name   string
		data   []byte
		target error
		line   int64
		msg    string
	}{
		{"content cut short", good[:len(good)-10], ErrBadWARC, int64(bytes.Count(good[:len(good)-10], []byte("\n")) + 1), "ends inside a record's content"},
		{"content cut at a line's end", good[:bytes.LastIndex(good[:len(good)-10], []byte("\n"))+1], ErrBadWARC, int64(bytes.Count(good[:len(good)-10], []byte("\n"))), "ends inside a record's content"},
		{"length too long", with(length(n), length(n+20)), ErrBadWARC, 0, "version line"},
		{"length too short", with(length(n), length(n-30)), ErrBadWARC, 0, "version line"},
		{"length not a number", with(length(n), []byte("Content-Length: 6x")), ErrBadWARC, lengthLine, "not a length"},
		{"no length", with(append(length(n), "\r\n"...), nil), ErrBadWARC, secondLine, "no Content-Length"},
		{"header without colon", with([]byte("WARC-Date: 2024-02-21T09:05:11Z\r\nWARC-Identified"), []byte("WARC-Date 2024\r\nWARC-Identified")), ErrBadWARC, secondLine + 3, "without a colon"},
		{"ends in headers", good[:second+bytes.Index(good[second:], []byte("WARC-Identified"))], ErrBadWARC, secondLine + 3, "inside the headers"},
		{"response", with([]byte("WARC-Type: conversion"), []byte("WARC-Type: response")), ErrWARCNotText, lengthLine + 1, "WET files"},
		{"resource of HTML", html, ErrWARCNotText, int64(bytes.Count(html[:bytes.Index(html, []byte("<p>"))], []byte("\n"))), `a "resource" record of "text/html; charset=utf-8"`},
	}
	for _, c := range cases {
		if bytes.Equal(c.data, good) {
			t.Fatalf("%s: the file is not changed", c.name)
		}
	}
	dir := t.TempDir()
	for _, c := range cases {
		path := filepath.Join(dir, strings.ReplaceAll(c.name, " ", "_")+".warc")
		if err := os.WriteFile(path, c.data, 0o644); err != nil {
			t.Fatal(err)
		}
		_, r := readAll([]string{path}, Options{})
		err := r.Err()
		var pe *ParseError
		if !errors.As(err, &pe) || pe.Path != path || !errors.Is(err, c.target) || !strings.Contains(err.Error(), c.msg) ||
			c.line > 0 && pe.Line != c.line || pe.Line <= 0 {
			t.Errorf("%s: error %v; want %v at %s:%d saying %q", c.name, err, c.target, path, c.line, c.msg)
		}
	}
}

// FuzzWARC reads WET files made of the fuzzer's contents (records split at
// 0xff bytes, their kinds from the contents' first bytes) against the
// test's own reading, and any bytes after a WARC version line, which must
// read or fail with a *ParseError naming the file.
func FuzzWARC(f *testing.F) {
	f.Add([]byte("page one\nline two\n\xffsecond page\r\n\r\n\xff\x01skipped"), false, false)
	f.Add([]byte("a\n\nb\n\n\nc\xff\xff\x02x"), true, false)
	one, _ := warcFile(wetRecords[:3], "", byLine)
	f.Add(one[10:], false, true)
	f.Fuzz(func(t *testing.T, data []byte, paragraphs, raw bool) {
		opt := Options{MaxLineBytes: 1 << 10}
		if paragraphs {
			opt.DocSep = DocSepBlank
		}
		if raw {
			withStdin(t, append([]byte("WARC/1.0\r\n"), data...))
			_, r := readAll([]string{"-"}, opt)
			var pe *ParseError
			if err := r.Err(); err != nil && (!errors.As(err, &pe) || pe.Path != "-") {
				t.Fatalf("error %v is not a *ParseError naming -", err)
			}
			return
		}
		kinds := []string{"conversion", "warcinfo", "request", "metadata", "resource"}
		var recs []warcRecord
		for _, c := range bytes.Split(data, []byte{0xff}) {
			k := "conversion"
			if len(c) > 0 && int(c[0]) < len(kinds) {
				k = kinds[c[0]]
			}
			recs = append(recs, warcRecord{kind: k, content: string(c)})
		}
		mode := byLine
		if paragraphs {
			mode = byParagraph
		}
		file, want := warcFile(recs, "-", mode)
		for _, l := range bytes.Split(file, []byte("\n")) {
			if len(l) > opt.MaxLineBytes {
				return // a line longer than the limit
			}
		}
		if bytes.IndexByte(file[:min(len(file), headLen)], 0) >= 0 {
			return // refused as binary
		}
		for _, d := range want {
			if len(d.Text) > 1<<10 {
				return
			}
		}
		withStdin(t, file)
		got, r := readAll([]string{"-"}, opt)
		if err := r.Err(); err != nil {
			t.Fatal(err)
		}
		equalDocs(t, got, want)
	})
}
