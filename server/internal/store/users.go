package store

import (
	"context"
	"database/sql"
	"fmt"
	"time"
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

// userColumns is the column list scanUser reads, in its order.
const userColumns = `id, username, email, display_name, password_hash, is_admin, is_active,
	auth_provider, mfa_enabled, last_login, created_at, updated_at`

// CountUsers returns the number of users.
func (s *Store) CountUsers(ctx context.Context) (int, error) {
	var n int
	if err := s.db.QueryRowContext(ctx, `SELECT COUNT(*) FROM users`).Scan(&n); err != nil {
		return 0, fmt.Errorf("store: count users: %w", err)
	}
	return n, nil
}

// CountActiveAdmins returns the number of users who are both admins and active.
func (s *Store) CountActiveAdmins(ctx context.Context) (int, error) {
	var n int
	if err := s.db.QueryRowContext(ctx, `SELECT COUNT(*) FROM users WHERE is_admin AND is_active`).Scan(&n); err != nil {
		return 0, fmt.Errorf("store: count active admins: %w", err)
	}
	return n, nil
}

// ListUsers returns every user ordered by id.
func (s *Store) ListUsers(ctx context.Context) ([]User, error) {
	rows, err := s.db.QueryContext(ctx, `SELECT `+userColumns+` FROM users ORDER BY id`)
	if err != nil {
		return nil, fmt.Errorf("store: list users: %w", err)
	}
	defer rows.Close()
	users := []User{}
	for rows.Next() {
		u, err := scanUser(rows)
		if err != nil {
			return nil, fmt.Errorf("store: list users: %w", err)
		}
		users = append(users, u)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("store: list users: %w", err)
	}
	return users, nil
}

// GetUser returns the user with the given id, or ErrNotFound.
func (s *Store) GetUser(ctx context.Context, id int64) (User, error) {
	row := s.db.QueryRowContext(ctx, s.rebind(`SELECT `+userColumns+` FROM users WHERE id = ?`), id)
	u, err := scanUser(row)
	if err != nil {
		return User{}, fmt.Errorf("store: get user %d: %w", id, translate(err))
	}
	return u, nil
}

// GetUserByUsername returns the user whose username equals username
// regardless of case, or ErrNotFound. Case is folded by the database's
// lower(): SQLite folds ASCII letters only.
func (s *Store) GetUserByUsername(ctx context.Context, username string) (User, error) {
	row := s.db.QueryRowContext(ctx, s.rebind(`SELECT `+userColumns+` FROM users WHERE lower(username) = lower(?)`), username)
	u, err := scanUser(row)
	if err != nil {
		return User{}, fmt.Errorf("store: get user %q: %w", username, translate(err))
	}
	return u, nil
}

// CreateUser inserts u and sets its ID, CreatedAt and UpdatedAt. A username
// taken by another user, in any case, is ErrConflict.
func (s *Store) CreateUser(ctx context.Context, u *User) error {
	t := now()
	id, err := s.insertUser(ctx, s.db, u, t)
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
	err = s.inTx(ctx, func(tx *sql.Tx) error {
		if s.dialect == dialectPostgres {
			// Keep concurrent inserts out until we commit. SQLite
			// transactions already hold the write lock (_txlock=immediate).
			if _, err := tx.ExecContext(ctx, `LOCK TABLE users IN EXCLUSIVE MODE`); err != nil {
				return err
			}
		}
		var exists bool
		if err := tx.QueryRowContext(ctx, `SELECT EXISTS (SELECT 1 FROM users)`).Scan(&exists); err != nil {
			return err
		}
		if exists {
			return nil
		}
		var err error
		if id, err = s.insertUser(ctx, tx, u, t); err != nil {
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

// queryRower is a *sql.DB or *sql.Tx.
type queryRower interface {
	QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
}

// insertUser inserts u with both timestamps t and returns its id.
func (s *Store) insertUser(ctx context.Context, q queryRower, u *User, t time.Time) (int64, error) {
	var id int64
	err := q.QueryRowContext(ctx, s.rebind(`
		INSERT INTO users (username, email, display_name, password_hash, is_admin, is_active,
			auth_provider, mfa_enabled, last_login, created_at, updated_at)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
		RETURNING id`),
		u.Username, u.Email, u.DisplayName, u.PasswordHash, u.IsAdmin, u.IsActive,
		u.AuthProvider, u.MFAEnabled, s.nullTimeArg(u.LastLogin), s.timeArg(t), s.timeArg(t)).Scan(&id)
	return id, translate(err)
}

// UpdateUser writes every field of u to the user with u.ID and sets
// u.UpdatedAt (and u.CreatedAt from the row). A missing user is ErrNotFound;
// a username taken by another user, in any case, is ErrConflict.
func (s *Store) UpdateUser(ctx context.Context, u *User) error {
	t := now()
	var created dbTime
	err := s.db.QueryRowContext(ctx, s.rebind(`
		UPDATE users SET username = ?, email = ?, display_name = ?, password_hash = ?, is_admin = ?,
			is_active = ?, auth_provider = ?, mfa_enabled = ?, last_login = ?, updated_at = ?
		WHERE id = ?
		RETURNING created_at`),
		u.Username, u.Email, u.DisplayName, u.PasswordHash, u.IsAdmin,
		u.IsActive, u.AuthProvider, u.MFAEnabled, s.nullTimeArg(u.LastLogin), s.timeArg(t),
		u.ID).Scan(&created)
	if err != nil {
		return fmt.Errorf("store: update user %d: %w", u.ID, translate(err))
	}
	u.CreatedAt, u.UpdatedAt = created.Time, t
	return nil
}

// DeleteUser deletes the user with the given id, and with it the user's
// sessions, API tokens and role assignments. A missing user is ErrNotFound.
// The audit log keeps naming the user.
func (s *Store) DeleteUser(ctx context.Context, id int64) error {
	if err := s.execOne(ctx, `DELETE FROM users WHERE id = ?`, id); err != nil {
		return fmt.Errorf("store: delete user %d: %w", id, err)
	}
	return nil
}

// TouchLogin sets the user's LastLogin to at, leaving UpdatedAt alone.
// A missing user is ErrNotFound.
func (s *Store) TouchLogin(ctx context.Context, id int64, at time.Time) error {
	if err := s.execOne(ctx, `UPDATE users SET last_login = ? WHERE id = ?`, s.timeArg(at), id); err != nil {
		return fmt.Errorf("store: touch login of user %d: %w", id, err)
	}
	return nil
}

// execOne runs a statement meant to change one row, and returns ErrNotFound
// when it changed none.
func (s *Store) execOne(ctx context.Context, query string, args ...any) error {
	res, err := s.db.ExecContext(ctx, s.rebind(query), args...)
	if err != nil {
		return translate(err)
	}
	n, err := res.RowsAffected()
	if err != nil {
		return err
	}
	if n == 0 {
		return ErrNotFound
	}
	return nil
}

func scanUser(row rowScanner) (User, error) {
	var (
		u                           User
		lastLogin, created, updated dbTime
	)
	err := row.Scan(&u.ID, &u.Username, &u.Email, &u.DisplayName, &u.PasswordHash, &u.IsAdmin, &u.IsActive,
		&u.AuthProvider, &u.MFAEnabled, &lastLogin, &created, &updated)
	if err != nil {
		return User{}, err
	}
	u.LastLogin = lastLogin.ptr()
	u.CreatedAt, u.UpdatedAt = created.Time, updated.Time
	return u, nil
}
