package input

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/pwe-project/pwe/internal/sample"
)

// Expand turns command-line arguments into the ordered list of inputs to
// read. A file is taken as given; a directory is walked recursively in
// lexical order, keeping regular files (and links to them) and skipping
// names that begin with '.'; an argument that does not exist but contains
// glob metacharacters is expanded with filepath.Glob (sorted; matched
// directories are walked), a segment "**" matching any number of
// directories (globStar). "-" (stdin) is kept and may appear once, and so
// is sample.Name, the embedded sample corpus. A missing
// path, a pattern matching nothing or a directory without files is an error
// naming the argument.
func Expand(args []string) ([]string, error) { return ExpandSkipping(args) }

// ExpandSkipping is Expand with directories and files that the walks
// leave out: a run's output directory, whose files would otherwise become
// the next run's corpus when the input is a directory above it, and its
// configuration file. Naming a skipped directory itself is an error
// (ErrSkippedDir), a pattern matching it passes over it, and a file named
// inside it is taken as given; so is a skipped file named itself. Paths
// that do not exist are ignored.
func ExpandSkipping(args []string, skip ...string) ([]string, error) {
	out, _, err := expand(args, skip)
	return out, err
}

// ExpandOnce is ExpandSkipping, which refuses a file that the arguments
// name more than once (namedOnce): the corpus a stage reads.
func ExpandOnce(args []string, skip ...string) ([]string, error) {
	out, from, err := expand(args, skip)
	if err != nil {
		return nil, err
	}
	if err := namedOnce(out, from, args); err != nil {
		return nil, err
	}
	return out, nil
}

// expand is ExpandSkipping, which also returns the argument that gave each
// path, by its index.
func expand(args, skip []string) (out []string, from []int, err error) {
	var skipped []fs.FileInfo
	for _, d := range skip {
		if info, err := os.Stat(d); err == nil {
			skipped = append(skipped, info)
		}
	}
	stdinSeen := false
	for a, arg := range args {
		n := len(out)
		if out, err = expandArg(out, arg, skipped, &stdinSeen); err != nil {
			return nil, nil, err
		}
		for range len(out) - n {
			from = append(from, a)
		}
	}
	return out, from, nil
}

