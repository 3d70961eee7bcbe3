package files

import (
	"archive/tar"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"path"
	"time"
	"unicode/utf8"

	"github.com/berth-dev/berth/server/internal/store"
	"github.com/berth-dev/berth/shared/engine"
	"github.com/berth-dev/berth/shared/fault"
)

// Content is a text file as the editor reads it.
type Content struct {
	Path     string    `json:"path"`
	Content  string    `json:"content"`
	Size     int64     `json:"size"`
	Mode     string    `json:"mode"`
	Modified time.Time `json:"modified"`
}

var errTooLargeForEditor = &TooLargeError{Message: fmt.Sprintf("File is larger than the editor's limit of %d MiB; download it instead", ContentLimit>>20)}

// ReadContent returns text file p. Files over ContentLimit, binary files (NUL
// bytes or invalid UTF-8), directories, links and special files are refused.
func (s *Service) ReadContent(ctx context.Context, env store.Environment, id, p string) (Content, error) {
	p, err := CleanPath(p)
	if err != nil {
		return Content{}, err
	}
	t, err := s.open(ctx, env, id, "read file")
	if err != nil {
		return Content{}, err
	}
	rc, st, err := t.c.CopyFrom(ctx, t.id, p)
	if err != nil {
		return Content{}, pathFault("read file", p, err)
	}
	defer rc.Close()
	switch {
	case st.Mode&fsModeSymlink != 0:
		return Content{}, fault.Invalidf("Path %s is a symbolic link to %s; open the file it points to", p, st.LinkTarget)
	case st.Mode.IsDir():
		return Content{}, fault.Invalidf("Path %s is a directory", p)
	case !st.Mode.IsRegular():
		return Content{}, fault.Invalidf("Path %s is not a regular file", p)
	case st.Size > ContentLimit:
		return Content{}, errTooLargeForEditor
	}
	tr := tar.NewReader(rc)
	hdr, err := tr.Next()
	if err != nil {
		return Content{}, opFault("read file", fmt.Errorf("read the engine's tar stream: %w", err))
	}
	data, err := io.ReadAll(io.LimitReader(tr, ContentLimit+1))
	if err != nil {
		return Content{}, opFault("read file", err)
	}
	if len(data) > ContentLimit {
		return Content{}, errTooLargeForEditor
	}
	if bytes.IndexByte(data, 0) >= 0 || !utf8.Valid(data) {
		return Content{}, fault.Invalidf("File %s is binary and cannot be edited as text; download it instead", p)
	}
	return Content{Path: p, Content: string(data), Size: int64(len(data)), Mode: fmt.Sprintf("%04o", hdr.Mode&0o7777),
		Modified: hdr.ModTime.UTC()}, nil
}

// WriteContent replaces (or creates) regular file p with content, keeping the
// mode and owner of an existing file (new files: 0644, root).
func (s *Service) WriteContent(ctx context.Context, env store.Environment, id, p, content string) error {
	if len(content) > ContentLimit {
		return errTooLargeForEditor
	}
	p, err := writablePath(p)
	if err != nil {
		return err
	}
	t, err := s.open(ctx, env, id, "write file")
	if err != nil {
		return err
	}
	if err := s.guardWrite(ctx, t, p); err != nil {
		return err
	}
	hdr := &tar.Header{Typeflag: tar.TypeReg, Name: path.Base(p), Mode: 0o644}
	st, err := t.c.StatPath(ctx, t.id, p)
	switch {
	case errors.Is(err, engine.ErrNotFound):
	case err != nil:
		return pathFault("write file", p, err)
	case st.Mode&fsModeSymlink != 0:
		return fault.Invalidf("Path %s is a symbolic link to %s; edit the file it points to", p, st.LinkTarget)
	case st.Mode.IsDir():
		return fault.Invalidf("Path %s is a directory", p)
	case !st.Mode.IsRegular():
		return fault.Invalidf("Path %s is not a regular file", p)
	default:
		old, err := s.header(ctx, t, p)
		if err != nil {
			return err
		}
		hdr.Mode, hdr.Uid, hdr.Gid, hdr.Uname, hdr.Gname = old.Mode&0o7777, old.Uid, old.Gid, old.Uname, old.Gname
	}
	hdr.Size, hdr.ModTime = int64(len(content)), time.Now()
	archive, err := oneEntry(hdr, []byte(content))
	if err != nil {
		return opFault("write file", err)
	}
	if err := t.c.CopyTo(ctx, t.id, path.Dir(p), archive); err != nil {
		return pathFault("write file", path.Dir(p), err)
	}
	return nil
}

// Kinds of what Create makes.
const (
	KindFile      = "file"
	KindDirectory = "directory"
)

// Create makes an empty file or directory p; its parent must exist and p
// must not.
func (s *Service) Create(ctx context.Context, env store.Environment, id, p, kind string) error {
	if kind == "" {
		kind = KindFile
	}
	if kind != KindFile && kind != KindDirectory {
		return fault.Invalidf("type must be %q or %q", KindFile, KindDirectory)
	}
	p, err := writablePath(p)
	if err != nil {
		return err
	}
	if err := validName(path.Base(p)); err != nil {
		return err
	}
	t, err := s.open(ctx, env, id, "create file")
	if err != nil {
		return err
	}
	if err := s.guardWrite(ctx, t, p); err != nil {
		return err
	}
	if _, err := t.c.StatPath(ctx, t.id, p); err == nil {
		return fault.New(fault.Conflict, "Path already exists: "+p)
	} else if !errors.Is(err, engine.ErrNotFound) {
		return pathFault("create file", p, err)
	}
	if _, err := t.c.StatPath(ctx, t.id, path.Dir(p)); err != nil {
		return pathFault("create file", path.Dir(p), err)
	}
	hdr := &tar.Header{Typeflag: tar.TypeReg, Name: path.Base(p), Mode: 0o644, ModTime: time.Now()}
	if kind == KindDirectory {
		hdr.Typeflag, hdr.Mode, hdr.Name = tar.TypeDir, 0o755, hdr.Name+"/"
	}
	archive, err := oneEntry(hdr, nil)
	if err != nil {
		return opFault("create file", err)
	}
	if err := t.c.CopyTo(ctx, t.id, path.Dir(p), archive); err != nil {
		return pathFault("create file", path.Dir(p), err)
	}
	return nil
}

// oneEntry is a tar holding hdr with body.
func oneEntry(hdr *tar.Header, body []byte) (io.Reader, error) {
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	if err := tw.WriteHeader(hdr); err != nil {
		return nil, err
	}
	if _, err := tw.Write(body); err != nil {
		return nil, err
	}
	if err := tw.Close(); err != nil {
		return nil, err
	}
	return &buf, nil
}
