package auth

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/berth-dev/berth/server/internal/store"
	"github.com/berth-dev/berth/server/internal/store/storetest"
	"github.com/berth-dev/berth/shared/fault"
)

// token creates an API token for u (whose password is the fixture's).
func (f *fixture) token(t *testing.T, u store.User, name string, expiresAt *time.Time) NewToken {
	t.Helper()
	nt, err := f.svc.CreateToken(t.Context(), u, name, u.Username+"-password", expiresAt)
	if err != nil {
		t.Fatalf("CreateToken(%q): %v", name, err)
	}
	return nt
}

func TestCreateTokenRequiresThePassword(t *testing.T) {
	storetest.ForEachDialect(t, func(t *testing.T, st *store.Store) {
		f := newFixture(t, st)
		alice := f.user(t, "alice", false)
		_, err := f.svc.CreateToken(t.Context(), alice, "ci", "", nil)
		wantFault(t, err, fault.Invalid, "Password is required")
		for _, pw := range []string{"wrong-password", "ALICE-PASSWORD"} {
			_, err := f.svc.CreateToken(t.Context(), alice, "ci", pw, nil)
			wantFault(t, err, fault.Forbidden, "Invalid password")
		}
		if toks, err := st.ListAPITokens(t.Context(), alice.ID); err != nil || len(toks) != 0 {
			t.Errorf("tokens after refused creations = %v, %v; want none", toks, err)
		}
	})
}

func TestCreateTokenValidatesNameAndExpiry(t *testing.T) {
	storetest.ForEachDialect(t, func(t *testing.T, st *store.Store) {
		f := newFixture(t, st)
		alice := f.user(t, "alice", false)
		now := f.clock.Now()
		past := now.Add(-time.Second)
		tests := []struct {
			name      string
			tokenName string
			expiresAt *time.Time
			msg       string
		}{
			{"empty name", "", nil, "Token name is required"},
			{"blank name", "   ", nil, "Token name is required"},
			{"long name", strings.Repeat("n", 101), nil, "Token name must be at most 100 characters"},
			{"expiry in the past", "ci", &past, "expiresAt must be in the future"},
			{"expiry now", "ci", &now, "expiresAt must be in the future"},
		}
		for _, tt := range tests {
			_, err := f.svc.CreateToken(t.Context(), alice, tt.tokenName, "alice-password", tt.expiresAt)
			wantFault(t, err, fault.Invalid, tt.msg)
		}
	})
}

func TestCreateTokenStoresOnlyItsHash(t *testing.T) {
	storetest.ForEachDialect(t, func(t *testing.T, st *store.Store) {
		f := newFixture(t, st)
		ctx := t.Context()
		alice := f.user(t, "alice", false)
		nt := f.token(t, alice, " ci ", nil)

		if !strings.HasPrefix(nt.Token, "bth_") || len(nt.Token) < 40 {
			t.Errorf("token %q does not start with bth_ or is too short", nt.Token)
		}
		if nt.TokenPrefix != nt.Token[:10] {
			t.Errorf("TokenPrefix = %q, want the token's first 10 characters %q", nt.TokenPrefix, nt.Token[:10])
		}
		stored, err := st.GetAPIToken(ctx, nt.ID)
		if err != nil {
			t.Fatal(err)
		}
		if stored.TokenHash != sha256Hex(nt.Token) || stored.TokenHash == nt.Token {
			t.Errorf("stored TokenHash = %q, want sha256 of the token %q", stored.TokenHash, sha256Hex(nt.Token))
		}
		if stored.Name != "ci" || stored.UserID != alice.ID || stored.TokenPrefix != nt.TokenPrefix || stored.ExpiresAt != nil {
			t.Errorf("stored token = %+v", stored)
		}
		if _, err := st.GetAPITokenByHash(ctx, nt.Token); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("GetAPITokenByHash(token) error = %v, want ErrNotFound", err)
		}
	})
}

func TestTokenIdentityResolvesToken(t *testing.T) {
	storetest.ForEachDialect(t, func(t *testing.T, st *store.Store) {
		f := newFixture(t, st)
		alice := f.user(t, "alice", false)
		nt := f.token(t, alice, "ci", nil)

		ident, err := f.svc.TokenIdentity(t.Context(), nt.Token, "192.0.2.1")
		if err != nil {
			t.Fatal(err)
		}
		if ident.User.ID != alice.ID || ident.Provider != "token" || ident.TokenID != nt.ID || ident.SessionID != "" {
			t.Errorf("TokenIdentity = %+v", ident)
		}
		stored, err := st.GetAPIToken(t.Context(), nt.ID)
		if err != nil {
			t.Fatal(err)
		}
		if stored.LastUsedAt == nil || !stored.LastUsedAt.Equal(f.clock.Now()) {
			t.Errorf("LastUsedAt = %v, want %v", stored.LastUsedAt, f.clock.Now())
		}
	})
}

