package input

import (
	"bytes"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"unicode/utf8"
)

func TestJSONL(t *testing.T) {
	dir := t.TempDir()
	content := strings.Join([]string{
		`{"id": 1, "text": "plain words"}`,
		`{"text": "esc\"aped \\ \/ \n\t \u00e9 \ud83d\ude00 \ud800 lone", "id": 2}`,
		``,
		`  {"meta": {"text": "nested, not this"}, "list": ["text", {"text": 1}], "text": "top level"}  `,
		`{"id": 4, "text": null}`,
		`{"id": 5}`,
		`{"te\u0078t": "escaped key", "text2": "other"}`,
		`{"text": "first", "text": "last wins"}`,
		"{\"text\": \"raw \xff bytes kept\"}\r",
		`{"text": ""}`,
	}, "\n")
	opt := Options{TextField: "text"}
	for name, data := range map[string][]byte{"a.jsonl": []byte(content), "a.jsonl.gz": gzipBytes(t, []byte(content))} {
		path := writeFile(t, dir, name, data)
		docs, r := readAll([]string{path}, opt)
		if err := r.Err(); err != nil {
			t.Fatal(err)
		}
		equalDocs(t, docs, []doc{
			{"plain words", path, 1},
			{"esc\"aped \\ / \n\t é 😀 \ufffd lone", path, 2},
			{"top level", path, 4},
			{"escaped key", path, 7},
			{"last wins", path, 8},
			{"raw \xff bytes kept", path, 9},
			{"", path, 10},
		})
		if n := r.Skipped(); n != 2 {
			t.Errorf("skipped %d lines, want 2 (null and missing)", n)
		}
	}
}

// TestJSONLNested reads a field inside nested objects by its path, a key
// with the whole name taken first at each level.
func TestJSONLNested(t *testing.T) {
	dir := t.TempDir()
	content := strings.Join([]string{
		`{"meta": {"body": "nested body", "lang": "en"}, "body": "top"}`,
		`{"meta.body": "a key with a dot", "meta": {"body": "not this"}}`,
		`{"meta": {"body": {"text": "deeper"}}}`,
		`{"meta": null}`,
		`{"other": 1}`,
		`{"meta": {"b\u006fdy": "escaped key"}}`,
		`{"meta": {"body": "first"}, "meta": {"body": "last wins"}}`,
	}, "\n")
	path := writeFile(t, dir, "n.jsonl", []byte(content))
	docs, r := readAll([]string{path}, Options{TextField: "meta.body"})
	wantParseError(t, r.Err(), path, 3, ErrNotString)
	equalDocs(t, docs, []doc{{"nested body", path, 1}, {"a key with a dot", path, 2}})

	docs, r = readAll([]string{path}, Options{TextField: "meta.body.text"})
	wantParseError(t, r.Err(), path, 1, ErrNotString)
	if msg := r.Err().Error(); !strings.Contains(msg, `"meta.body.text": "body" is a string, not an object`) {
		t.Errorf("message %q does not name the part that is not an object", msg)
	}
	if len(docs) != 0 {
		t.Errorf("documents before the error: %v", docs)
	}

	content = strings.Join(strings.Split(content, "\n")[3:], "\n")
	path = writeFile(t, dir, "m.jsonl", []byte(content))
	docs, r = readAll([]string{path}, Options{TextField: "meta.body"})
	if err := r.Err(); err != nil {
		t.Fatal(err)
	}
	equalDocs(t, docs, []doc{{"escaped key", path, 3}, {"last wins", path, 4}})
	if n := r.Skipped(); n != 2 {
		t.Errorf("skipped %d records, want 2 (null and missing)", n)
	}
}

