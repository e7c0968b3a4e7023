// Package version holds pwe's version string, recorded in every output file
// and in the run manifest.
package version

import "runtime/debug"

// Version is pwe's release version. Builds from a module-aware checkout
// append the VCS revision (see String).
const Version = "0.1.0-dev"

// String returns the version with the VCS revision appended when the
// binary was built from a git checkout, e.g. "0.1.0-dev+3f2a1c9".
func String() string {
	info, ok := debug.ReadBuildInfo()
	if !ok {
		return Version
	}
	rev, dirty := "", false
	for _, s := range info.Settings {
		switch s.Key {
		case "vcs.revision":
			rev = s.Value
		case "vcs.modified":
			dirty = s.Value == "true"
		}
	}
	if rev == "" {
		return Version
	}
	if len(rev) > 9 {
		rev = rev[:9]
	}
	if dirty {
		rev += "-dirty"
	}
	return Version + "+" + rev
}
