package store

import (
	"context"
	"fmt"
	"time"

	"gorm.io/gorm"
)

// User is an account that can sign in to Berth.
type User struct {
	ID           int64
	Username     string // kept as given; unique and looked up regardless of case
	Email        string
	DisplayName  string
	PasswordHash string // PHC string; "" for SSO and LDAP users
	IsAdmin      bool
	IsActive     bool
	AuthProvider string // "local", "oidc:<name>", "ldap:<name>"
	MFAEnabled   bool
	LastLogin    *time.Time
	CreatedAt    time.Time // UTC
	UpdatedAt    time.Time // UTC
}

// userRow is a row of the users table.
type userRow struct {
	ID           int64
	Username     string
	Email        string
	DisplayName  string
	PasswordHash string
	IsAdmin      bool
	IsActive     bool
	AuthProvider string
	MFAEnabled   bool `gorm:"column:mfa_enabled"`
	LastLogin    dbTime
	CreatedAt    dbTime
	UpdatedAt    dbTime
}

func (userRow) TableName() string { return "users" }

func userRowOf(u *User) userRow {
	return userRow{
		ID: u.ID, Username: u.Username, Email: u.Email, DisplayName: u.DisplayName, PasswordHash: u.PasswordHash,
		IsAdmin: u.IsAdmin, IsActive: u.IsActive, AuthProvider: u.AuthProvider, MFAEnabled: u.MFAEnabled,
		LastLogin: nullTimeValue(u.LastLogin), CreatedAt: timeValue(u.CreatedAt), UpdatedAt: timeValue(u.UpdatedAt),
	}
}

func (r userRow) user() User {
	return User{
		ID: r.ID, Username: r.Username, Email: r.Email, DisplayName: r.DisplayName, PasswordHash: r.PasswordHash,
		IsAdmin: r.IsAdmin, IsActive: r.IsActive, AuthProvider: r.AuthProvider, MFAEnabled: r.MFAEnabled,
		LastLogin: r.LastLogin.ptr(), CreatedAt: r.CreatedAt.Time, UpdatedAt: r.UpdatedAt.Time,
	}
}

// CountUsers returns the number of users.
func (s *Store) CountUsers(ctx context.Context) (int, error) {
	var n int64
	if err := s.db.WithContext(ctx).Model(&userRow{}).Count(&n).Error; err != nil {
		return 0, fmt.Errorf("store: count users: %w", err)
	}
	return int(n), nil
}

// CountActiveAdmins returns the number of users who are both admins and active.
func (s *Store) CountActiveAdmins(ctx context.Context) (int, error) {
	var n int64
	err := s.db.WithContext(ctx).Model(&userRow{}).Where("is_admin = ? AND is_active = ?", true, true).Count(&n).Error
	if err != nil {
		return 0, fmt.Errorf("store: count active admins: %w", err)
	}
	return int(n), nil
}

// ListUsers returns every user ordered by id.
func (s *Store) ListUsers(ctx context.Context) ([]User, error) {
	var rows []userRow
	if err := s.db.WithContext(ctx).Order("id").Find(&rows).Error; err != nil {
		return nil, fmt.Errorf("store: list users: %w", err)
	}
	users := make([]User, 0, len(rows))
	for _, r := range rows {
		users = append(users, r.user())
	}
	return users, nil
}

// GetUser returns the user with the given id, or ErrNotFound.
func (s *Store) GetUser(ctx context.Context, id int64) (User, error) {
	var r userRow
	if err := s.db.WithContext(ctx).Where("id = ?", id).Take(&r).Error; err != nil {
		return User{}, fmt.Errorf("store: get user %d: %w", id, translate(err))
	}
	return r.user(), nil
}

// GetUserByUsername returns the user whose username equals username
// regardless of case, or ErrNotFound. Case is folded by the database's
// lower(): SQLite folds ASCII letters only.
func (s *Store) GetUserByUsername(ctx context.Context, username string) (User, error) {
	var r userRow
	if err := s.db.WithContext(ctx).Where("lower(username) = lower(?)", username).Take(&r).Error; err != nil {
		return User{}, fmt.Errorf("store: get user %q: %w", username, translate(err))
	}
	return r.user(), nil
}

// CreateUser inserts u and sets its ID, CreatedAt and UpdatedAt. A username
// taken by another user, in any case, is ErrConflict.
func (s *Store) CreateUser(ctx context.Context, u *User) error {
	t := now()
	id, err := insertUser(ctx, s.db, u, t)
	if err != nil {
		return fmt.Errorf("store: create user %q: %w", u.Username, err)
	}
	u.ID, u.CreatedAt, u.UpdatedAt = id, t, t
	return nil
}

