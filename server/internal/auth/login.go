package auth

import (
	"context"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
	"errors"
	"fmt"
	"math"
	"strings"
	"time"

	"github.com/berth-dev/berth/server/internal/store"
	"github.com/berth-dev/berth/shared/fault"
)

// ErrInvalidCredentials is the one answer for an unknown user, a wrong
// password and a disabled account alike.
var ErrInvalidCredentials = fault.New(fault.Unauthorized, "Invalid username or password")

var errLocalDisabled = fault.New(fault.Forbidden, "Local login is disabled")

// Identity is who made a request and what they may do.
type Identity struct {
	User      store.User
	Provider  string // local, oidc, ldap (how the session was created), or token
	SessionID string // hashed session id, for logout
	TokenID   int64  // API token, when authenticated by one
	Access    Access
}

// LoginRequest is a password sign-in.
type LoginRequest struct {
	Username, Password string
	Provider           string // "", "local", "ldap", "ldap:<id>"
	MFAToken           string // TOTP or backup code, for users with MFA on
	IP, UserAgent      string
}

// Session is a created session: the cookie token (shown once) and its end.
type Session struct {
	Token     string
	ExpiresAt time.Time
}

// Login checks a username and password and opens a session. Five failed
// attempts for one IP and username are each answered as such; the fifth
// locks the pair, so that the next attempt is refused (429) until the lock,
// which grows with each further failure, ends. Twenty failed attempts from
// one IP, whatever the names, lock that IP the same way (req.IP is the
// client's address as the API resolved it, trusted proxies considered). A user with MFA on also
// needs req.MFAToken: without it the answer is ErrMFARequired, and no
// session; a wrong one is "Invalid MFA code" and a failed attempt.
func (s *Service) Login(ctx context.Context, req LoginRequest) (Identity, Session, error) {
	req.Username = strings.TrimSpace(req.Username)
	if req.Username == "" || req.Password == "" {
		return Identity{}, Session{}, fault.New(fault.Invalid, "Username and password are required")
	}
	key := req.IP + "\x00" + strings.ToLower(req.Username)
	if wait, locked := s.loginLocked(key, req.IP); locked {
		return Identity{}, Session{}, tooMany(wait)
	}
	var (
		user     store.User
		provider string
		err      error
	)
	switch p := req.Provider; {
	case p == "" || p == "local":
		if s.disableLocal {
			return Identity{}, Session{}, errLocalDisabled
		}
		provider = "local"
		user, err = s.checkLocal(ctx, req.Username, req.Password)
	case p == "ldap" || strings.HasPrefix(p, "ldap:"):
		provider = "ldap"
		user, err = s.loginLDAP(ctx, p, req.Username, req.Password)
	default:
		return Identity{}, Session{}, fault.Invalidf("Unknown sign-in provider %q", p)
	}
	if errors.Is(err, ErrInvalidCredentials) {
		if wait, locked := s.loginFailed(key, req.IP); locked {
			return Identity{}, Session{}, tooMany(wait)
		}
		return Identity{}, Session{}, ErrInvalidCredentials
	}
	if err != nil {
		return Identity{}, Session{}, err
	}
	// The second factor: a wrong code counts as a failed attempt; asking for
	// the code is no success, so it does not reset the count.
	if err := s.checkMFA(ctx, user, req.MFAToken); err != nil {
		if errors.Is(err, errInvalidMFACode) {
			if wait, locked := s.loginFailed(key, req.IP); locked {
				return Identity{}, Session{}, tooMany(wait)
			}
		}
		return Identity{}, Session{}, err
	}
	s.logins.Succeed(key)
	sess, err := s.OpenSession(ctx, user, provider, req.IP, req.UserAgent)
	if err != nil {
		return Identity{}, Session{}, err
	}
	id, err := s.identity(ctx, user, provider)
	return id, sess, err
}

// loginLocked reports whether a sign-in of key (IP and name) from ip is
// refused now, and for how much longer: the longer of the two locks.
func (s *Service) loginLocked(key, ip string) (time.Duration, bool) {
	wait, locked := s.logins.Locked(key)
	if w, l := s.loginIPs.Locked(ip); l {
		wait, locked = max(wait, w), true
	}
	return wait, locked
}

// loginFailed records a failed sign-in of key from ip against both limits;
// it reports a lock only when one was already on (see Limiter.Fail).
func (s *Service) loginFailed(key, ip string) (time.Duration, bool) {
	wait, locked := s.logins.Fail(key)
	if w, l := s.loginIPs.Fail(ip); l {
		wait, locked = max(wait, w), true
	}
	return wait, locked
}

func tooMany(wait time.Duration) error {
	secs := int(math.Ceil(wait.Seconds()))
	return fault.New(fault.TooMany, fmt.Sprintf("Too many failed login attempts. Try again in %d seconds.", secs)).
		WithDetails(fmt.Sprintf("retryAfter=%d", secs))
}

// RetryAfter extracts the seconds of a login-limit fault, for the header.
func RetryAfter(err error) (int, bool) {
	f, ok := fault.As(err)
	if !ok || f.Kind != fault.TooMany {
		return 0, false
	}
	var secs int
	if _, err := fmt.Sscanf(f.Details, "retryAfter=%d", &secs); err != nil {
		return 0, false
	}
	return secs, true
}

