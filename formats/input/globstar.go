package input

import (
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// A pattern segment "**" matches any number of directories, none
// included, as in DuckDB, Python's glob and bash's globstar:
// "corpus/**/*.txt" matches corpus/a.txt and corpus/2024/01/b.txt.

// hasGlobStar reports whether pattern has a segment "**".
func hasGlobStar(pattern string) bool {
	return slices.Contains(strings.Split(pattern, string(filepath.Separator)), "**")
}

// globStar expands a pattern with "**" segments. The part before the first
// is expanded as filepath.Glob does, and each directory it matches is
// walked once, in lexical order, as Expand walks a directory (names
// beginning with '.' and the skipped directories are left out, but for a
// name that a segment beginning with '.' matches, as in the shell): a file
// is kept if its path below the directory matches the rest of the
// pattern, or if a directory on the way to it does, since a matched
// directory is read whole, as elsewhere. "**" does not match the names
// left out.
func globStar(pattern string, skipped []fs.FileInfo) ([]string, error) {
	sep := string(filepath.Separator)
	segs := strings.Split(pattern, sep)
	star := slices.Index(segs, "**")
	var bases []string
	switch prefix := strings.Join(segs[:star], sep); {
	case star == 0:
		bases = []string{"."}
	case prefix == "":
		bases = []string{sep} // "/**/..."
	case strings.ContainsAny(prefix, `*?[\`):
		var err error
		if bases, err = filepath.Glob(prefix); err != nil {
			return nil, &ParseError{Path: pattern, Err: err}
		}
	default:
		bases = []string{prefix}
	}
	// Empty segments, from doubled or trailing separators, match nothing
	// in a path's names, so they are dropped.
	rest := slices.DeleteFunc(slices.Clone(segs[star:]), func(s string) bool { return s == "" })
	for _, s := range rest {
		if _, err := filepath.Match(s, ""); err != nil {
			return nil, &ParseError{Path: pattern, Err: err}
		}
	}
	var out []string
	for _, base := range bases {
		info, err := os.Stat(base)
		if err != nil || !info.IsDir() || isSkipped(skipped, info) {
			continue
		}
		// The names of a path from base.
		names := func(p string) []string {
			rel, _ := filepath.Rel(base, p) // p is below base
			return strings.Split(rel, sep)
		}
		err = walkFiles(base, skipped, func(p string) bool {
			return couldMatch(rest, names(p))
		}, func(p string) bool {
			n := names(p)
			return couldMatch(rest, n) || matchedAbove(rest, n)
		}, func(p string) {
			if n := names(p); matchNames(rest, n) || matchedAbove(rest, n) {
				out = append(out, p)
			}
		})
		if err != nil {
			return nil, &ParseError{Path: base, Err: unwrapPathError(err)}
		}
	}
	if len(out) == 0 {
		return nil, &ParseError{Path: pattern, Err: ErrNoMatch}
	}
	return out, nil
}

// matchNames reports whether the names of a path match the pattern's
// segments, "**" matching any number of names but hidden ones (beginning
// with '.'), which only a segment beginning with '.' matches. The segments
// are valid patterns.
func matchNames(pat, names []string) bool {
	for len(pat) > 0 && pat[0] != "**" {
		if len(names) == 0 || !matchSegment(pat[0], names[0]) {
			return false
		}
		pat, names = pat[1:], names[1:]
	}
	if len(pat) == 0 {
		return len(names) == 0
	}
	for i := 0; i <= len(names); i++ {
		if i > 0 && isHidden(names[i-1]) {
			return false
		}
		if matchNames(pat[1:], names[i:]) {
			return true
		}
	}
	return false
}

// couldMatch reports whether some path below the directory whose names
// are given can match the pattern: whether the names match a beginning of
// it.
func couldMatch(pat, names []string) bool {
	switch {
	case len(names) == 0:
		return true
	case len(pat) == 0:
		return false
	case pat[0] == "**":
		return couldMatch(pat[1:], names) || !isHidden(names[0]) && couldMatch(pat, names[1:])
	}
	return matchSegment(pat[0], names[0]) && couldMatch(pat[1:], names[1:])
}

// matchSegment reports whether a name matches a segment of a pattern,
// which must begin with '.' to match a hidden name.
func matchSegment(seg, name string) bool {
	ok, _ := filepath.Match(seg, name)
	return ok && (!isHidden(name) || strings.HasPrefix(seg, "."))
}

// isHidden reports whether a name is hidden: it begins with '.'.
func isHidden(name string) bool { return strings.HasPrefix(name, ".") }

// matchedAbove reports whether a directory on the way to the path whose
// names are given, the walk's root included, matches the pattern.
func matchedAbove(pat, names []string) bool {
	for i := range names {
		if matchNames(pat, names[:i]) {
			return true
		}
	}
	return false
}
