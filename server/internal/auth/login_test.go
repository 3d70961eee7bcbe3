package auth

import (
	"errors"
	"testing"
	"time"

	"github.com/berth-dev/berth/server/internal/store"
	"github.com/berth-dev/berth/server/internal/store/storetest"
	"github.com/berth-dev/berth/shared/fault"
)

func TestLoginOpensSessionStoringOnlyTheTokenHash(t *testing.T) {
	storetest.ForEachDialect(t, func(t *testing.T, st *store.Store) {
		f := newFixture(t, st)
		ctx := t.Context()
		alice := f.user(t, "alice", false)

		ident, sess, err := f.svc.Login(ctx, LoginRequest{Username: " Alice ", Password: "alice-password",
			IP: "192.0.2.1", UserAgent: "test"})
		if err != nil {
			t.Fatal(err)
		}
		if ident.User.ID != alice.ID || ident.Provider != "local" || ident.Access.Admin {
			t.Errorf("identity = user %d, provider %q, admin %v; want user %d, local, not admin",
				ident.User.ID, ident.Provider, ident.Access.Admin, alice.ID)
		}
		if want := f.clock.Now().Add(86400 * time.Second); !sess.ExpiresAt.Equal(want) {
			t.Errorf("session ExpiresAt = %v, want %v", sess.ExpiresAt, want)
		}
		if len(sess.Token) < 40 {
			t.Fatalf("session token %q is too short", sess.Token)
		}

		if _, err := st.GetSession(ctx, sess.Token); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("GetSession(token) error = %v, want ErrNotFound: the token itself must not be stored", err)
		}
		stored, err := st.GetSession(ctx, sha256Hex(sess.Token))
		if err != nil {
			t.Fatalf("GetSession(sha256(token)): %v", err)
		}
		if stored.ID == sess.Token || stored.UserID != alice.ID || stored.Provider != "local" || stored.IP != "192.0.2.1" {
			t.Errorf("stored session = %+v", stored)
		}
		u, err := st.GetUser(ctx, alice.ID)
		if err != nil {
			t.Fatal(err)
		}
		if u.LastLogin == nil || !u.LastLogin.Equal(f.clock.Now()) {
			t.Errorf("LastLogin = %v, want %v", u.LastLogin, f.clock.Now())
		}
	})
}

func TestLoginFailuresAreIndistinguishableAndCostOneVerification(t *testing.T) {
	storetest.ForEachDialect(t, func(t *testing.T, st *store.Store) {
		f := newFixture(t, st)
		ctx := t.Context()
		f.user(t, "alice", false)
		disabled := f.user(t, "dave", false)
		disabled.IsActive = false
		if err := st.UpdateUser(ctx, &disabled); err != nil {
			t.Fatal(err)
		}
		sso := store.User{Username: "sam", IsActive: true, AuthProvider: "oidc:corp"}
		if err := st.CreateUser(ctx, &sso); err != nil {
			t.Fatal(err)
		}

		tests := []struct {
			name, username, password string
			wantErr                  error
		}{
			{"right password", "alice", "alice-password", nil},
			{"unknown user", "nobody", "alice-password", ErrInvalidCredentials},
			{"wrong password", "alice", "wrong-password", ErrInvalidCredentials},
			{"disabled user with right password", "dave", "dave-password", ErrInvalidCredentials},
			{"SSO user without a password", "sam", "sam-password", ErrInvalidCredentials},
		}
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				calls := 0
				f.countVerifications(&calls)
				_, _, err := f.svc.Login(ctx, LoginRequest{Username: tt.username, Password: tt.password, IP: "192.0.2.1"})
				if tt.wantErr == nil && err != nil {
					t.Errorf("Login: %v", err)
				}
				if tt.wantErr != nil && (err != tt.wantErr || !errors.Is(err, ErrInvalidCredentials)) {
					t.Errorf("Login error = %#v, want exactly ErrInvalidCredentials", err)
				}
				if calls != 1 {
					t.Errorf("Login verified %d password hashes, want 1", calls)
				}
			})
		}
	})
}

