package store

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"strings"
	"time"

	"gorm.io/gorm"
	"gorm.io/gorm/clause"

	"github.com/berth-dev/berth/server/internal/backup"
	"github.com/berth-dev/berth/shared/fault"
)

// BackupDestination is a restic repository backups are written to. Password,
// EnvVars and SSHKey are plaintext in memory and sealed at rest.
type BackupDestination struct {
	ID            int64
	Name          string
	Type          string // backup.TypeLocal, TypeSFTP, TypeREST, TypeS3
	Repository    string // the restic repository string as the user gave it
	Password      string
	EnvVars       map[string]string // never nil when read
	SSHKey        string
	SSHKnownHosts string
	Flags         string // extra restic options, space-separated
	HostPath      string // a local repository's path on its environment's host
	// EnvironmentID is the environment whose engine runs restic for this
	// destination: the host a local repository is on; for a remote one, the
	// environment of destination-level operations (nil: the default, see
	// BackupDestinationRepo).
	EnvironmentID *int64
	Policies      string // the maintenance schedules, as the reference's JSON text
	LastTest      *BackupDestinationTest
	CreatedAt     time.Time
	UpdatedAt     time.Time
}

// Test statuses of a destination.
const (
	BackupTestSuccess   = "success"
	BackupTestNeedsInit = "needs_init"
	BackupTestFailed    = "failed"
)

// BackupDestinationTest is the outcome of a destination's last test.
type BackupDestinationTest struct {
	At      time.Time
	Status  string // BackupTestSuccess, BackupTestNeedsInit or BackupTestFailed
	Message string
}

// backupDestinationRow is a row of backup_destinations, secrets sealed.
type backupDestinationRow struct {
	ID              int64
	Name            string
	Type            string
	Repository      string
	Password        string
	EnvVars         string
	SSHKey          string `gorm:"column:ssh_key"`
	SSHKnownHosts   string `gorm:"column:ssh_known_hosts"`
	Flags           string
	HostPath        string
	EnvironmentID   *int64
	Policies        string
	LastTestStatus  string
	LastTestMessage string
	LastTestAt      dbTime
	CreatedAt       dbTime
	UpdatedAt       dbTime
}

func (backupDestinationRow) TableName() string { return "backup_destinations" }

func (s *Store) backupDestination(r backupDestinationRow) (BackupDestination, error) {
	password, err := s.box.Decrypt(r.Password)
	if err != nil {
		return BackupDestination{}, fmt.Errorf("backup destination %d: password: %w", r.ID, err)
	}
	sshKey, err := s.box.Decrypt(r.SSHKey)
	if err != nil {
		return BackupDestination{}, fmt.Errorf("backup destination %d: ssh key: %w", r.ID, err)
	}
	envJSON, err := s.box.Decrypt(r.EnvVars)
	if err != nil {
		return BackupDestination{}, fmt.Errorf("backup destination %d: env vars: %w", r.ID, err)
	}
	env := map[string]string{}
	if envJSON != "" {
		if err := json.Unmarshal([]byte(envJSON), &env); err != nil {
			return BackupDestination{}, fmt.Errorf("backup destination %d: env vars: %w", r.ID, err)
		}
	}
	d := BackupDestination{
		ID: r.ID, Name: r.Name, Type: r.Type, Repository: r.Repository, Password: password, EnvVars: env,
		SSHKey: sshKey, SSHKnownHosts: r.SSHKnownHosts, Flags: r.Flags, HostPath: r.HostPath,
		EnvironmentID: r.EnvironmentID, Policies: r.Policies,
		CreatedAt: r.CreatedAt.Time, UpdatedAt: r.UpdatedAt.Time,
	}
	if r.LastTestAt.Valid {
		d.LastTest = &BackupDestinationTest{At: r.LastTestAt.Time, Status: r.LastTestStatus, Message: r.LastTestMessage}
	}
	return d, nil
}

