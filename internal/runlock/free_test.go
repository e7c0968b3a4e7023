package runlock

import (
	"errors"
	"os"
	"path/filepath"
	"testing"
)

// TestFree: a directory without a lock file is free and gets none; one
// whose lock is held is not, naming the holder's directory; once released
// it is free again.
func TestFree(t *testing.T) {
	dir := t.TempDir()
	if err := Free(dir); err != nil {
		t.Fatalf("no lock file: %v", err)
	}
	if _, err := os.Stat(filepath.Join(dir, File)); !os.IsNotExist(err) {
		t.Fatalf("Free made a lock file (%v)", err)
	}
	l, err := Acquire(dir)
	if err != nil {
		t.Fatal(err)
	}
	var inUse *InUseError
	if err := Free(dir); !errors.As(err, &inUse) || inUse.Dir != dir || inUse.Holder == nil || inUse.Holder.PID != os.Getpid() {
		t.Errorf("held: %v, want an InUseError naming %s and this process", err, dir)
	}
	if err := l.Release(); err != nil {
		t.Fatal(err)
	}
	if err := Free(dir); err != nil {
		t.Errorf("released: %v", err)
	}
	// Free's own moment of holding leaves the lock takeable.
	l, err = Acquire(dir)
	if err != nil {
		t.Fatalf("after Free: %v", err)
	}
	l.Release()
}
