package helperbin

import (
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"syscall"
	"time"
)

// Copy copies everything under the directory from into the directory to
// (which exists), as cp -a does: directories, files, symbolic links (as
// links), hard links (as links), pipes and device nodes, with their owners,
// modes and modification times; to itself gets from's. Sockets are
// skipped. It stops at the first error.
func Copy(from, to string) error {
	c := copier{links: map[fileKey]string{}}
	err := filepath.WalkDir(from, func(src string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(from, src)
		if err != nil {
			return err
		}
		return c.entry(src, filepath.Join(to, rel), rel == ".")
	})
	if err != nil {
		return err
	}
	// A directory's mode and time are set once its content is in: the
	// innermost first.
	for _, d := range slices.Backward(c.dirs) {
		if err := setAttrs(d.path, d.st); err != nil {
			return err
		}
	}
	return nil
}

// fileKey identifies a file (for hard links).
type fileKey struct{ dev, ino uint64 }

type copier struct {
	links map[fileKey]string // the first copy of each file with more than one link
	dirs  []dirAttrs
}

type dirAttrs struct {
	path string
	st   *syscall.Stat_t
}

// entry copies src to dst; the top directory exists already.
func (c *copier) entry(src, dst string, top bool) error {
	var st syscall.Stat_t
	if err := syscall.Lstat(src, &st); err != nil {
		return &fs.PathError{Op: "lstat", Path: src, Err: err}
	}
	switch st.Mode & syscall.S_IFMT {
	case syscall.S_IFDIR:
		if !top {
			if err := os.Mkdir(dst, 0o700); err != nil {
				return err
			}
		}
		c.dirs = append(c.dirs, dirAttrs{dst, &st})
		return nil
	case syscall.S_IFLNK:
		target, err := os.Readlink(src)
		if err != nil {
			return err
		}
		if err := os.Symlink(target, dst); err != nil {
			return err
		}
		return os.Lchown(dst, int(st.Uid), int(st.Gid))
	case syscall.S_IFSOCK:
		return nil
	}
	if st.Nlink > 1 {
		k := fileKey{uint64(st.Dev), st.Ino}
		if first, ok := c.links[k]; ok {
			return os.Link(first, dst)
		}
		c.links[k] = dst
	}
	if st.Mode&syscall.S_IFMT == syscall.S_IFREG {
		if err := copyFile(src, dst); err != nil {
			return err
		}
	} else if err := syscall.Mknod(dst, st.Mode, int(st.Rdev)); err != nil { // pipes and devices
		return &fs.PathError{Op: "mknod", Path: dst, Err: err}
	}
	return setAttrs(dst, &st)
}

func copyFile(src, dst string) error {
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.OpenFile(dst, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return fmt.Errorf("copying %s: %w", src, err)
	}
	return out.Close()
}

// setAttrs gives dst (not a link) the owner, mode and times of st. The
// owner comes first: a change of owner clears the set-id bits.
func setAttrs(dst string, st *syscall.Stat_t) error {
	if err := os.Lchown(dst, int(st.Uid), int(st.Gid)); err != nil {
		return err
	}
	if err := syscall.Chmod(dst, st.Mode&0o7777); err != nil {
		return &fs.PathError{Op: "chmod", Path: dst, Err: err}
	}
	return os.Chtimes(dst, time.Unix(st.Atim.Unix()), time.Unix(st.Mtim.Unix()))
}
