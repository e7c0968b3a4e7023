//go:build unix

package runlock

import (
	"errors"
	"os"
	"strings"
	"testing"

	"golang.org/x/sys/unix"
)

// TestUnsupported: a file system that cannot lock (flock fails with
// ENOLCK, as on an NFS mount without its lock daemon) gives ErrUnsupported,
// which callers may go on from, and not ErrInUse; another failure is
// neither.
func TestUnsupported(t *testing.T) {
	t.Cleanup(func() { lockFile = tryLock })
	for _, c := range []struct {
		err         error
		unsupported bool
	}{{unix.ENOLCK, true}, {unix.EOPNOTSUPP, true}, {unix.EBADF, false}} {
		lockFile = func(*os.File) (bool, error) { return false, c.err }
		l, err := Acquire(t.TempDir())
		if l != nil || errors.Is(err, ErrInUse) || errors.Is(err, ErrUnsupported) != c.unsupported || !strings.Contains(err.Error(), c.err.Error()) {
			t.Errorf("flock failing with %v: lock %v, error %v; want ErrUnsupported %v", c.err, l, err, c.unsupported)
		}
	}
}
