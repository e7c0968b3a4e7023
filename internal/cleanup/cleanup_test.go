package cleanup

import (
	"os"
	"path/filepath"
	"testing"
)

// TestRemoveAll removes what is recorded and not forgotten, and nothing
// else.
func TestRemoveAll(t *testing.T) {
	dir := t.TempDir()
	p := func(name string) string { return filepath.Join(dir, name) }
	for _, name := range []string{"kept.txt", "temp.txt", "renamed.txt", "spill/run-1"} {
		if err := os.MkdirAll(filepath.Dir(p(name)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p(name), []byte("x"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	Add(p("temp.txt"))
	Add(p("spill"))
	Add(p("renamed.txt"))
	Add(p("renamed.txt"))
	Forget(p("renamed.txt"))
	if recorded() != 3 {
		t.Fatalf("%d paths recorded, want 3: a path added twice is forgotten twice", recorded())
	}
	Forget(p("renamed.txt"))
	if recorded() != 2 {
		t.Fatalf("%d paths recorded, want 2", recorded())
	}
	RemoveAll()
	for name, want := range map[string]bool{"kept.txt": true, "renamed.txt": true, "temp.txt": false, "spill": false} {
		if _, err := os.Stat(p(name)); (err == nil) != want {
			t.Errorf("%s: exists %v, want %v", name, err == nil, want)
		}
	}
	if recorded() != 0 {
		t.Errorf("%d paths left recorded", recorded())
	}
}

// recorded is the number of paths recorded and not forgotten.
func recorded() int {
	mu.Lock()
	defer mu.Unlock()
	return len(paths)
}
