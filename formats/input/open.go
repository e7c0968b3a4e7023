package input

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"hash"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"

	"github.com/klauspost/compress/gzip"
	"github.com/klauspost/compress/zstd"
	"github.com/ulikunitz/xz"

	"github.com/pwe-project/pwe/internal/sample"
)

// stdin is what the path "-" reads; tests replace it.
var stdin io.Reader = os.Stdin

// Fingerprint identifies the raw bytes of an input, before decompression, so
// that a manifest can tell whether an output is still up to date.
type Fingerprint struct {
	Path   string `json:"path"`
	Size   int64  `json:"size"`
	SHA256 string `json:"sha256"`
}

// MaxListedInputs is the most input files an output's pwe.inputs lists one
// by one (Summarize): a fingerprint takes about 120 bytes of the file's
// footer, and readers refuse footers of 100 MB (pyarrow's default limit),
// which a corpus of a million files would make.
const MaxListedInputs = 1000

// Summarize returns fps, or for more than MaxListedInputs fingerprints one
// that stands for them all: its path gives their number and the first and
// last paths, its size is their total, and its sha256 is the SHA-256 of one
// line "path\tsize\tsha256\n" per file, in order, so that the files can
// be checked against it.
func Summarize(fps []Fingerprint) []Fingerprint {
	var l fingerprintLog
	for _, fp := range fps {
		l.add(fp)
	}
	return l.result()
}

// fingerprintLog is Summarize for fingerprints that come one at a time:
// it holds MaxListedInputs of them at most, whatever their number.
type fingerprintLog struct {
	listed []Fingerprint // the first MaxListedInputs
	n      int
	size   int64
	last   string
	lines  hash.Hash
}

func (l *fingerprintLog) add(fp Fingerprint) {
	if l.lines == nil {
		l.lines = sha256.New()
	}
	fmt.Fprintf(l.lines, "%s\t%d\t%s\n", fp.Path, fp.Size, fp.SHA256)
	if l.n < MaxListedInputs {
		l.listed = append(l.listed, fp)
	}
	l.n++
	l.size += fp.Size
	l.last = fp.Path
}

func (l *fingerprintLog) result() []Fingerprint {
	if l.n <= MaxListedInputs {
		return slices.Clone(l.listed)
	}
	return []Fingerprint{{
		Path:   fmt.Sprintf("%d files, %s to %s", l.n, l.listed[0].Path, l.last),
		Size:   l.size,
		SHA256: hex.EncodeToString(l.lines.Sum(nil)),
	}}
}

// Codec names used in messages.
const (
	codecNone  = ""
	codecGzip  = "gzip"
	codecZstd  = "zstd"
	codecBzip2 = "bzip2"
	codecXz    = "xz"
)

var (
	zstdMagic = []byte{0x28, 0xb5, 0x2f, 0xfd}
	xzMagic   = []byte{0xfd, '7', 'z', 'X', 'Z', 0x00}
)

// bzip2 streams start "BZh" and a block-size digit, then either the magic of
// the first block (the digits of pi) or that of the end of an empty stream
// (the digits of sqrt(pi)); requiring all ten bytes keeps a text file that
// happens to begin with "BZh" from being taken for bzip2.
var (
	bzip2BlockMagic = []byte{0x31, 0x41, 0x59, 0x26, 0x53, 0x59}
	bzip2EndMagic   = []byte{0x17, 0x72, 0x45, 0x38, 0x50, 0x90}
)

// headLen is how much of a file's content File.head holds: a tar header's
// block, whose magic lies at offset 257; the compressions' magic bytes are
// among a plain file's first 10.
const headLen = 512

// zstdMaxWindow bounds the memory a (possibly hostile) zstd frame can make
// the decoder reserve; 128 MiB covers every window the zstd command writes,
// including --ultra -22 and --long.
const zstdMaxWindow = 1 << 27

