package pipeline

import (
	"crypto/sha256"
	"encoding/hex"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// TestHashCache: a file whose stat is as recorded, and which was modified
// well before its hashing, is not read again (shown by changing its bytes
// behind an unchanged stat, which the cache cannot see); another
// modification time, or a modification too close to the hashing, makes it
// read again; entries no lookup used are dropped.
func TestHashCache(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "corpus.txt")
	write := func(text string, mod time.Time) {
		t.Helper()
		if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.Chtimes(path, mod, mod); err != nil {
			t.Fatal(err)
		}
	}
	hashOf := func(text string) string {
		sum := sha256.Sum256([]byte(text))
		return hex.EncodeToString(sum[:])
	}
	check := func(what string, c *hashCache, want string) {
		t.Helper()
		fp, err := c.fingerprint(path)
		if err != nil {
			t.Fatal(err)
		}
		if fp.SHA256 != want || fp.Path != path || fp.Size != 5 {
			t.Fatalf("%s: fingerprint %+v, want sha256 %.12s", what, fp, want)
		}
	}
	old := time.Now().Add(-time.Hour)
	write("aaaa\n", old)
	c := newHashCache(nil)
	check("first", c, hashOf("aaaa\n"))
	c.files["/elsewhere/unused.txt"] = hashEntry{Size: 1}

	write("bbbb\n", old)
	c = newHashCache(c.entries())
	if _, ok := c.files["/elsewhere/unused.txt"]; ok {
		t.Fatal("an entry no lookup used was kept")
	}
	check("same stat", c, hashOf("aaaa\n"))

	write("bbbb\n", old.Add(time.Second))
	check("new modification time", c, hashOf("bbbb\n"))

	// Modified just now: the fingerprint is made but not trusted, so bytes
	// changed behind the same stat are read.
	recent := time.Now()
	write("cccc\n", recent)
	check("recent", c, hashOf("cccc\n"))
	write("dddd\n", recent)
	check("recent, changed behind the same stat", newHashCache(c.entries()), hashOf("dddd\n"))

	// The cache goes through its file, and a damaged file is an empty cache.
	write("eeee\n", old)
	check("old again", c, hashOf("eeee\n"))
	cpath := filepath.Join(dir, HashCacheFile)
	c.save(cpath)
	write("ffff\n", old)
	check("saved and loaded", loadHashCache(cpath), hashOf("eeee\n"))
	if err := os.WriteFile(cpath, []byte("{damaged"), 0o644); err != nil {
		t.Fatal(err)
	}
	check("damaged cache file", loadHashCache(cpath), hashOf("ffff\n"))
}
