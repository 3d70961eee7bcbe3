package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"
)

// GitCredential authenticates clones: AuthType "none", "password" (username
// and password or token) or "ssh" (a private key). Secrets are plaintext in
// memory and sealed at rest.
type GitCredential struct {
	ID            int64
	Name          string
	AuthType      string
	Username      string
	Password      string
	SSHPrivateKey string
	CreatedAt     time.Time
	UpdatedAt     time.Time
}

const gitCredentialColumns = `id, name, auth_type, username, password, ssh_private_key, created_at, updated_at`

// ListGitCredentials returns every git credential ordered by id.
func (s *Store) ListGitCredentials(ctx context.Context) ([]GitCredential, error) {
	rows, err := s.db.QueryContext(ctx, `SELECT `+gitCredentialColumns+` FROM git_credentials ORDER BY id`)
	if err != nil {
		return nil, fmt.Errorf("store: list git credentials: %w", err)
	}
	defer rows.Close()
	out := []GitCredential{}
	for rows.Next() {
		c, err := s.scanGitCredential(rows)
		if err != nil {
			return nil, fmt.Errorf("store: list git credentials: %w", err)
		}
		out = append(out, c)
	}
	return out, rows.Err()
}

// GetGitCredential returns a credential, or ErrNotFound.
func (s *Store) GetGitCredential(ctx context.Context, id int64) (GitCredential, error) {
	c, err := s.scanGitCredential(s.db.QueryRowContext(ctx, s.rebind(`SELECT `+gitCredentialColumns+` FROM git_credentials WHERE id = ?`), id))
	if err != nil {
		return GitCredential{}, fmt.Errorf("store: get git credential %d: %w", id, translate(err))
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
	if c.ID == 0 {
		err = s.db.QueryRowContext(ctx, s.rebind(`
			INSERT INTO git_credentials (name, auth_type, username, password, ssh_private_key, created_at, updated_at)
			VALUES (?, ?, ?, ?, ?, ?, ?) RETURNING id`),
			c.Name, c.AuthType, c.Username, password, key, s.timeArg(t), s.timeArg(t)).Scan(&c.ID)
		c.CreatedAt = t
	} else {
		err = s.execOne(ctx, `UPDATE git_credentials SET name = ?, auth_type = ?, username = ?, password = ?, ssh_private_key = ?, updated_at = ? WHERE id = ?`,
			c.Name, c.AuthType, c.Username, password, key, s.timeArg(t), c.ID)
	}
	if err != nil {
		return fmt.Errorf("store: save git credential %q: %w", c.Name, translate(err))
	}
	c.UpdatedAt = t
	return nil
}

// DeleteGitCredential deletes a credential (ErrConflict while a repository
// uses it).
func (s *Store) DeleteGitCredential(ctx context.Context, id int64) error {
	if err := s.execOne(ctx, `DELETE FROM git_credentials WHERE id = ?`, id); err != nil {
		return fmt.Errorf("store: delete git credential %d: %w", id, translateRef(err, ErrInUse))
	}
	return nil
}

func (s *Store) scanGitCredential(row rowScanner) (GitCredential, error) {
	var (
		c                GitCredential
		password, key    string
		created, updated dbTime
	)
	if err := row.Scan(&c.ID, &c.Name, &c.AuthType, &c.Username, &password, &key, &created, &updated); err != nil {
		return GitCredential{}, err
	}
	var err error
	if c.Password, err = s.box.Decrypt(password); err != nil {
		return GitCredential{}, err
	}
	if c.SSHPrivateKey, err = s.box.Decrypt(key); err != nil {
		return GitCredential{}, err
	}
	c.CreatedAt, c.UpdatedAt = created.Time, updated.Time
	return c, nil
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
	CreatedAt      time.Time
	UpdatedAt      time.Time
}

const gitRepositoryColumns = `id, name, url, branch, credential_id, webhook_enabled, webhook_secret, last_sync_at, created_at, updated_at`

// ListGitRepositories returns every repository ordered by id.
func (s *Store) ListGitRepositories(ctx context.Context) ([]GitRepository, error) {
	rows, err := s.db.QueryContext(ctx, `SELECT `+gitRepositoryColumns+` FROM git_repositories ORDER BY id`)
	if err != nil {
		return nil, fmt.Errorf("store: list git repositories: %w", err)
	}
	defer rows.Close()
	out := []GitRepository{}
	for rows.Next() {
		r, err := s.scanGitRepository(rows)
		if err != nil {
			return nil, fmt.Errorf("store: list git repositories: %w", err)
		}
		out = append(out, r)
	}
	return out, rows.Err()
}

// GetGitRepository returns a repository, or ErrNotFound.
func (s *Store) GetGitRepository(ctx context.Context, id int64) (GitRepository, error) {
	r, err := s.scanGitRepository(s.db.QueryRowContext(ctx, s.rebind(`SELECT `+gitRepositoryColumns+` FROM git_repositories WHERE id = ?`), id))
	if err != nil {
		return GitRepository{}, fmt.Errorf("store: get git repository %d: %w", id, translate(err))
	}
	return r, nil
}

// SaveGitRepository inserts r (ID 0) or updates it by ID (ErrConflict on a
// taken name, an unknown credential).
func (s *Store) SaveGitRepository(ctx context.Context, r *GitRepository) error {
	secret, err := s.box.Encrypt(r.WebhookSecret)
	if err != nil {
		return err
	}
	t := now()
	if r.ID == 0 {
		err = s.db.QueryRowContext(ctx, s.rebind(`
			INSERT INTO git_repositories (name, url, branch, credential_id, webhook_enabled, webhook_secret, created_at, updated_at)
			VALUES (?, ?, ?, ?, ?, ?, ?, ?) RETURNING id`),
			r.Name, r.URL, r.Branch, r.CredentialID, r.WebhookEnabled, secret, s.timeArg(t), s.timeArg(t)).Scan(&r.ID)
		r.CreatedAt = t
	} else {
		err = s.execOne(ctx, `UPDATE git_repositories SET name = ?, url = ?, branch = ?, credential_id = ?, webhook_enabled = ?, webhook_secret = ?, updated_at = ? WHERE id = ?`,
			r.Name, r.URL, r.Branch, r.CredentialID, r.WebhookEnabled, secret, s.timeArg(t), r.ID)
	}
	if err != nil {
		return fmt.Errorf("store: save git repository %q: %w", r.Name, translateRef(err, ErrNotFound))
	}
	r.UpdatedAt = t
	return nil
}

// TouchGitRepository records a sync of the repository at t.
func (s *Store) TouchGitRepository(ctx context.Context, id int64, t time.Time) error {
	if err := s.execOne(ctx, `UPDATE git_repositories SET last_sync_at = ? WHERE id = ?`, s.timeArg(t), id); err != nil {
		return fmt.Errorf("store: touch git repository %d: %w", id, err)
	}
	return nil
}

// DeleteGitRepository deletes a repository (ErrConflict while a git stack
// uses it).
func (s *Store) DeleteGitRepository(ctx context.Context, id int64) error {
	if err := s.execOne(ctx, `DELETE FROM git_repositories WHERE id = ?`, id); err != nil {
		return fmt.Errorf("store: delete git repository %d: %w", id, translateRef(err, ErrInUse))
	}
	return nil
}

func (s *Store) scanGitRepository(row rowScanner) (GitRepository, error) {
	var (
		r                      GitRepository
		cred                   sql.NullInt64
		enabled                sql.NullBool
		secret                 string
		synced, created, updtd dbTime
	)
	if err := row.Scan(&r.ID, &r.Name, &r.URL, &r.Branch, &cred, &enabled, &secret, &synced, &created, &updtd); err != nil {
		return GitRepository{}, err
	}
	var err error
	if r.WebhookSecret, err = s.box.Decrypt(secret); err != nil {
		return GitRepository{}, err
	}
	if cred.Valid {
		r.CredentialID = &cred.Int64
	}
	r.WebhookEnabled, r.LastSyncAt, r.CreatedAt, r.UpdatedAt = enabled.Bool, synced.ptr(), created.Time, updtd.Time
	return r, nil
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
