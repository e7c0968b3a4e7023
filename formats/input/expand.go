package input

import (
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/pwe-project/pwe/internal/sample"
)

// Expand turns command-line arguments into the ordered list of inputs to
// read. A file is taken as given; a directory is walked recursively in
// lexical order, keeping regular files (and links to them) and skipping
// names that begin with '.'; an argument that does not exist but contains
// glob metacharacters is expanded with filepath.Glob (sorted; matched
// directories are walked). "-" (stdin) is kept and may appear once, and so
// is sample.Name, the embedded sample corpus. A missing
// path, a pattern matching nothing or a directory without files is an error
// naming the argument.
func Expand(args []string) ([]string, error) {
	var out []string
	stdinSeen := false
	for _, arg := range args {
		if arg == "-" {
			if stdinSeen {
				return nil, &ParseError{Path: arg, Err: ErrStdinTwice}
			}
			stdinSeen = true
			out = append(out, arg)
			continue
		}
		if arg == sample.Name {
			out = append(out, arg)
			continue
		}
		info, err := os.Stat(arg)
		if err == nil {
			if out, err = appendPath(out, arg, info); err != nil {
				return nil, err
			}
			continue
		}
		if !strings.ContainsAny(arg, `*?[\`) {
			return nil, &ParseError{Path: arg, Err: unwrapPathError(err)}
		}
		matches, gerr := filepath.Glob(arg)
		if gerr != nil {
			return nil, &ParseError{Path: arg, Err: gerr}
		}
		if len(matches) == 0 {
			return nil, &ParseError{Path: arg, Err: ErrNoMatch}
		}
		for _, m := range matches {
			info, err := os.Stat(m)
			if err != nil {
				return nil, &ParseError{Path: m, Err: unwrapPathError(err)}
			}
			if out, err = appendPath(out, m, info); err != nil {
				return nil, err
			}
		}
	}
	return out, nil
}

func appendPath(out []string, path string, info fs.FileInfo) ([]string, error) {
	if !info.IsDir() {
		return append(out, path), nil
	}
	n := len(out)
	err := filepath.WalkDir(path, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if p != path && strings.HasPrefix(d.Name(), ".") {
			if d.IsDir() {
				return filepath.SkipDir
			}
			return nil
		}
		switch {
		case d.Type().IsRegular():
			out = append(out, p)
		case d.Type()&fs.ModeSymlink != 0:
			if info, err := os.Stat(p); err == nil && info.Mode().IsRegular() {
				out = append(out, p)
			}
		}
		return nil
	})
	if err != nil {
		return nil, &ParseError{Path: path, Err: unwrapPathError(err)}
	}
	if len(out) == n {
		return nil, &ParseError{Path: path, Err: ErrNoFiles}
	}
	return out, nil
}
