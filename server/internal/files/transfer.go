package files

import (
	"archive/tar"
	"context"
	"errors"
	"io"
	"path"
	"strings"
	"time"

	"github.com/berth-dev/berth/server/internal/store"
	"github.com/berth-dev/berth/shared/engine"
	"github.com/berth-dev/berth/shared/fault"
)

// Download opens p (a file or a directory with everything under it) as the
// engine's tar stream and names the archive. The caller closes the stream.
func (s *Service) Download(ctx context.Context, env store.Environment, id, p string) (io.ReadCloser, string, error) {
	p, err := CleanPath(p)
	if err != nil {
		return nil, "", err
	}
	t, err := s.open(ctx, env, id, "download files")
	if err != nil {
		return nil, "", err
	}
	rc, _, err := t.c.CopyFrom(ctx, t.id, p)
	if err != nil {
		return nil, "", pathFault("download files", p, err)
	}
	name := path.Base(p)
	if name == "/" {
		name = "root"
	}
	return rc, name + ".tar", nil
}

// UploadFile is one file of an upload: its name (a base name) and body of
// Size bytes.
type UploadFile struct {
	Name string
	Size int64
	Body io.Reader
}

// UploadName turns the file name a client sent into a base name.
func UploadName(name string) string {
	name = strings.ReplaceAll(name, "\\", "/")
	return path.Base(name)
}

// Upload writes files into directory dir, streaming them as one tar into
// the container. An existing file keeps its mode and owner; new ones get
// 0644 and root.
func (s *Service) Upload(ctx context.Context, env store.Environment, id, dir string, files []UploadFile) error {
	dir, err := CleanPath(dir)
	if err != nil {
		return err
	}
	if len(files) == 0 {
		return fault.New(fault.Invalid, "No file uploaded: send the files as multipart form fields named file")
	}
	for _, f := range files {
		if err := validName(f.Name); err != nil {
			return err
		}
	}
	t, err := s.open(ctx, env, id, "upload files")
	if err != nil {
		return err
	}
	if err := s.guardWrite(ctx, t, path.Join(dir, "x")); err != nil {
		return err
	}
	st, err := t.c.StatPath(ctx, t.id, dir)
	if err != nil {
		return pathFault("upload files", dir, err)
	}
	if !st.Mode.IsDir() {
		return fault.Invalidf("Path %s is not a directory", dir)
	}
	headers := make([]*tar.Header, len(files))
	now := time.Now()
	for i, f := range files {
		p := path.Join(dir, f.Name)
		hdr := &tar.Header{Typeflag: tar.TypeReg, Name: f.Name, Mode: 0o644, Size: f.Size, ModTime: now}
		st, err := t.c.StatPath(ctx, t.id, p)
		switch {
		case errors.Is(err, engine.ErrNotFound):
		case err != nil:
			return pathFault("upload files", p, err)
		case !st.Mode.IsRegular():
			return fault.New(fault.Conflict, "Path already exists and is not a regular file: "+p)
		default:
			old, err := s.header(ctx, t, p)
			if err != nil {
				return err
			}
			hdr.Mode, hdr.Uid, hdr.Gid, hdr.Uname, hdr.Gname = old.Mode&0o7777, old.Uid, old.Gid, old.Uname, old.Gname
		}
		headers[i] = hdr
	}
	pr, pw := io.Pipe()
	go func() {
		tw := tar.NewWriter(pw)
		for i, f := range files {
			if err := tw.WriteHeader(headers[i]); err != nil {
				pw.CloseWithError(err)
				return
			}
			if _, err := io.CopyN(tw, f.Body, f.Size); err != nil {
				pw.CloseWithError(err)
				return
			}
		}
		pw.CloseWithError(tw.Close())
	}()
	err = t.c.CopyTo(ctx, t.id, dir, pr)
	_ = pr.CloseWithError(io.ErrClosedPipe)
	if err != nil {
		return pathFault("upload files", dir, err)
	}
	return nil
}

// Shell is one shell a container may offer.
type Shell struct {
	Path      string `json:"path"`
	Label     string `json:"label"`
	Available bool   `json:"available"`
}

// Shells is what GET /shells answers.
type Shells struct {
	Shells       []string `json:"shells"` // the available ones' paths
	DefaultShell string   `json:"defaultShell"`
	AllShells    []Shell  `json:"allShells"`
}

// knownShells are the shells looked for, in order of preference.
var knownShells = []Shell{
	{Path: "/bin/bash", Label: "Bash"},
	{Path: "/bin/sh", Label: "sh"},
	{Path: "/bin/ash", Label: "Ash"},
	{Path: "/bin/zsh", Label: "Zsh"},
	{Path: "/bin/dash", Label: "Dash"},
	{Path: "/usr/bin/bash", Label: "Bash (/usr/bin)"},
	{Path: "/usr/bin/zsh", Label: "Zsh (/usr/bin)"},
	{Path: "/usr/bin/fish", Label: "Fish"},
}

// Shells reports which known shells exist in the container (a stat of each
// through the archive API: no exec, so stopped containers answer too).
func (s *Service) Shells(ctx context.Context, env store.Environment, id string) (Shells, error) {
	t, err := s.open(ctx, env, id, "detect shells")
	if err != nil {
		return Shells{}, err
	}
	out := Shells{Shells: []string{}, AllShells: make([]Shell, 0, len(knownShells))}
	for _, sh := range knownShells {
		st, err := t.c.StatPath(ctx, t.id, sh.Path)
		switch {
		case errors.Is(err, engine.ErrNotFound):
		case err != nil:
			return Shells{}, opFault("detect shells", err)
		default:
			sh.Available = !st.Mode.IsDir()
		}
		if sh.Available {
			out.Shells = append(out.Shells, sh.Path)
			if out.DefaultShell == "" {
				out.DefaultShell = sh.Path
			}
		}
		out.AllShells = append(out.AllShells, sh)
	}
	return out, nil
}
