// Package runlock keeps two pwe processes from running in one directory at
// once. Two nightly runs that overlap (the first one late, the second one
// started by cron) would otherwise each decide that a stage is out of date,
// write its outputs over each other's, and record in the manifest
// fingerprints of files that the other run had since replaced.
//
// The lock is an advisory lock (flock(2) on Unix, LockFileEx on Windows)
// on a file in the directory, which the system releases when the process
// ends, however it ends: a run that was killed leaves no stale lock. The
// file itself stays, holding a note of its last holder.
package runlock

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// File is the name of the lock file inside a locked directory.
const File = ".pwe-lock"

// ErrInUse is returned when another process holds a directory's lock.
var ErrInUse = errors.New("runlock: the directory is in use by another pwe process")

// ErrUnsupported is returned where the file system cannot lock files (an
// NFS mount without its lock daemon, some FUSE file systems): the caller
// may go on without the lock, and should say so.
var ErrUnsupported = errors.New("runlock: the file system cannot lock files, so runs in this directory are not kept apart")

// Holder describes the process that holds, or last held, a lock.
type Holder struct {
	PID     int       `json:"pid"`
	Host    string    `json:"host"`
	Started time.Time `json:"started"`
	Command []string  `json:"command"`
}

// A Lock is held on a directory until Release.
type Lock struct {
	f *os.File
}

// Acquire locks dir, which must exist, for this process, or returns an
// error wrapping ErrInUse that names the holder, as far as its note tells,
// when another process has it. It does not wait.
func Acquire(dir string) (*Lock, error) {
	path := filepath.Join(dir, File)
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return nil, err
	}
	ok, err := lockFile(f)
	if err != nil {
		f.Close()
		if unsupported(err) {
			return nil, fmt.Errorf("%s: %w (%v)", path, ErrUnsupported, err)
		}
		return nil, fmt.Errorf("runlock: locking %s: %w", path, err)
	}
	if !ok {
		note := readNote(f)
		f.Close()
		return nil, &InUseError{Dir: dir, Holder: note}
	}
	// The note is for the message of a process that finds dir locked; a
	// lock without one still locks.
	host, _ := os.Hostname()
	b, _ := json.Marshal(Holder{PID: os.Getpid(), Host: host, Started: time.Now().UTC().Truncate(time.Second), Command: os.Args})
	if err := f.Truncate(0); err == nil {
		f.WriteAt(append(b, '\n'), 0)
	}
	return &Lock{f: f}, nil
}

// Free returns an error wrapping ErrInUse, as Acquire's, when another
// process holds dir's lock, and nil otherwise (no lock file there, or a
// file system that cannot lock): it takes the lock for a moment, and
// makes no file. A process that writes into a directory inside another's
// (pwe fit into a run's fit/, or the run while such a fit goes on)
// checks the other's lock so, after taking its own, so that of two
// starting together one at least sees the other.
func Free(dir string) error {
	f, err := os.OpenFile(filepath.Join(dir, File), os.O_RDWR, 0)
	if err != nil {
		return nil
	}
	defer f.Close()
	ok, err := lockFile(f)
	if err != nil {
		return nil
	}
	if !ok {
		return &InUseError{Dir: dir, Holder: readNote(f)}
	}
	return unlock(f)
}

// lockFile is tryLock, or in tests a file system's refusal.
var lockFile = tryLock

// Release gives the lock up; the note of its holder stays in the file.
func (l *Lock) Release() error {
	if l == nil || l.f == nil {
		return nil
	}
	err := unlock(l.f)
	if cerr := l.f.Close(); err == nil {
		err = cerr
	}
	l.f = nil
	return err
}

// readNote returns the holder's note, or nil if it has none yet (the
// holder is between locking and writing it) or it cannot be read.
func readNote(f *os.File) *Holder {
	b, err := io.ReadAll(io.LimitReader(f, 64<<10))
	if err != nil {
		return nil
	}
	var h Holder
	if json.Unmarshal(b, &h) != nil || h.PID == 0 {
		return nil
	}
	return &h
}

// InUseError is the error of Acquire on a directory that another process
// has locked.
type InUseError struct {
	Dir    string
	Holder *Holder // nil if its note could not be read
}

func (e *InUseError) Error() string {
	msg := fmt.Sprintf("%s is in use by another pwe process", e.Dir)
	if h := e.Holder; h != nil {
		msg += fmt.Sprintf(" (%s, pid %d on %s, started %s)", commandLine(h.Command), h.PID, h.Host, h.Started.Format(time.RFC3339))
	}
	return msg + "; wait for it to end, or give this command another output directory"
}

// commandLine shows a holder's command as a shell would, the program by
// its base name, cut short after 80 bytes.
func commandLine(args []string) string {
	if len(args) == 0 {
		return "command unknown"
	}
	s := strings.Join(append([]string{filepath.Base(args[0])}, args[1:]...), " ")
	if len(s) > 80 {
		s = strings.ToValidUTF8(s[:77], "") + "..."
	}
	return s
}

// Unwrap lets errors.Is(err, ErrInUse) hold.
func (e *InUseError) Unwrap() error { return ErrInUse }
