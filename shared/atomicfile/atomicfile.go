// Package atomicfile provides whole-file writes that a crash can never leave
// half done: the data goes to a temporary file in the same directory, is synced,
// and is renamed over the target.
package atomicfile

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
)

// Write replaces path with data, creating parent directories (0700) as needed.
// After a crash the file holds either its old content or data, never a part.
func Write(path string, data []byte, perm os.FileMode) error {
	return place(path, data, perm, os.Rename)
}

// Create writes data to path only if no file is there, creating parent
// directories (0700) as needed, and reports whether it did. Of several
// processes creating one path at once (replicas on a shared volume), exactly
// one creates it; the file is whole from the moment it appears.
func Create(path string, data []byte, perm os.FileMode) (bool, error) {
	err := place(path, data, perm, os.Link)
	if errors.Is(err, fs.ErrExist) {
		return false, nil
	}
	return err == nil, err
}

// place writes data to a synced temporary file next to path and puts it at
// path with put (rename: replace; link: create only).
func place(path string, data []byte, perm os.FileMode, put func(tmp, path string) error) error {
	dir := filepath.Dir(path)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	f, err := os.CreateTemp(dir, "."+filepath.Base(path)+".tmp*")
	if err != nil {
		return err
	}
	tmp := f.Name()
	defer os.Remove(tmp) // no-op after a successful rename; after a link, the temporary name goes
	if err := f.Chmod(perm); err != nil {
		f.Close()
		return err
	}
	if _, err := f.Write(data); err != nil {
		f.Close()
		return err
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	if err := put(tmp, path); err != nil {
		return err
	}
	// Sync the directory so the rename itself survives a power loss.
	if d, err := os.Open(dir); err == nil {
		_ = d.Sync()
		d.Close()
	}
	return nil
}
