package input

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/pwe-project/pwe/internal/sample"
)

// Document is one document of the input. Text is valid only until the next
// call to Next or NextBatch: buffers are reused.
type Document struct {
	Text []byte
	Path string
	Line int64 // 1-based line (text, JSONL) or row (Parquet) where the document starts
}

// Reader reads the documents of a sequence of inputs in order, in the manner
// of bufio.Scanner: call Next until it returns false, then check Err.
type Reader struct {
	paths []string
	opt   Options

	nextPath int       // index in paths of the next input to open
	src      docSource // the open input, nil between inputs
	doc      Document
	held     bool // doc was read by NextBatch but did not fit; Next returns it again
	done     bool
	err      error

	ndocs   int64 // documents returned so far, including doc
	nskip   int64 // skipped records of inputs already closed
	fps     fingerprintLog
	lineBuf []byte // the line scanner's buffer, reused from input to input

	onRead    func(int64) // OnRead's hook, or nil
	inputRead int64       // raw bytes of the open input reported to onRead
}

// NewReader returns a Reader of the documents in paths ("-" is stdin).
// Invalid options are reported by Err after the first call to Next.
func NewReader(paths []string, opt Options) *Reader {
	r := &Reader{paths: paths, opt: opt.withDefaults()}
	if err := opt.Validate(); err != nil {
		r.err, r.done = err, true
	}
	return r
}

// Next advances to the next document, opening the next input when one is
// exhausted. It returns false at the end of the last input or on error.
func (r *Reader) Next() bool {
	if r.held {
		r.held = false
		return true
	}
	if r.done {
		return false
	}
	for {
		if r.src == nil {
			if r.nextPath == len(r.paths) {
				r.done = true
				return false
			}
			src, err := r.open(r.paths[r.nextPath])
			if err != nil {
				r.fail(err)
				return false
			}
			r.src = src
		}
		text, line, err := r.src.next()
		switch err {
		case nil:
			r.doc = Document{Text: text, Path: r.docPath(), Line: line}
			r.ndocs++
			return true
		case io.EOF:
			if err := r.finishInput(); err != nil {
				r.fail(err)
				return false
			}
		default:
			r.fail(err)
			return false
		}
	}
}

// OnRead makes r call fn with the number of raw bytes (as stored:
// compressed bytes for a compressed file) each time it reads from an input,
// so that a progress report over inputs of known size can show how far the
// reading is. For every input read to its end the calls sum to its size;
// standard input counts what was read. Call it before the first Next; fn
// runs on the goroutine calling Next.
func (r *Reader) OnRead(fn func(rawBytes int64)) { r.onRead = fn }

// countRead reports n raw bytes of the open input.
func (r *Reader) countRead(n int64) {
	r.inputRead += n
	r.onRead(n)
}

func (r *Reader) open(path string) (docSource, error) {
	r.inputRead = 0
	var hook func(int64)
	if r.onRead != nil {
		hook = r.countRead
	}
	named := path != "-" && path != sample.Name
	// A zip archive is read where it lies only from a regular file: from
	// a pipe (<(cat a.zip)) or a named pipe, as from standard input, it is
	// copied to a file first (spoolZip).
	regular := named && isRegular(path)
	zipName := regular && strings.EqualFold(filepath.Ext(path), ".zip")
	tarName := named && isTarName(path)
	if r.opt.Format == Parquet && !zipName && !tarName && r.csvComma(path) == 0 {
		return openParquet(path, r.opt.TextColumn, hook)
	}
	if zipName {
		return r.openZip(path)
	}
	f, err := Open(path)
	if err != nil {
		return nil, err
	}
	if isZipHead(f.head) {
		if regular && f.codec == codecNone {
			f.Close()
			return r.openZip(path)
		}
		if hook != nil {
			f.OnRead(hook) // the copy's reading
		}
		z, err := spoolZip(f, r.opt.TempDir)
		if err != nil {
			return nil, err
		}
		return &archiveSource{path: path, entries: z, source: r.source}, nil
	}
	tar := tarName || isTarHead(f.head)
	if kind := binaryKind(f.head); kind != "" && !tar {
		f.Close()
		return nil, &ParseError{Path: path, Err: fmt.Errorf("%w: %s", ErrNotText, kind)}
	}
	if hook != nil {
		f.OnRead(hook)
	}
	if tar {
		return &archiveSource{path: path, entries: newTarEntries(f), source: r.source}, nil
	}
	src, err := r.source(f)
	if err != nil {
		f.Close()
	}
	return src, err
}