func TestJSONLErrors(t *testing.T) {
	dir := t.TempDir()
	good := `{"text": "ok"}` + "\n"
	cases := []struct {
		name   string
		line   string
		target error
		detail string
	}{
		{"syntax", `{"text": "unterminated}`, ErrInvalidJSON, "unexpected end of JSON input"},
		{"garbage", `text: hello`, ErrInvalidJSON, "invalid character"},
		{"two values", `{"text": "a"} {"text": "b"}`, ErrInvalidJSON, "invalid character"},
		{"array", `["text", "a"]`, ErrNotObject, "an array"},
		{"string", `"just a string"`, ErrNotObject, "a string"},
		{"number", `{"text": 42}`, ErrNotString, "a number"},
		{"object", `{"text": {"en": "hi"}}`, ErrNotString, "an object"},
		{"bool", `{"text": true}`, ErrNotString, "a boolean"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			// The bad record is the 7th line; a blank line and a skipped
			// record before it still count as lines.
			content := good + good + "\n" + `{"text": null}` + "\n" + good + good + c.line + "\n" + good
			path := writeFile(t, dir, c.name+".jsonl", []byte(content))
			docs, r := readAll([]string{path}, Options{TextField: "text"})
			if len(docs) != 4 {
				t.Errorf("%d documents before the error, want 4", len(docs))
			}
			wantParseError(t, r.Err(), path, 7, c.target)
			if !strings.Contains(r.Err().Error(), c.detail) {
				t.Errorf("message %q does not say %q", r.Err(), c.detail)
			}
		})
	}
}

// TestJSONArray reads files that hold one JSON array of objects, on one
// line and over many, with a document at the line its element starts on.
func TestJSONArray(t *testing.T) {
	dir := t.TempDir()
	for name, c := range map[string]struct {
		content string
		want    []doc
		skipped int64
	}{
		"one.json": {`[{"text": "a"}, {"text": null}, {"id": 2, "text": "b, [c]"}]` + "\n",
			[]doc{{"a", "", 1}, {"b, [c]", "", 1}}, 1},
		"many.json": {"\ufeff\n  [\n  {\"text\": \"a\"},\n  {\"meta\": {\"x\": [1, {\"y\": \"]\"}]},\n   \"text\": \"b\\\"}\"},\n  {}\n]\n\n",
			[]doc{{"a", "", 3}, {"b\"}", "", 4}}, 1},
		"empty.json": {"[ ]", nil, 0},
	} {
		path := writeFile(t, dir, name, []byte(c.content))
		got, r := readAll([]string{path}, Options{TextField: "text"})
		if err := r.Err(); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		for i := range c.want {
			c.want[i].Path = path
		}
		equalDocs(t, got, c.want)
		if r.Skipped() != c.skipped {
			t.Errorf("%s: skipped %d, want %d", name, r.Skipped(), c.skipped)
		}
	}
	for name, c := range map[string]struct {
		content string
		line    int64
		target  error
	}{
		"unclosed.json":  {"[\n{\"text\": \"a\"},\n", 2, ErrInvalidJSON},
		"comma.json":     {`[{"text": "a"},]`, 1, ErrInvalidJSON},
		"twocommas.json": {`[{"text": "a"},,{"text": "b"}]`, 1, ErrInvalidJSON},
		"after.json":     {"[]\n{}\n", 2, ErrInvalidJSON},
		"number.json":    {"[\n{\"text\": \"a\"},\n 5]", 3, ErrNotObject},
		"badelem.json":   {"[{\"text\": \"a\"}, {\"text\" 1}]", 1, ErrInvalidJSON},
		"notstring.json": {"[{\"text\": [\"a\"]}]", 1, ErrNotString},
	} {
		path := writeFile(t, dir, name, []byte(c.content))
		_, r := readAll([]string{path}, Options{TextField: "text"})
		wantParseError(t, r.Err(), path, c.line, c.target)
	}
	// An array after the first record is a record that is not an object.
	path := writeFile(t, dir, "later.jsonl", []byte(`{"text": "a"}`+"\n"+`["b"]`+"\n"))
	_, r := readAll([]string{path}, Options{TextField: "text"})
	wantParseError(t, r.Err(), path, 2, ErrNotObject)
}