// sealed returns the sealed password, env vars and SSH key of d.
func (s *Store) sealedBackupSecrets(d *BackupDestination) (password, env, sshKey string, err error) {
	if password, err = s.box.Encrypt(d.Password); err != nil {
		return "", "", "", err
	}
	if sshKey, err = s.box.Encrypt(d.SSHKey); err != nil {
		return "", "", "", err
	}
	if len(d.EnvVars) > 0 {
		b, err := json.Marshal(d.EnvVars)
		if err != nil {
			return "", "", "", err
		}
		if env, err = s.box.Encrypt(string(b)); err != nil {
			return "", "", "", err
		}
	}
	return password, env, sshKey, nil
}

// ListBackupDestinations returns every destination ordered by name.
func (s *Store) ListBackupDestinations(ctx context.Context) ([]BackupDestination, error) {
	var rows []backupDestinationRow
	if err := s.db.WithContext(ctx).Order("name").Order("id").Find(&rows).Error; err != nil {
		return nil, fmt.Errorf("store: list backup destinations: %w", err)
	}
	out := make([]BackupDestination, 0, len(rows))
	for _, r := range rows {
		d, err := s.backupDestination(r)
		if err != nil {
			return nil, fmt.Errorf("store: list backup destinations: %w", err)
		}
		out = append(out, d)
	}
	return out, nil
}

// GetBackupDestination returns a destination, or ErrNotFound.
func (s *Store) GetBackupDestination(ctx context.Context, id int64) (BackupDestination, error) {
	var r backupDestinationRow
	if err := s.db.WithContext(ctx).Where("id = ?", id).Take(&r).Error; err != nil {
		return BackupDestination{}, fmt.Errorf("store: get backup destination %d: %w", id, translate(err))
	}
	d, err := s.backupDestination(r)
	if err != nil {
		return BackupDestination{}, fmt.Errorf("store: get backup destination %d: %w", id, err)
	}
	return d, nil
}

// CreateBackupDestination inserts d (ErrConflict on a taken name, ErrNotFound
// when its environment does not exist).
func (s *Store) CreateBackupDestination(ctx context.Context, d *BackupDestination) error {
	password, env, sshKey, err := s.sealedBackupSecrets(d)
	if err != nil {
		return fmt.Errorf("store: create backup destination: %w", err)
	}
	t := now()
	row := backupDestinationRow{
		Name: d.Name, Type: d.Type, Repository: d.Repository, Password: password, EnvVars: env, SSHKey: sshKey,
		SSHKnownHosts: d.SSHKnownHosts, Flags: d.Flags, HostPath: d.HostPath, EnvironmentID: d.EnvironmentID,
		Policies: d.Policies, CreatedAt: timeValue(t), UpdatedAt: timeValue(t),
	}
	if err := s.db.WithContext(ctx).Create(&row).Error; err != nil {
		return fmt.Errorf("store: create backup destination %q: %w", d.Name, translateRef(err, ErrNotFound))
	}
	d.ID, d.CreatedAt, d.UpdatedAt, d.LastTest = row.ID, t, t, nil
	if d.EnvVars == nil {
		d.EnvVars = map[string]string{}
	}
	return nil
}

