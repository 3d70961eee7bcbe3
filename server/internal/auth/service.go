// Package auth provides Berth's access control: local accounts with argon2id
// passwords, sessions, API tokens, the login limit, roles and per-environment
// permissions, the first-admin setup token, and the sign-in flows of external
// identity providers.
package auth

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/berth-dev/berth/server/internal/outbound"
	"github.com/berth-dev/berth/server/internal/store"
	"github.com/berth-dev/berth/shared/atomicfile"
	"github.com/berth-dev/berth/shared/fault"
)

// SetupTokenFile is the file in the data directory that holds the one-time
// token for creating the first admin.
const SetupTokenFile = "setup-token"

// Settings keys.
const (
	keyEnabled         = "auth.enabled"
	keyDefaultProvider = "auth.default_provider"
	keySessionTimeout  = "auth.session_timeout"
)

// DefaultSessionTimeout is the session lifetime unless configured (seconds).
const DefaultSessionTimeout = 86400

// Service runs authentication and authorization.
type Service struct {
	store        *store.Store
	log          *slog.Logger
	now          func() time.Time
	argon        Argon2Params
	dummyHash    string   // verified against when a user is unknown, so both cases cost the same (see decoyHash)
	logins       *Limiter // per IP and user name (the spec's rule)
	loginIPs     *Limiter // per IP, across user names
	badTokens    *Limiter
	disableLocal bool
	dataDir      string
	edition      Edition

	verify func(ctx context.Context, password, hash string) (bool, error) // VerifyPassword; tests count the calls

	setupMu    sync.Mutex
	setupToken string

	settingsMu sync.Mutex
	settings   Settings
	settingsAt time.Time // when settings was read; zero: not cached

	oidcMu    sync.Mutex
	oidcFlows map[string]oidcFlow // pending OIDC sign-ins by state
	stateTag  string              // ends every OIDC state ("": none); see UseStateTag

	outbound *outbound.Settings // the policy OIDC and LDAP requests follow (nil: outbound.Open)
}

// settingsTTL bounds how long other replicas' changes of the settings take
// to apply here (changes made through this process apply at once).
const settingsTTL = 2 * time.Second

// Edition tells whether enterprise features are licensed.
type Edition interface {
	Enterprise() bool
}

// Options configure a Service.
type Options struct {
	Store             *store.Store
	Log               *slog.Logger
	DataDir           string
	DisableLocalLogin bool
	Edition           Edition          // nil: community edition
	Now               func() time.Time // nil: time.Now
	Argon2            *Argon2Params    // nil: DefaultArgon2
}

type community struct{}

func (community) Enterprise() bool { return false }

// New returns a Service: it keeps the built-in roles current and, while no
// user exists, prepares the setup token.
func New(ctx context.Context, o Options) (*Service, error) {
	s := &Service{store: o.Store, log: o.Log, now: o.Now, argon: DefaultArgon2, verify: VerifyPassword,
		oidcFlows:    map[string]oidcFlow{},
		disableLocal: o.DisableLocalLogin, dataDir: o.DataDir, edition: o.Edition}
	if s.now == nil {
		s.now = time.Now
	}
	if o.Argon2 != nil {
		s.argon = *o.Argon2
	}
	if s.edition == nil {
		s.edition = community{}
	}
	s.logins = NewLoginLimiter(s.now)
	s.loginIPs = NewLoginIPLimiter(s.now)
	s.badTokens = NewTokenLimiter(s.now)
	// Not a hash of anything: computing one would cost 64 MiB and a CPU for
	// a while at every start.
	s.dummyHash = decoyHash(s.argon)
	for _, r := range BuiltinRoles() {
		if err := s.store.EnsureRole(ctx, &r); err != nil {
			return nil, fmt.Errorf("built-in role %s: %w", r.Name, err)
		}
	}
	return s, nil
}

// LocalLoginDisabled reports whether password sign-in with local accounts is
// turned off (DISABLE_LOCAL_LOGIN=true).
func (s *Service) LocalLoginDisabled() bool { return s.disableLocal }

