package store

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"gorm.io/gorm"
)

// Stack source types.
const (
	SourceInternal = "internal"
	SourceGit      = "git"
	SourceExternal = "external"
)

// Stack is a compose stack Berth knows in one environment. ComposePath and
// EnvPath are absolute paths of its files, empty meaning the default location
// under the data directory; a git stack's ComposePath is relative to its
// clone. CreatedFiles are the files and directories Berth created for the
// stack (absolute paths), the only ones its deletion removes; nil for a
// stack recorded before they were kept.
type Stack struct {
	ID            int64
	EnvironmentID int64
	Name          string
	SourceType    string
	ComposePath   string
	EnvPath       string
	CreatedFiles  []string
	CreatedAt     time.Time
	UpdatedAt     time.Time
}

// StackSecret is a secret variable of a stack: plaintext in memory, sealed at
// rest, injected only into the compose run.
type StackSecret struct {
	Key   string
	Value string
}

// stackRow is a row of the stacks table.
type stackRow struct {
	ID            int64
	EnvironmentID int64
	Name          string
	SourceType    string
	ComposePath   string
	EnvPath       string
	CreatedFiles  *string // JSON list; NULL: not recorded
	CreatedAt     dbTime
	UpdatedAt     dbTime
}

func (stackRow) TableName() string { return "stacks" }

func (r stackRow) stack() Stack {
	st := Stack{
		ID: r.ID, EnvironmentID: r.EnvironmentID, Name: r.Name, SourceType: r.SourceType, ComposePath: r.ComposePath,
		EnvPath: r.EnvPath, CreatedAt: r.CreatedAt.Time, UpdatedAt: r.UpdatedAt.Time,
	}
	if r.CreatedFiles != nil {
		st.CreatedFiles = []string{}
		_ = json.Unmarshal([]byte(*r.CreatedFiles), &st.CreatedFiles) // written by createdFiles only
	}
	return st
}

// createdFiles is the column value of a stack's created files (nil: NULL).
func createdFiles(files []string) *string {
	if files == nil {
		return nil
	}
	b, _ := json.Marshal(files)
	v := string(b)
	return &v
}

// stackSecretRow is a row of the stack_secrets table, the value sealed.
// Position keeps the order the secrets were given in.
type stackSecretRow struct {
	StackID  int64
	Key      string
	Value    string
	Position int
}

func (stackSecretRow) TableName() string { return "stack_secrets" }

// ListStacks returns the stacks of an environment ordered by name.
func (s *Store) ListStacks(ctx context.Context, envID int64) ([]Stack, error) {
	var rows []stackRow
	if err := s.db.WithContext(ctx).Where("environment_id = ?", envID).Order("name").Find(&rows).Error; err != nil {
		return nil, fmt.Errorf("store: list stacks: %w", err)
	}
	out := make([]Stack, 0, len(rows))
	for _, r := range rows {
		out = append(out, r.stack())
	}
	return out, nil
}

// GetStack returns the stack called name in an environment, or ErrNotFound.
func (s *Store) GetStack(ctx context.Context, envID int64, name string) (Stack, error) {
	var r stackRow
	if err := s.db.WithContext(ctx).Where("environment_id = ? AND name = ?", envID, name).Take(&r).Error; err != nil {
		return Stack{}, fmt.Errorf("store: get stack %q: %w", name, translate(err))
	}
	return r.stack(), nil
}

// GetStackByID returns a stack by id, or ErrNotFound.
func (s *Store) GetStackByID(ctx context.Context, id int64) (Stack, error) {
	var r stackRow
	if err := s.db.WithContext(ctx).Where("id = ?", id).Take(&r).Error; err != nil {
		return Stack{}, fmt.Errorf("store: get stack %d: %w", id, translate(err))
	}
	return r.stack(), nil
}