// File is an opened input: reading it yields the decompressed bytes while
// the raw bytes are hashed for the fingerprint.
type File struct {
	path  string
	codec string
	raw   *hashingReader
	buf   *bufio.Reader // over raw: lets Open peek at the magic bytes
	dec   io.Reader     // the decompressed stream; buf itself for plain files
	// head is the first headLen bytes of the content (fewer in a shorter
	// file), decompressed, for binaryKind and the archives' magic; a
	// compressed file's were read from dec, and Read returns them first
	// (pending).
	head    []byte
	pending []byte
	close   func() error // releases the decoder and the OS file
	err     error        // first error other than io.EOF, sticky
	eof     bool
}

// Open opens path ("-" for stdin, sample.Name for the embedded sample
// corpus) and returns a reader of its decompressed
// bytes. Compression is recognised by magic bytes, so a mislabelled file is
// still read correctly; the extension (.gz, .zst, .bz2, .xz) only serves to
// report a file that is not what its name says. Errors are *ParseError.
func Open(path string) (*File, error) {
	if path == "-" {
		return newFile(path, stdin, nil)
	}
	if path == sample.Name {
		return newFile(path, bytes.NewReader(sample.AustenZst), nil)
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, &ParseError{Path: path, Err: unwrapPathError(err)}
	}
	file, err := newFile(path, f, f)
	if err != nil {
		f.Close()
		return nil, err
	}
	return file, nil
}

// unwrapPathError drops the *fs.PathError layer, whose message repeats the
// path that ParseError already shows; errors.Is(err, fs.ErrNotExist) still
// holds because the errno underneath implements it.
func unwrapPathError(err error) error {
	var pe *os.PathError
	if errors.As(err, &pe) {
		return fmt.Errorf("%s: %w", pe.Op, pe.Err)
	}
	return err
}

// readBufs recycles the read buffers of closed plain files: a corpus of
// many small files made one 64 KiB buffer for each, and clearing them took
// a sixth of tokenize's CPU on 20 000 files of 1 KB. A decompressor's file
// keeps its own, since a decoder may read ahead on goroutines of its own.
var readBufs = sync.Pool{New: func() any { return bufio.NewReaderSize(nil, 1<<16) }}

func newFile(path string, r io.Reader, closer io.Closer) (*File, error) {
	return newFileHashing(path, r, closer, sha256.New())
}

// newFileHashing is newFile with the hash of the raw bytes, nil for none:
// an archive's member is part of the archive's fingerprint, and has none
// of its own.
func newFileHashing(path string, r io.Reader, closer io.Closer, h hash.Hash) (*File, error) {
	raw := &hashingReader{r: r, h: h}
	buf := readBufs.Get().(*bufio.Reader)
	buf.Reset(raw)
	f := &File{path: path, raw: raw, buf: buf}
	head, err := f.buf.Peek(headLen)
	if err != nil && err != io.EOF && err != bufio.ErrBufferFull {
		f.recycle()
		return nil, &ParseError{Path: path, Err: unwrapPathError(err)}
	}
	want := codecFromExt(path)
	f.codec = codecFromMagic(head, want)
	if want != codecNone && f.codec == codecNone {
		found := "an empty file"
		if len(head) > 0 {
			found = fmt.Sprintf("begins %q", head[:min(len(head), 4)])
		}
		f.recycle()
		return nil, &ParseError{Path: path, Err: fmt.Errorf("not %s data (%s): %w", want, found, ErrWrongMagic)}
	}
	closeRaw := func() error { return nil }
	if closer != nil {
		closeRaw = closer.Close
	}
	f.close = closeRaw
	switch f.codec {
	case codecNone:
		f.dec = f.buf
		f.head = bytes.Clone(head)
	case codecGzip:
		zr, err := gzip.NewReader(f.buf)
		if err != nil {
			f.recycle()
			return nil, &ParseError{Path: path, Err: corrupt(codecGzip, err)}
		}
		zr.Multistream(false)
		f.dec = &gzipMembers{src: f.buf, zr: zr}
	case codecZstd:
		zr, err := zstd.NewReader(f.buf, zstd.WithDecoderMaxWindow(zstdMaxWindow), zstd.WithDecoderLowmem(true))
		if err != nil {
			return nil, &ParseError{Path: path, Err: corrupt(codecZstd, err)}
		}
		f.dec = zr
		f.close = func() error { zr.Close(); return closeRaw() }
	case codecBzip2:
		// On two or more cores, the blocks are decoded in parallel
		// (bzip2.go).
		dec, stop := newBzip2Reader(f.buf, runtime.GOMAXPROCS(0))
		f.dec = dec
		f.close = func() error { stop(); return closeRaw() }
	case codecXz:
		// The reader takes concatenated streams and their padding, as xz
		// -d does. A block's dictionary is allocated at the size its
		// header declares (64 MiB at xz -9, up to 4 GiB in a hostile
		// stream), but only the pages the stream writes are touched.
		xr, err := xz.NewReader(f.buf)
		if err != nil {
			f.recycle()
			return nil, &ParseError{Path: path, Err: corrupt(codecXz, err)}
		}
		f.dec = xr
	}
	if f.codec != codecNone {
		f.readHead()
	}
	return f, nil
}

