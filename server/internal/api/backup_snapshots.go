package api

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"path"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/gin-gonic/gin"

	"github.com/berth-dev/berth/server/internal/backup"
	"github.com/berth-dev/berth/server/internal/backupjobs"
	"github.com/berth-dev/berth/server/internal/jobs"
	"github.com/berth-dev/berth/server/internal/store"
	"github.com/berth-dev/berth/shared/fault"
)

// backupSnapshotRoutes are the routes of a destination's snapshots: list
// (this install's own and foreign ones, told apart by the instance tag),
// browse, dump a file, the layout, diff two, forget one. The reads are
// job-polled, as the reference's: {jobId} at once (GET /api/jobs/{jobId}
// follows it), or with Accept: application/json the result itself.
// The permission must hold on some environment; each route then reaches
// only the snapshots of the environments where it holds
// (backup_snapshot_scope.go).
func (s *Server) backupSnapshotRoutes() []route {
	return []route{
		{"GET", "/api/backup/snapshots", "backups:view", AnyEnv, "", false, s.listBackupSnapshots},
		{"GET", "/api/backup/snapshots/diff", "backups:view", AnyEnv, "", false, s.diffBackupSnapshots},
		{"DELETE", "/api/backup/snapshots/{id}", "backups:manage", AnyEnv, "backup.snapshot.delete", false, s.forgetBackupSnapshot},
		{"GET", "/api/backup/snapshots/{id}/browse", "backups:view", AnyEnv, "", false, s.browseBackupSnapshot},
		{"GET", "/api/backup/snapshots/{id}/dump", "backups:view", AnyEnv, "", false, s.dumpBackupSnapshot},
		{"GET", "/api/backup/snapshots/{id}/metadata", "backups:view", AnyEnv, "", false, s.backupSnapshotMetadata},
	}
}

// Snapshot tags Berth writes (backup.Source.Tags).
const (
	tagInstance = "berth:instance="
	tagConfig   = "berth:config="
)

// backupSnapshotJSON is a snapshot as listed.
type backupSnapshotJSON struct {
	backup.Snapshot
	DestinationID int64 `json:"destinationId"`
	// InstanceID is the berth:instance tag ("" none); Own says whether it is
	// this install's (GET /api/backup/instance).
	InstanceID string `json:"instanceId"`
	Own        bool   `json:"own"`
	// ConfigID is the berth:config tag: the configuration that made it
	// (null: none, or not a number).
	ConfigID *int64 `json:"configId"`
}

func toBackupSnapshotJSON(sn backup.Snapshot, destID int64, instance string) backupSnapshotJSON {
	out := backupSnapshotJSON{Snapshot: sn, DestinationID: destID}
	if out.Tags == nil {
		out.Tags = []string{}
	}
	if out.Paths == nil {
		out.Paths = []string{}
	}
	for _, t := range sn.Tags {
		if v, ok := strings.CutPrefix(t, tagInstance); ok {
			out.InstanceID = v
		}
		if v, ok := strings.CutPrefix(t, tagConfig); ok {
			if id, err := strconv.ParseInt(v, 10, 64); err == nil {
				out.ConfigID = &id
			}
		}
	}
	out.Own = out.InstanceID != "" && out.InstanceID == instance
	return out
}

// backupSnapshotsAnswer is the list's result: {instanceId, snapshots},
// newest first.
type backupSnapshotsAnswer struct {
	InstanceID string               `json:"instanceId"`
	Snapshots  []backupSnapshotJSON `json:"snapshots"`
}

// queryID reads an optional positive integer query parameter (0: absent).
func queryID(c *gin.Context, name string) (int64, error) {
	v := c.Query(name)
	if v == "" {
		return 0, nil
	}
	id, err := strconv.ParseInt(v, 10, 64)
	if err != nil || id <= 0 {
		return 0, fault.Invalidf("Invalid %s: a positive integer is expected", name)
	}
	return id, nil
}

