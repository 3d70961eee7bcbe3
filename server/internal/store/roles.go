package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"time"
)

// Role is a named set of permissions, granted to users by RoleAssignments.
type Role struct {
	ID             int64
	Name           string
	Description    string
	Permissions    map[string][]string // resource -> actions; never nil when read
	EnvironmentIDs []int64             // the environments it applies to; nil: all
	IsSystem       bool                // built in (Admin, Operator, Viewer)
	CreatedAt      time.Time           // UTC
	UpdatedAt      time.Time           // UTC
}

// RoleAssignment grants a role to a user in one environment or, when
// EnvironmentID is nil, in every environment.
type RoleAssignment struct {
	ID            int64
	UserID        int64
	RoleID        int64
	EnvironmentID *int64
	Source        string // "manual", or "oidc:<providerID>" / "ldap:<configID>" for mapped roles
	CreatedAt     time.Time
}

// manualSource is the Source of assignments made by hand, which
// SyncMappedRoles never touches.
const manualSource = "manual"

// roleColumns is the column list scanRole reads, in its order.
const roleColumns = `id, name, description, permissions, environment_ids, is_system, created_at, updated_at`

// ListRoles returns every role ordered by id.
func (s *Store) ListRoles(ctx context.Context) ([]Role, error) {
	rows, err := s.db.QueryContext(ctx, `SELECT `+roleColumns+` FROM roles ORDER BY id`)
	if err != nil {
		return nil, fmt.Errorf("store: list roles: %w", err)
	}
	defer rows.Close()
	roles := []Role{}
	for rows.Next() {
		r, err := scanRole(rows)
		if err != nil {
			return nil, fmt.Errorf("store: list roles: %w", err)
		}
		roles = append(roles, r)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("store: list roles: %w", err)
	}
	return roles, nil
}

// GetRole returns the role with the given id, or ErrNotFound.
func (s *Store) GetRole(ctx context.Context, id int64) (Role, error) {
	row := s.db.QueryRowContext(ctx, s.rebind(`SELECT `+roleColumns+` FROM roles WHERE id = ?`), id)
	r, err := scanRole(row)
	if err != nil {
		return Role{}, fmt.Errorf("store: get role %d: %w", id, translate(err))
	}
	return r, nil
}

// GetRoleByName returns the role with the given name, or ErrNotFound.
func (s *Store) GetRoleByName(ctx context.Context, name string) (Role, error) {
	row := s.db.QueryRowContext(ctx, s.rebind(`SELECT `+roleColumns+` FROM roles WHERE name = ?`), name)
	r, err := scanRole(row)
	if err != nil {
		return Role{}, fmt.Errorf("store: get role %q: %w", name, translate(err))
	}
	return r, nil
}

// CreateRole inserts r and sets its ID, CreatedAt and UpdatedAt. A duplicate
// name is ErrConflict.
func (s *Store) CreateRole(ctx context.Context, r *Role) error {
	perms, envIDs, err := roleArgs(r)
	if err != nil {
		return fmt.Errorf("store: create role %q: %w", r.Name, err)
	}
	t := now()
	var id int64
	err = s.db.QueryRowContext(ctx, s.rebind(`
		INSERT INTO roles (name, description, permissions, environment_ids, is_system, created_at, updated_at)
		VALUES (?, ?, ?, ?, ?, ?, ?)
		RETURNING id`),
		r.Name, r.Description, perms, envIDs, r.IsSystem, s.timeArg(t), s.timeArg(t)).Scan(&id)
	if err != nil {
		return fmt.Errorf("store: create role %q: %w", r.Name, translate(err))
	}
	r.ID, r.CreatedAt, r.UpdatedAt = id, t, t
	return nil
}