// expandArg appends the paths that one argument names to out; stdinSeen
// records "-" across the arguments.
func expandArg(out []string, arg string, skipped []fs.FileInfo, stdinSeen *bool) ([]string, error) {
	switch arg {
	case "-":
		if *stdinSeen {
			return nil, &ParseError{Path: arg, Err: ErrStdinTwice}
		}
		*stdinSeen = true
		return append(out, arg), nil
	case sample.Name:
		return append(out, arg), nil
	}
	info, err := os.Stat(arg)
	if err == nil {
		return appendPath(out, arg, info, skipped)
	}
	if !strings.ContainsAny(arg, `*?[\`) {
		return nil, &ParseError{Path: arg, Err: unwrapPathError(err)}
	}
	if hasGlobStar(arg) {
		files, err := globStar(arg, skipped)
		if err != nil {
			return nil, err
		}
		return append(out, files...), nil
	}
	matches, gerr := filepath.Glob(arg)
	if gerr != nil {
		return nil, &ParseError{Path: arg, Err: gerr}
	}
	matches = slices.DeleteFunc(matches, func(m string) bool { return hiddenMatch(arg, m) })
	if len(matches) == 0 {
		return nil, &ParseError{Path: arg, Err: ErrNoMatch}
	}
	for _, m := range matches {
		info, err := os.Stat(m)
		if err != nil {
			return nil, &ParseError{Path: m, Err: unwrapPathError(err)}
		}
		if isSkipped(skipped, info) {
			continue // not named, only matched
		}
		if out, err = appendPath(out, m, info, skipped); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// namedOnce refuses a file that paths hold twice, by the same name or by
// two (through "..", a symbolic link or a pattern that overlaps a
// directory), naming it and the arguments that named it: read twice, its
// tokens would count twice. from[i] is the argument that gave paths[i].
func namedOnce(paths []string, from []int, args []string) error {
	seen := make(map[string]int, len(paths))
	for i, p := range paths {
		if p == "-" || p == sample.Name {
			continue
		}
		key, err := filepath.EvalSymlinks(p)
		if err == nil {
			key, err = filepath.Abs(key)
		}
		if err != nil {
			continue // the reader reports it
		}
		j, ok := seen[key]
		if !ok {
			seen[key] = i
			continue
		}
		by := fmt.Sprintf("%q and %q", args[from[j]], args[from[i]])
		if args[from[j]] == args[from[i]] {
			by = fmt.Sprintf("%q, twice", args[from[i]])
		}
		return &ParseError{Path: p, Err: fmt.Errorf("%w (named by %s); name it once", ErrNamedTwice, by)}
	}
	return nil
}

// hiddenMatch reports whether match, a match of pattern, has a hidden name
// (one beginning with '.') where the pattern's segment does not begin with
// '.': filepath.Glob's '*' matches such names, but the shell's, Python's
// glob and pwe's walks and "**" leave them out.
func hiddenMatch(pattern, match string) bool {
	sep := string(filepath.Separator)
	ps, ms := strings.Split(filepath.Clean(pattern), sep), strings.Split(filepath.Clean(match), sep)
	if len(ps) != len(ms) {
		return false
	}
	for i, name := range ms {
		if strings.HasPrefix(name, ".") && name != "." && name != ".." && !strings.HasPrefix(ps[i], ".") {
			return true
		}
	}
	return false
}

func isSkipped(skipped []fs.FileInfo, info fs.FileInfo) bool {
	return slices.ContainsFunc(skipped, func(s fs.FileInfo) bool { return os.SameFile(s, info) })
}

// skippedFile reports whether a file met in a walk is a skipped one, by
// its name first, so that a walk does not stat every file.
func skippedFile(skipped []fs.FileInfo, path string, d fs.DirEntry) bool {
	if !slices.ContainsFunc(skipped, func(s fs.FileInfo) bool { return s.Name() == d.Name() }) {
		return false
	}
	info, err := os.Stat(path)
	return err == nil && isSkipped(skipped, info)
}

func appendPath(out []string, path string, info fs.FileInfo, skipped []fs.FileInfo) ([]string, error) {
	if !info.IsDir() {
		return append(out, path), nil
	}
	if isSkipped(skipped, info) {
		return nil, &ParseError{Path: path, Err: ErrSkippedDir}
	}
	n := len(out)
	err := walkFiles(path, skipped, nil, func(string) bool { return true }, func(p string) {
		out = append(out, p)
	})
	if err != nil {
		return nil, &ParseError{Path: path, Err: unwrapPathError(err)}
	}
	if len(out) == n {
		return nil, &ParseError{Path: path, Err: ErrNoFiles}
	}
	return out, nil
}

// walkFiles walks root in lexical order, as Expand walks a directory:
// names below root that begin with '.' are skipped, but where hidden (if
// not nil) takes them, and so are the skipped directories. It calls file
// for each regular file, or link to one, and descends into a directory
// only where dir says so.
func walkFiles(root string, skipped []fs.FileInfo, hidden, dir func(path string) bool, file func(path string)) error {
	return filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if p == root {
			return nil
		}
		if strings.HasPrefix(d.Name(), ".") && (hidden == nil || !hidden(p)) {
			if d.IsDir() {
				return filepath.SkipDir
			}
			return nil
		}
		if d.IsDir() {
			if len(skipped) > 0 {
				if info, err := d.Info(); err == nil && isSkipped(skipped, info) {
					return filepath.SkipDir
				}
			}
			if !dir(p) {
				return filepath.SkipDir
			}
			return nil
		}
		if len(skipped) > 0 && skippedFile(skipped, p, d) {
			return nil
		}
		switch {
		case d.Type().IsRegular():
			file(p)
		case d.Type()&fs.ModeSymlink != 0:
			if info, err := os.Stat(p); err == nil && info.Mode().IsRegular() {
				file(p)
			}
		}
		return nil
	})
}
