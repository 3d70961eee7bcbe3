package auth

import (
	"context"
	"errors"
	"net/mail"
	"strings"
	"unicode/utf8"

	"github.com/berth-dev/berth/server/internal/store"
	"github.com/berth-dev/berth/shared/fault"
)

// UserSpec describes a local user to create.
type UserSpec struct {
	Username    string
	Password    string
	Email       string
	DisplayName string
	IsAdmin     bool
}

// UserPatch changes some fields of a user.
type UserPatch struct {
	Username    *string
	Password    *string
	Email       *string
	DisplayName *string
	IsAdmin     *bool
	IsActive    *bool
	// KeepSession is the (hashed) id of the session making the change, kept
	// when a password change ends the user's sessions: one's own change
	// ends one's other sessions only.
	KeepSession string
	// LeaveNoAdmin lets the change take the last active admin's rights
	// (the caller turns authentication off: the reference's
	// confirmDisableAuth).
	LeaveNoAdmin bool
}

var (
	errUserNotFound = fault.New(fault.NotFound, "User not found")
	errUserTaken    = fault.New(fault.Conflict, "A user with this username already exists")
	errLastAdmin    = fault.New(fault.Invalid, "At least one active admin must remain")
)

func validateUsername(name string) error {
	if name == "" {
		return fault.New(fault.Invalid, "Username is required")
	}
	if utf8.RuneCountInString(name) > 64 || strings.ContainsAny(name, " \t\r\n\x00") {
		return fault.New(fault.Invalid, "Username must be 1 to 64 characters without spaces")
	}
	return nil
}

// ValidatePassword enforces the password policy.
func ValidatePassword(pw string) error {
	if utf8.RuneCountInString(pw) < MinPasswordLength {
		return fault.New(fault.Invalid, "Password must be at least 8 characters")
	}
	if len(pw) > 1024 {
		return fault.New(fault.Invalid, "Password must be at most 1024 bytes")
	}
	return nil
}

func validateEmail(e string) error {
	if e == "" {
		return nil
	}
	if _, err := mail.ParseAddress(e); err != nil {
		return fault.New(fault.Invalid, "Invalid email address")
	}
	return nil
}

// newLocalUser validates spec and hashes its password.
func (s *Service) newLocalUser(ctx context.Context, spec UserSpec) (store.User, error) {
	spec.Username = strings.TrimSpace(spec.Username)
	if err := validateUsername(spec.Username); err != nil {
		return store.User{}, err
	}
	if err := ValidatePassword(spec.Password); err != nil {
		return store.User{}, err
	}
	if err := validateEmail(strings.TrimSpace(spec.Email)); err != nil {
		return store.User{}, err
	}
	hash, err := HashPassword(ctx, spec.Password, s.argon)
	if err != nil {
		return store.User{}, err
	}
	return store.User{Username: spec.Username, Email: strings.TrimSpace(spec.Email),
		DisplayName: strings.TrimSpace(spec.DisplayName), PasswordHash: hash, IsAdmin: spec.IsAdmin,
		IsActive: true, AuthProvider: "local"}, nil
}

// CreateUser creates a local user.
func (s *Service) CreateUser(ctx context.Context, spec UserSpec) (store.User, error) {
	u, err := s.newLocalUser(ctx, spec)
	if err != nil {
		return store.User{}, err
	}
	if err := s.store.CreateUser(ctx, &u); err != nil {
		if errors.Is(err, store.ErrConflict) {
			return store.User{}, errUserTaken
		}
		return store.User{}, err
	}
	return u, nil
}

var errBadSetupToken = fault.New(fault.Unauthorized, "A valid setup token is required to create the first admin")

// CreateFirstAdmin creates the first user, an admin, when setupToken is the
// one-time token; the token is spent.
func (s *Service) CreateFirstAdmin(ctx context.Context, setupToken string, spec UserSpec) (store.User, error) {
	if !s.checkSetupToken(setupToken) {
		return store.User{}, errBadSetupToken
	}
	spec.IsAdmin = true
	u, err := s.newLocalUser(ctx, spec)
	if err != nil {
		return store.User{}, err
	}
	created, err := s.store.CreateFirstUser(ctx, &u)
	if err != nil {
		return store.User{}, err
	}
	if !created {
		return store.User{}, errBadSetupToken
	}
	s.endSetup()
	return u, nil
}

// GetUser returns a user.
func (s *Service) GetUser(ctx context.Context, id int64) (store.User, error) {
	u, err := s.store.GetUser(ctx, id)
	if errors.Is(err, store.ErrNotFound) {
		return store.User{}, errUserNotFound
	}
	return u, err
}