func TestLoginValidatesRequest(t *testing.T) {
	storetest.ForEachDialect(t, func(t *testing.T, st *store.Store) {
		f := newFixture(t, st)
		f.user(t, "alice", false)
		tests := []struct {
			name string
			req  LoginRequest
			kind fault.Kind
			msg  string
		}{
			{"no username", LoginRequest{Username: "  ", Password: "alice-password"}, fault.Invalid, "Username and password are required"},
			{"no password", LoginRequest{Username: "alice"}, fault.Invalid, "Username and password are required"},
			{"unknown provider", LoginRequest{Username: "alice", Password: "alice-password", Provider: "kerberos"},
				fault.Invalid, `Unknown sign-in provider "kerberos"`},
			{"LDAP without enterprise", LoginRequest{Username: "alice", Password: "alice-password", Provider: "ldap"},
				fault.Forbidden, "Enterprise license required"},
		}
		for _, tt := range tests {
			_, _, err := f.svc.Login(t.Context(), tt.req)
			wantFault(t, err, tt.kind, tt.msg)
		}
	})
}

func TestLoginWithLocalLoginDisabledIsForbidden(t *testing.T) {
	storetest.ForEachDialect(t, func(t *testing.T, st *store.Store) {
		f := newFixture(t, st)
		f.user(t, "alice", false)
		svc := f.newService(t, func(o *Options) { o.DisableLocalLogin = true })
		if !svc.LocalLoginDisabled() {
			t.Error("LocalLoginDisabled = false")
		}
		for _, provider := range []string{"", "local"} {
			_, _, err := svc.Login(t.Context(), LoginRequest{Username: "alice", Password: "alice-password", Provider: provider})
			wantFault(t, err, fault.Forbidden, "Local login is disabled")
		}
	})
}

func TestLoginLocksOutAfterFiveWrongPasswords(t *testing.T) {
	storetest.ForEachDialect(t, func(t *testing.T, st *store.Store) {
		f := newFixture(t, st)
		ctx := t.Context()
		f.user(t, "alice", false)
		attempt := func(username, password, ip string) error {
			_, _, err := f.svc.Login(ctx, LoginRequest{Username: username, Password: password, IP: ip})
			return err
		}
		wantRetryAfter := func(t *testing.T, err error, secs int) {
			t.Helper()
			wantFault(t, err, fault.TooMany, "")
			if got, ok := RetryAfter(err); !ok || got != secs {
				t.Errorf("RetryAfter(%v) = %d, %v; want %d", err, got, ok, secs)
			}
		}

		// The spec allows 5 failed attempts: each is answered as a failure.
		for i := 1; i <= 5; i++ {
			if err := attempt("alice", "wrong-password", "192.0.2.1"); err != ErrInvalidCredentials {
				t.Fatalf("wrong password %d: %v, want ErrInvalidCredentials", i, err)
			}
		}
		err := attempt("alice", "wrong-password", "192.0.2.1")
		wantFault(t, err, fault.TooMany, "Too many failed login attempts. Try again in 5 seconds.")
		wantRetryAfter(t, err, 5)

		// Locked: even the right password is refused, without a verification.
		calls := 0
		f.countVerifications(&calls)
		wantRetryAfter(t, attempt("alice", "alice-password", "192.0.2.1"), 5)
		wantRetryAfter(t, attempt("ALICE", "alice-password", "192.0.2.1"), 5)
		if calls != 0 {
			t.Errorf("a locked login verified %d password hashes, want 0", calls)
		}
		// Another IP is not locked.
		if err := attempt("alice", "alice-password", "198.51.100.7"); err != nil {
			t.Errorf("right password from another IP: %v", err)
		}

		f.clock.Advance(4 * time.Second)
		wantRetryAfter(t, attempt("alice", "alice-password", "192.0.2.1"), 1)
		f.clock.Advance(time.Second)
		if err := attempt("alice", "alice-password", "192.0.2.1"); err != nil {
			t.Errorf("right password after the lock: %v", err)
		}
		// The success cleared the count.
		for i := 1; i <= 4; i++ {
			if err := attempt("alice", "wrong-password", "192.0.2.1"); err != ErrInvalidCredentials {
				t.Fatalf("wrong password %d after a success: %v, want ErrInvalidCredentials", i, err)
			}
		}
	})
}