// UpdateRole writes every field of r to the role with r.ID and sets
// r.UpdatedAt (and r.CreatedAt from the row). A missing role is ErrNotFound;
// a name taken by another role is ErrConflict.
func (s *Store) UpdateRole(ctx context.Context, r *Role) error {
	perms, envIDs, err := roleArgs(r)
	if err != nil {
		return fmt.Errorf("store: update role %d: %w", r.ID, err)
	}
	t := now()
	var created dbTime
	err = s.db.QueryRowContext(ctx, s.rebind(`
		UPDATE roles SET name = ?, description = ?, permissions = ?, environment_ids = ?, is_system = ?,
			updated_at = ?
		WHERE id = ?
		RETURNING created_at`),
		r.Name, r.Description, perms, envIDs, r.IsSystem, s.timeArg(t), r.ID).Scan(&created)
	if err != nil {
		return fmt.Errorf("store: update role %d: %w", r.ID, translate(err))
	}
	r.CreatedAt, r.UpdatedAt = created.Time, t
	return nil
}

// DeleteRole deletes the role with the given id, and with it its
// assignments. A missing role is ErrNotFound.
func (s *Store) DeleteRole(ctx context.Context, id int64) error {
	if err := s.execOne(ctx, `DELETE FROM roles WHERE id = ?`, id); err != nil {
		return fmt.Errorf("store: delete role %d: %w", id, err)
	}
	return nil
}

// EnsureRole creates r when no role is named r.Name, and otherwise sets that
// role's description, permissions, environment ids and IsSystem to r's; it
// keeps built-in roles current at start-up. It sets r's ID and timestamps.
// Concurrent calls (replicas starting together) are safe: it is one upsert.
func (s *Store) EnsureRole(ctx context.Context, r *Role) error {
	perms, envIDs, err := roleArgs(r)
	if err != nil {
		return fmt.Errorf("store: ensure role %q: %w", r.Name, err)
	}
	t := now()
	var (
		id               int64
		created, updated dbTime
	)
	err = s.db.QueryRowContext(ctx, s.rebind(`
		INSERT INTO roles (name, description, permissions, environment_ids, is_system, created_at, updated_at)
		VALUES (?, ?, ?, ?, ?, ?, ?)
		ON CONFLICT (name) DO UPDATE SET description = excluded.description,
			permissions = excluded.permissions, environment_ids = excluded.environment_ids,
			is_system = excluded.is_system, updated_at = excluded.updated_at
		RETURNING id, created_at, updated_at`),
		r.Name, r.Description, perms, envIDs, r.IsSystem, s.timeArg(t), s.timeArg(t)).Scan(&id, &created, &updated)
	if err != nil {
		return fmt.Errorf("store: ensure role %q: %w", r.Name, translate(err))
	}
	r.ID, r.CreatedAt, r.UpdatedAt = id, created.Time, updated.Time
	return nil
}

// assignmentColumns is the column list scanAssignment reads, in its order.
const assignmentColumns = `id, user_id, role_id, environment_id, source, created_at`

// ListUserRoles returns the role assignments of the user with the given id,
// ordered by id.
func (s *Store) ListUserRoles(ctx context.Context, userID int64) ([]RoleAssignment, error) {
	rows, err := s.db.QueryContext(ctx, s.rebind(`SELECT `+assignmentColumns+` FROM user_roles WHERE user_id = ? ORDER BY id`), userID)
	if err != nil {
		return nil, fmt.Errorf("store: list roles of user %d: %w", userID, err)
	}
	defer rows.Close()
	list := []RoleAssignment{}
	for rows.Next() {
		a, err := scanAssignment(rows)
		if err != nil {
			return nil, fmt.Errorf("store: list roles of user %d: %w", userID, err)
		}
		list = append(list, a)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("store: list roles of user %d: %w", userID, err)
	}
	return list, nil
}

