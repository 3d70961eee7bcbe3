package store

import (
	"context"
	"database/sql"
	"fmt"
	"time"
)

// GitStack is a stack deployed from a repository: its compose file and env
// file paths inside the clone, the auto-sync schedule record, the webhook
// (secret sealed at rest) and the state of the last sync. EnvironmentID and
// StackName come from its stack.
type GitStack struct {
	ID             int64
	StackID        int64
	EnvironmentID  int64
	StackName      string
	RepositoryID   int64
	ComposePath    string
	EnvFilePath    string
	AutoUpdate     bool
	AutoUpdateCron string
	WebhookEnabled bool
	WebhookSecret  string
	LastCommit     string
	LastSyncAt     *time.Time
	LastSyncStatus string
	LastSyncError  string
	CreatedAt      time.Time
	UpdatedAt      time.Time
}

const gitStackSelect = `SELECT g.id, g.stack_id, s.environment_id, s.name, g.repository_id, g.compose_path, g.env_file_path,
	g.auto_update, g.auto_update_cron, g.webhook_enabled, g.webhook_secret, g.last_commit, g.last_sync_at,
	g.last_sync_status, g.last_sync_error, g.created_at, g.updated_at
	FROM git_stacks g JOIN stacks s ON s.id = g.stack_id`

// ListGitStacks returns every git stack ordered by id; repoID > 0 keeps
// those of one repository.
func (s *Store) ListGitStacks(ctx context.Context, repoID int64) ([]GitStack, error) {
	q, args := gitStackSelect+` ORDER BY g.id`, []any{}
	if repoID > 0 {
		q, args = gitStackSelect+` WHERE g.repository_id = ? ORDER BY g.id`, []any{repoID}
	}
	rows, err := s.db.QueryContext(ctx, s.rebind(q), args...)
	if err != nil {
		return nil, fmt.Errorf("store: list git stacks: %w", err)
	}
	defer rows.Close()
	out := []GitStack{}
	for rows.Next() {
		g, err := s.scanGitStack(rows)
		if err != nil {
			return nil, fmt.Errorf("store: list git stacks: %w", err)
		}
		out = append(out, g)
	}
	return out, rows.Err()
}

// GetGitStack returns a git stack by id, or ErrNotFound.
func (s *Store) GetGitStack(ctx context.Context, id int64) (GitStack, error) {
	g, err := s.scanGitStack(s.db.QueryRowContext(ctx, s.rebind(gitStackSelect+` WHERE g.id = ?`), id))
	if err != nil {
		return GitStack{}, fmt.Errorf("store: get git stack %d: %w", id, translate(err))
	}
	return g, nil
}

// GetGitStackOfStack returns the git record of a stack, or ErrNotFound.
func (s *Store) GetGitStackOfStack(ctx context.Context, stackID int64) (GitStack, error) {
	g, err := s.scanGitStack(s.db.QueryRowContext(ctx, s.rebind(gitStackSelect+` WHERE g.stack_id = ?`), stackID))
	if err != nil {
		return GitStack{}, fmt.Errorf("store: git stack of stack %d: %w", stackID, translate(err))
	}
	return g, nil
}

// CreateGitStack inserts the stack st (source git, ComposePath relative to
// its clone) and its git record g in one transaction (ErrConflict when the name is taken, ErrNotFound for an
// unknown repository).
func (s *Store) CreateGitStack(ctx context.Context, st *Stack, g *GitStack, secrets []StackSecret) error {
	secret, err := s.box.Encrypt(g.WebhookSecret)
	if err != nil {
		return err
	}
	t := now()
	err = s.inTx(ctx, func(tx *sql.Tx) error {
		if err := s.createStack(ctx, tx, st, secrets); err != nil {
			return err
		}
		return tx.QueryRowContext(ctx, s.rebind(`
			INSERT INTO git_stacks (stack_id, repository_id, compose_path, env_file_path, auto_update, auto_update_cron,
				webhook_enabled, webhook_secret, created_at, updated_at)
			VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?) RETURNING id`),
			st.ID, g.RepositoryID, g.ComposePath, g.EnvFilePath, g.AutoUpdate, g.AutoUpdateCron,
			g.WebhookEnabled, secret, s.timeArg(t), s.timeArg(t)).Scan(&g.ID)
	})
	if err != nil {
		return fmt.Errorf("store: create git stack %q: %w", st.Name, translateRef(err, ErrNotFound))
	}
	g.StackID, g.EnvironmentID, g.StackName, g.CreatedAt, g.UpdatedAt = st.ID, st.EnvironmentID, st.Name, t, t
	return nil
}

