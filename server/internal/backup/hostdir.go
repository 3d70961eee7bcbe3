package backup

import (
	"archive/tar"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/berth-dev/berth/shared/fault"
)

// A directory of Berth's own host (a stack's directory when the engine runs
// elsewhere) cannot be bind-mounted into a helper on another host: it is
// copied into the helper instead (the engine's archive API, which works
// through agents too), at the very path a bind mount would have
// (PathsDir/<path>), so that its snapshots look the same whatever the
// environment type. A restore reads it back from the snapshot (restic
// dump) and UnpackDir writes it on Berth's host.
//
// Only directories and regular files are copied. A symbolic link is never
// followed (it could lead out of the directory) and, like a device, a
// socket or a pipe, is not copied: the backup says so. The root itself is
// opened as a bind mount would be (its own links followed).

// writeHostDir writes the directory dir of Berth's host to w as a tar
// whose entries are at sourcePath(dir), telling skipped what it leaves
// out and why.
func writeHostDir(w io.Writer, dir string, skipped func(rel, why string)) error {
	root, err := os.OpenRoot(dir)
	if err != nil {
		return fault.Wrap(fault.NotFound, fmt.Sprintf("The directory %s cannot be read", dir), err)
	}
	defer root.Close()
	prefix := strings.TrimPrefix(sourcePath(dir), "/")
	tw := tar.NewWriter(w)
	err = fs.WalkDir(root.FS(), ".", func(rel string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		name := prefix
		if rel != "." {
			name = prefix + "/" + rel
		}
		switch {
		case d.IsDir():
			fi, err := d.Info()
			if err != nil {
				return err
			}
			return tw.WriteHeader(hostHeader(fi, tar.TypeDir, name+"/", 0))
		case d.Type().IsRegular():
			return copyHostFile(tw, root, rel, name, skipped)
		case d.Type()&fs.ModeSymlink != 0:
			skipped(rel, "a symbolic link is not followed")
		default:
			skipped(rel, "not a regular file or directory")
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("backup: reading %s: %w", dir, err)
	}
	return tw.Close()
}

// copyHostFile writes the regular file rel of root to tw as name. A file
// replaced meanwhile by something else is skipped; one that shrank while
// read fails the copy.
func copyHostFile(tw *tar.Writer, root *os.Root, rel, name string, skipped func(rel, why string)) error {
	f, err := root.OpenFile(rel, os.O_RDONLY|syscall.O_NOFOLLOW|syscall.O_NONBLOCK, 0)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil // removed meanwhile
		}
		if errors.Is(err, syscall.ELOOP) {
			skipped(rel, "a symbolic link is not followed")
			return nil
		}
		return err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return err
	}
	if !fi.Mode().IsRegular() {
		skipped(rel, "not a regular file or directory")
		return nil
	}
	if err := tw.WriteHeader(hostHeader(fi, tar.TypeReg, name, fi.Size())); err != nil {
		return err
	}
	if _, err := io.CopyN(tw, f, fi.Size()); err != nil {
		return fmt.Errorf("%s changed while it was read: %w", rel, err)
	}
	return nil
}

// hostHeader is the tar header of fi: its permissions, owner and time.
func hostHeader(fi fs.FileInfo, typ byte, name string, size int64) *tar.Header {
	h := &tar.Header{Typeflag: typ, Name: name, Size: size, Mode: int64(fi.Mode().Perm()), ModTime: fi.ModTime(),
		Format: tar.FormatPAX}
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		h.Uid, h.Gid = int(st.Uid), int(st.Gid)
	}
	return h
}