// snapshotDestination is the destination of the destinationId query
// parameter (required) and where restic runs for it.
func (s *Server) snapshotDestination(c *gin.Context) (store.BackupDestination, backup.Where, error) {
	id, err := queryID(c, "destinationId")
	if err != nil {
		return store.BackupDestination{}, backup.Where{}, err
	}
	if id == 0 {
		return store.BackupDestination{}, backup.Where{}, fault.New(fault.Invalid, "destinationId is required")
	}
	d, err := s.backupDestinationByID(c.Request.Context(), id)
	if err != nil {
		return store.BackupDestination{}, backup.Where{}, err
	}
	w, err := s.backupWhere(c.Request.Context(), d)
	return d, w, err
}

// listBackupSnapshots lists a destination's snapshots (destinationId) or
// a configuration's (configId: its destination's snapshots tagged with it,
// once the caller may view the configuration's environment), those the
// caller reaches only.
func (s *Server) listBackupSnapshots(c *gin.Context) error {
	configID, err := queryID(c, "configId")
	if err != nil {
		return err
	}
	destID, err := queryID(c, "destinationId")
	if err != nil {
		return err
	}
	// allDestinations: a configuration has one destination in Berth, so
	// listing it is listing all of them.
	if _, err := queryBool(c, "allDestinations", false); err != nil {
		return err
	}
	ctx := c.Request.Context()
	var tags []string
	switch {
	case configID != 0 && destID != 0:
		return fault.New(fault.Invalid, "configId and destinationId are mutually exclusive")
	case configID == 0 && destID == 0:
		return fault.New(fault.Invalid, "configId or destinationId is required")
	case configID != 0:
		b, err := s.store.GetBackupConfig(ctx, configID)
		if errors.Is(err, store.ErrNotFound) {
			return fault.New(fault.NotFound, "Backup config not found")
		} else if err != nil {
			return err
		}
		if err := mayReach(c, "backups:view", &b.EnvironmentID); err != nil {
			return err
		}
		destID = b.DestinationID
		tags = []string{tagConfig + strconv.FormatInt(configID, 10)}
	}
	d, err := s.backupDestinationByID(ctx, destID)
	if err != nil {
		return err
	}
	w, err := s.backupWhere(ctx, d)
	if err != nil {
		return err
	}
	sc, err := s.snapshotScopeOf(c, "backups:view")
	if err != nil {
		return err
	}
	instance := sc.instance
	return s.runJob(c, func(ctx context.Context, emit jobs.Emit) (string, any, bool) {
		list, err := s.backup.Snapshots(ctx, w, d.Repo(), tags)
		if err != nil {
			return "error", map[string]any{"success": false, "error": backupMessage(err)}, true
		}
		out := backupSnapshotsAnswer{InstanceID: instance, Snapshots: make([]backupSnapshotJSON, 0, len(list))}
		for _, sn := range list {
			if sc.reaches(sn, "backups:view") {
				out.Snapshots = append(out.Snapshots, toBackupSnapshotJSON(sn, d.ID, instance))
			}
		}
		sort.SliceStable(out.Snapshots, func(i, j int) bool { return out.Snapshots[i].Time.After(out.Snapshots[j].Time) })
		return "complete", out, false
	})
}

// snapshotID is a restic snapshot id or its short form.
var snapshotID = regexp.MustCompile(`^[0-9a-f]{8,64}$`)

// pathSnapshot is the {id} path parameter, checked.
func pathSnapshot(c *gin.Context) (string, error) {
	id := c.Param("id")
	if !snapshotID.MatchString(id) {
		return "", fault.New(fault.Invalid, "Invalid snapshot id: 8 to 64 hexadecimal digits are expected")
	}
	return id, nil
}

