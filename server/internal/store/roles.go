package store

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"gorm.io/gorm"
	"gorm.io/gorm/clause"
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

// roleRow is a row of the roles table: permissions a JSON object,
// environment_ids a JSON array or NULL for every environment.
type roleRow struct {
	ID             int64
	Name           string
	Description    string
	Permissions    string
	EnvironmentIDs *string `gorm:"column:environment_ids"`
	IsSystem       bool
	CreatedAt      dbTime
	UpdatedAt      dbTime
}

func (roleRow) TableName() string { return "roles" }

// userRoleRow is a row of the user_roles table.
type userRoleRow struct {
	ID            int64
	UserID        int64
	RoleID        int64
	EnvironmentID *int64
	Source        string
	CreatedAt     dbTime
}

func (userRoleRow) TableName() string { return "user_roles" }

func (r userRoleRow) assignment() RoleAssignment {
	return RoleAssignment{ID: r.ID, UserID: r.UserID, RoleID: r.RoleID, EnvironmentID: r.EnvironmentID,
		Source: r.Source, CreatedAt: r.CreatedAt.Time}
}

// ListRoles returns every role ordered by id.
func (s *Store) ListRoles(ctx context.Context) ([]Role, error) {
	var rows []roleRow
	if err := s.db.WithContext(ctx).Order("id").Find(&rows).Error; err != nil {
		return nil, fmt.Errorf("store: list roles: %w", err)
	}
	roles := make([]Role, 0, len(rows))
	for _, r := range rows {
		role, err := r.role()
		if err != nil {
			return nil, fmt.Errorf("store: list roles: %w", err)
		}
		roles = append(roles, role)
	}
	return roles, nil
}

// GetRole returns the role with the given id, or ErrNotFound.
func (s *Store) GetRole(ctx context.Context, id int64) (Role, error) {
	r, err := getRole(ctx, s.db.Where("id = ?", id))
	if err != nil {
		return Role{}, fmt.Errorf("store: get role %d: %w", id, err)
	}
	return r, nil
}

// GetRoleByName returns the role with the given name, or ErrNotFound.
func (s *Store) GetRoleByName(ctx context.Context, name string) (Role, error) {
	r, err := getRole(ctx, s.db.Where("name = ?", name))
	if err != nil {
		return Role{}, fmt.Errorf("store: get role %q: %w", name, err)
	}
	return r, nil
}

// getRole reads the one role q selects.
func getRole(ctx context.Context, q *gorm.DB) (Role, error) {
	var r roleRow
	if err := q.WithContext(ctx).Take(&r).Error; err != nil {
		return Role{}, translate(err)
	}
	return r.role()
}

// CreateRole inserts r and sets its ID, CreatedAt and UpdatedAt. A duplicate
// name is ErrConflict.
func (s *Store) CreateRole(ctx context.Context, r *Role) error {
	row, err := roleRowOf(r)
	if err != nil {
		return fmt.Errorf("store: create role %q: %w", r.Name, err)
	}
	t := now()
	row.CreatedAt, row.UpdatedAt = timeValue(t), timeValue(t)
	if err := s.db.WithContext(ctx).Create(&row).Error; err != nil {
		return fmt.Errorf("store: create role %q: %w", r.Name, translate(err))
	}
	r.ID, r.CreatedAt, r.UpdatedAt = row.ID, t, t
	return nil
}

// UpdateRole writes every field of r to the role with r.ID and sets
// r.UpdatedAt (and r.CreatedAt from the row). A missing role is ErrNotFound;
// a name taken by another role is ErrConflict.
func (s *Store) UpdateRole(ctx context.Context, r *Role) error {
	row, err := roleRowOf(r)
	if err != nil {
		return fmt.Errorf("store: update role %d: %w", r.ID, err)
	}
	t := now()
	var created dbTime
	err = s.db.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		err := oneRow(tx.Model(&roleRow{}).Where("id = ?", r.ID).Updates(map[string]any{
			"name": row.Name, "description": row.Description, "permissions": row.Permissions,
			"environment_ids": row.EnvironmentIDs, "is_system": row.IsSystem, "updated_at": timeValue(t),
		}))
		if err != nil {
			return err
		}
		return createdAt(ctx, tx, "roles", r.ID, &created)
	})
	if err != nil {
		return fmt.Errorf("store: update role %d: %w", r.ID, err)
	}
	r.CreatedAt, r.UpdatedAt = created.Time, t
	return nil
}