// AssignRole grants a.RoleID to a.UserID in a.EnvironmentID (nil: every
// environment) and sets a's ID and CreatedAt; an empty Source is "manual".
// It is idempotent: when the user already has that role in that environment,
// from any source, a is set to the existing assignment and no error is
// returned. A user, role or environment that does not exist is ErrNotFound.
func (s *Store) AssignRole(ctx context.Context, a *RoleAssignment) error {
	in := *a
	if in.Source == "" {
		in.Source = manualSource
	}
	var saved RoleAssignment
	err := s.inTx(ctx, func(tx *sql.Tx) error {
		t := now()
		inserted, err := s.insertAssignment(ctx, tx, in, t)
		if err != nil {
			return err
		}
		if inserted != 0 {
			saved = in
			saved.ID, saved.CreatedAt = inserted, t
			return nil
		}
		where, args := assignmentKey(in.UserID, in.RoleID, in.EnvironmentID)
		row := tx.QueryRowContext(ctx, s.rebind(`SELECT `+assignmentColumns+` FROM user_roles WHERE `+where), args...)
		saved, err = scanAssignment(row)
		return translate(err)
	})
	if err != nil {
		return fmt.Errorf("store: assign role %d to user %d%s: %w", in.RoleID, in.UserID, inEnvironment(in.EnvironmentID), err)
	}
	*a = saved
	return nil
}

// insertAssignment inserts a, created at t, and returns its id, or 0 when the
// user already had that role in that environment. A missing user, role or
// environment is ErrNotFound.
func (s *Store) insertAssignment(ctx context.Context, tx *sql.Tx, a RoleAssignment, t time.Time) (int64, error) {
	var id int64
	err := tx.QueryRowContext(ctx, s.rebind(`
		INSERT INTO user_roles (user_id, role_id, environment_id, source, created_at)
		VALUES (?, ?, ?, ?, ?)
		ON CONFLICT DO NOTHING
		RETURNING id`),
		a.UserID, a.RoleID, nullInt64(a.EnvironmentID), a.Source, s.timeArg(t)).Scan(&id)
	switch {
	case errors.Is(err, sql.ErrNoRows):
		return 0, nil
	case isForeignKeyViolation(err):
		return 0, fmt.Errorf("user, role or environment: %w", ErrNotFound)
	case err != nil:
		return 0, translate(err)
	}
	return id, nil
}

// UnassignRole removes the user's assignment of the role in envID (nil: the
// assignment for every environment, not those for single environments),
// whatever its source. removed is false when there was none.
func (s *Store) UnassignRole(ctx context.Context, userID, roleID int64, envID *int64) (removed bool, err error) {
	where, args := assignmentKey(userID, roleID, envID)
	res, err := s.db.ExecContext(ctx, s.rebind(`DELETE FROM user_roles WHERE `+where), args...)
	if err != nil {
		return false, fmt.Errorf("store: unassign role %d from user %d%s: %w", roleID, userID, inEnvironment(envID), err)
	}
	n, err := res.RowsAffected()
	if err != nil {
		return false, fmt.Errorf("store: unassign role %d from user %d%s: %w", roleID, userID, inEnvironment(envID), err)
	}
	return n > 0, nil
}