// CreateFirstUser inserts u, as CreateUser does, only when there is no user
// at all; it checks and inserts in one transaction, so that of concurrent
// callers exactly one creates. created is false when a user existed.
func (s *Store) CreateFirstUser(ctx context.Context, u *User) (created bool, err error) {
	t := now()
	var id int64
	err = s.db.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		if s.dialect == dialectPostgres {
			// Keep concurrent inserts out until we commit. SQLite
			// transactions already hold the write lock (_txlock=immediate).
			if err := tx.Exec(`LOCK TABLE users IN EXCLUSIVE MODE`).Error; err != nil {
				return err
			}
		}
		var n int64
		if err := tx.Model(&userRow{}).Limit(1).Count(&n).Error; err != nil {
			return err
		}
		if n > 0 {
			return nil
		}
		var err error
		if id, err = insertUser(ctx, tx, u, t); err != nil {
			return err
		}
		created = true
		return nil
	})
	if err != nil {
		return false, fmt.Errorf("store: create first user %q: %w", u.Username, err)
	}
	if created {
		u.ID, u.CreatedAt, u.UpdatedAt = id, t, t
	}
	return created, nil
}

// insertUser inserts u with both timestamps t and returns its id.
func insertUser(ctx context.Context, tx *gorm.DB, u *User, t time.Time) (int64, error) {
	r := userRowOf(u)
	r.ID, r.CreatedAt, r.UpdatedAt = 0, timeValue(t), timeValue(t)
	if err := tx.WithContext(ctx).Create(&r).Error; err != nil {
		return 0, translate(err)
	}
	return r.ID, nil
}

// UpdateUser writes every field of u to the user with u.ID — except
// MFAEnabled, which only turning MFA on or off changes (EnableMFA,
// DisableMFA), so that an edit racing with it cannot undo it — and sets
// u.UpdatedAt (and u.CreatedAt from the row). A missing user is ErrNotFound;
// a username taken by another user, in any case, is ErrConflict.
func (s *Store) UpdateUser(ctx context.Context, u *User) error {
	t := now()
	var created dbTime
	err := s.db.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		err := oneRow(tx.Model(&userRow{}).Where("id = ?", u.ID).Updates(map[string]any{
			"username": u.Username, "email": u.Email, "display_name": u.DisplayName, "password_hash": u.PasswordHash,
			"is_admin": u.IsAdmin, "is_active": u.IsActive, "auth_provider": u.AuthProvider,
			"last_login": nullTimeValue(u.LastLogin), "updated_at": timeValue(t),
		}))
		if err != nil {
			return err
		}
		return createdAt(ctx, tx, "users", u.ID, &created)
	})
	if err != nil {
		return fmt.Errorf("store: update user %d: %w", u.ID, err)
	}
	u.CreatedAt, u.UpdatedAt = created.Time, t
	return nil
}

// createdAt reads the created_at column of the row of table with the given id.
func createdAt(ctx context.Context, tx *gorm.DB, table string, id int64, dst *dbTime) error {
	var r struct{ CreatedAt dbTime }
	if err := tx.WithContext(ctx).Table(table).Select("created_at").Where("id = ?", id).Take(&r).Error; err != nil {
		return translate(err)
	}
	*dst = r.CreatedAt
	return nil
}

// DeleteUser deletes the user with the given id, and with it the user's
// sessions, API tokens and role assignments. A missing user is ErrNotFound.
// The audit log keeps naming the user.
func (s *Store) DeleteUser(ctx context.Context, id int64) error {
	if err := oneRow(s.db.WithContext(ctx).Where("id = ?", id).Delete(&userRow{})); err != nil {
		return fmt.Errorf("store: delete user %d: %w", id, err)
	}
	return nil
}

// TouchLogin sets the user's LastLogin to at, leaving UpdatedAt alone.
// A missing user is ErrNotFound.
func (s *Store) TouchLogin(ctx context.Context, id int64, at time.Time) error {
	res := s.db.WithContext(ctx).Model(&userRow{}).Where("id = ?", id).Update("last_login", timeValue(at))
	if err := oneRow(res); err != nil {
		return fmt.Errorf("store: touch login of user %d: %w", id, err)
	}
	return nil
}
