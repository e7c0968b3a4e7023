// Package cleanup keeps the names of the temporary files and directories
// that a process has made and not yet removed or renamed into place, so
// that a process that must exit at once, with no time for its deferred
// removals (pwe after a second interrupt), can remove them first.
package cleanup

import (
	"os"
	"sync"
)

var (
	mu    sync.Mutex
	paths = map[string]int{} // path -> times added and not forgotten
)

// Add records path, a temporary file or directory, until Forget.
func Add(path string) {
	mu.Lock()
	defer mu.Unlock()
	paths[path]++
}

// Forget forgets path, once the caller has removed it or renamed it into
// place; a path added twice is forgotten by the second Forget.
func Forget(path string) {
	mu.Lock()
	defer mu.Unlock()
	if paths[path]--; paths[path] <= 0 {
		delete(paths, path)
	}
}

// RemoveAll removes every path recorded and not forgotten (a directory
// with what it holds), and forgets them. The files may still be open and
// written by other goroutines: on Unix their names go at once, their
// space when the process ends.
func RemoveAll() {
	mu.Lock()
	defer mu.Unlock()
	for p := range paths {
		os.RemoveAll(p)
		delete(paths, p)
	}
}