// ownSnapshot finds snapshot id among this install's snapshots of d that
// the caller may view: forgetting a foreign snapshot (another install's),
// or one out of the caller's reach, is refused as not found.
func (s *Server) ownSnapshot(ctx context.Context, sc snapshotScope, w backup.Where, d store.BackupDestination, id string) (backup.Snapshot, error) {
	list, err := s.backup.Snapshots(ctx, w, d.Repo(), []string{tagInstance + sc.instance})
	if err != nil {
		return backup.Snapshot{}, err
	}
	for _, sn := range list {
		if (sn.ID == id || strings.HasPrefix(sn.ID, id) || sn.ShortID == id) && sc.reaches(sn, "backups:view") {
			return sn, nil
		}
	}
	return backup.Snapshot{}, fault.New(fault.NotFound, "Snapshot not found for this installation")
}

// forgetBackupSnapshot forgets one of this install's snapshots and prunes
// the data only it used; the caller needs backups:manage on the snapshot's
// environment (403 when it may only view it there).
func (s *Server) forgetBackupSnapshot(c *gin.Context) error {
	id, err := pathSnapshot(c)
	if err != nil {
		return err
	}
	d, w, err := s.snapshotDestination(c)
	if err != nil {
		return err
	}
	if _, err := queryID(c, "env"); err != nil {
		return err
	}
	sc, err := s.snapshotScopeOf(c, "backups:manage")
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(c.Request.Context(), 30*time.Minute)
	defer cancel()
	sn, err := s.ownSnapshot(ctx, sc, w, d, id)
	if err != nil {
		return err
	}
	if !sc.reaches(sn, "backups:manage") {
		return errPermission
	}
	noteAudit(c, sn.ID, d.Name)
	if err := s.backup.ForgetIDs(ctx, w, d.Repo(), []string{sn.ID}); err != nil {
		return err
	}
	return writeJSON(c, http.StatusOK, success)
}

// snapshotPath cleans a path inside a snapshot ("" is the root).
func snapshotPath(p string) (string, error) {
	if p == "" {
		return "/", nil
	}
	if !strings.HasPrefix(p, "/") || strings.ContainsRune(p, 0) {
		return "", fault.New(fault.Invalid, "Invalid path: an absolute path inside the snapshot is expected")
	}
	return path.Clean(p), nil
}

// backupBrowseAnswer is a directory of a snapshot.
type backupBrowseAnswer struct {
	Path    string        `json:"path"`
	Entries []backup.Node `json:"entries"`
}

func (s *Server) browseBackupSnapshot(c *gin.Context) error {
	id, err := pathSnapshot(c)
	if err != nil {
		return err
	}
	dir, err := snapshotPath(c.Query("path"))
	if err != nil {
		return err
	}
	if _, err := queryID(c, "env"); err != nil {
		return err
	}
	d, w, err := s.snapshotDestination(c)
	if err != nil {
		return err
	}
	if id, err = s.reachableSnapshotID(c, w, d, id); err != nil {
		return err
	}
	return s.runJob(c, func(ctx context.Context, emit jobs.Emit) (string, any, bool) {
		nodes, err := s.backup.Ls(ctx, w, d.Repo(), id, dir)
		if err != nil {
			return "error", map[string]any{"success": false, "error": backupMessage(err)}, true
		}
		if nodes == nil {
			nodes = []backup.Node{}
		}
		return "complete", backupBrowseAnswer{Path: dir, Entries: nodes}, false
	})
}

// maxDumpPreview bounds the inline preview of a dumped file.
const maxDumpPreview = 1 << 20

// backupDumpAnswer is a file's inline preview.
type backupDumpAnswer struct {
	Path      string `json:"path"`
	Content   string `json:"content"`
	Size      int64  `json:"size"`      // bytes read (at most maxDumpPreview + 1)
	Truncated bool   `json:"truncated"` // the file is longer than the preview
	Binary    bool   `json:"binary"`    // not UTF-8 text: content is empty
}

// dumpedPath is a path dump may read: under the snapshot's volumes or host
// paths (the reference's "/volumes or /metadata"), or the archive of a
// backup of Berth itself.
func dumpedPath(p string) (string, error) {
	clean, err := snapshotPath(p)
	if err != nil {
		return "", err
	}
	if !strings.HasPrefix(clean, backup.VolumesDir+"/") && !strings.HasPrefix(clean, backup.PathsDir+"/") && clean != selfArchivePath {
		return "", fault.Invalidf("Invalid path: a path under %s or %s (or %s) is expected", backup.VolumesDir, backup.PathsDir,
			selfArchivePath)
	}
	return clean, nil
}