// Enterprise reports whether enterprise features are licensed.
func (s *Service) Enterprise() bool { return s.edition.Enterprise() }

// errEnterprise is the answer of enterprise features without a license.
var errEnterprise = fault.New(fault.Forbidden, "Enterprise license required")

// RequireEnterprise fails unless enterprise features are licensed.
func (s *Service) RequireEnterprise() error {
	if !s.Enterprise() {
		return errEnterprise
	}
	return nil
}

// Settings are the instance's authentication settings.
type Settings struct {
	AuthEnabled     bool   `json:"authEnabled"`
	DefaultProvider string `json:"defaultProvider"`
	SessionTimeout  int    `json:"sessionTimeout"` // seconds
}

// Settings returns the current settings. Authentication is enabled unless
// explicitly disabled. Every request asks, so they are cached briefly.
func (s *Service) Settings(ctx context.Context) (Settings, error) {
	s.settingsMu.Lock()
	if !s.settingsAt.IsZero() && s.now().Sub(s.settingsAt) < settingsTTL {
		st := s.settings
		s.settingsMu.Unlock()
		return st, nil
	}
	s.settingsMu.Unlock()
	st, err := s.readSettings(ctx)
	if err != nil {
		return st, err
	}
	s.settingsMu.Lock()
	s.settings, s.settingsAt = st, s.now()
	s.settingsMu.Unlock()
	return st, nil
}

// forgetSettings drops the cached settings after a change.
func (s *Service) forgetSettings() {
	s.settingsMu.Lock()
	s.settingsAt = time.Time{}
	s.settingsMu.Unlock()
}

func (s *Service) readSettings(ctx context.Context) (Settings, error) {
	st := Settings{AuthEnabled: true, DefaultProvider: "local", SessionTimeout: DefaultSessionTimeout}
	get := func(key string) (string, bool, error) {
		v, err := s.store.GetSetting(ctx, key)
		if errors.Is(err, store.ErrNotFound) {
			return "", false, nil
		}
		return v, err == nil, err
	}
	if v, ok, err := get(keyEnabled); err != nil {
		return st, err
	} else if ok {
		st.AuthEnabled = v != "false"
	}
	if v, ok, err := get(keyDefaultProvider); err != nil {
		return st, err
	} else if ok && v != "" {
		st.DefaultProvider = v
	}
	if v, ok, err := get(keySessionTimeout); err != nil {
		return st, err
	} else if ok {
		if n, err := strconv.Atoi(v); err == nil && n > 0 {
			st.SessionTimeout = n
		}
	}
	return st, nil
}

// Enabled reports whether authentication is enabled.
func (s *Service) Enabled(ctx context.Context) (bool, error) {
	st, err := s.Settings(ctx)
	return st.AuthEnabled, err
}

// SettingsPatch changes some settings.
type SettingsPatch struct {
	AuthEnabled     *bool   `json:"authEnabled"`
	DefaultProvider *string `json:"defaultProvider"`
	SessionTimeout  *int    `json:"sessionTimeout"`
}

// UpdateSettings applies p.
func (s *Service) UpdateSettings(ctx context.Context, p SettingsPatch) (Settings, error) {
	defer s.forgetSettings()
	if p.SessionTimeout != nil && (*p.SessionTimeout < 60 || *p.SessionTimeout > 365*86400) {
		return Settings{}, fault.New(fault.Invalid, "sessionTimeout must be between 60 and 31536000 seconds")
	}
	if p.DefaultProvider != nil {
		v := *p.DefaultProvider
		if v != "local" && !strings.HasPrefix(v, "ldap") && !strings.HasPrefix(v, "oidc:") {
			return Settings{}, fault.New(fault.Invalid, "defaultProvider must be local, ldap, ldap:<id> or oidc:<id>")
		}
		if err := s.store.SetSetting(ctx, keyDefaultProvider, v); err != nil {
			return Settings{}, err
		}
	}
	if p.SessionTimeout != nil {
		if err := s.store.SetSetting(ctx, keySessionTimeout, strconv.Itoa(*p.SessionTimeout)); err != nil {
			return Settings{}, err
		}
	}
	if p.AuthEnabled != nil {
		if err := s.SetEnabled(ctx, *p.AuthEnabled); err != nil {
			return Settings{}, err
		}
	}
	return s.Settings(ctx)
}

