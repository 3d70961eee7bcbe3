package api

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"net/http"
	"net/url"
	"sort"
	"strings"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/berth-dev/berth/server/internal/auth"
	"github.com/berth-dev/berth/server/internal/backup"
	"github.com/berth-dev/berth/server/internal/hostpath"
	"github.com/berth-dev/berth/server/internal/schedule"
	"github.com/berth-dev/berth/server/internal/store"
	"github.com/berth-dev/berth/shared/fault"
)

// backupDestinationRoutes are the routes of backup destinations (restic
// repositories) and of the install's backup instance id (issue 24). Reads
// need backups:view on some environment (a destination serves every
// environment: one whose role covers a single environment picks one for its
// configurations there); everything else needs backups:manage on every
// environment, since it changes or runs restic on the repository as a
// whole, every environment's snapshots with it. restic runs on the
// destination's environment, never on the control plane.
func (s *Server) backupDestinationRoutes() []route {
	return []route{
		{"GET", "/api/backup/instance", "backups:view", AnyEnv, "", false, s.backupInstance},
		{"GET", "/api/backup/destinations", "backups:view", AnyEnv, "", false, s.listBackupDestinations},
		{"POST", "/api/backup/destinations", "backups:manage", NoEnv, "backup.destination.create", false, s.createBackupDestination},
		{"POST", "/api/backup/destinations/test", "backups:manage", NoEnv, Quiet, false, s.testBackupRepository},
		{"GET", "/api/backup/destinations/{id}", "backups:view", AnyEnv, "", false, s.getBackupDestination},
		{"PUT", "/api/backup/destinations/{id}", "backups:manage", NoEnv, "backup.destination.update", false, s.updateBackupDestination},
		{"DELETE", "/api/backup/destinations/{id}", "backups:manage", NoEnv, "backup.destination.delete", false, s.deleteBackupDestination},
		{"POST", "/api/backup/destinations/{id}/init", "backups:manage", NoEnv, "backup.destination.init", false, s.initBackupDestination},
		{"POST", "/api/backup/destinations/{id}/test", "backups:manage", NoEnv, Quiet, false, s.testBackupDestination},
		{"POST", "/api/backup/destinations/{id}/rotate-key", "backups:manage", NoEnv, "backup.destination.rotate_key", false, s.rotateBackupKey},
		{"POST", "/api/backup/destinations/{id}/task", "backups:manage", NoEnv, "backup.destination.task", false, s.backupDestinationTask},
		{"POST", "/api/backup/destinations/{id}/verify", "backups:manage", NoEnv, "backup.destination.verify", false, s.verifyBackupDestination},
	}
}

// backupDestinationJSON is a destination as clients read it: never the
// password nor the SSH key; the extra environment (cloud credentials) only
// for a caller who may manage backups, on the single GET and in the answers
// of create and update, and even then its secret values masked
// (secretEnvVars).
type backupDestinationJSON struct {
	ID         int64  `json:"id"`
	Name       string `json:"name"`
	Type       string `json:"type"` // local, sftp, rest, s3
	Repository string `json:"repository"`
	HostPath   string `json:"hostPath"`
	// EnvironmentID is the environment whose engine runs restic for the
	// destination (a local repository's host); null: the default one.
	EnvironmentID *int64            `json:"environmentId"`
	Flags         string            `json:"flags"`
	Policies      string            `json:"policies"`
	EnvVars       map[string]string `json:"envVars,omitempty"`
	EnvVarNames   []string          `json:"envVarNames"` // the names of the extra environment, always listed
	HasPassword   bool              `json:"hasPassword"`
	HasSSHKey     bool              `json:"hasSshKey"`
	SSHKnownHosts string            `json:"sshKnownHosts"`
	// LastTestStatus is success, needs_init or failed ("" never tested, or
	// changed since).
	LastTestStatus  string     `json:"lastTestStatus"`
	LastTestMessage string     `json:"lastTestMessage"`
	LastTestedAt    *time.Time `json:"lastTestedAt"`
	CreatedAt       time.Time  `json:"createdAt"`
	UpdatedAt       time.Time  `json:"updatedAt"`
}

