//go:build !linux

package atomicfile

import "os"

// startWriteback does nothing where sync_file_range is missing.
func startWriteback(*os.File, int64, int64) {}