// SetEnabled turns authentication on or off. Turning it on while no user
// exists prepares (and logs) the setup token for the first admin.
func (s *Service) SetEnabled(ctx context.Context, on bool) error {
	defer s.forgetSettings()
	if err := s.store.SetSetting(ctx, keyEnabled, strconv.FormatBool(on)); err != nil {
		return err
	}
	if !on {
		return nil
	}
	tok, err := s.PrepareSetup(ctx)
	if err == nil && tok != "" {
		s.log.Warn("authentication enabled with no user: create the first admin with the one-time setup token",
			"setup_token", tok, "file", s.SetupTokenPath())
	}
	return err
}

// randomToken returns n random bytes, base64url without padding.
func randomToken(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b) // crypto/rand never fails on supported platforms
	return base64.RawURLEncoding.EncodeToString(b)
}

// SetupRequired reports whether no user exists yet.
func (s *Service) SetupRequired(ctx context.Context) (bool, error) {
	n, err := s.store.CountUsers(ctx)
	return n == 0, err
}

// PrepareSetup returns the one-time setup token while no user exists,
// reusing the one in the data directory so a restart does not invalidate it;
// "" once a user exists. Replicas sharing the data directory share one
// token: the first to start creates the file, the others read it.
func (s *Service) PrepareSetup(ctx context.Context) (string, error) {
	need, err := s.SetupRequired(ctx)
	if err != nil || !need {
		return "", err
	}
	s.setupMu.Lock()
	defer s.setupMu.Unlock()
	if s.setupToken != "" {
		return s.setupToken, nil
	}
	if tok := s.storedSetupToken(); tok != "" {
		s.setupToken = tok
		return tok, nil
	}
	// Hex, so that a double click in a terminal selects the whole token.
	raw := make([]byte, 24)
	_, _ = rand.Read(raw)
	tok := hex.EncodeToString(raw)
	created, err := atomicfile.Create(s.SetupTokenPath(), []byte(tok+"\n"), 0o600)
	if err != nil {
		return "", fmt.Errorf("write setup token: %w", err)
	}
	if !created { // another replica wrote it first
		if tok = s.storedSetupToken(); tok == "" {
			return "", errors.New("write setup token: the file another Berth wrote is not a token")
		}
	}
	s.setupToken = tok
	return tok, nil
}

// storedSetupToken is the setup token in the data directory, or "".
func (s *Service) storedSetupToken() string {
	data, err := os.ReadFile(s.SetupTokenPath())
	if tok := strings.TrimSpace(string(data)); err == nil && len(tok) >= 32 {
		return tok
	}
	return ""
}

// SetupTokenPath is where the setup token is kept.
func (s *Service) SetupTokenPath() string { return filepath.Join(s.dataDir, SetupTokenFile) }

// checkSetupToken compares tok with the setup token in constant time: the
// one in the data directory while it is there (the one every replica
// prints), else the one this server prepared.
func (s *Service) checkSetupToken(tok string) bool {
	s.setupMu.Lock()
	want := s.setupToken
	s.setupMu.Unlock()
	if want == "" {
		return false // no setup under way here (a user exists)
	}
	if stored := s.storedSetupToken(); stored != "" {
		want = stored
	}
	return tok != "" && constantTimeEqual(tok, want)
}

// endSetup forgets the setup token once the first admin exists.
func (s *Service) endSetup() {
	s.setupMu.Lock()
	s.setupToken = ""
	s.setupMu.Unlock()
	if err := os.Remove(s.SetupTokenPath()); err != nil && !errors.Is(err, os.ErrNotExist) {
		s.log.Warn("could not remove the used setup token", "path", s.SetupTokenPath(), "err", err)
	}
}
