package api

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/berth-dev/berth/server/internal/hostpath"
	"github.com/berth-dev/berth/shared/fault"
)

// hostFilesRoutes are the file browser of the path pickers: Berth's own
// host, confined as every user-named host path is (docs/security.md, "Host
// paths") to the environment's stack directory and the external stack
// roots, never Berth's own files. Administrators only.
func (s *Server) hostFilesRoutes() []route {
	return []route{
		{"GET", "/api/system/files", "settings:edit", EnvQuery, "", false, s.listHostFiles},
		{"POST", "/api/system/files", "settings:edit", EnvQuery, "system.mkdir", false, s.makeHostDir},
		{"GET", "/api/system/files/content", "settings:edit", EnvQuery, "", false, s.readHostFile},
	}
}

var hostPathQuery = queryParam{"path", "string", "absolute path on Berth's host, inside DATA_DIR/stacks/<env> or an external stack root"}

// hostFilesOps document them.
var hostFilesOps = map[string]apiOp{
	"GET /api/system/files": {Summary: "List a directory on Berth's host for path pickers (administrators; only the environment's stack directory and the external stack roots, entries leading elsewhere hidden; default: the stack directory)",
		Response: hostDirAnswer{}, Query: []queryParam{hostPathQuery}},
	"POST /api/system/files": {Summary: "Create a directory (and its missing parents) on Berth's host, inside the stack roots (administrators)",
		Request: hostDirInput{}, Response: hostDirMade{}},
	"GET /api/system/files/content": {Summary: "Read a text file (at most 10 MB) on Berth's host, inside the stack roots (administrators)",
		Response: hostFileAnswer{}, Query: []queryParam{hostPathQuery}},
}

// maxHostFile bounds a file read through the browser.
const maxHostFile = 10 << 20

var errAdminOnly = fault.New(fault.Forbidden, "Admin access required")

// hostEntry is one entry of a listed directory.
type hostEntry struct {
	Name    string    `json:"name"`
	Path    string    `json:"path"`
	Type    string    `json:"type"`    // directory, file or other (of the target, for a link)
	Symlink bool      `json:"symlink"` // a symbolic link (leading inside the roots: others are not listed)
	Size    int64     `json:"size"`
	Mtime   time.Time `json:"mtime"`
	Mode    string    `json:"mode"` // permission bits in octal ("755")
}

// hostDirAnswer is a listed directory.
type hostDirAnswer struct {
	Path    string      `json:"path"`
	Parent  string      `json:"parent,omitempty"` // absent at the top of an allowed place
	Entries []hostEntry `json:"entries"`
	// Roots are where browsing may start: the environment's stack
	// directory and the external stack roots.
	Roots []string `json:"roots"`
}

// hostDirInput names a directory to create.
type hostDirInput struct {
	Path string `json:"path"`
}

// hostDirMade answers its creation.
type hostDirMade struct {
	Success bool   `json:"success"`
	Path    string `json:"path"`
}

// hostFileAnswer is a file's text.
type hostFileAnswer struct {
	Path    string    `json:"path"`
	Content string    `json:"content"`
	Size    int64     `json:"size"`
	Mtime   time.Time `json:"mtime"`
}

// hostPolicy is the confinement of the request's environment, for an
// administrator.
func (s *Server) hostPolicy(c *gin.Context) (hostpath.Policy, error) {
	if !callerIsAdmin(c) {
		return hostpath.Policy{}, errAdminOnly
	}
	return s.stacks.Policy(c.Request.Context(), envOf(c).ID)
}

// hostEntryOf describes the entry at path (resolved: real), or false when
// it cannot be read.
func hostEntryOf(name, path, real string, link bool) (hostEntry, bool) {
	fi, err := os.Stat(real)
	if err != nil {
		return hostEntry{}, false
	}
	typ := "other"
	switch {
	case fi.IsDir():
		typ = "directory"
	case fi.Mode().IsRegular():
		typ = "file"
	}
	return hostEntry{Name: name, Path: path, Type: typ, Symlink: link, Size: fi.Size(), Mtime: fi.ModTime().UTC(),
		Mode: strconv.FormatUint(uint64(fi.Mode().Perm()), 8)}, true
}