// UpdateUser applies p to user id. The last active admin cannot lose admin
// rights or be disabled. A password change ends the user's sessions (but
// p.KeepSession) and revokes their API tokens; disabling or enabling the
// account ends every session and token, so that enabling it again revives
// none.
func (s *Service) UpdateUser(ctx context.Context, id int64, p UserPatch) (store.User, error) {
	u, err := s.GetUser(ctx, id)
	if err != nil {
		return store.User{}, err
	}
	wasAdmin := u.IsAdmin && u.IsActive
	revoke, keep := false, p.KeepSession
	if p.Username != nil {
		name := strings.TrimSpace(*p.Username)
		if err := validateUsername(name); err != nil {
			return store.User{}, err
		}
		u.Username = name
	}
	if p.Email != nil {
		if err := validateEmail(strings.TrimSpace(*p.Email)); err != nil {
			return store.User{}, err
		}
		u.Email = strings.TrimSpace(*p.Email)
	}
	if p.DisplayName != nil {
		u.DisplayName = strings.TrimSpace(*p.DisplayName)
	}
	if p.Password != nil {
		if u.AuthProvider != "local" {
			return store.User{}, fault.New(fault.Invalid, "Users of an external provider have no local password")
		}
		if err := ValidatePassword(*p.Password); err != nil {
			return store.User{}, err
		}
		if u.PasswordHash, err = HashPassword(ctx, *p.Password, s.argon); err != nil {
			return store.User{}, err
		}
		revoke = true
	}
	if p.IsAdmin != nil {
		u.IsAdmin = *p.IsAdmin
	}
	if p.IsActive != nil && *p.IsActive != u.IsActive {
		u.IsActive = *p.IsActive
		revoke, keep = true, ""
	}
	if wasAdmin && !(u.IsAdmin && u.IsActive) && !p.LeaveNoAdmin {
		if err := s.keepAnAdmin(ctx); err != nil {
			return store.User{}, err
		}
	}
	if err := s.store.UpdateUser(ctx, &u); err != nil {
		switch {
		case errors.Is(err, store.ErrConflict):
			return store.User{}, errUserTaken
		case errors.Is(err, store.ErrNotFound):
			return store.User{}, errUserNotFound
		}
		return store.User{}, err
	}
	if revoke {
		if err := s.store.RevokeUserCredentials(ctx, u.ID, keep); err != nil {
			return store.User{}, err
		}
	}
	return u, nil
}

// keepAnAdmin fails when fewer than two active admins exist (so removing one
// would leave none).
func (s *Service) keepAnAdmin(ctx context.Context) error {
	n, err := s.store.CountActiveAdmins(ctx)
	if err != nil {
		return err
	}
	if n < 2 {
		return errLastAdmin
	}
	return nil
}

// LastActiveAdmin reports whether u is the only active admin.
func (s *Service) LastActiveAdmin(ctx context.Context, u store.User) (bool, error) {
	if !u.IsAdmin || !u.IsActive {
		return false, nil
	}
	n, err := s.store.CountActiveAdmins(ctx)
	return n < 2, err
}

// DeleteUser deletes a user with their sessions, tokens and role
// assignments. The last active admin cannot be deleted.
func (s *Service) DeleteUser(ctx context.Context, id int64) error {
	return s.deleteUser(ctx, id, false)
}

// DeleteUserLeavingNoAdmin deletes a user even when they are the last
// active admin (the caller turns authentication off).
func (s *Service) DeleteUserLeavingNoAdmin(ctx context.Context, id int64) error {
	return s.deleteUser(ctx, id, true)
}

func (s *Service) deleteUser(ctx context.Context, id int64, leaveNoAdmin bool) error {
	u, err := s.GetUser(ctx, id)
	if err != nil {
		return err
	}
	if u.IsAdmin && u.IsActive && !leaveNoAdmin {
		if err := s.keepAnAdmin(ctx); err != nil {
			return err
		}
	}
	if err := s.store.DeleteUser(ctx, id); err != nil {
		if errors.Is(err, store.ErrNotFound) {
			return errUserNotFound
		}
		return err
	}
	return nil
}

// ResetPassword sets a local user's password by name (recovery).
func (s *Service) ResetPassword(ctx context.Context, username, password string) (store.User, error) {
	u, err := s.store.GetUserByUsername(ctx, username)
	if errors.Is(err, store.ErrNotFound) {
		return store.User{}, errUserNotFound
	}
	if err != nil {
		return store.User{}, err
	}
	return s.UpdateUser(ctx, u.ID, UserPatch{Password: &password, IsActive: ptr(true)})
}

func ptr[T any](v T) *T { return &v }
