package input

import (
	"archive/tar"
	"archive/zip"
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path"
	"path/filepath"
	"strconv"
	"strings"
	"sync"

	"github.com/klauspost/compress/flate"
)

// tarSuffixes name tar archives, plain or compressed (the compression is
// recognised by its magic bytes, as for any file).
var tarSuffixes = []string{".tar", ".tar.gz", ".tgz", ".tar.zst", ".tzst", ".tar.bz2", ".tbz2", ".tbz", ".tar.xz", ".txz"}

// isTarName reports whether p names a tar archive, by its suffix.
func isTarName(p string) bool {
	name := strings.ToLower(filepath.Base(p))
	for _, s := range tarSuffixes {
		if strings.HasSuffix(name, s) {
			return true
		}
	}
	return false
}

// isZipHead reports whether a file beginning with head is a zip archive:
// its first local file header, or the end of an archive without files.
func isZipHead(head []byte) bool {
	return bytes.HasPrefix(head, []byte("PK\x03\x04")) || bytes.HasPrefix(head, []byte("PK\x05\x06"))
}

// isTarHead reports whether a file whose content begins with head is a tar
// archive: a POSIX or GNU header, with the magic "ustar" at offset 257 and
// a checksum that matches the header's bytes (a text file would need both).
func isTarHead(head []byte) bool {
	if len(head) < 512 || string(head[257:262]) != "ustar" {
		return false
	}
	// The checksum is the sum of the header's bytes with its own field
	// counted as spaces, in octal digits padded with spaces or NULs.
	want, err := strconv.ParseUint(strings.Trim(string(head[148:156]), " \x00"), 8, 32)
	if err != nil {
		return false
	}
	sum := uint64(8 * ' ')
	for i, c := range head[:512] {
		if i < 148 || i >= 156 {
			sum += uint64(c)
		}
	}
	return sum == want
}

// archiveEntries lists the members of an archive.
type archiveEntries interface {
	// next returns the next member that is a regular file, by its
	// slash-separated name, with a reader of its bytes, valid until the
	// next call; io.EOF after the last.
	next() (name string, r io.Reader, err error)
	// fingerprint describes the archive's raw bytes, once next has
	// returned io.EOF.
	fingerprint() (Fingerprint, error)
	close() error
}

// archiveSource reads the regular files of an archive, in the archive's
// order, each as an input of its own: its documents are numbered by line
// within it and carry its name after the archive's path, as if the archive
// were a directory ("corpus.tar.gz/train/pos/0_9.txt"). Members whose
// names have a part beginning with '.' are skipped, as files are in a
// directory walk, and so are directories, links and devices. The
// archive's fingerprint covers all of its bytes.
type archiveSource struct {
	path     string
	entries  archiveEntries
	source   func(*File) (docSource, error) // a member's source, text, JSONL or CSV
	member   docSource                      // the open member, nil between members
	name     string                         // the open member's path
	members  int
	nskipped int64 // of the members closed
}

func (s *archiveSource) next() ([]byte, int64, error) {
	for {
		if s.member == nil {
			if err := s.nextMember(); err != nil {
				return nil, 0, err
			}
		}
		text, line, err := s.member.next()
		if err != io.EOF {
			return text, line, err
		}
		if err := s.closeMember(); err != nil {
			return nil, 0, err
		}
	}
}

// nextMember opens the next member kept; io.EOF at the archive's end.
func (s *archiveSource) nextMember() error {
	for {
		name, r, err := s.entries.next()
		switch {
		case err == io.EOF:
			if s.members == 0 {
				return &ParseError{Path: s.path, Err: ErrEmptyArchive}
			}
			return io.EOF
		case err != nil:
			return s.archiveError(err)
		}
		name = strings.TrimPrefix(path.Clean(name), "/")
		if hiddenPart(name) {
			continue
		}
		s.name = s.path + "/" + name
		mf, err := newFileHashing(s.name, memberReader{r}, nil, nil)
		if err != nil {
			return err
		}
		if kind := binaryKind(mf.head); kind != "" {
			mf.Close()
			return &ParseError{Path: s.name, Err: fmt.Errorf("%w: %s", ErrNotText, kind)}
		}
		if s.member, err = s.source(mf); err != nil {
			mf.Close()
			return err
		}
		s.members++
		return nil
	}
}

// memberReader reads a member's bytes, with the errors met under it said
// as the member's: the archive's decompression fails (reported as the
// archive's error, which the member's path names), or the archive ends
// inside the member, or the member's own compression or checksum in a zip
// archive fails.
type memberReader struct{ r io.Reader }

