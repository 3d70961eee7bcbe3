package volumes

import (
	"archive/tar"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"path"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

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

// inHelper is p (clean) as the helper sees it.
func inHelper(p string) string {
	if p == "/" {
		return mountPath
	}
	return mountPath + p
}

// listScript prints the status (D, N: not found, F: not a directory, X:
// outside the volume) and, for a directory, the count, the names
// NUL-terminated, one "size rawmode mtime" line per name in the same order,
// and each name's link target NUL-terminated (empty for a non-link). The
// path is an argument, never part of the script. Symbolic links are
// resolved and must stay inside the volume.
const listScript = `r=$(readlink -f -- "$1") || r=
case "$r" in ` + mountPath + `|` + mountPath + `/*) ;; *) if [ -e "$1" ] || [ -L "$1" ]; then printf X; else printf N; fi; exit 0;; esac
[ -e "$r" ] || { printf N; exit 0; }
cd -- "$r" 2>/dev/null || { printf F; exit 0; }
set --
for f in * .[!.]* ..?*; do { [ -e "$f" ] || [ -L "$f" ]; } && set -- "$@" "$f"; done
printf 'D%d\0' $#
[ $# -gt 0 ] || exit 0
printf '%s\0' "$@"
stat -c '%s %f %Y' -- "$@"
for f in "$@"; do if [ -L "$f" ]; then printf '%s' "$(readlink -- "$f")"; fi; printf '\0'; done
`

// resolveScript prints the resolved path of $1 if it stays inside the
// volume (X if not, N if it does not exist).
const resolveScript = `r=$(readlink -f -- "$1") || r=
case "$r" in ` + mountPath + `|` + mountPath + `/*) ;; *) if [ -e "$1" ] || [ -L "$1" ]; then printf X; else printf N; fi; exit 0;; esac
[ -e "$r" ] || { printf N; exit 0; }
printf 'R%s' "$r"
`

// List returns the directory p (inside the volume) of volume on env.
func (h *Helpers) List(ctx context.Context, env store.Environment, volume, p string) (Listing, error) {
	clean, err := CleanPath(p)
	if err != nil {
		return Listing{}, err
	}
	out, err := h.exec(ctx, env, volume, []string{"sh", "-c", listScript, "sh", inHelper(clean)}, maxListing)
	if err != nil {
		if errors.Is(err, engine.ErrOutputTooLarge) {
			return Listing{}, fault.Invalidf("Directory is too large to list")
		}
		return Listing{}, err
	}
	if err := statusFault(out); err != nil {
		return Listing{}, err
	}
	entries, err := parseListing(out[1:])
	if err != nil {
		return Listing{}, fault.Wrap(fault.Internal, "Failed to browse volume", err)
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

// statusFault is the fault of a script's status byte, nil for success.
func statusFault(out []byte) error {
	if len(out) == 0 {
		return fault.New(fault.Internal, "Failed to browse volume")
	}
	switch out[0] {
	case 'D', 'R':
		return nil
	case 'N':
		return fault.New(fault.NotFound, "Path not found")
	case 'F':
		return fault.Invalidf("Path is not a directory")
	case 'X':
		return fault.Invalidf("Path must stay inside the volume")
	}
	return fault.New(fault.Internal, "Failed to browse volume")
}

// parseListing parses the listing script's output after its status byte.
func parseListing(b []byte) ([]Entry, error) {
	countEnd := bytes.IndexByte(b, 0)
	if countEnd < 0 {
		return nil, errors.New("listing: no count")
	}
	n, err := strconv.Atoi(string(b[:countEnd]))
	if err != nil {
		return nil, fmt.Errorf("listing: count: %w", err)
	}
	b = b[countEnd+1:]
	if n < 0 || n > len(b) {
		return nil, fmt.Errorf("listing: count %d for %d bytes", n, len(b))
	}
	names := make([]string, 0, n)
	for range n {
		i := bytes.IndexByte(b, 0)
		if i < 0 {
			return nil, errors.New("listing: short names")
		}
		names = append(names, string(b[:i]))
		b = b[i+1:]
	}
	entries := make([]Entry, 0, n)
	for _, name := range names {
		i := bytes.IndexByte(b, '\n')
		if i < 0 {
			return nil, errors.New("listing: short stats")
		}
		f := strings.Fields(string(b[:i]))
		b = b[i+1:]
		if len(f) != 3 {
			return nil, fmt.Errorf("listing: bad stat line %q", f)
		}
		size, err1 := strconv.ParseInt(f[0], 10, 64)
		raw, err2 := strconv.ParseUint(f[1], 16, 32)
		mtime, err3 := strconv.ParseInt(f[2], 10, 64)
		if err := errors.Join(err1, err2, err3); err != nil {
			return nil, fmt.Errorf("listing: bad stat line %q: %w", f, err)
		}
		mode := unixMode(uint32(raw))
		e := Entry{Name: name, Type: entryType(mode), Size: size, Mode: mode.String(),
			Modified: time.Unix(mtime, 0).UTC().Format(time.RFC3339)}
		if e.Type == "directory" {
			e.Size = 0
		}
		entries = append(entries, e)
	}
	for i := range entries {
		j := bytes.IndexByte(b, 0)
		if j < 0 {
			return nil, errors.New("listing: short link targets")
		}
		entries[i].LinkTarget = string(b[:j])
		b = b[j+1:]
	}
	return entries, nil
}

// unixMode turns a stat(2) mode into Go's.
func unixMode(raw uint32) fs.FileMode {
	m := fs.FileMode(raw & 0o777)
	switch raw & 0o170000 {
	case 0o040000:
		m |= fs.ModeDir
	case 0o120000:
		m |= fs.ModeSymlink
	case 0o010000:
		m |= fs.ModeNamedPipe
	case 0o140000:
		m |= fs.ModeSocket
	case 0o020000:
		m |= fs.ModeDevice | fs.ModeCharDevice
	case 0o060000:
		m |= fs.ModeDevice
	}
	if raw&0o4000 != 0 {
		m |= fs.ModeSetuid
	}
	if raw&0o2000 != 0 {
		m |= fs.ModeSetgid
	}
	if raw&0o1000 != 0 {
		m |= fs.ModeSticky
	}
	return m
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
	out, err := h.exec(ctx, env, volume, []string{"sh", "-c", resolveScript, "sh", inHelper(clean)}, 64<<10)
	if err != nil {
		return Content{}, err
	}
	if err := statusFault(out); err != nil {
		return Content{}, err
	}
	resolved := string(out[1:])
	c, id, done, err := h.browseHelper(ctx, env, volume)
	if err != nil {
		return Content{}, err
	}
	defer done()
	st, err := c.StatPath(ctx, id, resolved)
	if err != nil {
		return Content{}, helperFault("read file", err)
	}
	switch {
	case st.Mode.IsDir():
		return Content{}, fault.Invalidf("Path is a directory")
	case !st.Mode.IsRegular():
		return Content{}, fault.Invalidf("Path is not a regular file")
	case st.Size > MaxContent:
		return Content{}, fault.Invalidf("File is larger than %d KiB: download the volume export instead", MaxContent>>10)
	}
	rc, _, err := c.CopyFrom(ctx, id, resolved)
	if err != nil {
		return Content{}, helperFault("read file", err)
	}
	defer rc.Close()
	tr := tar.NewReader(rc)
	hdr, err := tr.Next()
	if err != nil {
		return Content{}, fault.Wrap(fault.Internal, "Failed to read file", err)
	}
	if hdr.Size > MaxContent {
		return Content{}, fault.Invalidf("File is larger than %d KiB: download the volume export instead", MaxContent>>10)
	}
	data, err := io.ReadAll(io.LimitReader(tr, MaxContent+1))
	if err != nil {
		return Content{}, fault.Wrap(fault.Internal, "Failed to read file", err)
	}
	if IsBinary(data) {
		return Content{}, fault.Invalidf("File is binary and cannot be shown as text")
	}
	return Content{Path: clean, Size: int64(len(data)), Modified: hdr.ModTime.UTC().Format(time.RFC3339), Content: string(data)}, nil
}

// IsBinary reports whether data is not text: it holds a NUL byte or is not
// valid UTF-8.
func IsBinary(data []byte) bool {
	return bytes.IndexByte(data, 0) >= 0 || !utf8.Valid(data)
}

// Export opens a tar stream of the whole content of volume on env (entry
// names start with "./"). Closing the stream removes the helper, however
// the reading ended.
func (h *Helpers) Export(ctx context.Context, env store.Environment, volume string) (io.ReadCloser, error) {
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
	rc, _, err := c.CopyFrom(ctx, id, mountPath+"/.")
	if err != nil {
		remove()
		return nil, helperFault("export volume", err)
	}
	return &removeOnClose{ReadCloser: rc, remove: remove}, nil
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
	img, err := pickImage(ctx, c)
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
	out, err := c.Run(ctx, engine.RunSpec{Image: img, Cmd: []string{"sh", "-c", "cp -a /from/. /to/"},
		Binds:  []string{source + ":/from:ro", target + ":/to"},
		Labels: h.labels("volume-clone", source)})
	if err == nil && out.ExitCode != 0 {
		err = fmt.Errorf("cp exited with %d: %s", out.ExitCode, strings.TrimSpace(string(out.Stderr)))
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