func toBackupDestinationJSON(d store.BackupDestination, withEnv bool) backupDestinationJSON {
	out := backupDestinationJSON{ID: d.ID, Name: d.Name, Type: d.Type, Repository: d.Repository, HostPath: d.HostPath,
		EnvironmentID: d.EnvironmentID, Flags: d.Flags, Policies: d.Policies, EnvVarNames: []string{},
		HasPassword: d.Password != "", HasSSHKey: d.SSHKey != "", SSHKnownHosts: d.SSHKnownHosts,
		CreatedAt: d.CreatedAt, UpdatedAt: d.UpdatedAt}
	for k := range d.EnvVars {
		out.EnvVarNames = append(out.EnvVarNames, k)
	}
	sort.Strings(out.EnvVarNames)
	if withEnv {
		out.EnvVars = map[string]string{}
		for k, v := range d.EnvVars {
			if secretEnvVars[k] {
				v = secretMask // sent back as is, it keeps the stored value
			}
			out.EnvVars[k] = v
		}
	}
	if d.LastTest != nil {
		at := d.LastTest.At
		out.LastTestStatus, out.LastTestMessage, out.LastTestedAt = d.LastTest.Status, d.LastTest.Message, &at
	}
	return out
}

// secretEnvVars are the names of the extra environment whose values are
// secrets: answered as secretMask, never as themselves (the access key id,
// the region and the REST user name are not secret).
var secretEnvVars = map[string]bool{"AWS_SECRET_ACCESS_KEY": true, "AWS_SESSION_TOKEN": true, "RESTIC_REST_PASSWORD": true}

// backupDestinationRequest is the body of create and update. On update an
// absent field keeps its value; the password, the SSH key and each value of
// envVars follow secretField (absent, null or the mask: keep; a value
// sent as "********" in envVars keeps that variable's stored value).
type backupDestinationRequest struct {
	Name       *string           `json:"name"`
	Repository *string           `json:"repository"`
	Password   secretField       `json:"password"`
	EnvVars    map[string]string `json:"envVars"`
	Flags      *string           `json:"flags"`
	HostPath   *string           `json:"hostPath"`
	Policies   *string           `json:"policies"`
	// EnvironmentID is Berth's: the environment whose engine runs restic
	// for the destination (required in effect for a local repository: the
	// default environment when absent).
	EnvironmentID *int64      `json:"environmentId"`
	SSHKey        secretField `json:"sshKey"`
	SSHKnownHosts *string     `json:"sshKnownHosts"`
}

// backupDestinationAnswer is a created destination with the outcome of
// its automatic initialisation and test.
type backupDestinationAnswer struct {
	backupDestinationJSON
	// Initialized says whether the repository was created now (false: it
	// existed, or initialisation failed: see lastTestStatus).
	Initialized bool `json:"initialized"`
}

var errBackupsUnavailable = fault.New(fault.Unavailable, "Backups are not available on this server (no restic runner)")

// canManageBackups reports whether the request's caller holds
// backups:manage on every environment (authentication off: anyone): who
// may change destinations, and so read the values of their extra
// environment (secret ones masked all the same). One who manages backups
// on some environments only reads their names (envVarNames), never their
// values: a destination is not theirs to edit.
func canManageBackups(c *gin.Context) bool {
	ident := identityOf(c)
	return ident == nil || ident.Access.Check("backups:manage", nil) == auth.Allowed
}

func (s *Server) backupInstance(c *gin.Context) error {
	id, err := s.store.BackupInstanceID(c.Request.Context())
	if err != nil {
		return err
	}
	return writeJSON(c, http.StatusOK, backupInstanceAnswer{InstanceID: id})
}

func (s *Server) listBackupDestinations(c *gin.Context) error {
	list, err := s.store.ListBackupDestinations(c.Request.Context())
	if err != nil {
		return err
	}
	return writeJSON(c, http.StatusOK, convert(list, func(d store.BackupDestination) backupDestinationJSON {
		return toBackupDestinationJSON(d, false)
	}))
}

// backupDestination is the destination of the {id} path parameter.
func (s *Server) backupDestination(c *gin.Context) (store.BackupDestination, error) {
	id, err := pathID(c, "Destination")
	if err != nil {
		return store.BackupDestination{}, err
	}
	return s.backupDestinationByID(c.Request.Context(), id)
}

var errDestinationNotFound = fault.New(fault.NotFound, "Destination not found")

func (s *Server) backupDestinationByID(ctx context.Context, id int64) (store.BackupDestination, error) {
	d, err := s.store.GetBackupDestination(ctx, id)
	if errors.Is(err, store.ErrNotFound) {
		return store.BackupDestination{}, errDestinationNotFound
	}
	return d, err
}