// SyncMappedRoles makes the user's assignments whose Source is source exactly
// the roles in want, each for every environment: it adds the missing ones and
// removes the others, in one transaction. Assignments of other sources, manual
// ones included, are untouched; a wanted role the user already has for every
// environment from another source is not added again. source must not be ""
// or "manual". A user or wanted role that does not exist is ErrNotFound.
func (s *Store) SyncMappedRoles(ctx context.Context, userID int64, source string, want []int64) error {
	if source == "" || source == manualSource {
		return fmt.Errorf("store: sync mapped roles of user %d: source %q is not a mapping", userID, source)
	}
	err := s.inTx(ctx, func(tx *sql.Tx) error {
		wanted := make(map[int64]bool, len(want))
		for _, id := range want {
			wanted[id] = true
		}
		have, stale, err := s.mappedAssignments(ctx, tx, userID, source, wanted)
		if err != nil {
			return err
		}
		for _, id := range stale {
			if _, err := tx.ExecContext(ctx, s.rebind(`DELETE FROM user_roles WHERE id = ?`), id); err != nil {
				return err
			}
		}
		t := now()
		for _, roleID := range want {
			if have[roleID] {
				continue
			}
			have[roleID] = true
			a := RoleAssignment{UserID: userID, RoleID: roleID, Source: source}
			if _, err := s.insertAssignment(ctx, tx, a, t); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("store: sync %s roles of user %d: %w", source, userID, err)
	}
	return nil
}

// mappedAssignments reads the user's assignments of source and sorts them
// into the wanted roles already held for every environment (have) and the ids
// of the assignments to remove (stale).
func (s *Store) mappedAssignments(ctx context.Context, tx *sql.Tx, userID int64, source string, wanted map[int64]bool) (have map[int64]bool, stale []int64, err error) {
	rows, err := tx.QueryContext(ctx, s.rebind(`
		SELECT id, role_id, environment_id FROM user_roles WHERE user_id = ? AND source = ? ORDER BY id`),
		userID, source)
	if err != nil {
		return nil, nil, err
	}
	defer rows.Close()
	have = map[int64]bool{}
	for rows.Next() {
		var (
			id, roleID int64
			envID      sql.NullInt64
		)
		if err := rows.Scan(&id, &roleID, &envID); err != nil {
			return nil, nil, err
		}
		if !envID.Valid && wanted[roleID] && !have[roleID] {
			have[roleID] = true
		} else {
			stale = append(stale, id)
		}
	}
	return have, stale, rows.Err()
}

// assignmentKey returns the WHERE condition selecting one assignment and its
// arguments. NULL never equals NULL in SQL, hence the two forms.
func assignmentKey(userID, roleID int64, envID *int64) (string, []any) {
	if envID == nil {
		return `user_id = ? AND role_id = ? AND environment_id IS NULL`, []any{userID, roleID}
	}
	return `user_id = ? AND role_id = ? AND environment_id = ?`, []any{userID, roleID, *envID}
}

// inEnvironment names an assignment's scope in error messages.
func inEnvironment(envID *int64) string {
	if envID == nil {
		return " in every environment"
	}
	return fmt.Sprintf(" in environment %d", *envID)
}

// roleArgs returns r's permissions and environment ids as column values.
func roleArgs(r *Role) (perms string, envIDs any, err error) {
	p := r.Permissions
	if p == nil {
		p = map[string][]string{}
	}
	b, err := json.Marshal(p)
	if err != nil {
		return "", nil, fmt.Errorf("permissions: %w", err)
	}
	if r.EnvironmentIDs == nil {
		return string(b), nil, nil
	}
	e, err := json.Marshal(r.EnvironmentIDs)
	if err != nil {
		return "", nil, fmt.Errorf("environment ids: %w", err)
	}
	return string(b), string(e), nil
}

func scanRole(row rowScanner) (Role, error) {
	var (
		r                Role
		perms            string
		envIDs           sql.NullString
		created, updated dbTime
	)
	if err := row.Scan(&r.ID, &r.Name, &r.Description, &perms, &envIDs, &r.IsSystem, &created, &updated); err != nil {
		return Role{}, err
	}
	if perms != "" {
		if err := json.Unmarshal([]byte(perms), &r.Permissions); err != nil {
			return Role{}, fmt.Errorf("role %d: permissions: %w", r.ID, err)
		}
	}
	if r.Permissions == nil { // empty text or "null"
		r.Permissions = map[string][]string{}
	}
	if envIDs.Valid {
		r.EnvironmentIDs = []int64{}
		if err := json.Unmarshal([]byte(envIDs.String), &r.EnvironmentIDs); err != nil {
			return Role{}, fmt.Errorf("role %d: environment ids: %w", r.ID, err)
		}
	}
	r.CreatedAt, r.UpdatedAt = created.Time, updated.Time
	return r, nil
}

func scanAssignment(row rowScanner) (RoleAssignment, error) {
	var (
		a       RoleAssignment
		envID   sql.NullInt64
		created dbTime
	)
	if err := row.Scan(&a.ID, &a.UserID, &a.RoleID, &envID, &a.Source, &created); err != nil {
		return RoleAssignment{}, err
	}
	if envID.Valid {
		a.EnvironmentID = &envID.Int64
	}
	a.CreatedAt = created.Time
	return a, nil
}