func TestExpiredTokenIsRefused(t *testing.T) {
	storetest.ForEachDialect(t, func(t *testing.T, st *store.Store) {
		f := newFixture(t, st)
		alice := f.user(t, "alice", false)
		exp := f.clock.Now().Add(time.Hour)
		nt := f.token(t, alice, "ci", &exp)

		f.clock.Advance(time.Hour - time.Second)
		if _, err := f.svc.TokenIdentity(t.Context(), nt.Token, "192.0.2.1"); err != nil {
			t.Fatalf("TokenIdentity a second before expiry: %v", err)
		}
		f.clock.Advance(time.Second)
		_, err := f.svc.TokenIdentity(t.Context(), nt.Token, "192.0.2.1")
		wantNoCredentials(t, err)
	})
}

func TestRevokedTokenIsRefused(t *testing.T) {
	storetest.ForEachDialect(t, func(t *testing.T, st *store.Store) {
		f := newFixture(t, st)
		alice := f.user(t, "alice", false)
		nt := f.token(t, alice, "ci", nil)
		kept := f.token(t, alice, "kept", nil)

		if err := f.svc.RevokeToken(t.Context(), alice, nt.ID); err != nil {
			t.Fatal(err)
		}
		_, err := f.svc.TokenIdentity(t.Context(), nt.Token, "192.0.2.1")
		wantNoCredentials(t, err)
		if _, err := f.svc.TokenIdentity(t.Context(), kept.Token, "192.0.2.1"); err != nil {
			t.Errorf("another token after a revocation: %v", err)
		}
	})
}

func TestTokenOfDisabledUserIsRefused(t *testing.T) {
	storetest.ForEachDialect(t, func(t *testing.T, st *store.Store) {
		f := newFixture(t, st)
		alice := f.user(t, "alice", false)
		nt := f.token(t, alice, "ci", nil)
		if _, err := f.svc.UpdateUser(t.Context(), alice.ID, UserPatch{IsActive: ptr(false)}); err != nil {
			t.Fatal(err)
		}
		_, err := f.svc.TokenIdentity(t.Context(), nt.Token, "192.0.2.1")
		wantNoCredentials(t, err)
	})
}

func TestBadTokensFromOneIPAreRateLimited(t *testing.T) {
	storetest.ForEachDialect(t, func(t *testing.T, st *store.Store) {
		f := newFixture(t, st)
		ctx := t.Context()
		alice := f.user(t, "alice", false)
		good := f.token(t, alice, "ci", nil)
		const ip, otherIP = "192.0.2.1", "198.51.100.7"

		bad := []string{"", "garbage", "bth_", "bth_unknown", good.Token + "x", strings.TrimPrefix(good.Token, "bth_"),
			"bth_a", "bth_b", "bth_c", "bth_d"}
		for _, tok := range bad { // 10 bad tokens, each answered as such
			_, err := f.svc.TokenIdentity(ctx, tok, ip)
			wantNoCredentials(t, err)
		}
		_, err := f.svc.TokenIdentity(ctx, "bth_eleventh", ip)
		wantFault(t, err, fault.TooMany, "Too many invalid API tokens. Try again later.")
		if secs, ok := RetryAfter(err); !ok || secs != 5 {
			t.Errorf("RetryAfter = %d, %v; want 5", secs, ok)
		}
		// Whatever the token, while locked.
		_, err = f.svc.TokenIdentity(ctx, good.Token, ip)
		wantFault(t, err, fault.TooMany, "Too many invalid API tokens. Try again later.")

		if _, err := f.svc.TokenIdentity(ctx, good.Token, otherIP); err != nil {
			t.Errorf("good token from another IP: %v", err)
		}
		f.clock.Advance(5 * time.Second)
		if _, err := f.svc.TokenIdentity(ctx, good.Token, ip); err != nil {
			t.Errorf("good token after the lock: %v", err)
		}
	})
}

func TestRevokeTokenOfAnotherUser(t *testing.T) {
	storetest.ForEachDialect(t, func(t *testing.T, st *store.Store) {
		f := newFixture(t, st)
		ctx := t.Context()
		alice := f.user(t, "alice", false)
		bob := f.user(t, "bob", false)
		root := f.user(t, "root", true)
		nt := f.token(t, alice, "ci", nil)

		err := f.svc.RevokeToken(ctx, bob, nt.ID)
		wantFault(t, err, fault.NotFound, "Token not found")
		if _, err := f.svc.TokenIdentity(ctx, nt.Token, "192.0.2.1"); err != nil {
			t.Fatalf("token after another user's refused revocation: %v", err)
		}
		err = f.svc.RevokeToken(ctx, alice, nt.ID+1000)
		wantFault(t, err, fault.NotFound, "Token not found")

		if err := f.svc.RevokeToken(ctx, root, nt.ID); err != nil {
			t.Fatalf("admin revoking a user's token: %v", err)
		}
		_, err = f.svc.TokenIdentity(ctx, nt.Token, "192.0.2.1")
		wantNoCredentials(t, err)
	})
}