func (s *Server) getBackupDestination(c *gin.Context) error {
	d, err := s.backupDestination(c)
	if err != nil {
		return err
	}
	return writeJSON(c, http.StatusOK, toBackupDestinationJSON(d, canManageBackups(c)))
}

// applyBackupDestination applies req to d (a new destination when d.ID is
// 0) and checks the result, nothing saved.
func (s *Server) applyBackupDestination(ctx context.Context, d *store.BackupDestination, req backupDestinationRequest) error {
	old := *d
	if req.Name != nil {
		d.Name = strings.TrimSpace(*req.Name)
	}
	if req.Repository != nil {
		d.Repository = strings.TrimSpace(*req.Repository)
	}
	if req.Flags != nil {
		d.Flags = strings.TrimSpace(*req.Flags)
	}
	if req.HostPath != nil {
		d.HostPath = strings.TrimSpace(*req.HostPath)
	}
	if req.Policies != nil {
		d.Policies = strings.TrimSpace(*req.Policies)
	}
	if req.SSHKnownHosts != nil {
		d.SSHKnownHosts = strings.TrimSpace(*req.SSHKnownHosts) + "\n"
		if d.SSHKnownHosts == "\n" {
			d.SSHKnownHosts = ""
		}
	}
	if req.EnvironmentID != nil {
		d.EnvironmentID = req.EnvironmentID
		if *req.EnvironmentID == 0 {
			d.EnvironmentID = nil
		}
	}
	req.Password.applyTo(&d.Password)
	req.SSHKey.applyTo(&d.SSHKey)
	d.EnvVars = maps.Clone(d.EnvVars) // old's map stays as it was
	if req.EnvVars != nil {
		env := map[string]string{}
		for k, v := range req.EnvVars {
			if v == secretMask {
				v = old.EnvVars[k]
			}
			if v != "" {
				env[k] = v
			}
		}
		d.EnvVars = env
	}
	if d.EnvVars == nil {
		d.EnvVars = map[string]string{}
	}
	switch {
	case d.Name == "":
		return fault.New(fault.Invalid, "Name is required")
	case len(d.Name) > 100:
		return fault.New(fault.Invalid, "Name is too long (at most 100 characters)")
	case d.Repository == "":
		return fault.New(fault.Invalid, "Repository is required")
	case d.Password == "":
		return fault.New(fault.Invalid, "Password is required (restic encrypts the repository with it)")
	}
	// REST credentials in the URL go with the other secrets: the stored
	// repository string never holds the password.
	if repo, user, password, ok := splitRESTCredentials(d.Repository); ok {
		d.Repository = repo
		if user != "" {
			d.EnvVars["RESTIC_REST_USERNAME"] = user
		}
		if password != "" {
			d.EnvVars["RESTIC_REST_PASSWORD"] = password
		}
	}
	d.Repository = normalizeRepository(d.Repository)
	typ, err := backup.ParseRepository(d.Repository)
	if err != nil {
		return err
	}
	d.Type = typ
	if err := s.checkRepositoryHost(ctx, d.Repository, typ); err != nil {
		return err
	}
	if d.HostPath != "" {
		if _, err := backup.ParseRepository(d.HostPath); err != nil || typ != backup.TypeLocal {
			return fault.New(fault.Invalid, "Invalid hostPath: only a local repository has one, a clean absolute path on its environment's host")
		}
	}
	if (d.SSHKey != "" || d.SSHKnownHosts != "") && typ != backup.TypeSFTP {
		return fault.New(fault.Invalid, "sshKey and sshKnownHosts are for sftp repositories only")
	}
	if d.SSHKey != "" && !strings.Contains(d.SSHKey, "PRIVATE KEY-----") {
		return fault.New(fault.Invalid, "Invalid sshKey: an OpenSSH or PEM private key is expected")
	}
	// The password, the environment's names and values, the flags, an SFTP
	// repository's key: as the runner will take them.
	if err := backup.CheckRepo(d.Repo()); err != nil {
		return err
	}
	if err := checkBackupPolicies(d.Policies); err != nil {
		return err
	}
	if d.EnvironmentID != nil {
		if _, err := s.environmentByID(ctx, *d.EnvironmentID); err != nil {
			return fault.New(fault.Invalid, "Invalid environmentId: no such environment")
		}
	} else if d.Type == backup.TypeLocal {
		// A local repository is on one host: the default environment's,
		// fixed now so that it never moves.
		id, err := s.store.BackupEnvironment(ctx, store.BackupDestination{Type: backup.TypeREST})
		if err != nil {
			return err
		}
		d.EnvironmentID = &id
	}
	return nil
}

