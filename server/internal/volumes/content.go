package volumes

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"path"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/berth-dev/berth/server/internal/helperbin"
	"github.com/berth-dev/berth/server/internal/helperimage"
	"github.com/berth-dev/berth/server/internal/store"
	"github.com/berth-dev/berth/shared/engine"
	"github.com/berth-dev/berth/shared/fault"
)

// MaxContent is the largest file Read returns.
const MaxContent = 1 << 20

// maxListing bounds the output of one directory listing.
const maxListing = 16 << 20

// Entry is one entry of a volume directory.
type Entry struct {
	Name       string `json:"name"`
	Type       string `json:"type"` // file, directory, symlink or other
	Size       int64  `json:"size"`
	Mode       string `json:"mode"` // as ls shows it: drwxr-xr-x
	Modified   string `json:"modified"`
	LinkTarget string `json:"linkTarget"`
}

// Listing is a directory of a volume.
type Listing struct {
	Path    string  `json:"path"`
	Entries []Entry `json:"entries"`
}

// Content is a text file of a volume.
type Content struct {
	Path     string `json:"path"`
	Size     int64  `json:"size"`
	Modified string `json:"modified"`
	Content  string `json:"content"`
}

// CleanPath normalises a path inside a volume: absolute, no "." or empty
// segments, "/" for the root. A ".." segment (an attempt to leave the
// volume) or a NUL byte is refused.
func CleanPath(p string) (string, error) {
	if strings.ContainsRune(p, 0) {
		return "", fault.Invalidf("Invalid path")
	}
	for _, seg := range strings.Split(p, "/") {
		if seg == ".." {
			return "", fault.Invalidf("Path must stay inside the volume")
		}
	}
	return path.Clean("/" + p), nil
}

// List returns the directory p (inside the volume) of volume on env.
func (h *Helpers) List(ctx context.Context, env store.Environment, volume, p string) (Listing, error) {
	clean, err := CleanPath(p)
	if err != nil {
		return Listing{}, err
	}
	out, err := h.exec(ctx, env, volume, []string{helperimage.Program, "list", mountPath, clean}, maxListing)
	if err != nil {
		if errors.Is(err, engine.ErrOutputTooLarge) {
			return Listing{}, fault.Invalidf("Directory is too large to list")
		}
		return Listing{}, err
	}
	entries, err := decodeListing(out)
	if err != nil {
		return Listing{}, err
	}
	return Listing{Path: clean, Entries: entries}, nil
}

// exec runs cmd in the browse helper of volume, making a new helper once if
// the kept one has gone.
func (h *Helpers) exec(ctx context.Context, env store.Environment, volume string, cmd []string, limit int) ([]byte, error) {
	for attempt := 0; ; attempt++ {
		c, id, done, err := h.browseHelper(ctx, env, volume)
		if err != nil {
			return nil, err
		}
		out, err := c.ExecOutput(ctx, id, cmd, limit)
		done()
		if err == nil || errors.Is(err, engine.ErrOutputTooLarge) {
			return out, err
		}
		if attempt == 0 && (errors.Is(err, engine.ErrNotFound) || errors.Is(err, engine.ErrConflict)) {
			h.forget(env, volume, id)
			continue
		}
		return nil, helperFault("browse volume", err)
	}
}

// statusFault is the fault of a helper's status, nil for OK. A path
// whose links lead out of the volume is refused on the links' text alone,
// so the refusal is the same whatever they point to.
func statusFault(st helperbin.Status) error {
	switch st {
	case helperbin.OK:
		return nil
	case helperbin.NotFound:
		return fault.New(fault.NotFound, "Path not found")
	case helperbin.NotDirectory:
		return fault.Invalidf("Path is not a directory")
	case helperbin.IsDirectory:
		return fault.Invalidf("Path is a directory")
	case helperbin.NotRegular:
		return fault.Invalidf("Path is not a regular file")
	case helperbin.TooLarge:
		return fault.Invalidf("File is larger than %d KiB: download the volume export instead", MaxContent>>10)
	case helperbin.Escapes:
		return fault.Invalidf("Path escapes the volume")
	case helperbin.TooManyLinks:
		return fault.Invalidf("Path has too many symbolic links")
	}
	return fault.New(fault.Internal, "Failed to browse volume")
}

