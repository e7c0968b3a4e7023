//go:build unix

package stages

import (
	"context"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// TestMovieLensPipe: a named pipe would read as empty the second time the
// ratings are read, so it is refused at once.
func TestMovieLensPipe(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "fifo")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Skip(err)
	}
	_, err := MovieLens(context.Background(), MovieLensConfig{Ratings: fifo, Output: filepath.Join(dir, "out")})
	if err == nil || !strings.Contains(err.Error(), "is not a regular file") {
		t.Errorf("a named pipe: %v, want it refused", err)
	}
}
