package store

import (
	"context"
	"fmt"
	"time"

	"gorm.io/gorm"
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

// gitStackRow is a row of the git_stacks table, the webhook secret sealed.
type gitStackRow struct {
	ID             int64
	StackID        int64
	RepositoryID   int64
	ComposePath    string
	EnvFilePath    string
	AutoUpdate     bool
	AutoUpdateCron string
	WebhookEnabled bool
	WebhookSecret  string
	LastCommit     string
	LastSyncAt     dbTime
	LastSyncStatus string
	LastSyncError  string
	CreatedAt      dbTime
	UpdatedAt      dbTime
}

func (gitStackRow) TableName() string { return "git_stacks" }

// gitStackWithStack is a git_stacks row joined with its stack's environment
// and name.
type gitStackWithStack struct {
	Row           gitStackRow `gorm:"embedded"`
	EnvironmentID int64
	StackName     string
}

// gitStacks selects git stacks joined with their stacks.
func gitStacks(ctx context.Context, tx *gorm.DB) *gorm.DB {
	return tx.WithContext(ctx).Table("git_stacks AS g").
		Select(`g.id, g.stack_id, g.repository_id, g.compose_path, g.env_file_path, g.auto_update, g.auto_update_cron,
			g.webhook_enabled, g.webhook_secret, g.last_commit, g.last_sync_at, g.last_sync_status, g.last_sync_error,
			g.created_at, g.updated_at, s.environment_id, s.name AS stack_name`).
		Joins("JOIN stacks AS s ON s.id = g.stack_id")
}

func (s *Store) gitStack(j gitStackWithStack) (GitStack, error) {
	r := j.Row
	secret, err := s.box.Decrypt(r.WebhookSecret)
	if err != nil {
		return GitStack{}, fmt.Errorf("git stack %d: webhook secret: %w", r.ID, err)
	}
	return GitStack{
		ID: r.ID, StackID: r.StackID, EnvironmentID: j.EnvironmentID, StackName: j.StackName,
		RepositoryID: r.RepositoryID, ComposePath: r.ComposePath, EnvFilePath: r.EnvFilePath, AutoUpdate: r.AutoUpdate,
		AutoUpdateCron: r.AutoUpdateCron, WebhookEnabled: r.WebhookEnabled, WebhookSecret: secret,
		LastCommit: r.LastCommit, LastSyncAt: r.LastSyncAt.ptr(), LastSyncStatus: r.LastSyncStatus,
		LastSyncError: r.LastSyncError, CreatedAt: r.CreatedAt.Time, UpdatedAt: r.UpdatedAt.Time,
	}, nil
}

// ListGitStacks returns every git stack ordered by id; repoID > 0 keeps
// those of one repository.
func (s *Store) ListGitStacks(ctx context.Context, repoID int64) ([]GitStack, error) {
	q := gitStacks(ctx, s.db)
	if repoID > 0 {
		q = q.Where("g.repository_id = ?", repoID)
	}
	var rows []gitStackWithStack
	if err := q.Order("g.id").Find(&rows).Error; err != nil {
		return nil, fmt.Errorf("store: list git stacks: %w", err)
	}
	out := make([]GitStack, 0, len(rows))
	for _, r := range rows {
		g, err := s.gitStack(r)
		if err != nil {
			return nil, fmt.Errorf("store: list git stacks: %w", err)
		}
		out = append(out, g)
	}
	return out, nil
}

// GetGitStack returns a git stack by id, or ErrNotFound.
func (s *Store) GetGitStack(ctx context.Context, id int64) (GitStack, error) {
	g, err := s.getGitStack(ctx, "g.id = ?", id)
	if err != nil {
		return GitStack{}, fmt.Errorf("store: get git stack %d: %w", id, err)
	}
	return g, nil
}

// GetGitStackOfStack returns the git record of a stack, or ErrNotFound.
func (s *Store) GetGitStackOfStack(ctx context.Context, stackID int64) (GitStack, error) {
	g, err := s.getGitStack(ctx, "g.stack_id = ?", stackID)
	if err != nil {
		return GitStack{}, fmt.Errorf("store: git stack of stack %d: %w", stackID, err)
	}
	return g, nil
}

func (s *Store) getGitStack(ctx context.Context, cond string, arg int64) (GitStack, error) {
	var r gitStackWithStack
	if err := gitStacks(ctx, s.db).Where(cond, arg).Take(&r).Error; err != nil {
		return GitStack{}, translate(err)
	}
	return s.gitStack(r)
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
	r := gitStackRow{RepositoryID: g.RepositoryID, ComposePath: g.ComposePath, EnvFilePath: g.EnvFilePath,
		AutoUpdate: g.AutoUpdate, AutoUpdateCron: g.AutoUpdateCron, WebhookEnabled: g.WebhookEnabled,
		WebhookSecret: secret, CreatedAt: timeValue(t), UpdatedAt: timeValue(t)}
	err = s.db.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		if err := s.createStack(ctx, tx, st, secrets); err != nil {
			return err
		}
		r.StackID = st.ID
		return tx.Create(&r).Error
	})
	if err != nil {
		return fmt.Errorf("store: create git stack %q: %w", st.Name, translateRef(err, ErrNotFound))
	}
	g.ID, g.StackID, g.EnvironmentID, g.StackName, g.CreatedAt, g.UpdatedAt = r.ID, st.ID, st.EnvironmentID, st.Name, t, t
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
	err = s.db.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		var cur gitStackRow
		if err := tx.Select("stack_id").Where("id = ?", g.ID).Take(&cur).Error; err != nil {
			return err
		}
		err := tx.Model(&gitStackRow{}).Where("id = ?", g.ID).Updates(map[string]any{
			"repository_id": g.RepositoryID, "compose_path": g.ComposePath, "env_file_path": g.EnvFilePath,
			"auto_update": g.AutoUpdate, "auto_update_cron": g.AutoUpdateCron, "webhook_enabled": g.WebhookEnabled,
			"webhook_secret": secret, "updated_at": timeValue(t),
		}).Error
		if err != nil {
			return err
		}
		return tx.Model(&stackRow{}).Where("id = ?", cur.StackID).Updates(map[string]any{
			"compose_path": g.ComposePath, "updated_at": timeValue(t),
		}).Error
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
	values := map[string]any{"last_sync_at": timeValue(t), "last_sync_status": status, "last_sync_error": syncErr}
	if commit != "" {
		values["last_commit"] = commit
	}
	if err := oneRow(s.db.WithContext(ctx).Model(&gitStackRow{}).Where("id = ?", id).Updates(values)); err != nil {
		return fmt.Errorf("store: record git sync %d: %w", id, err)
	}
	return nil
}

// SetGitStackAutoUpdate switches a git stack's auto-sync schedule on or off
// (keeping its cron expression), or ErrNotFound.
func (s *Store) SetGitStackAutoUpdate(ctx context.Context, id int64, enabled bool) error {
	res := s.db.WithContext(ctx).Model(&gitStackRow{}).Where("id = ?", id).
		Updates(map[string]any{"auto_update": enabled, "updated_at": timeValue(now())})
	if err := oneRow(res); err != nil {
		return fmt.Errorf("store: switch auto-sync of git stack %d: %w", id, err)
	}
	return nil
}

// DeleteGitStackSchedule removes a git stack's auto-sync schedule: switched
// off and its cron expression forgotten (the stack stays), or ErrNotFound.
func (s *Store) DeleteGitStackSchedule(ctx context.Context, id int64) error {
	res := s.db.WithContext(ctx).Model(&gitStackRow{}).Where("id = ?", id).
		Updates(map[string]any{"auto_update": false, "auto_update_cron": "", "updated_at": timeValue(now())})
	if err := oneRow(res); err != nil {
		return fmt.Errorf("store: delete auto-sync of git stack %d: %w", id, err)
	}
	return nil
}