// gzipMembers reads the members of a gzip file one after another, as gzip
// -d does, and takes zero bytes after the last, the padding that tape and
// tar blocking leave, as the file's end, as gzip -d does too. Other bytes
// there are an error: gzip -d warns of them and goes on, but they are more
// likely a damaged file than anything to pass over in silence.
type gzipMembers struct {
	src *bufio.Reader // the gzip reader reads no further than a member
	zr  *gzip.Reader
}

// errGzipTrailing is the error for bytes after the last member that are
// not zero.
var errGzipTrailing = errors.New("the bytes after the last member are neither another member nor zeros")

func (g *gzipMembers) Read(p []byte) (int, error) {
	for {
		n, err := g.zr.Read(p)
		if err != io.EOF {
			return n, err
		}
		more, err := g.next()
		if err != nil || !more {
			if err == nil {
				err = io.EOF
			}
			return n, err
		}
		if n > 0 {
			return n, nil
		}
	}
}

// next starts the next member, if one follows, or reads the zeros that end
// the file.
func (g *gzipMembers) next() (bool, error) {
	head, err := g.src.Peek(2)
	switch {
	case len(head) == 0 && err == io.EOF:
		return false, nil
	case len(head) == 2 && head[0] == 0x1f && head[1] == 0x8b:
		if err := g.zr.Reset(g.src); err != nil {
			return false, err
		}
		g.zr.Multistream(false)
		return true, nil
	}
	for {
		b, err := g.src.ReadByte()
		if err == io.EOF {
			return false, nil
		}
		if err != nil {
			return false, err
		}
		if b != 0 {
			return false, errGzipTrailing
		}
	}
}

// readHead reads a compressed file's head, which Read then returns first.
// An error is kept for Read to return after the bytes before it, as it
// would have been without the head.
func (f *File) readHead() {
	head := make([]byte, headLen)
	n, _ := io.ReadFull(decReader{f}, head)
	f.head = head[:n]
	f.pending = f.head
}

// decReader reads f's decompressed stream, past its head.
type decReader struct{ f *File }

func (d decReader) Read(p []byte) (int, error) { return d.f.read(p) }

