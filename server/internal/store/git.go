package store

import (
	"context"
	"errors"
	"fmt"
	"time"
)

// GitCredential authenticates clones: AuthType "none", "password" (username
// and password or token) or "ssh" (a private key, and in Password the key's
// passphrase when it is encrypted). Secrets are plaintext in
// memory and sealed at rest. Host is the origin the credential is sent to
// (scheme://host:port, or a URL of it), "" while it is bound to none.
type GitCredential struct {
	ID            int64
	Name          string
	AuthType      string
	Username      string
	Password      string
	SSHPrivateKey string
	Host          string
	CreatedAt     time.Time
	UpdatedAt     time.Time
}

// gitCredentialRow is a row of the git_credentials table, the secrets sealed.
type gitCredentialRow struct {
	ID            int64
	Name          string
	AuthType      string
	Username      string
	Password      string
	SSHPrivateKey string `gorm:"column:ssh_private_key"`
	Host          string
	CreatedAt     dbTime
	UpdatedAt     dbTime
}

func (gitCredentialRow) TableName() string { return "git_credentials" }

func (s *Store) gitCredential(r gitCredentialRow) (GitCredential, error) {
	c := GitCredential{ID: r.ID, Name: r.Name, AuthType: r.AuthType, Username: r.Username, Host: r.Host,
		CreatedAt: r.CreatedAt.Time, UpdatedAt: r.UpdatedAt.Time}
	var err error
	if c.Password, err = s.box.Decrypt(r.Password); err != nil {
		return GitCredential{}, fmt.Errorf("git credential %d: password: %w", r.ID, err)
	}
	if c.SSHPrivateKey, err = s.box.Decrypt(r.SSHPrivateKey); err != nil {
		return GitCredential{}, fmt.Errorf("git credential %d: ssh key: %w", r.ID, err)
	}
	return c, nil
}

// ListGitCredentials returns every git credential ordered by id.
func (s *Store) ListGitCredentials(ctx context.Context) ([]GitCredential, error) {
	var rows []gitCredentialRow
	if err := s.db.WithContext(ctx).Order("id").Find(&rows).Error; err != nil {
		return nil, fmt.Errorf("store: list git credentials: %w", err)
	}
	out := make([]GitCredential, 0, len(rows))
	for _, r := range rows {
		c, err := s.gitCredential(r)
		if err != nil {
			return nil, fmt.Errorf("store: list git credentials: %w", err)
		}
		out = append(out, c)
	}
	return out, nil
}

// GetGitCredential returns a credential, or ErrNotFound.
func (s *Store) GetGitCredential(ctx context.Context, id int64) (GitCredential, error) {
	var r gitCredentialRow
	if err := s.db.WithContext(ctx).Where("id = ?", id).Take(&r).Error; err != nil {
		return GitCredential{}, fmt.Errorf("store: get git credential %d: %w", id, translate(err))
	}
	c, err := s.gitCredential(r)
	if err != nil {
		return GitCredential{}, fmt.Errorf("store: get git credential %d: %w", id, err)
	}
	return c, nil
}

// SaveGitCredential inserts c (ID 0) or updates it by ID.
func (s *Store) SaveGitCredential(ctx context.Context, c *GitCredential) error {
	password, err := s.box.Encrypt(c.Password)
	if err != nil {
		return err
	}
	key, err := s.box.Encrypt(c.SSHPrivateKey)
	if err != nil {
		return err
	}
	t := now()
	db := s.db.WithContext(ctx)
	if c.ID == 0 {
		r := gitCredentialRow{Name: c.Name, AuthType: c.AuthType, Username: c.Username, Password: password,
			SSHPrivateKey: key, Host: c.Host, CreatedAt: timeValue(t), UpdatedAt: timeValue(t)}
		err = db.Create(&r).Error
		c.ID, c.CreatedAt = r.ID, t
	} else {
		err = oneRow(db.Model(&gitCredentialRow{}).Where("id = ?", c.ID).Updates(map[string]any{
			"name": c.Name, "auth_type": c.AuthType, "username": c.Username, "password": password,
			"ssh_private_key": key, "host": c.Host, "updated_at": timeValue(t),
		}))
	}
	if err != nil {
		return fmt.Errorf("store: save git credential %q: %w", c.Name, translate(err))
	}
	c.UpdatedAt = t
	return nil
}

