package api

import (
	"net/http"
	"os"
	"path/filepath"
	"sort"

	"github.com/gin-gonic/gin"

	"github.com/berth-dev/berth/server/internal/backupjobs"
	"github.com/berth-dev/berth/server/internal/store"
	"github.com/berth-dev/berth/shared/fault"
)

// stackPathJSON says where a stack's directory is captured from.
type stackPathJSON struct {
	Kind        string `json:"kind"` // candidate | tar | unknown
	HostPath    string `json:"hostPath,omitempty"`
	ComposeFile string `json:"composeFile,omitempty"`
	Reason      string `json:"reason,omitempty"`
}

// backupStackQuery reads target and env of the stack-path routes, once
// the caller may view backups of env.
func (s *Server) backupStackQuery(c *gin.Context) (store.Environment, string, error) {
	target := c.Query("target")
	if target == "" {
		return store.Environment{}, "", fault.Invalidf("target is required")
	}
	envID, err := backupEnvQuery(c)
	if err != nil {
		return store.Environment{}, "", err
	}
	if envID == 0 {
		envID = 1
	}
	if err := mayReach(c, "backups:view", &envID); err != nil {
		return store.Environment{}, "", err
	}
	env, err := s.store.GetEnvironment(c.Request.Context(), envID)
	if err != nil {
		return store.Environment{}, "", notFoundAs(err, errEnvironmentNotFound)
	}
	return env, target, nil
}

var errEnvironmentNotFound = fault.New(fault.NotFound, "Environment not found")

func (s *Server) backupStackPath(c *gin.Context) error {
	env, target, err := s.backupStackQuery(c)
	if err != nil {
		return err
	}
	dir, err := s.stacks.Dir(c.Request.Context(), env, target)
	switch {
	case err != nil:
		return writeJSON(c, http.StatusOK, stackPathJSON{Kind: "unknown", Reason: "Berth keeps no files of this stack"})
	case !backupjobs.Local(env):
		return writeJSON(c, http.StatusOK, stackPathJSON{Kind: "tar", ComposeFile: filepath.Join(dir, "compose.yaml"),
			Reason: "The stack's directory is on the Berth host, not on this environment's"})
	}
	return writeJSON(c, http.StatusOK, stackPathJSON{Kind: "candidate", HostPath: dir})
}

// stackDirEntryJSON is one entry of a stack's directory.
type stackDirEntryJSON struct {
	Name  string `json:"name"`
	Type  string `json:"type"` // file | dir | symlink | other
	Size  int64  `json:"size"`
	IsDir bool   `json:"isDir"`
}

// stackDirListingJSON lists a stack's directory.
type stackDirListingJSON struct {
	Kind          string              `json:"kind"` // listed | tar | unknown
	HostPath      string              `json:"hostPath,omitempty"`
	LocalStackDir string              `json:"localStackDir,omitempty"`
	Entries       []stackDirEntryJSON `json:"entries"`
	Reason        string              `json:"reason,omitempty"`
}

// maxStackDirEntries bounds a stack directory's listing.
const maxStackDirEntries = 1000

func (s *Server) backupStackDirListing(c *gin.Context) error {
	env, target, err := s.backupStackQuery(c)
	if err != nil {
		return err
	}
	out := stackDirListingJSON{Entries: []stackDirEntryJSON{}}
	dir, err := s.stacks.Dir(c.Request.Context(), env, target)
	if err != nil {
		out.Kind, out.Reason = "unknown", "Berth keeps no files of this stack"
		return writeJSON(c, http.StatusOK, out)
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		out.Kind, out.Reason = "unknown", "The stack's directory cannot be read"
		return writeJSON(c, http.StatusOK, out)
	}
	for i, e := range entries {
		if i == maxStackDirEntries {
			break
		}
		it := stackDirEntryJSON{Name: e.Name(), IsDir: e.IsDir()}
		switch {
		case e.IsDir():
			it.Type = "dir"
		case e.Type()&os.ModeSymlink != 0:
			it.Type = "symlink"
		case e.Type().IsRegular():
			it.Type = "file"
			if info, err := e.Info(); err == nil {
				it.Size = info.Size()
			}
		default:
			it.Type = "other"
		}
		out.Entries = append(out.Entries, it)
	}
	sort.Slice(out.Entries, func(i, j int) bool { return out.Entries[i].Name < out.Entries[j].Name })
	if backupjobs.Local(env) {
		out.Kind, out.HostPath = "listed", dir
	} else {
		out.Kind, out.LocalStackDir = "tar", dir
		out.Reason = "The stack's directory is on the Berth host, not on this environment's"
	}
	return writeJSON(c, http.StatusOK, out)
}