func (m memberReader) Read(p []byte) (int, error) {
	n, err := m.r.Read(p)
	var pe *ParseError
	switch {
	case err == nil || err == io.EOF:
	case errors.As(err, &pe):
		err = pe.Err
	default:
		err = fmt.Errorf("%w: %v", ErrBadArchive, err)
	}
	return n, err
}

// hiddenPart reports whether a part of the slash-separated name begins
// with '.' (".." included).
func hiddenPart(name string) bool {
	for part := range strings.SplitSeq(name, "/") {
		if strings.HasPrefix(part, ".") {
			return true
		}
	}
	return false
}

// archiveError names the archive in an error of its structure; the
// decompression's errors name it already.
func (s *archiveSource) archiveError(err error) error {
	var pe *ParseError
	if errors.As(err, &pe) {
		return err
	}
	return &ParseError{Path: s.path, Err: fmt.Errorf("%w: %v", ErrBadArchive, err)}
}

func (s *archiveSource) closeMember() error {
	s.nskipped += s.member.skipped()
	err := s.member.close()
	s.member = nil
	return err
}

func (s *archiveSource) skipped() int64 {
	n := s.nskipped
	if s.member != nil {
		n += s.member.skipped()
	}
	return n
}

func (s *archiveSource) fingerprint() (Fingerprint, error) { return s.entries.fingerprint() }

func (s *archiveSource) close() error {
	if s.member != nil {
		s.member.close()
		s.member = nil
	}
	return s.entries.close()
}

// tarEntries are the members of a tar archive, read as a stream from the
// decompressed file.
type tarEntries struct {
	file *File
	tr   *tar.Reader
}

func newTarEntries(f *File) *tarEntries { return &tarEntries{file: f, tr: tar.NewReader(f)} }

func (t *tarEntries) next() (string, io.Reader, error) {
	for {
		hdr, err := t.tr.Next()
		switch {
		case err == io.EOF:
			// Whatever follows the archive's end (tar pads to its
			// record size) is read too, for the fingerprint and the
			// compression's own checks.
			if _, err := io.Copy(io.Discard, t.file); err != nil {
				return "", nil, err
			}
			return "", nil, io.EOF
		case err != nil:
			return "", nil, err
		case hdr.Typeflag == tar.TypeReg:
			return hdr.Name, t.tr, nil
		}
	}
}

func (t *tarEntries) fingerprint() (Fingerprint, error) { return t.file.Fingerprint(), nil }

func (t *tarEntries) close() error { return t.file.Close() }

// zipEntries are the members of a zip archive, in the order of its
// central directory, which is read first: zip needs the file itself, not
// a stream. The fingerprint reads the whole file once more.
type zipEntries struct {
	path string
	f    *os.File
	zr   *zip.Reader
	i    int
	open io.ReadCloser // the member being read
	// spooled is the fingerprint of the input that was copied to f, a
	// temporary file, and nil where f is the input itself; remove is the
	// temporary file's name where it could not be unlinked while open.
	spooled *Fingerprint
	remove  string
	// onRead, if not nil, is told of the file's bytes as its members are
	// read (report); size is the file's.
	onRead         func(int64)
	size, reported int64
}

// newZipEntries opens the zip archive at path; a damaged one is an error
// naming it.
func newZipEntries(path string) (*zipEntries, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, &ParseError{Path: path, Err: unwrapPathError(err)}
	}
	return zipEntriesOf(path, f)
}

// zipEntriesOf reads the zip archive in f, the input at path, and closes
// f if it is damaged.
func zipEntriesOf(path string, f *os.File) (*zipEntries, error) {
	info, err := f.Stat()
	if err == nil {
		var zr *zip.Reader
		if zr, err = zip.NewReader(&readAhead{f: f}, info.Size()); err == nil {
			// klauspost's inflate is faster than the standard library's.
			zr.RegisterDecompressor(zip.Deflate, newInflater)
			return &zipEntries{path: path, f: f, zr: zr, size: info.Size()}, nil
		}
		err = fmt.Errorf("%w: %v", ErrBadArchive, err)
	}
	f.Close()
	return nil, &ParseError{Path: path, Err: unwrapPathError(err)}
}

