//go:build windows

package runlock

import (
	"errors"
	"os"

	"golang.org/x/sys/windows"
)

// lockOffset is where the byte locked lies: past any note, since Windows
// keeps other processes from reading a locked range.
const lockOffset = 1 << 32

// supported says whether this system keeps runs apart.
const supported = true

// tryLock takes an exclusive lock on a byte of f without waiting, and
// reports whether it did.
func tryLock(f *os.File) (bool, error) {
	ol := windows.Overlapped{OffsetHigh: lockOffset >> 32}
	err := windows.LockFileEx(windows.Handle(f.Fd()), windows.LOCKFILE_EXCLUSIVE_LOCK|windows.LOCKFILE_FAIL_IMMEDIATELY, 0, 1, 0, &ol)
	switch {
	case err == nil:
		return true, nil
	case errors.Is(err, windows.ERROR_LOCK_VIOLATION):
		return false, nil
	}
	return false, err
}

// unsupported reports whether err says that the file system cannot lock.
func unsupported(err error) bool { return errors.Is(err, windows.ERROR_NOT_SUPPORTED) }

func unlock(f *os.File) error {
	ol := windows.Overlapped{OffsetHigh: lockOffset >> 32}
	return windows.UnlockFileEx(windows.Handle(f.Fd()), 0, 1, 0, &ol)
}