// UpdateBackupDestination writes every field of d by ID but its last test,
// which it clears when the repository or its secrets changed (the test no
// longer tells about them).
func (s *Store) UpdateBackupDestination(ctx context.Context, d *BackupDestination) error {
	password, env, sshKey, err := s.sealedBackupSecrets(d)
	if err != nil {
		return fmt.Errorf("store: update backup destination: %w", err)
	}
	t := now()
	err = s.db.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		var old backupDestinationRow
		if err := tx.Where("id = ?", d.ID).Take(&old).Error; err != nil {
			return translate(err)
		}
		prev, err := s.backupDestination(old)
		if err != nil {
			return err
		}
		values := map[string]any{
			"name": d.Name, "type": d.Type, "repository": d.Repository, "password": password, "env_vars": env,
			"ssh_key": sshKey, "ssh_known_hosts": d.SSHKnownHosts, "flags": d.Flags, "host_path": d.HostPath,
			"environment_id": d.EnvironmentID, "policies": d.Policies, "updated_at": timeValue(t),
		}
		if backupAccessChanged(prev, *d) {
			values["last_test_at"], values["last_test_status"], values["last_test_message"] = dbTime{}, "", ""
			d.LastTest = nil
		} else {
			d.LastTest = prev.LastTest
		}
		return oneRow(tx.Model(&backupDestinationRow{}).Where("id = ?", d.ID).Updates(values))
	})
	if err != nil {
		return fmt.Errorf("store: update backup destination %d: %w", d.ID, translateRef(err, ErrNotFound))
	}
	d.UpdatedAt = t
	return nil
}

// backupAccessChanged reports whether b reaches or opens a repository
// differently from a.
func backupAccessChanged(a, b BackupDestination) bool {
	if a.Repository != b.Repository || a.Password != b.Password || a.SSHKey != b.SSHKey ||
		a.SSHKnownHosts != b.SSHKnownHosts || a.Flags != b.Flags || a.HostPath != b.HostPath ||
		len(a.EnvVars) != len(b.EnvVars) || !sameEnvID(a.EnvironmentID, b.EnvironmentID) {
		return true
	}
	for k, v := range a.EnvVars {
		if w, ok := b.EnvVars[k]; !ok || w != v {
			return true
		}
	}
	return false
}

func sameEnvID(a, b *int64) bool {
	return (a == nil) == (b == nil) && (a == nil || *a == *b)
}

// SetBackupDestinationPassword replaces a destination's password alone (after
// a key rotation), or answers ErrNotFound.
func (s *Store) SetBackupDestinationPassword(ctx context.Context, id int64, password string) error {
	sealed, err := s.box.Encrypt(password)
	if err != nil {
		return fmt.Errorf("store: set backup destination %d password: %w", id, err)
	}
	err = oneRow(s.db.WithContext(ctx).Model(&backupDestinationRow{}).Where("id = ?", id).Updates(map[string]any{
		"password": sealed, "updated_at": timeValue(now()),
	}))
	if err != nil {
		return fmt.Errorf("store: set backup destination %d password: %w", id, err)
	}
	return nil
}

// RecordBackupDestinationTest keeps the outcome of destination id's test
// (ErrNotFound when there is no such destination).
func (s *Store) RecordBackupDestinationTest(ctx context.Context, id int64, test BackupDestinationTest) error {
	err := oneRow(s.db.WithContext(ctx).Model(&backupDestinationRow{}).Where("id = ?", id).Updates(map[string]any{
		"last_test_at": timeValue(test.At), "last_test_status": test.Status, "last_test_message": test.Message,
	}))
	if err != nil {
		return fmt.Errorf("store: record test of backup destination %d: %w", id, err)
	}
	return nil
}

// DeleteBackupDestination deletes a destination: ErrNotFound when there is
// none, ErrInUse while backup configurations use it.
func (s *Store) DeleteBackupDestination(ctx context.Context, id int64) error {
	err := oneRow(s.db.WithContext(ctx).Where("id = ?", id).Delete(&backupDestinationRow{}))
	if err != nil {
		return fmt.Errorf("store: delete backup destination %d: %w", id, translateRef(err, ErrInUse))
	}
	return nil
}

// BackupDestinationUsers returns the ids and target names of the backup
// configurations that use destination id, ordered by id.
func (s *Store) BackupDestinationUsers(ctx context.Context, id int64) ([]BackupConfigRef, error) {
	var refs []BackupConfigRef
	err := s.db.WithContext(ctx).Table("backup_configs").Select("id, target_name, environment_id").
		Where("destination_id = ?", id).Order("id").Scan(&refs).Error
	if err != nil {
		return nil, fmt.Errorf("store: configurations of backup destination %d: %w", id, err)
	}
	return refs, nil
}