// BindGitCredential records host as the origin of credential id when it is
// bound to none yet; bound reports whether it was (false: another host was
// recorded first, or the credential is gone).
func (s *Store) BindGitCredential(ctx context.Context, id int64, host string) (bound bool, err error) {
	res := s.db.WithContext(ctx).Model(&gitCredentialRow{}).Where("id = ? AND host = ?", id, "").
		Updates(map[string]any{"host": host, "updated_at": timeValue(now())})
	if res.Error != nil {
		return false, fmt.Errorf("store: bind git credential %d: %w", id, translate(res.Error))
	}
	return res.RowsAffected == 1, nil
}

// DeleteGitCredential deletes a credential (ErrConflict while a repository
// uses it).
func (s *Store) DeleteGitCredential(ctx context.Context, id int64) error {
	if err := oneRow(s.db.WithContext(ctx).Where("id = ?", id).Delete(&gitCredentialRow{})); err != nil {
		return fmt.Errorf("store: delete git credential %d: %w", id, translateRef(err, ErrInUse))
	}
	return nil
}

// GitRepository is a repository stacks deploy from. WebhookSecret is sealed
// at rest; it verifies the repository's webhook.
type GitRepository struct {
	ID             int64
	Name           string
	URL            string
	Branch         string
	CredentialID   *int64
	WebhookEnabled bool
	WebhookSecret  string
	LastSyncAt     *time.Time
	// LastFetch is the outcome of the last fetch of the branch into the
	// repository's mirror; nil while it was never fetched.
	LastFetch *GitFetch
	CreatedAt time.Time
	UpdatedAt time.Time
}

// GitFetch is the outcome of one fetch of a repository's branch.
type GitFetch struct {
	At     time.Time
	Branch string
	Status string // GitFetchSuccess or GitFetchFailed
	Commit string // the branch head fetched (success)
	Error  string // why it failed (failed)
}

// Outcomes of a fetch.
const (
	GitFetchSuccess = "success"
	GitFetchFailed  = "failed"
)

// gitRepositoryRow is a row of the git_repositories table, the webhook
// secret sealed.
type gitRepositoryRow struct {
	ID             int64
	Name           string
	URL            string `gorm:"column:url"`
	Branch         string
	CredentialID   *int64
	WebhookEnabled bool
	WebhookSecret  string
	LastSyncAt     dbTime
	FetchedAt      dbTime
	FetchBranch    string
	FetchStatus    string
	FetchCommit    string
	FetchError     string
	CreatedAt      dbTime
	UpdatedAt      dbTime
}

func (gitRepositoryRow) TableName() string { return "git_repositories" }

func (s *Store) gitRepository(r gitRepositoryRow) (GitRepository, error) {
	secret, err := s.box.Decrypt(r.WebhookSecret)
	if err != nil {
		return GitRepository{}, fmt.Errorf("git repository %d: webhook secret: %w", r.ID, err)
	}
	repo := GitRepository{
		ID: r.ID, Name: r.Name, URL: r.URL, Branch: r.Branch, CredentialID: r.CredentialID,
		WebhookEnabled: r.WebhookEnabled, WebhookSecret: secret, LastSyncAt: r.LastSyncAt.ptr(),
		CreatedAt: r.CreatedAt.Time, UpdatedAt: r.UpdatedAt.Time,
	}
	if r.FetchedAt.Valid {
		repo.LastFetch = &GitFetch{At: r.FetchedAt.Time, Branch: r.FetchBranch, Status: r.FetchStatus,
			Commit: r.FetchCommit, Error: r.FetchError}
	}
	return repo, nil
}

// ListGitRepositories returns every repository ordered by id.
func (s *Store) ListGitRepositories(ctx context.Context) ([]GitRepository, error) {
	var rows []gitRepositoryRow
	if err := s.db.WithContext(ctx).Order("id").Find(&rows).Error; err != nil {
		return nil, fmt.Errorf("store: list git repositories: %w", err)
	}
	out := make([]GitRepository, 0, len(rows))
	for _, r := range rows {
		repo, err := s.gitRepository(r)
		if err != nil {
			return nil, fmt.Errorf("store: list git repositories: %w", err)
		}
		out = append(out, repo)
	}
	return out, nil
}

