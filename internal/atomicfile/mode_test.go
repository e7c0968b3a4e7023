//go:build unix

package atomicfile

import (
	"os"
	"path/filepath"
	"syscall"
	"testing"
)

// TestModeFollowsUmask: a published file has the permissions of any file
// the user creates, 0666 less the umask, not a temporary file's 0600.
func TestModeFollowsUmask(t *testing.T) {
	dir := t.TempDir()
	for _, c := range []struct {
		umask int
		want  os.FileMode
	}{{0o022, 0o644}, {0o027, 0o640}, {0o002, 0o664}} {
		old := syscall.Umask(c.umask)
		path := filepath.Join(dir, "out.parquet")
		f, err := Create(path)
		if err == nil {
			_, err = f.Write([]byte("data"))
		}
		if err == nil {
			err = f.Commit()
		}
		syscall.Umask(old)
		if err != nil {
			t.Fatal(err)
		}
		st, err := os.Stat(path)
		if err != nil {
			t.Fatal(err)
		}
		if got := st.Mode().Perm(); got != c.want {
			t.Errorf("umask %03o: mode %03o, want %03o", c.umask, got, c.want)
		}
	}
}
