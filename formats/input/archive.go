package input

import (
	"archive/tar"
	"errors"
	"fmt"
	"io"
	"path"
	"path/filepath"
	"strings"
)

// tarSuffixes name tar archives, plain or compressed (the compression is
// recognised by its magic bytes, as for any file).
var tarSuffixes = []string{".tar", ".tar.gz", ".tgz", ".tar.zst", ".tzst", ".tar.bz2", ".tbz2", ".tbz", ".tar.xz", ".txz"}

// isTarName reports whether path names a tar archive, by its suffix.
func isTarName(p string) bool {
	name := strings.ToLower(filepath.Base(p))
	for _, s := range tarSuffixes {
		if strings.HasSuffix(name, s) {
			return true
		}
	}
	return false
}

// archiveSource reads the regular files of a tar archive, in the archive's
// order, each as an input of its own: its documents are numbered by line
// within it and carry its name after the archive's path, as if the archive
// were a directory ("corpus.tar.gz/train/pos/0_9.txt"). Members whose
// names have a part beginning with '.' are skipped, as files are in a
// directory walk, and so are directories, links and devices. The
// archive's fingerprint covers all of its bytes.
type archiveSource struct {
	file     *File // the archive, decompressed
	tr       *tar.Reader
	source   func(*File) docSource // a member's source, text or JSONL
	member   docSource             // the open member, nil between members
	name     string                // the open member's path
	members  int
	nskipped int64 // of the members closed
}

func newArchiveSource(f *File, source func(*File) docSource) *archiveSource {
	return &archiveSource{file: f, tr: tar.NewReader(f), source: source}
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
		hdr, err := s.tr.Next()
		switch {
		case err == io.EOF:
			// Whatever follows the archive's end (tar pads to its
			// record size) is read too, for the fingerprint and the
			// compression's own checks.
			if _, err := io.Copy(io.Discard, s.file); err != nil {
				return err
			}
			if s.members == 0 {
				return &ParseError{Path: s.file.path, Err: ErrEmptyArchive}
			}
			return io.EOF
		case err != nil:
			return s.archiveError(err)
		case hdr.Typeflag != tar.TypeReg:
			continue
		}
		name := strings.TrimPrefix(path.Clean(hdr.Name), "/")
		if hiddenPart(name) {
			continue
		}
		s.name = s.file.path + "/" + name
		mf, err := newFileHashing(s.name, memberReader{s.tr}, nil, nil)
		if err != nil {
			return err
		}
		if kind := binaryKind(mf.head); kind != "" {
			mf.Close()
			return &ParseError{Path: s.name, Err: fmt.Errorf("%w: %s", ErrNotText, kind)}
		}
		s.member = s.source(mf)
		s.members++
		return nil
	}
}

// memberReader reads a member's bytes, with the errors met under it said
// as the member's: the archive's decompression fails (reported as the
// archive's error, which the member's path names), or the archive ends
// inside the member.
type memberReader struct{ tr *tar.Reader }

func (m memberReader) Read(p []byte) (int, error) {
	n, err := m.tr.Read(p)
	var pe *ParseError
	switch {
	case errors.As(err, &pe):
		err = pe.Err
	case err == io.ErrUnexpectedEOF:
		err = fmt.Errorf("%w: unexpected EOF", ErrBadArchive)
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

// archiveError names the archive in an error of its tar structure; the
// decompression's errors name it already.
func (s *archiveSource) archiveError(err error) error {
	var pe *ParseError
	if errors.As(err, &pe) {
		return err
	}
	if err == io.ErrUnexpectedEOF {
		err = errors.New("unexpected EOF")
	}
	return &ParseError{Path: s.file.path, Err: fmt.Errorf("%w: %v", ErrBadArchive, err)}
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

func (s *archiveSource) fingerprint() (Fingerprint, error) { return s.file.Fingerprint(), nil }

func (s *archiveSource) close() error {
	if s.member != nil {
		s.member.close()
		s.member = nil
	}
	return s.file.Close()
}