// DeleteRole deletes the role with the given id, and with it its
// assignments. A missing role is ErrNotFound.
func (s *Store) DeleteRole(ctx context.Context, id int64) error {
	if err := oneRow(s.db.WithContext(ctx).Where("id = ?", id).Delete(&roleRow{})); err != nil {
		return fmt.Errorf("store: delete role %d: %w", id, err)
	}
	return nil
}

// EnsureRole creates r when no role is named r.Name, and otherwise sets that
// role's description, permissions, environment ids and IsSystem to r's; it
// keeps built-in roles current at start-up. It sets r's ID and timestamps.
// Concurrent calls (replicas starting together) are safe: it is one upsert.
func (s *Store) EnsureRole(ctx context.Context, r *Role) error {
	row, err := roleRowOf(r)
	if err != nil {
		return fmt.Errorf("store: ensure role %q: %w", r.Name, err)
	}
	t := now()
	row.CreatedAt, row.UpdatedAt = timeValue(t), timeValue(t)
	var saved roleRow
	err = s.db.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		err := tx.Clauses(clause.OnConflict{
			Columns:   []clause.Column{{Name: "name"}},
			DoUpdates: clause.AssignmentColumns([]string{"description", "permissions", "environment_ids", "is_system", "updated_at"}),
		}).Create(&row).Error
		if err != nil {
			return err
		}
		// Read back the id and creation time of the row, inserted or not.
		return tx.Where("name = ?", r.Name).Take(&saved).Error
	})
	if err != nil {
		return fmt.Errorf("store: ensure role %q: %w", r.Name, translate(err))
	}
	r.ID, r.CreatedAt, r.UpdatedAt = saved.ID, saved.CreatedAt.Time, saved.UpdatedAt.Time
	return nil
}

