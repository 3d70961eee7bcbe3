package files

import (
	"archive/tar"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"path"
	"sort"
	"strings"
	"time"

	"github.com/berth-dev/berth/server/internal/store"
	"github.com/berth-dev/berth/shared/fault"
)

const fsModeSymlink = fs.ModeSymlink

// Entry is one file of a directory listing.
type Entry struct {
	Name        string    `json:"name"`
	Path        string    `json:"path"`
	Type        string    `json:"type"` // file, directory, symlink, other
	Size        int64     `json:"size"`
	Mode        string    `json:"mode"`        // octal permission bits, e.g. "0644"
	Permissions string    `json:"permissions"` // ls style, e.g. "-rw-r--r--"
	Modified    time.Time `json:"modified"`
	LinkTarget  string    `json:"linkTarget,omitempty"` // as written in the link, never followed
	UID         int       `json:"uid"`
	GID         int       `json:"gid"`
}

// Listing is a directory's first-level entries.
type Listing struct {
	Path      string  `json:"path"`
	Entries   []Entry `json:"entries"`
	Truncated bool    `json:"truncated"` // more than ListLimit entries
}

// List returns the entries of directory p of container id.
//
// The engine's archive API has no listing: it gives the directory as a tar
// of everything under it. The headers are read one by one and the bodies
// skipped as they stream past, so memory stays constant, but the time taken
// grows with the size of the whole subtree (a listing of /usr reads all of
// /usr from the engine). The alternative, running ls in the container,
// would be faster on big trees but needs a running container with ls in its
// image and a parser of its output; the archive way works on every
// container, stopped ones and images without a shell included.
func (s *Service) List(ctx context.Context, env store.Environment, id, p string) (Listing, error) {
	p, err := CleanPath(p)
	if err != nil {
		return Listing{}, err
	}
	t, err := s.open(ctx, env, id, "list files")
	if err != nil {
		return Listing{}, err
	}
	rc, st, err := t.c.CopyFrom(ctx, t.id, p)
	if err != nil {
		return Listing{}, pathFault("list files", p, err)
	}
	defer rc.Close()
	switch {
	case st.Mode&fsModeSymlink != 0:
		return Listing{}, fault.Invalidf("Path %s is a symbolic link to %s", p, st.LinkTarget)
	case !st.Mode.IsDir():
		return Listing{}, fault.Invalidf("Path %s is not a directory", p)
	}
	l := Listing{Path: p, Entries: []Entry{}}
	tr := tar.NewReader(rc)
	prefix := ""
	first := true
	sizes := map[string]int64{} // regular files seen, for hard links to them
	for {
		hdr, err := tr.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return Listing{}, opFault("list files", fmt.Errorf("read the engine's tar stream: %w", err))
		}
		name := strings.Trim(hdr.Name, "/")
		if first { // the directory itself: "" for the root, else its base name
			prefix, first = name, false
			continue
		}
		rel := name
		if prefix != "" {
			rel = strings.TrimPrefix(name, prefix+"/")
		}
		if rel == "" || strings.Contains(rel, "/") {
			continue
		}
		if len(l.Entries) == ListLimit {
			l.Truncated = true
			break
		}
		e := entryOf(hdr, rel, path.Join(p, rel))
		if hdr.Typeflag == tar.TypeReg {
			sizes[strings.Trim(hdr.Name, "/")] = hdr.Size
		}
		if hdr.Typeflag == tar.TypeLink { // a hard link: the same file as an earlier entry
			e.Size = sizes[strings.Trim(hdr.Linkname, "/")]
		}
		l.Entries = append(l.Entries, e)
	}
	sort.Slice(l.Entries, func(i, j int) bool {
		a, b := l.Entries[i], l.Entries[j]
		if (a.Type == "directory") != (b.Type == "directory") {
			return a.Type == "directory"
		}
		return a.Name < b.Name
	})
	return l, nil
}

// entryOf describes a tar header as an Entry.
func entryOf(hdr *tar.Header, name, full string) Entry {
	e := Entry{Name: name, Path: full, Size: hdr.Size, Modified: hdr.ModTime.UTC(), UID: hdr.Uid, GID: hdr.Gid,
		Mode: fmt.Sprintf("%04o", hdr.Mode&0o7777)}
	switch hdr.Typeflag {
	case tar.TypeReg, tar.TypeLink:
		e.Type = "file"
	case tar.TypeDir:
		e.Type, e.Size = "directory", 0
	case tar.TypeSymlink:
		e.Type, e.LinkTarget, e.Size = "symlink", hdr.Linkname, 0
	default:
		e.Type = "other"
	}
	e.Permissions = permissions(hdr)
	return e
}

// permissions is the ls-style mode string of a tar header.
func permissions(hdr *tar.Header) string {
	kind := byte('-')
	switch hdr.Typeflag {
	case tar.TypeDir:
		kind = 'd'
	case tar.TypeSymlink:
		kind = 'l'
	case tar.TypeChar:
		kind = 'c'
	case tar.TypeBlock:
		kind = 'b'
	case tar.TypeFifo:
		kind = 'p'
	}
	m := hdr.Mode
	b := []byte{kind}
	const rwx = "rwxrwxrwx"
	for i := 0; i < 9; i++ {
		if m&(1<<uint(8-i)) != 0 {
			b = append(b, rwx[i])
		} else {
			b = append(b, '-')
		}
	}
	special := func(bit int64, pos int, set, unset byte) {
		if m&bit != 0 {
			if b[pos] == '-' {
				b[pos] = unset
			} else {
				b[pos] = set
			}
		}
	}
	special(0o4000, 3, 's', 'S')
	special(0o2000, 6, 's', 'S')
	special(0o1000, 9, 't', 'T')
	return string(b)
}

// header returns the tar header of path p itself (the first entry of its
// tar), closing the stream without reading any file body.
func (s *Service) header(ctx context.Context, t target, p string) (*tar.Header, error) {
	rc, _, err := t.c.CopyFrom(ctx, t.id, p)
	if err != nil {
		return nil, pathFault("read file information", p, err)
	}
	defer rc.Close()
	hdr, err := tar.NewReader(rc).Next()
	if err != nil {
		return nil, opFault("read file information", fmt.Errorf("read the engine's tar stream: %w", err))
	}
	return hdr, nil
}