// selfArchivePath is the file of a snapshot of Berth itself: only an
// admin may read it (it holds the encryption key).
const selfArchivePath = "/" + backupjobs.SelfFile

// dumpBackupSnapshot reads a file of a snapshot: with download set, the
// file itself (a directory: a tar of it) as an attachment, streamed from
// restic; otherwise a job whose result is an inline preview.
func (s *Server) dumpBackupSnapshot(c *gin.Context) error {
	id, err := pathSnapshot(c)
	if err != nil {
		return err
	}
	p, err := dumpedPath(c.Query("path"))
	if err != nil {
		return err
	}
	if p == selfArchivePath && !callerIsAdmin(c) {
		return errSelfBackupAdmin
	}
	kind := c.DefaultQuery("type", "file")
	if kind != "file" && kind != "dir" {
		return fault.New(fault.Invalid, "Invalid type: file or dir")
	}
	download, err := queryBool(c, "download", false)
	if err != nil {
		return err
	}
	d, w, err := s.snapshotDestination(c)
	if err != nil {
		return err
	}
	if id, err = s.reachableSnapshotID(c, w, d, id); err != nil {
		return err
	}
	if download || kind == "dir" {
		return s.downloadSnapshotPath(c, d, w, id, p, kind)
	}
	return s.runJob(c, func(ctx context.Context, emit jobs.Emit) (string, any, bool) {
		lw := &limitedBuffer{max: maxDumpPreview + 1}
		if err := s.backup.Dump(ctx, w, d.Repo(), id, p, lw); err != nil && !errors.Is(err, errPreviewFull) {
			return "error", map[string]any{"success": false, "error": backupMessage(err)}, true
		}
		out := backupDumpAnswer{Path: p, Size: int64(len(lw.buf)), Truncated: len(lw.buf) > maxDumpPreview}
		data := lw.buf
		if out.Truncated {
			data = data[:maxDumpPreview]
		}
		if utf8.Valid(data) {
			out.Content = string(data)
		} else {
			out.Binary = true
		}
		return "complete", out, false
	})
}

// downloadSnapshotPath streams a file (or a directory's tar) of a snapshot
// to the client.
func (s *Server) downloadSnapshotPath(c *gin.Context, d store.BackupDestination, w backup.Where, id, p, kind string) error {
	name := path.Base(p)
	if kind == "dir" {
		name += ".tar"
		c.Header("Content-Type", mediaTar)
	} else {
		c.Header("Content-Type", "application/octet-stream")
	}
	c.Header("Content-Disposition", fmt.Sprintf("attachment; filename=%q", strings.ReplaceAll(name, `"`, "")))
	cw := &committedWriter{c: c}
	err := s.backup.Dump(c.Request.Context(), w, d.Repo(), id, p, cw)
	if err != nil && !cw.started {
		c.Writer.Header().Del("Content-Disposition")
		return err
	}
	if err != nil {
		s.log.Warn("snapshot download cut short", "destination", d.ID, "snapshot", id, "path", p, "err", err)
	}
	if !cw.started {
		c.Status(http.StatusOK)
	}
	return nil
}

// committedWriter writes to the response, sending its status with the
// first bytes (until then an error can still be answered as JSON).
type committedWriter struct {
	c       *gin.Context
	started bool
}

func (w *committedWriter) Write(p []byte) (int, error) {
	if !w.started {
		w.started = true
		w.c.Status(http.StatusOK)
	}
	return w.c.Writer.Write(p)
}

var errPreviewFull = errors.New("preview full")

// limitedBuffer keeps the first max bytes written, then refuses more.
type limitedBuffer struct {
	buf []byte
	max int
}