// binaryKind names the kind of a file that begins with head when it is
// one of the binary files found beside a corpus (pwe's own outputs among
// them), which read as text would give garbage tokens; "" otherwise.
func binaryKind(head []byte) string {
	switch {
	case bytes.HasPrefix(head, []byte("PAR1\x15")):
		// The magic, then the compact Thrift header of the first page or
		// of the footer, whose first field is an i32 (byte 0x15): no text.
		return "a Parquet file (read its text with --text-column, or leave it out of the input)"
	case bytes.HasPrefix(head, []byte("PWETOKS1")):
		return "a pwe token stream (pwe count reads it with --tokens)"
	case bytes.HasPrefix(head, []byte("\xff\xff\xff\xff")) || bytes.HasPrefix(head, []byte("ARROW1\x00\x00")):
		return "an Arrow IPC stream or file, not text"
	case isZipHead(head):
		return "a zip archive inside another archive (unpack it, and name the files or their directory)"
	case isTarHead(head):
		// Read as an archive where it is an input of its own.
		return "a tar archive inside another archive (unpack it, and name the files or their directory)"
	case bytes.HasPrefix(head, []byte("7z\xbc\xaf\x27\x1c")):
		return "a 7-Zip archive (unpack it, and name the files or their directory)"
	case bytes.HasPrefix(head, []byte("\x04\x22\x4d\x18")):
		return "an LZ4 stream (decompress it first, or pipe it: lz4 -dc FILE | pwe ... -)"
	case bytes.HasPrefix(head, []byte("%PDF-")):
		return "a PDF document (extract its text first, with pdftotext for one)"
	case bytes.HasPrefix(head, []byte("\xff\xfe")) || bytes.HasPrefix(head, []byte("\xfe\xff")):
		return "UTF-16 text (pwe reads UTF-8: convert it first, with iconv -f UTF-16 -t UTF-8 for one)"
	}
	// No text holds a NUL byte; images, programs, databases and UTF-16
	// text without its byte-order mark do, early on. (Git and grep judge
	// a file binary so.)
	if i := bytes.IndexByte(head, 0); i >= 0 {
		return fmt.Sprintf("binary data, not text (a NUL byte at offset %d: an image, a program, UTF-16 text?)", i)
	}
	return ""
}

func corrupt(codec string, err error) error {
	if err == io.EOF {
		err = io.ErrUnexpectedEOF
	}
	return fmt.Errorf("%w (%s): %w", ErrCorrupt, codec, err)
}

func codecFromExt(path string) string {
	switch strings.ToLower(filepath.Ext(path)) {
	case ".gz", ".gzip":
		return codecGzip
	case ".zst", ".zstd":
		return codecZstd
	case ".bz2", ".bzip2":
		return codecBzip2
	case ".xz":
		return codecXz
	}
	return codecNone
}

// codecFromMagic recognises the stream format from its first bytes. want is
// the codec the extension promises; a file named .bz2 is handed to the bzip2
// decoder on its short "BZh" signature alone, so that a stream truncated
// inside its first block header is reported as truncated bzip2.
func codecFromMagic(head []byte, want string) string {
	switch {
	case len(head) >= 2 && head[0] == 0x1f && head[1] == 0x8b:
		return codecGzip
	case bytes.HasPrefix(head, zstdMagic):
		return codecZstd
	case bytes.HasPrefix(head, xzMagic):
		return codecXz
	case len(head) >= 4 && string(head[:3]) == "BZh" && '1' <= head[3] && head[3] <= '9':
		if want == codecBzip2 || len(head) >= 10 && (bytes.Equal(head[4:10], bzip2BlockMagic) || bytes.Equal(head[4:10], bzip2EndMagic)) {
			return codecBzip2
		}
	}
	return codecNone
}

// Read reads decompressed bytes. A corrupt or truncated compressed stream is
// reported as an error wrapping ErrCorrupt, never as an early io.EOF.
func (f *File) Read(p []byte) (int, error) {
	if len(f.pending) > 0 {
		n := copy(p, f.pending)
		f.pending = f.pending[n:]
		return n, nil
	}
	return f.read(p)
}

func (f *File) read(p []byte) (int, error) {
	if f.err != nil {
		return 0, f.err
	}
	if f.eof {
		return 0, io.EOF
	}
	n, err := f.dec.Read(p)
	switch {
	case err == nil:
	case err == io.EOF:
		// A decoder may stop at the end of its last frame; the fingerprint
		// covers the whole file, so whatever follows is hashed too.
		if _, derr := io.Copy(io.Discard, f.buf); derr != nil {
			f.err = &ParseError{Path: f.path, Err: unwrapPathError(derr)}
			return n, f.err
		}
		f.eof = true
	case f.codec == codecNone:
		f.err = &ParseError{Path: f.path, Err: unwrapPathError(err)}
	default:
		f.err = &ParseError{Path: f.path, Err: corrupt(f.codec, err)}
	}
	if f.err != nil {
		return n, f.err
	}
	return n, err
}