// UpdateGitStack writes the settings of g by ID (not its sync state), and
// its compose path to its stack, in one transaction.
func (s *Store) UpdateGitStack(ctx context.Context, g *GitStack) error {
	secret, err := s.box.Encrypt(g.WebhookSecret)
	if err != nil {
		return err
	}
	t := now()
	err = s.inTx(ctx, func(tx *sql.Tx) error {
		res, err := tx.ExecContext(ctx, s.rebind(`UPDATE git_stacks SET repository_id = ?, compose_path = ?, env_file_path = ?,
			auto_update = ?, auto_update_cron = ?, webhook_enabled = ?, webhook_secret = ?, updated_at = ? WHERE id = ?`),
			g.RepositoryID, g.ComposePath, g.EnvFilePath, g.AutoUpdate, g.AutoUpdateCron, g.WebhookEnabled, secret, s.timeArg(t), g.ID)
		if err != nil {
			return err
		}
		if n, _ := res.RowsAffected(); n == 0 {
			return ErrNotFound
		}
		_, err = tx.ExecContext(ctx, s.rebind(`UPDATE stacks SET compose_path = ?, updated_at = ?
			WHERE id = (SELECT stack_id FROM git_stacks WHERE id = ?)`), g.ComposePath, s.timeArg(t), g.ID)
		return err
	})
	if err != nil {
		return fmt.Errorf("store: update git stack %d: %w", g.ID, translateRef(err, ErrNotFound))
	}
	g.UpdatedAt = t
	return nil
}

// RecordGitSync stores the outcome of a sync: the commit deployed (kept
// when empty), status and error, at t.
func (s *Store) RecordGitSync(ctx context.Context, id int64, commit, status, syncErr string, t time.Time) error {
	err := s.execOne(ctx, `UPDATE git_stacks SET last_commit = CASE WHEN ? = '' THEN last_commit ELSE ? END,
		last_sync_at = ?, last_sync_status = ?, last_sync_error = ? WHERE id = ?`,
		commit, commit, s.timeArg(t), status, syncErr, id)
	if err != nil {
		return fmt.Errorf("store: record git sync %d: %w", id, err)
	}
	return nil
}

func (s *Store) scanGitStack(row rowScanner) (GitStack, error) {
	var (
		g                        GitStack
		auto, hook               sql.NullBool
		secret                   string
		synced, created, updated dbTime
	)
	if err := row.Scan(&g.ID, &g.StackID, &g.EnvironmentID, &g.StackName, &g.RepositoryID, &g.ComposePath, &g.EnvFilePath,
		&auto, &g.AutoUpdateCron, &hook, &secret, &g.LastCommit, &synced, &g.LastSyncStatus, &g.LastSyncError,
		&created, &updated); err != nil {
		return GitStack{}, err
	}
	var err error
	if g.WebhookSecret, err = s.box.Decrypt(secret); err != nil {
		return GitStack{}, err
	}
	g.AutoUpdate, g.WebhookEnabled = auto.Bool, hook.Bool
	g.LastSyncAt, g.CreatedAt, g.UpdatedAt = synced.ptr(), created.Time, updated.Time
	return g, nil
}