// CreateStack inserts st and its secrets in one transaction (ErrConflict
// when the name is taken in the environment).
func (s *Store) CreateStack(ctx context.Context, st *Stack, secrets []StackSecret) error {
	err := s.db.WithContext(ctx).Transaction(func(tx *gorm.DB) error { return s.createStack(ctx, tx, st, secrets) })
	if err != nil {
		return fmt.Errorf("store: create stack %q: %w", st.Name, translate(err))
	}
	return nil
}

func (s *Store) createStack(ctx context.Context, tx *gorm.DB, st *Stack, secrets []StackSecret) error {
	t := now()
	r := stackRow{EnvironmentID: st.EnvironmentID, Name: st.Name, SourceType: st.SourceType, ComposePath: st.ComposePath,
		EnvPath: st.EnvPath, CreatedFiles: createdFiles(st.CreatedFiles), CreatedAt: timeValue(t), UpdatedAt: timeValue(t)}
	if err := tx.WithContext(ctx).Create(&r).Error; err != nil {
		return err
	}
	st.ID, st.CreatedAt, st.UpdatedAt = r.ID, t, t
	return s.writeSecrets(ctx, tx, st.ID, secrets)
}

// UpdateStackPaths records where a stack's files now live and which of
// them Berth created.
func (s *Store) UpdateStackPaths(ctx context.Context, st *Stack) error {
	t := now()
	res := s.db.WithContext(ctx).Model(&stackRow{}).Where("id = ?", st.ID).Updates(map[string]any{
		"compose_path": st.ComposePath, "env_path": st.EnvPath, "created_files": createdFiles(st.CreatedFiles),
		"updated_at": timeValue(t),
	})
	if err := oneRow(res); err != nil {
		return fmt.Errorf("store: update stack %d: %w", st.ID, err)
	}
	st.UpdatedAt = t
	return nil
}

// DeleteStack deletes a stack with its secrets and git record.
func (s *Store) DeleteStack(ctx context.Context, id int64) error {
	if err := oneRow(s.db.WithContext(ctx).Where("id = ?", id).Delete(&stackRow{})); err != nil {
		return fmt.Errorf("store: delete stack %d: %w", id, err)
	}
	return nil
}

// StackSecrets returns the secret variables of a stack in their order.
func (s *Store) StackSecrets(ctx context.Context, stackID int64) ([]StackSecret, error) {
	var rows []stackSecretRow
	if err := s.db.WithContext(ctx).Where("stack_id = ?", stackID).Order("position").Find(&rows).Error; err != nil {
		return nil, fmt.Errorf("store: stack secrets: %w", err)
	}
	out := make([]StackSecret, 0, len(rows))
	for _, r := range rows {
		value, err := s.box.Decrypt(r.Value)
		if err != nil {
			return nil, fmt.Errorf("store: stack secrets: %w", err)
		}
		out = append(out, StackSecret{Key: r.Key, Value: value})
	}
	return out, nil
}

// ReplaceStackSecrets replaces every secret variable of a stack at once.
func (s *Store) ReplaceStackSecrets(ctx context.Context, stackID int64, secrets []StackSecret) error {
	err := s.db.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		if err := tx.Where("stack_id = ?", stackID).Delete(&stackSecretRow{}).Error; err != nil {
			return err
		}
		return s.writeSecrets(ctx, tx, stackID, secrets)
	})
	if err != nil {
		return fmt.Errorf("store: replace stack secrets: %w", translate(err))
	}
	return nil
}

func (s *Store) writeSecrets(ctx context.Context, tx *gorm.DB, stackID int64, secrets []StackSecret) error {
	if len(secrets) == 0 {
		return nil
	}
	rows := make([]stackSecretRow, 0, len(secrets))
	for i, sec := range secrets {
		sealed, err := s.box.Encrypt(sec.Value)
		if err != nil {
			return err
		}
		rows = append(rows, stackSecretRow{StackID: stackID, Key: sec.Key, Value: sealed, Position: i})
	}
	return tx.WithContext(ctx).Create(&rows).Error
}