// BackupConfigRef names a backup configuration.
type BackupConfigRef struct {
	ID            int64
	TargetName    string
	EnvironmentID int64
}

// ErrBackupNoEnvironment is a destination that has no environment to run
// restic on: a local repository whose environment was deleted, or no
// environment at all.
var ErrBackupNoEnvironment = fault.New(fault.Invalid,
	"The destination has no environment to run restic on: choose the environment whose host holds the repository")

// BackupDestinationRepo returns destination id's repository as the runner
// opens it (secrets unsealed) and the id of the environment that runs
// restic for it: the destination's own, else (remote repositories only) the
// first local-socket environment, else the lowest id. A local repository
// without environment answers ErrBackupNoEnvironment.
func (s *Store) BackupDestinationRepo(ctx context.Context, id int64) (backup.Repo, int64, error) {
	d, err := s.GetBackupDestination(ctx, id)
	if err != nil {
		return backup.Repo{}, 0, err
	}
	envID, err := s.BackupEnvironment(ctx, d)
	if err != nil {
		return backup.Repo{}, 0, err
	}
	return d.Repo(), envID, nil
}

// Repo is d as the runner opens it.
func (d BackupDestination) Repo() backup.Repo {
	repo := d.Repository
	if d.Type == backup.TypeLocal {
		repo = d.LocalPath()
	}
	env := make(map[string]string, len(d.EnvVars))
	for k, v := range d.EnvVars {
		env[k] = v
	}
	if d.Type == backup.TypeREST {
		repo = restWithCredentials(repo, env)
	}
	return backup.Repo{
		Type: d.Type, Repository: repo, Password: d.Password, Env: env,
		SSHKey: d.SSHKey, SSHKnownHosts: d.SSHKnownHosts, Flags: SplitResticFlags(d.Flags),
	}
}

// SplitResticFlags splits a destination's flags ("--limit-upload 1000 -o
// s3.region=eu") into one element per option with its value, as
// backup.CheckFlags takes them: a word not starting with "-" is the value
// of the option before it when that has none yet, else a group of its own
// (which CheckFlags refuses).
func SplitResticFlags(flags string) []string {
	var out []string
	for _, w := range strings.Fields(flags) {
		if prev := len(out) - 1; prev >= 0 && !strings.HasPrefix(w, "-") && strings.HasPrefix(out[prev], "-") &&
			!strings.ContainsAny(out[prev], " =") {
			out[len(out)-1] += " " + w
			continue
		}
		out = append(out, w)
	}
	return out
}

// restWithCredentials puts the REST server's credentials kept in env
// (RESTIC_REST_USERNAME, RESTIC_REST_PASSWORD, sealed with the other
// secrets) into the repository URL, where restic 0.14 reads them, and takes
// them out of env. The stored repository string never holds the password.
func restWithCredentials(repo string, env map[string]string) string {
	user, password := env["RESTIC_REST_USERNAME"], env["RESTIC_REST_PASSWORD"]
	delete(env, "RESTIC_REST_USERNAME")
	delete(env, "RESTIC_REST_PASSWORD")
	raw, ok := strings.CutPrefix(repo, "rest:")
	u, err := url.Parse(raw)
	if !ok || err != nil || user == "" && password == "" {
		return repo
	}
	if user == "" && u.User != nil {
		user = u.User.Username()
	}
	if password == "" {
		u.User = url.User(user)
	} else {
		u.User = url.UserPassword(user, password)
	}
	return "rest:" + u.String()
}

// LocalPath is a local repository's path on its host: HostPath when set,
// else the repository string without its "local:" prefix.
func (d BackupDestination) LocalPath() string {
	if d.HostPath != "" {
		return d.HostPath
	}
	return strings.TrimPrefix(d.Repository, "local:")
}