// GetGitRepository returns a repository, or ErrNotFound.
func (s *Store) GetGitRepository(ctx context.Context, id int64) (GitRepository, error) {
	var r gitRepositoryRow
	if err := s.db.WithContext(ctx).Where("id = ?", id).Take(&r).Error; err != nil {
		return GitRepository{}, fmt.Errorf("store: get git repository %d: %w", id, translate(err))
	}
	repo, err := s.gitRepository(r)
	if err != nil {
		return GitRepository{}, fmt.Errorf("store: get git repository %d: %w", id, err)
	}
	return repo, nil
}

// SaveGitRepository inserts r (ID 0) or updates it by ID (ErrConflict on a
// taken name, an unknown credential).
func (s *Store) SaveGitRepository(ctx context.Context, r *GitRepository) error {
	secret, err := s.box.Encrypt(r.WebhookSecret)
	if err != nil {
		return err
	}
	t := now()
	db := s.db.WithContext(ctx)
	if r.ID == 0 {
		row := gitRepositoryRow{Name: r.Name, URL: r.URL, Branch: r.Branch, CredentialID: r.CredentialID,
			WebhookEnabled: r.WebhookEnabled, WebhookSecret: secret, CreatedAt: timeValue(t), UpdatedAt: timeValue(t)}
		err = db.Create(&row).Error
		r.ID, r.CreatedAt = row.ID, t
	} else {
		err = oneRow(db.Model(&gitRepositoryRow{}).Where("id = ?", r.ID).Updates(map[string]any{
			"name": r.Name, "url": r.URL, "branch": r.Branch, "credential_id": r.CredentialID,
			"webhook_enabled": r.WebhookEnabled, "webhook_secret": secret, "updated_at": timeValue(t),
		}))
	}
	if err != nil {
		return fmt.Errorf("store: save git repository %q: %w", r.Name, translateRef(err, ErrNotFound))
	}
	r.UpdatedAt = t
	return nil
}

// TouchGitRepository records a sync of the repository at t.
func (s *Store) TouchGitRepository(ctx context.Context, id int64, t time.Time) error {
	res := s.db.WithContext(ctx).Model(&gitRepositoryRow{}).Where("id = ?", id).Update("last_sync_at", timeValue(t))
	if err := oneRow(res); err != nil {
		return fmt.Errorf("store: touch git repository %d: %w", id, err)
	}
	return nil
}

// RecordGitFetch records f as the last fetch of repository id; a
// successful one is also its last sync.
func (s *Store) RecordGitFetch(ctx context.Context, id int64, f GitFetch) error {
	cols := map[string]any{"fetched_at": timeValue(f.At), "fetch_branch": f.Branch, "fetch_status": f.Status,
		"fetch_commit": f.Commit, "fetch_error": f.Error}
	if f.Status == GitFetchSuccess {
		cols["last_sync_at"] = timeValue(f.At)
	}
	if err := oneRow(s.db.WithContext(ctx).Model(&gitRepositoryRow{}).Where("id = ?", id).Updates(cols)); err != nil {
		return fmt.Errorf("store: record fetch of git repository %d: %w", id, err)
	}
	return nil
}

// DeleteGitRepository deletes a repository (ErrConflict while a git stack
// uses it).
func (s *Store) DeleteGitRepository(ctx context.Context, id int64) error {
	if err := oneRow(s.db.WithContext(ctx).Where("id = ?", id).Delete(&gitRepositoryRow{})); err != nil {
		return fmt.Errorf("store: delete git repository %d: %w", id, translateRef(err, ErrInUse))
	}
	return nil
}

// ErrInUse is a delete refused because other records still refer to the row.
var ErrInUse = errors.New("in use")

// translateRef is translate, with a foreign-key violation reported as ref
// (ErrInUse for a delete, ErrNotFound for a write naming a missing row).
func translateRef(err, ref error) error {
	if isForeignKeyViolation(err) {
		return fmt.Errorf("%w: %w", ref, err)
	}
	return translate(err)
}