// decodeListing turns the helper's answer to list into entries, or the
// fault of its status. The answer is untrusted: the names are anyone's.
func decodeListing(b []byte) ([]Entry, error) {
	var l helperbin.Listing
	if err := json.Unmarshal(b, &l); err != nil {
		return nil, fault.Wrap(fault.Internal, "Failed to browse volume", fmt.Errorf("listing: %w", err))
	}
	if err := statusFault(l.Status); err != nil {
		return nil, err
	}
	entries := make([]Entry, 0, len(l.Entries))
	for _, e := range l.Entries {
		out := Entry{Name: e.Name, Type: entryType(e.Mode), Size: e.Size, Mode: e.Mode.String(),
			Modified: time.Unix(e.MTime, 0).UTC().Format(time.RFC3339), LinkTarget: e.Link}
		if out.Type == "directory" {
			out.Size = 0
		}
		entries = append(entries, out)
	}
	return entries, nil
}

func entryType(m fs.FileMode) string {
	switch {
	case m.IsDir():
		return "directory"
	case m&fs.ModeSymlink != 0:
		return "symlink"
	case m.IsRegular():
		return "file"
	}
	return "other"
}

// Read returns the text file p of volume on env, at most MaxContent bytes.
// A binary file, a directory or a larger file is refused (400).
func (h *Helpers) Read(ctx context.Context, env store.Environment, volume, p string) (Content, error) {
	clean, err := CleanPath(p)
	if err != nil {
		return Content{}, err
	}
	out, err := h.exec(ctx, env, volume,
		[]string{helperimage.Program, "read", mountPath, clean, strconv.Itoa(MaxContent)}, MaxContent+4096)
	if err != nil {
		if errors.Is(err, engine.ErrOutputTooLarge) {
			return Content{}, fault.Invalidf("File is larger than %d KiB: download the volume export instead", MaxContent>>10)
		}
		return Content{}, err
	}
	hdr, data, err := decodeFile(out)
	if err != nil {
		return Content{}, err
	}
	if IsBinary(data) {
		return Content{}, fault.Invalidf("File is binary and cannot be shown as text")
	}
	return Content{Path: clean, Size: int64(len(data)), Modified: time.Unix(hdr.MTime, 0).UTC().Format(time.RFC3339),
		Content: string(data)}, nil
}

// decodeFile splits the helper's answer to read into its header and the
// file's bytes, or the fault of its status.
func decodeFile(b []byte) (helperbin.FileHeader, []byte, error) {
	line, data, ok := bytes.Cut(b, []byte("\n"))
	var hdr helperbin.FileHeader
	if err := json.Unmarshal(line, &hdr); err != nil || !ok {
		return hdr, nil, fault.Wrap(fault.Internal, "Failed to read file", fmt.Errorf("read: bad header %q: %v", line, err))
	}
	if err := statusFault(hdr.Status); err != nil {
		return hdr, nil, err
	}
	if int64(len(data)) != hdr.Size || len(data) > MaxContent {
		return hdr, nil, fault.New(fault.Internal, "Failed to read file")
	}
	return hdr, data, nil
}

// IsBinary reports whether data is not text: it holds a NUL byte or is not
// valid UTF-8.
func IsBinary(data []byte) bool {
	return bytes.IndexByte(data, 0) >= 0 || !utf8.Valid(data)
}

// Archive is a tar stream of a volume's content or of a path inside it;
// closing it removes the helper that reads it.
type Archive struct {
	io.ReadCloser
	Path string // the clean path asked for, "/" for the whole volume
	Dir  bool   // whether the path is a directory (its content is archived) or a file (archived alone)
}

// Export returns the tar stream of the path p (inside the volume, "" or "/"
// for all of it) of volume on env. The links on p's way are followed only
// inside the volume: one leading out is refused, as are ".." segments; a
// link inside the archived tree is archived as a link.
func (h *Helpers) Export(ctx context.Context, env store.Environment, volume, p string) (*Archive, error) {
	clean, err := CleanPath(p)
	if err != nil {
		return nil, err
	}
	src, dir := mountPath+"/.", true
	if clean != "/" {
		rel, isDir, err := h.resolve(ctx, env, volume, clean)
		if err != nil {
			return nil, err
		}
		src, dir = mountPath+"/"+rel, isDir
		if dir {
			src += "/."
		}
	}
	c, _, err := h.client(ctx, env, volume)
	if err != nil {
		return nil, err
	}
	// A created container is enough: the archive API reads its volumes
	// without starting it.
	id, remove, err := h.oneOff(ctx, c, "volume-export", volume, false, []string{"true"},
		engine.VolumeMount{Volume: volume, Target: mountPath, ReadOnly: true})
	if err != nil {
		return nil, helperFault("export volume", err)
	}
	rc, _, err := c.CopyFrom(ctx, id, src)
	if err != nil {
		remove()
		if errors.Is(err, engine.ErrNotFound) { // removed since it was resolved
			return nil, fault.New(fault.NotFound, "Path not found")
		}
		return nil, helperFault("export volume", err)
	}
	return &Archive{ReadCloser: &removeOnClose{ReadCloser: rc, remove: remove}, Path: clean, Dir: dir}, nil
}

