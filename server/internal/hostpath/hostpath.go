// Package hostpath confines the paths on Berth's own host that users name
// (a stack's compose and env files, a relocation target, a template file
// source): a path is checked for its form, resolved after symbolic links
// (also those whose target does not exist yet), and accepted only inside
// the directories a Policy allows, never inside Berth's own data. The
// verdict is given before anything is written and before anything about
// the target is revealed: 400 for a malformed path, 403 for one that leads
// outside the allowed places.
package hostpath

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"

	"github.com/berth-dev/berth/shared/fault"
)

// Kind is what a path must name.
type Kind int

// The kinds of path.
const (
	// File is a file Berth writes or reads: an existing directory (or
	// anything but a regular file) there is refused.
	File Kind = iota
	// Dir is a directory files go into: an existing file there is refused.
	Dir
	// Any is a path whose target the caller judges itself.
	Any
)

// maxLinks bounds the symbolic links followed while resolving one path
// (the kernel's own bound).
const maxLinks = 40

// Policy says where user-named paths may lead.
type Policy struct {
	// Home is Berth's own directory for the files in question (for stacks
	// DATA_DIR/stacks/<env>): always allowed, even inside Own.
	Home string
	// Roots are further directories an admin allowed.
	Roots []string
	// Own is Berth's data directory: nothing in it is allowed except under
	// Home, whatever Roots say ("" for none).
	Own string
	// Outside is the message of the 403 for a path outside Home and Roots;
	// OwnFiles the one for a path in Own. Both name the rule.
	Outside, OwnFiles string
}

// CheckForm validates the form of a path: absolute, no NUL, no ".."
// element. what names the field in the message ("compose path").
func CheckForm(what, p string) error {
	if !filepath.IsAbs(p) || strings.ContainsRune(p, 0) {
		return fault.Invalidf("Invalid %s %q: an absolute path is required", what, p)
	}
	for _, el := range strings.Split(filepath.ToSlash(p), "/") {
		if el == ".." {
			return fault.Invalidf("Invalid %s %q: path traversal is not allowed", what, p)
		}
	}
	return nil
}

// Confine checks p (named what in messages) against the policy and
// returns it cleaned. The form is checked first (400), then where p leads
// once every symbolic link on the way is followed (403), and only then,
// for a path that is allowed, what is there (400 for a directory where a
// file is expected, or a file where a directory is).
func (pol Policy) Confine(what, p string, kind Kind) (string, error) {
	if err := CheckForm(what, p); err != nil {
		return "", err
	}
	p = filepath.Clean(p)
	real, err := Resolve(p)
	if err != nil {
		return "", fault.Wrap(fault.Invalid, fmt.Sprintf("Invalid %s %q: it cannot be resolved", what, p), err)
	}
	if err := pol.allows(what, p, real); err != nil {
		return "", err
	}
	fi, err := os.Stat(real)
	switch {
	case err != nil:
		return p, nil // not there yet
	case kind == File && fi.IsDir():
		return "", fault.Invalidf("Invalid %s %q: it is a directory, a file path is required", what, p)
	case kind == File && !fi.Mode().IsRegular():
		return "", fault.Invalidf("Invalid %s %q: it is not a regular file", what, p)
	case kind == Dir && !fi.IsDir():
		return "", fault.Invalidf("Invalid %s %q: it is a file, a directory is required", what, p)
	}
	return p, nil
}

// Allows reports whether the resolved path real is allowed (for walks that
// list what is under a directory).
func (pol Policy) Allows(real string) bool {
	return pol.allows("path", real, real) == nil
}

// allows is the verdict on the resolved path real of p.
func (pol Policy) allows(what, p, real string) error {
	if home := resolved(pol.Home); home != "" && Within(home, real) {
		return nil
	}
	if own := resolved(pol.Own); own != "" && Within(own, real) {
		return fault.New(fault.Forbidden, fmt.Sprintf("Invalid %s %q: %s", what, p, pol.OwnFiles))
	}
	for _, r := range pol.Roots {
		if root := resolved(r); root != "" && Within(root, real) {
			return nil
		}
	}
	return fault.New(fault.Forbidden, fmt.Sprintf("Invalid %s %q: %s", what, p, pol.Outside))
}

// resolved is dir with its symbolic links followed ("" for "").
func resolved(dir string) string {
	if dir == "" {
		return ""
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return ""
	}
	real, err := Resolve(abs)
	if err != nil {
		return ""
	}
	return real
}

// Within reports whether p is dir or below it (both clean and absolute).
func Within(dir, p string) bool {
	if dir == p {
		return true
	}
	rel, err := filepath.Rel(dir, p)
	return err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator)) && !filepath.IsAbs(rel)
}

// Resolve returns the absolute, clean path p leads to once every symbolic
// link on the way is followed, element by element. Unlike
// filepath.EvalSymlinks it does not need the target to exist: from the
// first missing element on, the rest is taken as written, so that a
// dangling link is judged by where it points (a file written through it
// would land there).
func Resolve(p string) (string, error) {
	if !filepath.IsAbs(p) {
		return "", fmt.Errorf("hostpath: %q is not absolute", p)
	}
	rest := split(p)
	cur := string(filepath.Separator)
	links := 0
	for len(rest) > 0 {
		el := rest[0]
		rest = rest[1:]
		switch el {
		case "", ".":
			continue
		case "..":
			cur = filepath.Dir(cur)
			continue
		}
		next := filepath.Join(cur, el)
		fi, err := os.Lstat(next)
		if errors.Is(err, fs.ErrNotExist) || isNotDir(err) {
			return filepath.Join(append([]string{next}, rest...)...), nil
		}
		if err != nil {
			return "", err
		}
		if fi.Mode()&fs.ModeSymlink == 0 {
			cur = next
			continue
		}
		if links++; links > maxLinks {
			return "", fmt.Errorf("hostpath: %s: too many symbolic links", p)
		}
		target, err := os.Readlink(next)
		if err != nil {
			return "", err
		}
		if filepath.IsAbs(target) {
			cur = string(filepath.Separator)
		}
		rest = append(split(target), rest...)
	}
	return cur, nil
}

func split(p string) []string {
	return strings.Split(filepath.ToSlash(p), "/")
}

// isNotDir reports whether err says an element of a path is a file, not a
// directory (nothing can exist below it).
func isNotDir(err error) bool { return errors.Is(err, syscall.ENOTDIR) }