// Close releases the decoder and closes the file (stdin is left open).
func (f *File) Close() error {
	if f.close == nil {
		return nil
	}
	err := f.close()
	f.close = nil
	if f.codec == codecNone {
		f.recycle()
	}
	if f.err == nil {
		f.err = &ParseError{Path: f.path, Err: os.ErrClosed}
	}
	return err
}

// recycle returns f's read buffer to readBufs; f reads no more.
func (f *File) recycle() {
	f.buf.Reset(nil)
	readBufs.Put(f.buf)
	f.buf, f.dec = nil, nil
}

// OnRead makes f call fn with the number of raw bytes (as stored, so
// compressed bytes for a compressed file) each time it reads from the
// underlying file, on the reading goroutine, so that a progress report over
// inputs of known size can show how far it is. The calls sum to the raw
// bytes read: the file's size once Read has returned io.EOF. Bytes read
// before the call (Open peeks at the magic bytes) are reported at once.
func (f *File) OnRead(fn func(rawBytes int64)) {
	f.raw.onRead = fn
	if fn != nil && f.raw.n > 0 {
		fn(f.raw.n)
	}
}

// Path returns the path the file was opened with.
func (f *File) Path() string { return f.path }

// Compression returns the detected compression ("gzip", "zstd", "bzip2", "xz") or
// "" for an uncompressed file.
func (f *File) Compression() string { return f.codec }

// Fingerprint returns the size and SHA-256 of the raw bytes read so far;
// once Read has returned io.EOF it describes the whole file.
func (f *File) Fingerprint() Fingerprint {
	return Fingerprint{Path: f.path, Size: f.raw.n, SHA256: hex.EncodeToString(f.raw.h.Sum(nil))}
}

// FingerprintFile hashes the raw bytes of the file at path without
// decoding it.
func FingerprintFile(path string) (Fingerprint, error) {
	return FingerprintFileContext(context.Background(), path)
}

// FingerprintFileContext is FingerprintFile, which stops with ctx's error
// when ctx is done.
func FingerprintFileContext(ctx context.Context, path string) (Fingerprint, error) {
	if path == "-" {
		return Fingerprint{}, &ParseError{Path: path, Err: errors.New("input: cannot fingerprint stdin without consuming it")}
	}
	f, err := os.Open(path)
	if err != nil {
		return Fingerprint{}, &ParseError{Path: path, Err: unwrapPathError(err)}
	}
	defer f.Close()
	raw := &hashingReader{r: contextReader{ctx, f}, h: sha256.New()}
	if _, err := io.CopyBuffer(io.Discard, raw, make([]byte, 1<<20)); err != nil {
		if ctx.Err() != nil {
			return Fingerprint{}, err
		}
		return Fingerprint{}, &ParseError{Path: path, Err: unwrapPathError(err)}
	}
	return Fingerprint{Path: path, Size: raw.n, SHA256: hex.EncodeToString(raw.h.Sum(nil))}, nil
}

// contextReader reads r until ctx is done.
type contextReader struct {
	ctx context.Context
	r   io.Reader
}

func (c contextReader) Read(p []byte) (int, error) {
	if err := c.ctx.Err(); err != nil {
		return 0, err
	}
	return c.r.Read(p)
}

// hashingReader hashes and counts everything read through it.
type hashingReader struct {
	r      io.Reader
	h      hash.Hash
	n      int64
	onRead func(int64) // File.OnRead's hook, or nil
}

func (h *hashingReader) Read(p []byte) (int, error) {
	n, err := h.r.Read(p)
	if h.h != nil {
		h.h.Write(p[:n])
	}
	h.n += int64(n)
	if h.onRead != nil && n > 0 {
		h.onRead(int64(n))
	}
	return n, err
}