// resolve asks the browse helper of volume where the clean path p leads:
// its path relative to the volume, with no link left, and whether it is a
// directory. The answer is untrusted: a path that is not clean and
// relative is refused.
func (h *Helpers) resolve(ctx context.Context, env store.Environment, volume, p string) (string, bool, error) {
	out, err := h.exec(ctx, env, volume, []string{helperimage.Program, "resolve", mountPath, p}, 1<<16)
	if err != nil {
		return "", false, err
	}
	var res helperbin.Resolved
	if err := json.Unmarshal(out, &res); err != nil {
		return "", false, fmt.Errorf("volume helper: resolve answer: %w", err)
	}
	if err := statusFault(res.Status); err != nil {
		return "", false, err
	}
	if res.Path == "" || path.Clean(res.Path) != res.Path || path.IsAbs(res.Path) || res.Path == ".." ||
		strings.HasPrefix(res.Path, "../") || strings.ContainsRune(res.Path, 0) {
		return "", false, fmt.Errorf("volume helper: resolve answered the path %q", res.Path)
	}
	return res.Path, res.Dir, nil
}

// removeOnClose removes a helper when its stream is closed.
type removeOnClose struct {
	io.ReadCloser
	remove func()
}

func (r *removeOnClose) Close() error {
	err := r.ReadCloser.Close()
	r.remove()
	return err
}

// Clone creates the volume target with source's driver, driver options and
// labels (plus CloneLabel) and copies source's content into it. A target
// that exists is 409; a missing source 404. A failed copy removes the new
// volume.
func (h *Helpers) Clone(ctx context.Context, env store.Environment, source, target string) (engine.Volume, error) {
	target = strings.TrimSpace(target)
	if err := ValidateName(strings.TrimSpace(target)); err != nil {
		return engine.Volume{}, err
	}
	c, src, err := h.client(ctx, env, source)
	if err != nil {
		return engine.Volume{}, err
	}
	img, err := h.images.Ensure(ctx, c)
	if err != nil {
		return engine.Volume{}, err
	}
	labels := make(map[string]string, len(src.Labels)+1)
	for k, v := range src.Labels {
		labels[k] = v
	}
	labels[CloneLabel] = source
	// Compose's labels would make the clone look like a project's volume.
	delete(labels, "com.docker.compose.project")
	delete(labels, "com.docker.compose.volume")
	delete(labels, "com.docker.compose.version")
	v, err := c.CreateVolume(ctx, engine.VolumeSpec{Name: target, Driver: src.Driver, DriverOpts: src.Options, Labels: labels})
	if err != nil {
		if errors.Is(err, engine.ErrConflict) {
			return engine.Volume{}, fault.Wrap(fault.Conflict, "Volume already exists", err)
		}
		return engine.Volume{}, opFault("clone volume", err)
	}
	out, err := c.Run(ctx, engine.RunSpec{Image: img, Cmd: []string{helperimage.Program, "copy", "/from", "/to"},
		Binds:  []string{source + ":/from:ro", target + ":/to"},
		Labels: h.labels("volume-clone", source)})
	if err == nil && out.ExitCode != 0 {
		err = fmt.Errorf("the copy exited with %d: %s", out.ExitCode, strings.TrimSpace(string(out.Stderr)))
	}
	if err != nil {
		rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 30*time.Second)
		defer cancel()
		if rerr := c.RemoveVolume(rctx, target, true); rerr != nil {
			h.log.Warn("removing the volume of a failed clone", "volume", target, "err", rerr)
		}
		return engine.Volume{}, fault.Wrap(fault.Internal, "Failed to clone volume", err).WithDetails(engine.Details(err))
	}
	return v, nil
}