// ListUserRoles returns the role assignments of the user with the given id,
// ordered by id.
func (s *Store) ListUserRoles(ctx context.Context, userID int64) ([]RoleAssignment, error) {
	var rows []userRoleRow
	if err := s.db.WithContext(ctx).Where("user_id = ?", userID).Order("id").Find(&rows).Error; err != nil {
		return nil, fmt.Errorf("store: list roles of user %d: %w", userID, err)
	}
	list := make([]RoleAssignment, 0, len(rows))
	for _, r := range rows {
		list = append(list, r.assignment())
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
	err := s.db.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		t := now()
		inserted, err := insertAssignment(ctx, tx, in, t)
		if err != nil {
			return err
		}
		if inserted != 0 {
			saved = in
			saved.ID, saved.CreatedAt = inserted, t
			return nil
		}
		var r userRoleRow
		if err := assignmentKey(tx, in.UserID, in.RoleID, in.EnvironmentID).Take(&r).Error; err != nil {
			return translate(err)
		}
		saved = r.assignment()
		return nil
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
func insertAssignment(ctx context.Context, tx *gorm.DB, a RoleAssignment, t time.Time) (int64, error) {
	r := userRoleRow{UserID: a.UserID, RoleID: a.RoleID, EnvironmentID: a.EnvironmentID, Source: a.Source, CreatedAt: timeValue(t)}
	err := tx.WithContext(ctx).Clauses(clause.OnConflict{DoNothing: true}).Create(&r).Error
	switch {
	case isForeignKeyViolation(err):
		return 0, fmt.Errorf("user, role or environment: %w", ErrNotFound)
	case err != nil:
		return 0, translate(err)
	}
	return r.ID, nil
}

// UnassignRole removes the user's assignment of the role in envID (nil: the
// assignment for every environment, not those for single environments),
// whatever its source. removed is false when there was none.
func (s *Store) UnassignRole(ctx context.Context, userID, roleID int64, envID *int64) (removed bool, err error) {
	res := assignmentKey(s.db.WithContext(ctx), userID, roleID, envID).Delete(&userRoleRow{})
	if res.Error != nil {
		return false, fmt.Errorf("store: unassign role %d from user %d%s: %w", roleID, userID, inEnvironment(envID), res.Error)
	}
	return res.RowsAffected > 0, nil
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
	err := s.db.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		wanted := make(map[int64]bool, len(want))
		for _, id := range want {
			wanted[id] = true
		}
		have, stale, err := mappedAssignments(ctx, tx, userID, source, wanted)
		if err != nil {
			return err
		}
		if len(stale) > 0 {
			if err := tx.Where("id IN ?", stale).Delete(&userRoleRow{}).Error; err != nil {
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
			if _, err := insertAssignment(ctx, tx, a, t); err != nil {
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
func mappedAssignments(ctx context.Context, tx *gorm.DB, userID int64, source string, wanted map[int64]bool) (have map[int64]bool, stale []int64, err error) {
	var rows []userRoleRow
	err = tx.WithContext(ctx).Where("user_id = ? AND source = ?", userID, source).Order("id").Find(&rows).Error
	if err != nil {
		return nil, nil, err
	}
	have = map[int64]bool{}
	for _, r := range rows {
		if r.EnvironmentID == nil && wanted[r.RoleID] && !have[r.RoleID] {
			have[r.RoleID] = true
		} else {
			stale = append(stale, r.ID)
		}
	}
	return have, stale, nil
}

// assignmentKey narrows q to one assignment. NULL never equals NULL in SQL,
// hence the two forms.
func assignmentKey(q *gorm.DB, userID, roleID int64, envID *int64) *gorm.DB {
	if envID == nil {
		return q.Where("user_id = ? AND role_id = ? AND environment_id IS NULL", userID, roleID)
	}
	return q.Where("user_id = ? AND role_id = ? AND environment_id = ?", userID, roleID, *envID)
}

// inEnvironment names an assignment's scope in error messages.
func inEnvironment(envID *int64) string {
	if envID == nil {
		return " in every environment"
	}
	return fmt.Sprintf(" in environment %d", *envID)
}

// roleRowOf returns r as a row, its permissions and environment ids as JSON;
// the timestamps are the caller's to set.
func roleRowOf(r *Role) (roleRow, error) {
	p := r.Permissions
	if p == nil {
		p = map[string][]string{}
	}
	b, err := json.Marshal(p)
	if err != nil {
		return roleRow{}, fmt.Errorf("permissions: %w", err)
	}
	row := roleRow{ID: r.ID, Name: r.Name, Description: r.Description, Permissions: string(b), IsSystem: r.IsSystem}
	if r.EnvironmentIDs != nil {
		e, err := json.Marshal(r.EnvironmentIDs)
		if err != nil {
			return roleRow{}, fmt.Errorf("environment ids: %w", err)
		}
		envIDs := string(e)
		row.EnvironmentIDs = &envIDs
	}
	return row, nil
}

// role returns the row as a Role.
func (r roleRow) role() (Role, error) {
	role := Role{ID: r.ID, Name: r.Name, Description: r.Description, IsSystem: r.IsSystem,
		CreatedAt: r.CreatedAt.Time, UpdatedAt: r.UpdatedAt.Time}
	if r.Permissions != "" {
		if err := json.Unmarshal([]byte(r.Permissions), &role.Permissions); err != nil {
			return Role{}, fmt.Errorf("role %d: permissions: %w", r.ID, err)
		}
	}
	if role.Permissions == nil { // empty text or "null"
		role.Permissions = map[string][]string{}
	}
	if r.EnvironmentIDs != nil {
		role.EnvironmentIDs = []int64{}
		if err := json.Unmarshal([]byte(*r.EnvironmentIDs), &role.EnvironmentIDs); err != nil {
			return Role{}, fmt.Errorf("role %d: environment ids: %w", r.ID, err)
		}
	}
	return role, nil
}