func (b *limitedBuffer) Write(p []byte) (int, error) {
	room := b.max - len(b.buf)
	if len(p) > room {
		b.buf = append(b.buf, p[:room]...)
		return room, errPreviewFull
	}
	b.buf = append(b.buf, p...)
	return len(p), nil
}

// backupMetadataAnswer is a snapshot's layout: what it holds, by volume and
// host path, with its restic metadata and the configuration that made it.
type backupMetadataAnswer struct {
	Snapshot backupSnapshotJSON `json:"snapshot"`
	Volumes  []string           `json:"volumes"` // names of the volumes it holds
	Paths    []string           `json:"paths"`   // host paths it holds
}

func (s *Server) backupSnapshotMetadata(c *gin.Context) error {
	id, err := pathSnapshot(c)
	if err != nil {
		return err
	}
	d, w, err := s.snapshotDestination(c)
	if err != nil {
		return err
	}
	sc, err := s.snapshotScopeOf(c, "backups:view")
	if err != nil {
		return err
	}
	layout := func(sn backup.Snapshot) backupMetadataAnswer {
		out := backupMetadataAnswer{Snapshot: toBackupSnapshotJSON(sn, d.ID, sc.instance), Volumes: []string{}, Paths: []string{}}
		for _, p := range sn.Paths {
			switch {
			case strings.HasPrefix(p, backup.VolumesDir+"/"):
				out.Volumes = append(out.Volumes, strings.TrimPrefix(p, backup.VolumesDir+"/"))
			case strings.HasPrefix(p, backup.PathsDir+"/"):
				out.Paths = append(out.Paths, strings.TrimPrefix(p, backup.PathsDir))
			}
		}
		return out
	}
	// A caller out of some environment's reach has the snapshot found
	// (or not) now, by the one listing the layout needs.
	found, err := s.reachableSnapshots(c.Request.Context(), sc, w, d, "backups:view", id)
	if err != nil {
		return err
	}
	return s.runJob(c, func(ctx context.Context, emit jobs.Emit) (string, any, bool) {
		fail := func(err error) (string, any, bool) {
			return "error", map[string]any{"success": false, "error": backupMessage(err)}, true
		}
		if found != nil {
			return "complete", layout(found[0]), false
		}
		list, err := s.backup.Snapshots(ctx, w, d.Repo(), nil)
		if err != nil {
			return fail(err)
		}
		for _, sn := range list {
			if sn.ID == id || strings.HasPrefix(sn.ID, id) {
				return "complete", layout(sn), false
			}
		}
		return fail(errSnapshotNotFound)
	})
}

// diffBackupSnapshots compares two snapshots of one destination.
func (s *Server) diffBackupSnapshots(c *gin.Context) error {
	a, b := c.Query("snapshotA"), c.Query("snapshotB")
	if a == "" || b == "" {
		return fault.New(fault.Invalid, "snapshotA and snapshotB are required")
	}
	if !snapshotID.MatchString(a) || !snapshotID.MatchString(b) {
		return fault.New(fault.Invalid, "Invalid snapshot id: 8 to 64 hexadecimal digits are expected")
	}
	d, w, err := s.snapshotDestination(c)
	if err != nil {
		return err
	}
	sc, err := s.snapshotScopeOf(c, "backups:view")
	if err != nil {
		return err
	}
	both, err := s.reachableSnapshots(c.Request.Context(), sc, w, d, "backups:view", a, b)
	if err != nil {
		return err
	}
	if both != nil {
		a, b = both[0].ID, both[1].ID
	}
	return s.runJob(c, func(ctx context.Context, emit jobs.Emit) (string, any, bool) {
		diff, err := s.backup.Diff(ctx, w, d.Repo(), a, b)
		if err != nil {
			return "error", map[string]any{"success": false, "error": backupMessage(err)}, true
		}
		for _, l := range []*[]string{&diff.Added, &diff.Removed, &diff.Modified} {
			if *l == nil {
				*l = []string{}
			}
		}
		return "complete", diff, false
	})
}