// isRegular reports whether path is a regular file, or a link to one.
func isRegular(path string) bool {
	info, err := os.Stat(path)
	return err == nil && info.Mode().IsRegular()
}

// openZip opens the zip archive at path as a source of its members'
// documents.
func (r *Reader) openZip(path string) (docSource, error) {
	z, err := newZipEntries(path)
	if err != nil {
		return nil, err
	}
	if r.onRead != nil {
		z.onRead = r.countRead
	}
	return &archiveSource{path: path, entries: z, source: r.source}, nil
}

// csvComma returns the field separator of the input at path when it is
// read as CSV or TSV (with --format csv or tsv, or with --text-column
// alone for a file named so), and 0 when it is not.
func (r *Reader) csvComma(path string) rune {
	switch r.opt.Format {
	case CSV:
		return ','
	case TSV:
		return '\t'
	case Parquet:
		if r.opt.columnImplied {
			return csvSuffix(path)
		}
	}
	return 0
}

// source returns the documents of f, text, JSON Lines or CSV; a Parquet
// file in an archive is an error.
func (r *Reader) source(f *File) (docSource, error) {
	if r.lineBuf == nil {
		r.lineBuf = newLineBuffer(r.opt.MaxLineBytes)
	}
	if comma := r.csvComma(f.path); comma != 0 {
		return newCSVSource(f, r.lineBuf, r.opt.TextColumn, byte(comma), r.opt.MaxLineBytes)
	}
	if r.opt.Format == Parquet {
		return nil, &ParseError{Path: f.path, Err: errors.New("input: Parquet cannot be read from an archive: unpack it, and name the files or their directory")}
	}
	lines := newLineScanner(f, r.lineBuf, r.opt.MaxLineBytes)
	if r.opt.Format == JSONL {
		return &jsonlSource{lines: lines, field: r.opt.TextField}, nil
	}
	mode := textModeOf(r.opt.DocSep)
	if isWARCHead(f.head) {
		return newWARCSource(lines, mode), nil
	}
	return &textSource{lines: lines, mode: mode}, nil
}

// docPath is the path of the open input's documents: a member's within an
// archive.
func (r *Reader) docPath() string {
	if a, ok := r.src.(*archiveSource); ok {
		return a.name
	}
	return r.paths[r.nextPath]
}

func (r *Reader) finishInput() error {
	path := r.paths[r.nextPath]
	fp, err := r.src.fingerprint()
	r.nskip += r.src.skipped()
	if cerr := r.src.close(); err == nil {
		err = cerr
	}
	r.src = nil
	r.nextPath++
	if err != nil {
		return atLine(path, 0, err)
	}
	// Parquet's unread columns count as read once the input is done.
	if r.onRead != nil && fp.Size > r.inputRead {
		r.countRead(fp.Size - r.inputRead)
	}
	r.fps.add(fp)
	return nil
}

func (r *Reader) fail(err error) {
	r.err, r.done = err, true
	if r.src != nil {
		r.nskip += r.src.skipped()
		r.src.close()
		r.src = nil
	}
}

// Doc returns the current document.
func (r *Reader) Doc() Document { return r.doc }

// Err returns the first error met, nil at a clean end. Problems with the
// data are *ParseError values naming the input and line or row.
func (r *Reader) Err() error { return r.err }

// Skipped counts the records passed over because their text was null or
// missing (JSONL field, Parquet column).
func (r *Reader) Skipped() int64 {
	n := r.nskip
	if r.src != nil {
		n += r.src.skipped()
	}
	return n
}

