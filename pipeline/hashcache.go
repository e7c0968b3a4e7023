package pipeline

import (
	"encoding/json"
	"os"
	"path/filepath"
	"time"

	"github.com/pwe-project/pwe/formats/input"
	"github.com/pwe-project/pwe/internal/atomicfile"
)

// HashCacheFile, in the output directory, holds the hashCache between
// runs. It is apart from the manifest, which it would swell on a corpus of
// many files, and is only ever an optimisation: without it, or with a
// damaged one, every file is read again.
const HashCacheFile = ".pwe-fingerprints.json"

// hashCache remembers the fingerprints a run computed, with what stat said
// of each file then, so that the next run reads again only the files that
// changed: learning that nothing changed in a corpus of many gigabytes had
// taken a whole reading of it. A remembered fingerprint is used when the
// file's size, modification time and identity (device and inode where the
// system has them) are as recorded, and the file was last modified well
// before it was hashed: a file changed within the same tick of the
// file system's clock as its hashing would otherwise look unchanged (git's
// index has the same rule for its "racy" entries).
type hashCache struct {
	files map[string]hashEntry
	// used holds the entries this run looked up or made; the others are
	// dropped when the cache is saved.
	used map[string]bool
	// changed reports an entry made or dropped since the cache was loaded.
	changed bool
}

type hashEntry struct {
	Size     int64  `json:"size"`
	ModNs    int64  `json:"mtime_ns"`
	ID       string `json:"id,omitempty"`
	SHA256   string `json:"sha256"`
	HashedNs int64  `json:"hashed_at_ns"`
}

// racyWindow is how long before its hashing a file must have been last
// modified for its remembered fingerprint to be trusted.
const racyWindow = 2 * time.Second

func newHashCache(files map[string]hashEntry) *hashCache {
	if files == nil {
		files = map[string]hashEntry{}
	}
	return &hashCache{files: files, used: map[string]bool{}}
}

// loadHashCache reads the cache at path; a missing or unreadable one is an
// empty cache.
func loadHashCache(path string) *hashCache {
	var files map[string]hashEntry
	if data, err := os.ReadFile(path); err == nil && json.Unmarshal(data, &files) != nil {
		files = nil
	}
	return newHashCache(files)
}

// save writes the entries this run used to path, unless they are those
// loaded.
func (c *hashCache) save(path string) {
	files := c.entries()
	if !c.changed && len(files) == len(c.files) {
		return
	}
	data, err := json.Marshal(files)
	if err != nil {
		return
	}
	f, err := atomicfile.Create(path)
	if err != nil {
		return
	}
	defer f.Abort()
	if _, err := f.Write(data); err == nil {
		f.Commit()
	}
}

// fingerprint is input.FingerprintFile, reading the file only when the
// cache cannot vouch for it.
func (c *hashCache) fingerprint(path string) (input.Fingerprint, error) {
	info, err := os.Stat(path)
	key, kerr := filepath.Abs(path)
	if err != nil || kerr != nil || !info.Mode().IsRegular() {
		return input.FingerprintFile(path)
	}
	c.used[key] = true
	mod, id := info.ModTime().UnixNano(), fileID(info)
	if e, ok := c.files[key]; ok && e.Size == info.Size() && e.ModNs == mod && e.ID == id && mod < e.HashedNs-racyWindow.Nanoseconds() {
		return input.Fingerprint{Path: path, Size: e.Size, SHA256: e.SHA256}, nil
	}
	hashed := time.Now().UnixNano()
	fp, err := input.FingerprintFile(path)
	if err != nil {
		delete(c.files, key)
		c.changed = true
		return fp, err
	}
	// What stat said before the reading is kept: a file changed during it
	// has another modification time now, and is read again next time.
	c.files[key] = hashEntry{Size: fp.Size, ModNs: mod, ID: id, SHA256: fp.SHA256, HashedNs: hashed}
	c.changed = true
	return fp, nil
}

// entries returns the entries this run used, for the cache's file.
func (c *hashCache) entries() map[string]hashEntry {
	out := make(map[string]hashEntry, len(c.used))
	for k := range c.used {
		if e, ok := c.files[k]; ok {
			out[k] = e
		}
	}
	return out
}