func TestSessionIdentityResolvesSession(t *testing.T) {
	storetest.ForEachDialect(t, func(t *testing.T, st *store.Store) {
		f := newFixture(t, st)
		alice := f.user(t, "alice", false)
		_, sess := f.login(t, "alice")

		ident, err := f.svc.SessionIdentity(t.Context(), sess.Token)
		if err != nil {
			t.Fatal(err)
		}
		if ident.User.ID != alice.ID || ident.User.Username != "alice" || ident.Provider != "local" ||
			ident.SessionID != sha256Hex(sess.Token) || ident.Access.Admin {
			t.Errorf("SessionIdentity = %+v", ident)
		}
	})
}

func TestSessionIdentityRefusesUnknownTokens(t *testing.T) {
	storetest.ForEachDialect(t, func(t *testing.T, st *store.Store) {
		f := newFixture(t, st)
		f.user(t, "alice", false)
		_, sess := f.login(t, "alice")
		for _, tok := range []string{"", "garbage", sha256Hex(sess.Token), sess.Token + "x"} {
			_, err := f.svc.SessionIdentity(t.Context(), tok)
			wantNoCredentials(t, err)
		}
	})
}

func TestExpiredSessionIsRefusedAndDeleted(t *testing.T) {
	storetest.ForEachDialect(t, func(t *testing.T, st *store.Store) {
		f := newFixture(t, st)
		ctx := t.Context()
		f.user(t, "alice", false)
		_, sess := f.login(t, "alice")

		f.clock.Advance(DefaultSessionTimeout*time.Second - time.Second)
		if _, err := f.svc.SessionIdentity(ctx, sess.Token); err != nil {
			t.Fatalf("SessionIdentity a second before expiry: %v", err)
		}
		f.clock.Advance(time.Second)
		_, err := f.svc.SessionIdentity(ctx, sess.Token)
		wantNoCredentials(t, err)
		if _, err := st.GetSession(ctx, sha256Hex(sess.Token)); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("GetSession of the expired session: error = %v, want ErrNotFound", err)
		}
	})
}

func TestSessionLastsTheConfiguredTimeout(t *testing.T) {
	storetest.ForEachDialect(t, func(t *testing.T, st *store.Store) {
		f := newFixture(t, st)
		f.user(t, "alice", false)
		if _, err := f.svc.UpdateSettings(t.Context(), SettingsPatch{SessionTimeout: ptr(3600)}); err != nil {
			t.Fatal(err)
		}
		_, sess := f.login(t, "alice")
		if want := f.clock.Now().Add(time.Hour); !sess.ExpiresAt.Equal(want) {
			t.Errorf("ExpiresAt = %v, want %v", sess.ExpiresAt, want)
		}
		f.clock.Advance(time.Hour)
		_, err := f.svc.SessionIdentity(t.Context(), sess.Token)
		wantNoCredentials(t, err)
	})
}

func TestSessionOfDisabledUserIsRefused(t *testing.T) {
	storetest.ForEachDialect(t, func(t *testing.T, st *store.Store) {
		f := newFixture(t, st)
		alice := f.user(t, "alice", false)
		_, sess := f.login(t, "alice")
		// Disable through the store, which leaves the session in place:
		// SessionIdentity itself must refuse it.
		alice.IsActive = false
		if err := st.UpdateUser(t.Context(), &alice); err != nil {
			t.Fatal(err)
		}
		_, err := f.svc.SessionIdentity(t.Context(), sess.Token)
		wantNoCredentials(t, err)
	})
}

func TestLogoutEndsSession(t *testing.T) {
	storetest.ForEachDialect(t, func(t *testing.T, st *store.Store) {
		f := newFixture(t, st)
		f.user(t, "alice", false)
		_, sess := f.login(t, "alice")
		_, other := f.login(t, "alice")

		if err := f.svc.Logout(t.Context(), sess.Token); err != nil {
			t.Fatal(err)
		}
		_, err := f.svc.SessionIdentity(t.Context(), sess.Token)
		wantNoCredentials(t, err)
		if _, err := f.svc.SessionIdentity(t.Context(), other.Token); err != nil {
			t.Errorf("another session of the user after Logout: %v", err)
		}
		if err := f.svc.Logout(t.Context(), ""); err != nil {
			t.Errorf("Logout(\"\"): %v", err)
		}
	})
}