// beginsAsArray reports whether the reader takes data for a JSON array:
// its first line that is not blank begins with '['.
func beginsAsArray(data []byte) bool {
	for i, l := range bytes.Split(data, []byte("\n")) {
		if i == 0 {
			l = bytes.TrimPrefix(l, []byte("\ufeff"))
		}
		if !isBlank(l) {
			j := skipSpace(l, 0)
			return j < len(l) && l[j] == '['
		}
	}
	return false
}

// naiveJSONArray is the reference for a JSON array's documents, built on
// encoding/json: fails when the data is not valid JSON; else the documents
// with the lines their elements start on, the elements skipped, and the
// line and error of the first element that is not an object or whose
// field is not a string.
func naiveJSONArray(data []byte, field string) (docs []doc, skipped int64, fails bool, errLine int64, target error) {
	data = bytes.TrimPrefix(data, []byte("\ufeff"))
	var elems []json.RawMessage
	if json.Unmarshal(data, &elems) != nil {
		return nil, 0, true, 0, nil
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	if _, err := dec.Token(); err != nil {
		panic(err)
	}
	for range elems {
		off := int(dec.InputOffset())
		for off < len(data) && strings.IndexByte(" \t\r\n,", data[off]) >= 0 {
			off++
		}
		line := int64(1 + bytes.Count(data[:off], []byte("\n")))
		var raw json.RawMessage
		if err := dec.Decode(&raw); err != nil {
			panic(err)
		}
		var v any
		if err := json.Unmarshal(raw, &v); err != nil {
			panic(err)
		}
		m, ok := v.(map[string]any)
		if !ok {
			return docs, skipped, false, line, ErrNotObject
		}
		val, ok := naiveField(m, field)
		if !ok {
			return docs, skipped, false, line, ErrNotString
		}
		switch val := val.(type) {
		case nil:
			skipped++
		case string:
			docs = append(docs, doc{val, "-", line})
		default:
			return docs, skipped, false, line, ErrNotString
		}
	}
	return docs, skipped, false, 0, nil
}

// FuzzJSONArray checks the reader of JSON arrays against encoding/json
// (naiveJSONArray) on arbitrary bytes that begin as an array.
func FuzzJSONArray(f *testing.F) {
	f.Add([]byte(`[{"text": "a"}, {"text": null}, {"a": {"text": "n"}, "text": "b, [c]"}]`))
	f.Add([]byte("\n [\n {\"text\": \"x\\\"]\"},\n\t{\"text\": \"y\"}\r\n]\n"))
	f.Add([]byte(`[{"text": "a"},]`))
	f.Add([]byte(`[1, "s", [{"text": "q"}]] x`))
	f.Fuzz(func(t *testing.T, data []byte) {
		body := bytes.TrimPrefix(data, []byte("\ufeff"))
		if i := skipSpace(body, 0); notReadAsText(data) || i == len(body) || body[i] != '[' {
			return // JSON Lines, or refused before
		}
		for _, field := range []string{"text", "a.text"} {
			withStdin(t, data)
			got, r := readAll([]string{"-"}, Options{TextField: field})
			want, skipped, fails, errLine, target := naiveJSONArray(data, field)
			switch {
			case fails:
				if r.Err() == nil {
					t.Fatalf("%q: no error; encoding/json finds the data invalid", field)
				}
				continue
			case errLine > 0:
				var pe *ParseError
				if !errors.As(r.Err(), &pe) || pe.Line != errLine || !errors.Is(r.Err(), target) {
					t.Fatalf("%q: error %v, want %v at line %d", field, r.Err(), target, errLine)
				}
			case r.Err() != nil:
				t.Fatalf("%q: %v", field, r.Err())
			}
			// Invalid UTF-8 passes through, where encoding/json replaces it.
			for i := range got {
				got[i].Text = asEncodingJSON(got[i].Text)
			}
			equalDocs(t, got, want)
			if r.Skipped() != skipped {
				t.Fatalf("%q: skipped %d, want %d", field, r.Skipped(), skipped)
			}
		}
	})
}

// naiveJSONL is the reference for the JSONL reader, built on encoding/json.
// It returns the documents, how many records were skipped, and the line of
// the first error with the error it wraps.
func naiveJSONL(data []byte, field string, maxLine int) (docs []doc, skipped int64, errLine int64, errTarget error) {
	lines := strings.Split(string(data), "\n")
	if len(lines) > 0 && lines[len(lines)-1] == "" {
		lines = lines[:len(lines)-1]
	}
	for i, l := range lines {
		n := int64(i + 1)
		l = strings.TrimSuffix(l, "\r")
		if len(l) > maxLine {
			return docs, skipped, n, ErrLineTooLong
		}
		if n == 1 {
			l = strings.TrimPrefix(l, "\xef\xbb\xbf")
		}
		if strings.Trim(l, " \t\r\f\v") == "" {
			continue
		}
		if !json.Valid([]byte(l)) {
			return docs, skipped, n, ErrInvalidJSON
		}
		var v any
		dec := json.NewDecoder(strings.NewReader(l))
		dec.UseNumber()
		if err := dec.Decode(&v); err != nil {
			panic(err)
		}
		m, ok := v.(map[string]any)
		if !ok {
			return docs, skipped, n, ErrNotObject
		}
		v, ok = naiveField(m, field)
		if !ok {
			return docs, skipped, n, ErrNotString
		}
		switch s := v.(type) {
		case nil:
			skipped++
		case string:
			docs = append(docs, doc{s, "-", n})
		default:
			return docs, skipped, n, ErrNotString
		}
	}
	return docs, skipped, 0, nil
}

// naiveField looks name up in m: the key itself, or else, for a name with
// dots, the member after the first dot of the object before it, and so on
// down. It returns false if the path runs into a value that is not an
// object or null.
func naiveField(m map[string]any, name string) (any, bool) {
	if v, ok := m[name]; ok {
		return v, true
	}
	part, rest, dotted := strings.Cut(name, ".")
	if !dotted {
		return nil, true
	}
	switch v := m[part].(type) {
	case nil:
		return nil, true
	case map[string]any:
		return naiveField(v, rest)
	}
	return nil, false
}

// asEncodingJSON replaces each byte of invalid UTF-8 with U+FFFD, as
// encoding/json does when it decodes a string; the reader passes such bytes
// through instead.
func asEncodingJSON(s string) string {
	var b strings.Builder
	for len(s) > 0 {
		r, size := utf8.DecodeRuneInString(s)
		b.WriteRune(r)
		s = s[size:]
	}
	return b.String()
}

func FuzzJSONLReader(f *testing.F) {
	f.Add([]byte(`{"text": "a b"}` + "\n" + `{"text": null}` + "\n\n" + `{"x": 1, "text": "\u00e9\n"}`))
	f.Add([]byte(`{"text": "\ud83d\ude00 \udc00 \ud800\u0041", "text": "again"}`))
	f.Add([]byte(`{"a": [1, {"text": "no"}], "t\u0065xt": "yes"}` + "\r\n" + `[1]`))
	f.Add([]byte(`{"text": 1e999}` + "\n" + `{"text": "` + strings.Repeat("long ", 50) + `"}`))
	f.Add([]byte("{\"text\": \"\xff\xfe\"}\n{bad"))
	f.Add([]byte(`[-0.5e+3, 1E5, -, 01, 1., .5, "\u12G4", "\x", tru, nul]`))
	f.Add([]byte(`{"a":{"b":[[],{}]},"text":"x"} `))
	f.Add([]byte(`{"a": {"text": "in a", "b": {"text": "in b"}}, "a.text": "key"}` + "\n" +
		`{"a": {"b.text": "key in a", "b": {"text": "no"}}}` + "\n" + `{"a": null}` + "\n" +
		`{"a": "str"}` + "\n" + `{"a": {"b": [1]}}` + "\n" + `{"\u0061": {"te\u0078t": "escaped"}, "a": {}}`))
	const maxLine = 200
	f.Fuzz(func(t *testing.T, data []byte) {
		// The syntax check agrees with encoding/json on any bytes.
		w := jsonWalker{b: data}
		if _, _, _, ok := w.object(func([]byte) int { return 0 }); ok != json.Valid(data) {
			t.Fatalf("walker says valid=%v, json.Valid says %v for %q", ok, !ok, data)
		}
		if notReadAsText(data) || beginsAsArray(data) {
			return // FuzzJSONArray's
		}
		for _, field := range []string{"text", "a.text", "a.b.text"} {
			fuzzJSONLField(t, data, field, maxLine)
		}
	})
}

// fuzzJSONLField is FuzzJSONLReader's check of one field name.
func fuzzJSONLField(t *testing.T, data []byte, field string, maxLine int) {
	t.Helper()
	withStdin(t, data)
	got, r := readAll([]string{"-"}, Options{TextField: field, MaxLineBytes: maxLine})
	want, skipped, errLine, target := naiveJSONL(data, field, maxLine)
	if errLine > 0 {
		var pe *ParseError
		if !errors.As(r.Err(), &pe) || pe.Line != errLine || !errors.Is(r.Err(), target) {
			t.Fatalf("field %q: error %v, want %v at line %d", field, r.Err(), target, errLine)
		}
	} else if r.Err() != nil {
		t.Fatalf("field %q: %v", field, r.Err())
	}
	if len(got) != len(want) {
		t.Fatalf("field %q: got %d documents, want %d\ngot:  %+v\nwant: %+v", field, len(got), len(want), got, want)
	}
	for i := range got {
		if g := asEncodingJSON(got[i].Text); g != want[i].Text || got[i].Line != want[i].Line {
			t.Fatalf("field %q: document %d: got %q at line %d, want %q at line %d", field, i, g, got[i].Line, want[i].Text, want[i].Line)
		}
		// Valid UTF-8 in the file must come out byte for byte.
		if utf8.ValidString(got[i].Text) && got[i].Text != want[i].Text {
			t.Fatalf("field %q: document %d changed: %q", field, i, got[i].Text)
		}
	}
	if r.Skipped() != skipped {
		t.Fatalf("field %q: skipped %d, want %d", field, r.Skipped(), skipped)
	}
}

// The walker must accept exactly what encoding/json accepts.
func TestJSONWalkerAgreesWithValid(t *testing.T) {
	cases := []string{
		``, ` `, `{}`, ` {} `, `{} x`, `[]`, `[1,]`, `[1 2]`, `[`, `]`, `{"a":[}`, `{"a":1,}`, `{"a" 1}`,
		`{1:2}`, `{"a":1 "b":2}`, `{"a":{"b":{}}}`, `"`, `"abc`, `"\"`, `"\\"`, `"\x"`, `"\/"`,
		`"\u12G4"`, `"\u12"`, `"\u00e9"`, `"\ud800"`, "\"\t\"", "\"\x7f\"", "\"\xff\xfe\"", "\"a\x00\"",
		`0`, `-0`, `01`, `-01`, `1.`, `.5`, `-`, `1e`, `1e+`, `1E-7`, `0.0e-0`, `-1.5e+30`, `1ee2`, `+1`,
		`true`, `tru`, `false`, `fals`, `null`, `nul`, `nulll`, `1 2`, `true false`, `[true,false,null]`,
		"{\"a\":\t1\r\n}", "\v{}", "{}\f",
		strings.Repeat("[", jsonMaxDepth) + strings.Repeat("]", jsonMaxDepth),
		strings.Repeat("[", jsonMaxDepth+1) + strings.Repeat("]", jsonMaxDepth+1),
		`{"a":` + strings.Repeat("[", jsonMaxDepth-1) + strings.Repeat("]", jsonMaxDepth-1) + `}`,
		`{"a":` + strings.Repeat("[", jsonMaxDepth) + strings.Repeat("]", jsonMaxDepth) + `}`,
	}
	for _, c := range cases {
		w := jsonWalker{b: []byte(c)}
		_, _, _, ok := w.object(func([]byte) int { return 0 })
		if want := json.Valid([]byte(c)); ok != want {
			name := c
			if len(name) > 40 {
				name = name[:40] + "..."
			}
			t.Errorf("%q: walker says valid=%v, json.Valid %v", name, ok, want)
		}
	}
}