// BackupEnvironment is the environment that runs restic for d (see
// BackupDestinationRepo).
func (s *Store) BackupEnvironment(ctx context.Context, d BackupDestination) (int64, error) {
	if d.EnvironmentID != nil {
		return *d.EnvironmentID, nil
	}
	if d.Type == backup.TypeLocal {
		return 0, ErrBackupNoEnvironment
	}
	var ids []int64
	db := s.db.WithContext(ctx).Table("environments")
	if err := db.Where("connection_type = ?", "socket").Order("id").Limit(1).Pluck("id", &ids).Error; err != nil {
		return 0, fmt.Errorf("store: default backup environment: %w", err)
	}
	if len(ids) == 0 {
		if err := s.db.WithContext(ctx).Table("environments").Order("id").Limit(1).Pluck("id", &ids).Error; err != nil {
			return 0, fmt.Errorf("store: default backup environment: %w", err)
		}
	}
	if len(ids) == 0 {
		return 0, ErrBackupNoEnvironment
	}
	return ids[0], nil
}

// backupInstanceKey is the settings key of the backup instance id.
const backupInstanceKey = "backup.instance_id"

// BackupInstanceID returns this install's backup instance id, made once (a
// random 16-byte hex string) and the same for every replica: snapshots
// tagged berth:instance=<id> are this install's own.
func (s *Store) BackupInstanceID(ctx context.Context) (string, error) {
	id, err := getSetting(ctx, s.db, backupInstanceKey)
	if err == nil {
		return id, nil
	}
	if !errors.Is(err, ErrNotFound) {
		return "", fmt.Errorf("store: backup instance id: %w", err)
	}
	b := make([]byte, 16)
	if _, err := rand.Read(b); err != nil {
		return "", fmt.Errorf("store: backup instance id: %w", err)
	}
	// Insert unless another replica was first, then read whichever won.
	row := settingRow{Key: backupInstanceKey, Value: hex.EncodeToString(b), UpdatedAt: timeValue(now())}
	if err := s.db.WithContext(ctx).Clauses(clause.OnConflict{DoNothing: true}).Create(&row).Error; err != nil {
		return "", fmt.Errorf("store: backup instance id: %w", err)
	}
	id, err = getSetting(ctx, s.db, backupInstanceKey)
	if err != nil {
		return "", fmt.Errorf("store: backup instance id: %w", err)
	}
	return id, nil
}

// backupRunStale is how long a run row stays "running" before it no longer
// holds its destination: a run whose Berth died never finishes its row.
const backupRunStale = 24 * time.Hour

// BackupDestinationRunning reports whether a backup, restore or
// maintenance run is writing to destination id (a backup_runs row still
// running, started less than backupRunStale ago).
func (s *Store) BackupDestinationRunning(ctx context.Context, id int64) (bool, error) {
	var n int64
	err := s.db.WithContext(ctx).Table("backup_runs").
		Where("destination_id = ? AND status = ? AND finished_at IS NULL AND started_at > ?",
			id, "running", timeValue(now().Add(-backupRunStale))).Count(&n).Error
	if err != nil {
		return false, fmt.Errorf("store: runs of backup destination %d: %w", id, err)
	}
	return n > 0, nil
}

// BackupConfigDestination returns the destination of backup configuration
// id, or ErrNotFound.
func (s *Store) BackupConfigDestination(ctx context.Context, id int64) (int64, error) {
	var ids []int64
	if err := s.db.WithContext(ctx).Table("backup_configs").Where("id = ?", id).Pluck("destination_id", &ids).Error; err != nil {
		return 0, fmt.Errorf("store: destination of backup config %d: %w", id, err)
	}
	if len(ids) == 0 {
		return 0, fmt.Errorf("store: destination of backup config %d: %w", id, ErrNotFound)
	}
	return ids[0], nil
}