// checkLocal verifies a local account's password. Unknown, disabled and
// password-less (SSO) users cost one hash verification too, like a real one.
func (s *Service) checkLocal(ctx context.Context, username, password string) (store.User, error) {
	u, err := s.store.GetUserByUsername(ctx, username)
	if err != nil && !errors.Is(err, store.ErrNotFound) {
		return store.User{}, err
	}
	hash := s.dummyHash
	usable := err == nil && u.IsActive && u.PasswordHash != "" && u.AuthProvider == "local"
	if usable {
		hash = u.PasswordHash
	}
	ok, verr := s.verify(ctx, password, hash)
	if verr != nil && ctx.Err() != nil {
		return store.User{}, verr // the client went away while waiting to be checked
	}
	if verr != nil {
		s.log.Error("stored password hash is malformed", "user_id", u.ID)
		return store.User{}, ErrInvalidCredentials
	}
	if !ok || !usable {
		return store.User{}, ErrInvalidCredentials
	}
	return u, nil
}

// OpenSession creates a session for user, signed in through provider.
func (s *Service) OpenSession(ctx context.Context, user store.User, provider, ip, userAgent string) (Session, error) {
	st, err := s.Settings(ctx)
	if err != nil {
		return Session{}, err
	}
	now := s.now().UTC()
	tok := randomToken(32)
	sess := store.Session{ID: hashToken(tok), UserID: user.ID, Provider: provider, CreatedAt: now,
		ExpiresAt: now.Add(time.Duration(st.SessionTimeout) * time.Second), LastSeenAt: now,
		IP: ip, UserAgent: truncate(userAgent, 512)}
	if err := s.store.CreateSession(ctx, &sess); err != nil {
		return Session{}, err
	}
	if err := s.store.TouchLogin(ctx, user.ID, now); err != nil {
		return Session{}, err
	}
	return Session{Token: tok, ExpiresAt: sess.ExpiresAt}, nil
}

// ErrNoCredentials means the request carried no valid session or token.
var ErrNoCredentials = errors.New("auth: no valid credentials")

// sessionTouchEvery limits writes of a session's last-seen time.
const sessionTouchEvery = time.Minute

// SessionIdentity resolves a session cookie token.
func (s *Service) SessionIdentity(ctx context.Context, token string) (Identity, error) {
	if token == "" {
		return Identity{}, ErrNoCredentials
	}
	id := hashToken(token)
	sess, err := s.store.GetSession(ctx, id)
	if errors.Is(err, store.ErrNotFound) {
		return Identity{}, ErrNoCredentials
	}
	if err != nil {
		return Identity{}, err
	}
	now := s.now()
	if !now.Before(sess.ExpiresAt) {
		_ = s.store.DeleteSession(ctx, id)
		return Identity{}, ErrNoCredentials
	}
	user, err := s.store.GetUser(ctx, sess.UserID)
	if errors.Is(err, store.ErrNotFound) || (err == nil && !user.IsActive) {
		return Identity{}, ErrNoCredentials
	}
	if err != nil {
		return Identity{}, err
	}
	if now.Sub(sess.LastSeenAt) > sessionTouchEvery {
		_ = s.store.TouchSession(ctx, id, now.UTC())
	}
	ident, err := s.identity(ctx, user, sess.Provider)
	ident.SessionID = id
	return ident, err
}

// Logout ends the session of a cookie token.
func (s *Service) Logout(ctx context.Context, token string) error {
	if token == "" {
		return nil
	}
	return s.store.DeleteSession(ctx, hashToken(token))
}

// identity assembles a user's identity with their access.
func (s *Service) identity(ctx context.Context, user store.User, provider string) (Identity, error) {
	acc, err := s.AccessOf(ctx, user)
	if err != nil {
		return Identity{}, err
	}
	return Identity{User: user, Provider: provider, Access: acc}, nil
}

// AccessOf returns what user may do: everything for admins, else the union
// of their role assignments.
func (s *Service) AccessOf(ctx context.Context, user store.User) (Access, error) {
	if user.IsAdmin {
		return Access{Admin: true}, nil
	}
	assignments, err := s.store.ListUserRoles(ctx, user.ID)
	if err != nil {
		return Access{}, err
	}
	acc := Access{}
	roles := map[int64]store.Role{}
	for _, a := range assignments {
		r, ok := roles[a.RoleID]
		if !ok {
			if r, err = s.store.GetRole(ctx, a.RoleID); err != nil {
				if errors.Is(err, store.ErrNotFound) {
					continue
				}
				return Access{}, err
			}
			roles[a.RoleID] = r
		}
		acc.grants = append(acc.grants, grant{role: r, envID: a.EnvironmentID})
	}
	return acc, nil
}

// hashToken is the stored form of a session or API token.
func hashToken(tok string) string {
	sum := sha256.Sum256([]byte(tok))
	return hex.EncodeToString(sum[:])
}

func constantTimeEqual(a, b string) bool {
	return subtle.ConstantTimeCompare([]byte(a), []byte(b)) == 1
}

func truncate(s string, n int) string {
	if len(s) > n {
		return s[:n]
	}
	return s
}