// splitRESTCredentials takes the user and password out of a REST
// repository URL (ok false: not a REST URL with credentials).
func splitRESTCredentials(repo string) (stripped, user, password string, ok bool) {
	raw, isREST := strings.CutPrefix(repo, "rest:")
	if !isREST {
		return repo, "", "", false
	}
	u, err := url.Parse(raw)
	if err != nil || u.User == nil {
		return repo, "", "", false
	}
	user = u.User.Username()
	password, _ = u.User.Password()
	u.User = nil
	return "rest:" + u.String(), user, password, true
}

// checkBackupPolicies checks the maintenance policies, the reference's JSON
// object ({"pruneEnabled": true, "pruneSchedule": "0 0 1 * *", …}): every
// field named …Schedule must be a valid cron expression.
func checkBackupPolicies(policies string) error {
	if policies == "" {
		return nil
	}
	var p map[string]any
	if err := json.Unmarshal([]byte(policies), &p); err != nil {
		return fault.New(fault.Invalid, "Invalid policies: a JSON object is expected")
	}
	for k, v := range p {
		if !strings.HasSuffix(k, "Schedule") {
			continue
		}
		expr, ok := v.(string)
		if !ok {
			return fault.Invalidf("Invalid policies: %s must be a cron expression", k)
		}
		if expr == "" {
			continue
		}
		if _, err := schedule.ParseCron(expr); err != nil {
			return fault.Invalidf("Invalid policies: %s is not a valid cron expression: %q", k, expr)
		}
	}
	return nil
}

var errDestinationNameTaken = fault.New(fault.Conflict, "A destination with this name already exists")

func (s *Server) createBackupDestination(c *gin.Context) error {
	var req backupDestinationRequest
	if err := bindJSON(c, &req); err != nil {
		return err
	}
	ctx := c.Request.Context()
	var d store.BackupDestination
	if err := s.applyBackupDestination(ctx, &d, req); err != nil {
		return err
	}
	if err := s.checkLocalRepository(c, d, nil); err != nil {
		return err
	}
	if err := s.store.CreateBackupDestination(ctx, &d); err != nil {
		if errors.Is(err, store.ErrConflict) {
			return errDestinationNameTaken
		}
		return err
	}
	noteAudit(c, fmt.Sprint(d.ID), d.Name)
	// The reference auto-initialises and tests: a destination that cannot
	// be reached is still created, with its test's failure to show.
	answer := backupDestinationAnswer{}
	if s.backup != nil {
		existed, err := s.initRepository(ctx, d)
		answer.Initialized = err == nil && !existed
		if err == nil {
			s.testRepository(ctx, d)
		}
		if saved, err := s.store.GetBackupDestination(ctx, d.ID); err == nil {
			d = saved
		}
	}
	answer.backupDestinationJSON = toBackupDestinationJSON(d, true)
	return writeJSON(c, http.StatusCreated, answer)
}

func (s *Server) updateBackupDestination(c *gin.Context) error {
	d, err := s.backupDestination(c)
	if err != nil {
		return err
	}
	var req backupDestinationRequest
	if err := bindJSON(c, &req); err != nil {
		return err
	}
	ctx := c.Request.Context()
	old := d
	if err := s.applyBackupDestination(ctx, &d, req); err != nil {
		return err
	}
	if err := secretsStayHome(old, d, req, fault.Forbidden); err != nil {
		return err
	}
	if err := s.checkLocalRepository(c, d, &old); err != nil {
		return err
	}
	if err := s.destinationUsable(ctx, d); err != nil {
		return err
	}
	if err := s.destinationIdle(ctx, d.ID); err != nil {
		return err
	}
	if err := s.store.UpdateBackupDestination(ctx, &d); err != nil {
		if errors.Is(err, store.ErrConflict) {
			return errDestinationNameTaken
		}
		if errors.Is(err, store.ErrNotFound) {
			return errDestinationNotFound
		}
		return err
	}
	noteAudit(c, fmt.Sprint(d.ID), d.Name)
	return writeJSON(c, http.StatusOK, toBackupDestinationJSON(d, true))
}

