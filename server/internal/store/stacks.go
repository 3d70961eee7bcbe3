package store

import (
	"context"
	"database/sql"
	"fmt"
	"time"
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
// clone.
type Stack struct {
	ID            int64
	EnvironmentID int64
	Name          string
	SourceType    string
	ComposePath   string
	EnvPath       string
	CreatedAt     time.Time
	UpdatedAt     time.Time
}

// StackSecret is a secret variable of a stack: plaintext in memory, sealed at
// rest, injected only into the compose run.
type StackSecret struct {
	Key   string
	Value string
}

const stackColumns = `id, environment_id, name, source_type, compose_path, env_path, created_at, updated_at`

// ListStacks returns the stacks of an environment ordered by name.
func (s *Store) ListStacks(ctx context.Context, envID int64) ([]Stack, error) {
	rows, err := s.db.QueryContext(ctx, s.rebind(`SELECT `+stackColumns+` FROM stacks WHERE environment_id = ? ORDER BY name`), envID)
	if err != nil {
		return nil, fmt.Errorf("store: list stacks: %w", err)
	}
	defer rows.Close()
	out := []Stack{}
	for rows.Next() {
		st, err := scanStack(rows)
		if err != nil {
			return nil, fmt.Errorf("store: list stacks: %w", err)
		}
		out = append(out, st)
	}
	return out, rows.Err()
}

// GetStack returns the stack called name in an environment, or ErrNotFound.
func (s *Store) GetStack(ctx context.Context, envID int64, name string) (Stack, error) {
	st, err := scanStack(s.db.QueryRowContext(ctx, s.rebind(`SELECT `+stackColumns+` FROM stacks WHERE environment_id = ? AND name = ?`), envID, name))
	if err != nil {
		return Stack{}, fmt.Errorf("store: get stack %q: %w", name, translate(err))
	}
	return st, nil
}

// GetStackByID returns a stack by id, or ErrNotFound.
func (s *Store) GetStackByID(ctx context.Context, id int64) (Stack, error) {
	st, err := scanStack(s.db.QueryRowContext(ctx, s.rebind(`SELECT `+stackColumns+` FROM stacks WHERE id = ?`), id))
	if err != nil {
		return Stack{}, fmt.Errorf("store: get stack %d: %w", id, translate(err))
	}
	return st, nil
}

// CreateStack inserts st and its secrets in one transaction (ErrConflict
// when the name is taken in the environment).
func (s *Store) CreateStack(ctx context.Context, st *Stack, secrets []StackSecret) error {
	err := s.inTx(ctx, func(tx *sql.Tx) error { return s.createStack(ctx, tx, st, secrets) })
	if err != nil {
		return fmt.Errorf("store: create stack %q: %w", st.Name, translate(err))
	}
	return nil
}

func (s *Store) createStack(ctx context.Context, tx *sql.Tx, st *Stack, secrets []StackSecret) error {
	t := now()
	err := tx.QueryRowContext(ctx, s.rebind(`
		INSERT INTO stacks (environment_id, name, source_type, compose_path, env_path, created_at, updated_at)
		VALUES (?, ?, ?, ?, ?, ?, ?) RETURNING id`),
		st.EnvironmentID, st.Name, st.SourceType, st.ComposePath, st.EnvPath, s.timeArg(t), s.timeArg(t)).Scan(&st.ID)
	if err != nil {
		return err
	}
	st.CreatedAt, st.UpdatedAt = t, t
	return s.writeSecrets(ctx, tx, st.ID, secrets)
}

// UpdateStackPaths records where a stack's files now live.
func (s *Store) UpdateStackPaths(ctx context.Context, st *Stack) error {
	t := now()
	res, err := s.db.ExecContext(ctx, s.rebind(`UPDATE stacks SET compose_path = ?, env_path = ?, updated_at = ? WHERE id = ?`),
		st.ComposePath, st.EnvPath, s.timeArg(t), st.ID)
	if err != nil {
		return fmt.Errorf("store: update stack %d: %w", st.ID, err)
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return fmt.Errorf("store: update stack %d: %w", st.ID, ErrNotFound)
	}
	st.UpdatedAt = t
	return nil
}

// DeleteStack deletes a stack with its secrets and git record.
func (s *Store) DeleteStack(ctx context.Context, id int64) error {
	res, err := s.db.ExecContext(ctx, s.rebind(`DELETE FROM stacks WHERE id = ?`), id)
	if err != nil {
		return fmt.Errorf("store: delete stack %d: %w", id, err)
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return fmt.Errorf("store: delete stack %d: %w", id, ErrNotFound)
	}
	return nil
}

// StackSecrets returns the secret variables of a stack in their order.
func (s *Store) StackSecrets(ctx context.Context, stackID int64) ([]StackSecret, error) {
	rows, err := s.db.QueryContext(ctx, s.rebind(`SELECT key, value FROM stack_secrets WHERE stack_id = ? ORDER BY position`), stackID)
	if err != nil {
		return nil, fmt.Errorf("store: stack secrets: %w", err)
	}
	defer rows.Close()
	out := []StackSecret{}
	for rows.Next() {
		var sec StackSecret
		var sealed string
		if err := rows.Scan(&sec.Key, &sealed); err != nil {
			return nil, fmt.Errorf("store: stack secrets: %w", err)
		}
		if sec.Value, err = s.box.Decrypt(sealed); err != nil {
			return nil, fmt.Errorf("store: stack secrets: %w", err)
		}
		out = append(out, sec)
	}
	return out, rows.Err()
}

// ReplaceStackSecrets replaces every secret variable of a stack at once.
func (s *Store) ReplaceStackSecrets(ctx context.Context, stackID int64, secrets []StackSecret) error {
	err := s.inTx(ctx, func(tx *sql.Tx) error {
		if _, err := tx.ExecContext(ctx, s.rebind(`DELETE FROM stack_secrets WHERE stack_id = ?`), stackID); err != nil {
			return err
		}
		return s.writeSecrets(ctx, tx, stackID, secrets)
	})
	if err != nil {
		return fmt.Errorf("store: replace stack secrets: %w", translate(err))
	}
	return nil
}

func (s *Store) writeSecrets(ctx context.Context, tx *sql.Tx, stackID int64, secrets []StackSecret) error {
	for i, sec := range secrets {
		sealed, err := s.box.Encrypt(sec.Value)
		if err != nil {
			return err
		}
		if _, err := tx.ExecContext(ctx, s.rebind(`INSERT INTO stack_secrets (stack_id, key, value, position) VALUES (?, ?, ?, ?)`),
			stackID, sec.Key, sealed, i); err != nil {
			return err
		}
	}
	return nil
}

func scanStack(row rowScanner) (Stack, error) {
	var (
		st               Stack
		created, updated dbTime
	)
	if err := row.Scan(&st.ID, &st.EnvironmentID, &st.Name, &st.SourceType, &st.ComposePath, &st.EnvPath, &created, &updated); err != nil {
		return Stack{}, err
	}
	st.CreatedAt, st.UpdatedAt = created.Time, updated.Time
	return st, nil
}