// spoolZip copies a zip archive that comes as a stream, on standard input
// or compressed, to a temporary file in dir, which it unlinks at once
// (nothing is left behind, whatever ends the run), and reads it from
// there.
func spoolZip(in *File, dir string) (*zipEntries, error) {
	tmp, err := os.CreateTemp(dir, "pwe-*.zip")
	if err != nil {
		in.Close()
		return nil, &ParseError{Path: in.path, Err: fmt.Errorf("a zip archive must be copied to a file to be read: %w", err)}
	}
	// Where an open file cannot be unlinked, it goes when closed.
	remove := ""
	if os.Remove(tmp.Name()) != nil {
		remove = tmp.Name()
	}
	_, err = io.Copy(tmp, in)
	fp := in.Fingerprint()
	in.Close()
	var z *zipEntries
	if err == nil {
		// zipEntriesOf closes tmp if the archive is damaged.
		z, err = zipEntriesOf(in.path, tmp)
	} else {
		tmp.Close()
		var pe *ParseError
		if !errors.As(err, &pe) {
			err = &ParseError{Path: in.path, Err: fmt.Errorf("copying a zip archive to a temporary file: %w", err)}
		}
	}
	if err != nil {
		if remove != "" {
			os.Remove(remove)
		}
		return nil, err
	}
	z.spooled, z.remove = &fp, remove
	return z, nil
}

func (z *zipEntries) next() (string, io.Reader, error) {
	if z.open != nil {
		z.open.Close()
		z.open = nil
		z.report(z.zr.File[z.i-1])
	}
	for ; z.i < len(z.zr.File); z.i++ {
		zf := z.zr.File[z.i]
		if !zf.Mode().IsRegular() {
			continue
		}
		z.i++
		rc, err := zf.Open()
		if err != nil {
			return "", nil, &ParseError{Path: z.path + "/" + zf.Name, Err: fmt.Errorf("%w: %v", ErrBadArchive, err)}
		}
		z.open = rc
		return zf.Name, rc, nil
	}
	if z.onRead != nil && z.size > z.reported {
		z.onRead(z.size - z.reported)
		z.reported = z.size
	}
	return "", nil, io.EOF
}

// report tells onRead how far into the file the archive has been read,
// once member zf is: to the end of its data, where that lies beyond what
// was reported. A member's compressed bytes are read as it is, the
// central directory (at the file's end) first, but the progress is the
// members' (the rest is reported at the end).
func (z *zipEntries) report(zf *zip.File) {
	if z.onRead == nil {
		return
	}
	off, err := zf.DataOffset()
	if end := off + int64(zf.CompressedSize64); err == nil && end > z.reported && end <= z.size {
		z.onRead(end - z.reported)
		z.reported = end
	}
}

func (z *zipEntries) fingerprint() (Fingerprint, error) {
	if z.spooled != nil {
		return *z.spooled, nil
	}
	return FingerprintFile(z.path)
}

func (z *zipEntries) close() error {
	if z.open != nil {
		z.open.Close()
		z.open = nil
	}
	err := z.f.Close()
	if z.remove != "" {
		os.Remove(z.remove)
	}
	return err
}

// inflaters recycles the zip members' decompressors, as archive/zip does
// its own: a new one for each of 50 000 one-line members took 0.72 CPU-s
// and 113-127 MB of RSS, against 0.21 and 48 for the same files in a
// .tar.gz.
var inflaters sync.Pool

// newInflater is zip's decompressor for deflated members.
func newInflater(r io.Reader) io.ReadCloser {
	if fr, ok := inflaters.Get().(io.ReadCloser); ok {
		if err := fr.(flate.Resetter).Reset(r, nil); err == nil {
			return &inflater{fr}
		}
	}
	return &inflater{flate.NewReader(r)}
}

// inflater returns its decompressor to inflaters when closed, once.
type inflater struct{ rc io.ReadCloser }

func (f *inflater) Read(p []byte) (int, error) { return f.rc.Read(p) }

func (f *inflater) Close() error {
	if f.rc == nil {
		return nil
	}
	err := f.rc.Close()
	inflaters.Put(f.rc)
	f.rc = nil
	return err
}

// readAhead serves a zip archive's reads from a window of the file read
// ahead: zip reads its members through small reads at offsets, a system
// call each (a fifth of the CPU on 50 000 one-line members), while the
// members lie in the file in the order they are read.
type readAhead struct {
	mu  sync.Mutex
	f   *os.File
	buf []byte
	off int64 // the file offset of buf[0]
}

const readAheadSize = 256 << 10

func (r *readAhead) ReadAt(p []byte, off int64) (int, error) {
	if len(p) > readAheadSize/2 {
		return r.f.ReadAt(p, off)
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if off < r.off || off+int64(len(p)) > r.off+int64(len(r.buf)) {
		if cap(r.buf) == 0 {
			r.buf = make([]byte, readAheadSize)
		}
		n, err := r.f.ReadAt(r.buf[:readAheadSize], off)
		r.buf, r.off = r.buf[:n], off
		if n < len(p) {
			copy(p, r.buf)
			if err == nil {
				err = io.EOF
			}
			return n, err
		}
	}
	return copy(p, r.buf[off-r.off:]), nil
}
