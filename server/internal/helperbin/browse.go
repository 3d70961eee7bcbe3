package helperbin

import (
	"encoding/json"
	"errors"
	"io"
	"io/fs"
	"os"
	"path"
	"slices"
	"strings"
	"syscall"
)

// maxLinks is how many symbolic links one path may go through (the
// kernel's limit).
const maxLinks = 40

// resolve returns the path p of r with every symbolic link on the way
// followed by its text: a clean path relative to r ("." for its root) with
// no link left, and what Lstat tells of it. A link whose text is absolute
// or climbs above the root Escapes, found from the text alone: whatever it
// points to is never looked up, so a refusal tells nothing about it. A
// missing component (or a file where a directory is needed) is NotFound.
func resolve(r *os.Root, p string) (string, fs.FileInfo, Status, error) {
	var cur []string // the resolved components
	todo := strings.Split(p, "/")
	links := 0
	fi, err := r.Lstat(".")
	if err != nil {
		return "", nil, "", err
	}
	for len(todo) > 0 {
		c := todo[0]
		todo = todo[1:]
		switch c {
		case "", ".":
			continue
		case "..":
			if len(cur) == 0 {
				return "", nil, Escapes, nil
			}
			cur = cur[:len(cur)-1]
			if fi, err = r.Lstat(relPath(cur)); err != nil {
				return "", nil, "", err
			}
			continue
		}
		next := relPath(append(slices.Clip(cur), c))
		fi, err = r.Lstat(next)
		if errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscall.ENOTDIR) {
			return "", nil, NotFound, nil
		}
		if err != nil {
			return "", nil, "", err
		}
		if fi.Mode()&fs.ModeSymlink == 0 {
			cur = append(cur, c)
			continue
		}
		if links++; links > maxLinks {
			return "", nil, TooManyLinks, nil
		}
		target, err := r.Readlink(next)
		if err != nil {
			return "", nil, "", err
		}
		switch {
		case target == "":
			return "", nil, NotFound, nil
		case strings.HasPrefix(target, "/"):
			return "", nil, Escapes, nil
		}
		todo = append(strings.Split(target, "/"), todo...)
		if fi, err = r.Lstat(relPath(cur)); err != nil {
			return "", nil, "", err
		}
	}
	return relPath(cur), fi, OK, nil
}

// relPath joins components into a path relative to a root.
func relPath(comps []string) string {
	if len(comps) == 0 {
		return "."
	}
	return path.Join(comps...)
}

// List lists the directory p of the tree at root (p "/"-separated,
// relative to root), following the links on the way only inside it.
func List(root, p string) (Listing, error) {
	r, err := os.OpenRoot(root)
	if err != nil {
		return Listing{}, err
	}
	defer r.Close()
	rel, fi, st, err := resolve(r, p)
	if err != nil || st != OK {
		return Listing{Status: st}, err
	}
	if !fi.IsDir() {
		return Listing{Status: NotDirectory}, nil
	}
	// The directory as a root of its own: every name below is one
	// component of it, and nothing is opened outside it.
	d, err := r.OpenRoot(rel)
	if err != nil {
		return Listing{}, err
	}
	defer d.Close()
	f, err := d.Open(".")
	if err != nil {
		return Listing{}, err
	}
	names, err := f.Readdirnames(-1)
	f.Close()
	if err != nil {
		return Listing{}, err
	}
	slices.Sort(names)
	l := Listing{Status: OK, Entries: make([]Entry, 0, len(names))}
	for _, name := range names {
		fi, err := d.Lstat(name)
		if errors.Is(err, fs.ErrNotExist) {
			continue // removed since
		}
		if err != nil {
			return Listing{}, err
		}
		e := Entry{Name: name, Mode: fi.Mode(), Size: fi.Size(), MTime: fi.ModTime().Unix()}
		if fi.Mode()&fs.ModeSymlink != 0 {
			if e.Link, err = d.Readlink(name); err != nil && !errors.Is(err, fs.ErrNotExist) {
				return Listing{}, err
			}
		}
		l.Entries = append(l.Entries, e)
	}
	return l, nil
}

// Resolve tells where the path p of the tree at root leads, following the
// links on the way only inside it: its path relative to root with no link
// left ("." for the root) and whether it is a directory.
func Resolve(root, p string) (Resolved, error) {
	r, err := os.OpenRoot(root)
	if err != nil {
		return Resolved{}, err
	}
	defer r.Close()
	rel, fi, st, err := resolve(r, p)
	if err != nil || st != OK {
		return Resolved{Status: st}, err
	}
	return Resolved{Status: OK, Path: rel, Dir: fi.IsDir()}, nil
}

// Read writes the FileHeader of the regular file p of the tree at root
// (following links only inside it) as one JSON line to w and, when its
// status is OK, the file's bytes after it. A file over limit bytes is
// TooLarge.
func Read(root, p string, limit int64, w io.Writer) error {
	hdr, data, err := readFile(root, p, limit)
	if err != nil {
		return err
	}
	if err := json.NewEncoder(w).Encode(hdr); err != nil {
		return err
	}
	_, err = w.Write(data)
	return err
}

func readFile(root, p string, limit int64) (FileHeader, []byte, error) {
	r, err := os.OpenRoot(root)
	if err != nil {
		return FileHeader{}, nil, err
	}
	defer r.Close()
	rel, fi, st, err := resolve(r, p)
	if err != nil || st != OK {
		return FileHeader{Status: st}, nil, err
	}
	if hdr := fileStatus(fi, limit); hdr.Status != OK {
		return hdr, nil, nil
	}
	// Non-blocking: a file replaced by a pipe since is not waited on.
	f, err := r.OpenFile(rel, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return FileHeader{}, nil, err
	}
	defer f.Close()
	if fi, err = f.Stat(); err != nil {
		return FileHeader{}, nil, err
	}
	hdr := fileStatus(fi, limit)
	if hdr.Status != OK {
		return hdr, nil, nil
	}
	data, err := io.ReadAll(io.LimitReader(f, limit+1))
	if err != nil {
		return FileHeader{}, nil, err
	}
	if int64(len(data)) > limit {
		return FileHeader{Status: TooLarge}, nil, nil
	}
	hdr.Size = int64(len(data))
	return hdr, data, nil
}

// fileStatus is the header of fi, a file to read of at most limit bytes.
func fileStatus(fi fs.FileInfo, limit int64) FileHeader {
	switch {
	case fi.IsDir():
		return FileHeader{Status: IsDirectory}
	case !fi.Mode().IsRegular():
		return FileHeader{Status: NotRegular}
	case fi.Size() > limit:
		return FileHeader{Status: TooLarge}
	}
	return FileHeader{Status: OK, Size: fi.Size(), MTime: fi.ModTime().Unix()}
}
