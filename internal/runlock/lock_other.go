//go:build !unix && !windows

package runlock

import "os"

// supported says whether this system keeps runs apart.
const supported = false

// tryLock always succeeds: this system has no advisory locks that pwe
// uses, so runs in one directory are not kept apart.
func tryLock(*os.File) (bool, error) { return true, nil }

func unlock(*os.File) error { return nil }

func unsupported(error) bool { return false }