// Fingerprints describes every input read to its end so far, in order, as
// Summarize does: one by one up to MaxListedInputs of them, and more as
// one. The Reader keeps no more than that, however many files it reads.
func (r *Reader) Fingerprints() []Fingerprint { return r.fps.result() }

// Close releases the open input. Reading stops; it is safe to call twice.
func (r *Reader) Close() error {
	r.done, r.held = true, false
	if r.src == nil {
		return nil
	}
	r.nskip += r.src.skipped()
	err := r.src.close()
	r.src = nil
	return err
}

// Batch is a run of consecutive documents whose text the batch owns, packed
// into one buffer, so it can be handed to another goroutine while the
// Reader goes on.
type Batch struct {
	Docs  [][]byte // the texts, slices of one shared buffer
	Paths []string // input of each document
	Lines []int64  // line or row of each document
	Seq   int64    // 0-based ordinal of Docs[0] among all documents of the Reader

	buf  []byte
	ends []int
}

// Len returns the number of documents in the batch.
func (b *Batch) Len() int { return len(b.Docs) }

// Text returns the buffer that holds the batch's documents back to back,
// and where each ends in it: Docs[k] is text[ends[k-1]:ends[k]], from 0
// for the first.
func (b *Batch) Text() (text []byte, ends []int) { return b.buf, b.ends }

// NextBatch fills b with the next documents, up to maxBytes of text in all
// but always at least one document, reusing b's storage (so b must not be
// in use elsewhere). It returns false at the end or on error, like Next.
func (r *Reader) NextBatch(b *Batch, maxBytes int) bool {
	if cap(b.buf) < maxBytes {
		b.buf = make([]byte, 0, maxBytes)
	}
	b.buf, b.ends = b.buf[:0], b.ends[:0]
	b.Docs, b.Paths, b.Lines = b.Docs[:0], b.Paths[:0], b.Lines[:0]
	for {
		if src := r.lineSource(); src != nil && !r.held {
			if r.appendLines(src, b, maxBytes) {
				break
			}
		}
		if !r.Next() {
			break
		}
		if d := r.doc; !b.take(d.Text, d.Path, d.Line, r.ndocs-1, maxBytes) {
			r.held = true
			break
		}
	}
	// Slices are cut only now: appending may have moved the buffer.
	start := 0
	for _, end := range b.ends {
		b.Docs = append(b.Docs, b.buf[start:end:end])
		start = end
	}
	return len(b.Docs) > 0
}

// lineSource returns the open input, or the archive's open member, when it
// is plain text read line by line; nil otherwise.
func (r *Reader) lineSource() *textSource {
	src := r.src
	if a, ok := src.(*archiveSource); ok {
		src = a.member
	}
	if t, ok := src.(*textSource); ok && t.mode == byLine {
		return t
	}
	return nil
}

// appendLines appends to b the documents of a plain-text input read line by
// line, as NextBatch would one Next at a time, but without a call and a
// Document per line. It returns true when the batch is full, holding the
// document that did not fit, and false when src has no line left, which
// Next then reports as the input's end or error.
func (r *Reader) appendLines(src *textSource, b *Batch, maxBytes int) bool {
	path := r.docPath()
	lines := src.lines
	for lines.scan() {
		t := lines.bytes()
		if isBlank(t) {
			continue
		}
		r.ndocs++
		if !b.take(t, path, lines.line, r.ndocs-1, maxBytes) {
			r.doc = Document{Text: t, Path: path, Line: lines.line}
			r.held = true
			return true
		}
	}
	return false
}

// take appends a document, the seq-th of the Reader, unless the batch holds
// one already and the text would take it past maxBytes.
func (b *Batch) take(text []byte, path string, line, seq int64, maxBytes int) bool {
	if len(b.ends) > 0 && len(b.buf)+len(text) > maxBytes {
		return false
	}
	if len(b.ends) == 0 {
		b.Seq = seq
	}
	b.buf = append(b.buf, text...)
	b.ends = append(b.ends, len(b.buf))
	b.Paths = append(b.Paths, path)
	b.Lines = append(b.Lines, line)
	return true
}