// errLocalRepositoryAdmin refuses a host path repository chosen by a
// caller who is not an admin: the backup helper mounts that directory of
// the host read-write and runs as root there.
var errLocalRepositoryAdmin = fault.New(fault.Forbidden,
	"Only an admin may choose a host path for a repository (restic writes there as root)")

// checkLocalRepository refuses a local repository whose path or host is
// chosen (on create, or changed on update: old is the stored destination)
// by a caller who is not an admin, and, on Berth's own host, one in
// Berth's data directory (its database and keys) or leading there through
// a symbolic link.
func (s *Server) checkLocalRepository(c *gin.Context, d store.BackupDestination, old *store.BackupDestination) error {
	if d.Type != backup.TypeLocal {
		return nil
	}
	moved := old == nil || old.Type != d.Type || old.LocalPath() != d.LocalPath() ||
		(old.EnvironmentID == nil) != (d.EnvironmentID == nil) ||
		old.EnvironmentID != nil && *old.EnvironmentID != *d.EnvironmentID
	if !moved {
		return nil
	}
	if !callerIsAdmin(c) {
		return errLocalRepositoryAdmin
	}
	if d.EnvironmentID == nil || s.dataDir == "" {
		return nil
	}
	env, err := s.environmentByID(c.Request.Context(), *d.EnvironmentID)
	if err != nil || env.ConnectionType != "socket" {
		return nil // another host: Berth's data directory is not there
	}
	pol := hostpath.Policy{Roots: []string{"/"}, Own: s.dataDir,
		OwnFiles: "a repository cannot be in Berth's data directory", Outside: "not a path of this host"}
	_, err = pol.Confine("repository path", d.LocalPath(), hostpath.Dir)
	return err
}

// destinationUsable refuses a local repository on an environment other
// than the one of a configuration using it (the data would be read on one
// host and written on another).
func (s *Server) destinationUsable(ctx context.Context, d store.BackupDestination) error {
	if d.Type != backup.TypeLocal || d.EnvironmentID == nil {
		return nil
	}
	users, err := s.store.BackupDestinationUsers(ctx, d.ID)
	if err != nil {
		return err
	}
	for _, u := range users {
		if u.EnvironmentID != *d.EnvironmentID {
			return fault.Invalidf("A local repository is on one host: the backup configuration of %s (id %d) is on "+
				"environment %d, not on the destination's environment %d", u.TargetName, u.ID, u.EnvironmentID, *d.EnvironmentID)
		}
	}
	return nil
}

// destinationIdle refuses a change while a backup or restore is writing to
// the destination.
func (s *Server) destinationIdle(ctx context.Context, id int64) error {
	running, err := s.store.BackupDestinationRunning(ctx, id)
	if err != nil {
		return err
	}
	if running {
		return fault.New(fault.Conflict, "A backup using this destination is currently running: try again once it finishes")
	}
	return nil
}

func (s *Server) deleteBackupDestination(c *gin.Context) error {
	d, err := s.backupDestination(c)
	if err != nil {
		return err
	}
	ctx := c.Request.Context()
	if err := s.destinationIdle(ctx, d.ID); err != nil {
		return err
	}
	users, err := s.store.BackupDestinationUsers(ctx, d.ID)
	if err != nil {
		return err
	}
	if len(users) > 0 {
		return destinationInUse(users)
	}
	if err := s.store.DeleteBackupDestination(ctx, d.ID); err != nil {
		if errors.Is(err, store.ErrInUse) { // a configuration made meanwhile
			users, _ := s.store.BackupDestinationUsers(ctx, d.ID)
			return destinationInUse(users)
		}
		if errors.Is(err, store.ErrNotFound) {
			return errDestinationNotFound
		}
		return err
	}
	noteAudit(c, fmt.Sprint(d.ID), d.Name)
	return writeJSON(c, http.StatusOK, success)
}

// destinationInUse is the 409 of deleting a destination that backup
// configurations use, naming them.
func destinationInUse(users []store.BackupConfigRef) error {
	names := make([]string, 0, len(users))
	for _, u := range users {
		names = append(names, fmt.Sprintf("%s (id %d)", u.TargetName, u.ID))
	}
	return fault.New(fault.Conflict, fmt.Sprintf("The destination is used by %d backup configuration(s): %s; "+
		"delete them or move them to another destination first", len(users), strings.Join(names, ", ")))
}