func (s *Server) listHostFiles(c *gin.Context) error {
	pol, err := s.hostPolicy(c)
	if err != nil {
		return err
	}
	p := c.Query("path")
	if p == "" {
		p = pol.Home
	}
	if p, err = pol.Confine("path", p, hostpath.Dir); err != nil {
		return err
	}
	out := hostDirAnswer{Path: p, Entries: []hostEntry{}, Roots: append([]string{pol.Home}, pol.Roots...)}
	real, err := hostpath.Resolve(p)
	if err != nil {
		return fault.Wrap(fault.Invalid, fmt.Sprintf("Invalid path %q: it cannot be resolved", p), err)
	}
	if parent := filepath.Dir(p); parent != p {
		if r, err := hostpath.Resolve(parent); err == nil && pol.Allows(r) {
			out.Parent = parent
		}
	}
	list, err := os.ReadDir(real)
	switch {
	case errors.Is(err, fs.ErrNotExist) && p == pol.Home:
		return writeJSON(c, http.StatusOK, out) // no stack yet
	case errors.Is(err, fs.ErrNotExist):
		return fault.New(fault.NotFound, "Path not found")
	case err != nil:
		return fault.Wrap(fault.Internal, "Failed to list directory", err)
	}
	for _, de := range list {
		path := filepath.Join(p, de.Name())
		target, err := hostpath.Resolve(filepath.Join(real, de.Name()))
		if err != nil || !pol.Allows(target) {
			continue // leads out of the allowed places (or into Berth's own files): not shown
		}
		if e, ok := hostEntryOf(de.Name(), path, target, de.Type()&fs.ModeSymlink != 0); ok {
			out.Entries = append(out.Entries, e)
		}
	}
	slices.SortFunc(out.Entries, func(a, b hostEntry) int {
		if (a.Type == "directory") != (b.Type == "directory") {
			if a.Type == "directory" {
				return -1
			}
			return 1
		}
		return strings.Compare(a.Name, b.Name)
	})
	return writeJSON(c, http.StatusOK, out)
}

func (s *Server) makeHostDir(c *gin.Context) error {
	var req hostDirInput
	if err := bindJSON(c, &req); err != nil {
		return err
	}
	pol, err := s.hostPolicy(c)
	if err != nil {
		return err
	}
	if req.Path == "" {
		return fault.New(fault.Invalid, "path is required")
	}
	p, err := pol.Confine("path", req.Path, hostpath.Dir)
	if err != nil {
		return err
	}
	real, err := hostpath.Resolve(p)
	if err != nil {
		return fault.Wrap(fault.Invalid, fmt.Sprintf("Invalid path %q: it cannot be resolved", p), err)
	}
	if _, err := os.Lstat(real); err == nil {
		return fault.New(fault.Conflict, "Path already exists")
	}
	if err := os.MkdirAll(real, 0o755); err != nil {
		return fault.Wrap(fault.Internal, "Failed to create directory", err)
	}
	noteAudit(c, "", p)
	return writeJSON(c, http.StatusOK, hostDirMade{Success: true, Path: p})
}

func (s *Server) readHostFile(c *gin.Context) error {
	pol, err := s.hostPolicy(c)
	if err != nil {
		return err
	}
	p := c.Query("path")
	if p == "" {
		return fault.New(fault.Invalid, "path is required")
	}
	if p, err = pol.Confine("path", p, hostpath.File); err != nil {
		return err
	}
	real, err := hostpath.Resolve(p)
	if err != nil {
		return fault.Wrap(fault.Invalid, fmt.Sprintf("Invalid path %q: it cannot be resolved", p), err)
	}
	f, err := os.Open(real)
	if errors.Is(err, fs.ErrNotExist) {
		return fault.New(fault.NotFound, "File not found")
	}
	if err != nil {
		return fault.Wrap(fault.Internal, "Failed to read file", err)
	}
	defer f.Close()
	// What was opened is judged again: a link swapped in after the check
	// must not lead out.
	if opened, err := os.Readlink(fmt.Sprintf("/proc/self/fd/%d", f.Fd())); err == nil && !pol.Allows(opened) {
		return fault.New(fault.Forbidden, fmt.Sprintf("Invalid path %q: %s", p, pol.Outside))
	}
	fi, err := f.Stat()
	switch {
	case err != nil:
		return fault.Wrap(fault.Internal, "Failed to read file", err)
	case !fi.Mode().IsRegular():
		return fault.Invalidf("Invalid path %q: it is not a regular file", p)
	case fi.Size() > maxHostFile:
		return fault.Invalidf("File %q is too large to show (%d bytes, at most 10 MB)", p, fi.Size())
	}
	data, err := io.ReadAll(io.LimitReader(f, maxHostFile+1))
	if err != nil {
		return fault.Wrap(fault.Internal, "Failed to read file", err)
	}
	if len(data) > maxHostFile {
		return fault.Invalidf("File %q is too large to show (at most 10 MB)", p)
	}
	if slices.Contains(data[:min(len(data), 8192)], 0) {
		return fault.Invalidf("File %q is not a text file", p)
	}
	return writeJSON(c, http.StatusOK, hostFileAnswer{Path: p, Content: string(data), Size: fi.Size(), Mtime: fi.ModTime().UTC()})
}