// UnpackDir writes into the directory into (existing, empty: a staging
// directory) the content of the snapshot directory dir that in holds, a
// tar as restic dump writes it (entries named by their full path in the
// snapshot, without the leading /). Only directories and regular files
// are written, each inside into: an entry outside dir, a ".." element, a
// symbolic or hard link, a device, a pipe or a file given twice fails the
// whole unpack (the caller removes into). Permissions are kept (without
// set-id bits), owners are not.
func UnpackDir(in io.Reader, dir, into string) (files int, err error) {
	if err := checkSnapshotPath(dir); err != nil || dir == "/" {
		return 0, fault.Invalidf("%q is not a directory of a snapshot", dir)
	}
	root, err := os.OpenRoot(into)
	if err != nil {
		return 0, err
	}
	defer root.Close()
	prefix := strings.TrimPrefix(dir, "/")
	type dirMode struct {
		rel   string
		mode  fs.FileMode
		mtime time.Time
	}
	var dirs []dirMode
	tr := tar.NewReader(in)
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return files, fault.Wrap(fault.Invalid, "The snapshot's directory cannot be read", err)
		}
		rel, err := entryPath(h.Name, prefix)
		if err != nil {
			return files, err
		}
		mode := fs.FileMode(h.Mode).Perm()
		switch h.Typeflag {
		case tar.TypeDir:
			if rel == "." {
				dirs = append(dirs, dirMode{rel, mode, h.ModTime})
				continue
			}
			if err := root.MkdirAll(rel, 0o700); err != nil {
				return files, fmt.Errorf("backup: writing %s: %w", rel, err)
			}
			dirs = append(dirs, dirMode{rel, mode, h.ModTime})
		case tar.TypeReg:
			if rel == "." {
				return files, fault.Invalidf("The snapshot's %s is a file, not a directory", dir)
			}
			if err := writeEntry(root, rel, mode, h.ModTime, tr); err != nil {
				return files, err
			}
			files++
		default:
			return files, fault.Invalidf("The snapshot's directory holds %s, which is not a regular file or directory "+
				"(links, devices and pipes are not restored onto Berth's host)", h.Name)
		}
	}
	// Directories get their modes last: a read-only one is written first.
	for _, d := range slices.Backward(dirs) {
		if err := root.Chmod(d.rel, d.mode|0o700); err != nil {
			return files, fmt.Errorf("backup: writing %s: %w", d.rel, err)
		}
		if err := root.Chtimes(d.rel, d.mtime, d.mtime); err != nil {
			return files, fmt.Errorf("backup: writing %s: %w", d.rel, err)
		}
	}
	return files, nil
}

// entryPath is the path, relative to the snapshot directory prefix (no
// leading /), of the tar entry name: "." for the directory itself. Any
// other name is refused.
func entryPath(name, prefix string) (string, error) {
	refused := fault.Invalidf("The snapshot's directory holds an entry outside it: %q", name)
	n := strings.TrimSuffix(strings.TrimPrefix(name, "/"), "/")
	if strings.ContainsRune(n, 0) || slices.Contains(strings.Split(n, "/"), "..") {
		return "", refused
	}
	if n == prefix {
		return ".", nil
	}
	rel, ok := strings.CutPrefix(n, prefix+"/")
	if !ok || rel == "" || path.Clean(rel) != rel || !filepath.IsLocal(rel) {
		return "", refused
	}
	return rel, nil
}

// writeEntry writes the regular file rel of root (a new one) from r.
func writeEntry(root *os.Root, rel string, mode fs.FileMode, mtime time.Time, r io.Reader) error {
	if d := path.Dir(rel); d != "." {
		if err := root.MkdirAll(d, 0o700); err != nil {
			return fmt.Errorf("backup: writing %s: %w", rel, err)
		}
	}
	f, err := root.OpenFile(rel, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		if errors.Is(err, fs.ErrExist) {
			return fault.Invalidf("The snapshot's directory holds %s twice", rel)
		}
		return fmt.Errorf("backup: writing %s: %w", rel, err)
	}
	if _, err := io.Copy(f, r); err != nil {
		f.Close()
		return fmt.Errorf("backup: writing %s: %w", rel, err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("backup: writing %s: %w", rel, err)
	}
	if err := root.Chmod(rel, mode); err != nil {
		return fmt.Errorf("backup: writing %s: %w", rel, err)
	}
	return root.Chtimes(rel, mtime, mtime)
}
