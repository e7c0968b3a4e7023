//go:build unix

package input

import (
	"os"
	"path/filepath"
	"syscall"
	"testing"
)

// TestZipFromNamedPipe reads a zip archive that a named pipe gives, named
// .zip or not: it cannot be read where it lies, so it is copied to a file
// first, as from standard input.
func TestZipFromNamedPipe(t *testing.T) {
	dir := t.TempDir()
	data := storedZip(t, map[string][]byte{"a.txt": []byte("first line\nsecond line\n")})
	for _, name := range []string{"archive.zip", "archive"} {
		pipe := filepath.Join(dir, name)
		if err := syscall.Mkfifo(pipe, 0o600); err != nil {
			t.Skipf("mkfifo: %v", err)
		}
		go func() {
			if f, err := os.OpenFile(pipe, os.O_WRONLY, 0); err == nil {
				f.Write(data)
				f.Close()
			}
		}()
		docs, r := readBatches([]string{pipe}, Options{TempDir: dir}, 1<<20)
		if err := r.Err(); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		want := []doc{{"first line", pipe + "/a.txt", 1}, {"second line", pipe + "/a.txt", 2}}
		if len(docs) != len(want) || docs[0] != want[0] || docs[1] != want[1] {
			t.Errorf("%s: documents %+v, want %+v", name, docs, want)
		}
	}
}
