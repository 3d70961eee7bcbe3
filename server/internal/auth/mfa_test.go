package auth

import (
	"bytes"
	"errors"
	"image/png"
	"strings"
	"testing"
	"time"

	"github.com/pquerna/otp/totp"

	"github.com/berth-dev/berth/server/internal/store"
	"github.com/berth-dev/berth/server/internal/store/storetest"
	"github.com/berth-dev/berth/shared/fault"
)

// rfcSecret is the SHA-1 key of the RFC 6238 test vectors, "12345678901234567890", in base32.
const rfcSecret = "GEZDGNBVGY3TQOJQGEZDGNBVGY3TQOJQ"

func TestMatchTOTPFollowsRFC6238AndAcceptsOneStepOfDrift(t *testing.T) {
	tests := []struct {
		name     string
		code     string
		at       int64 // unix seconds
		wantStep int64
		wantOK   bool
	}{
		// RFC 6238 appendix B, SHA-1, last six of the eight digits.
		{"vector at 59 s", "287082", 59, 1, true},
		{"vector at 1111111109 s", "081804", 1111111109, 37037036, true},
		{"vector at 1111111111 s", "050471", 1111111111, 37037037, true},
		{"vector at 1234567890 s", "005924", 1234567890, 41152263, true},
		{"vector at 2000000000 s", "279037", 2000000000, 66666666, true},
		{"spaces are ignored", " 287 082 ", 59, 1, true},
		{"one step late", "287082", 59 + 30, 1, true},
		{"one step early", "287082", 59 - 30, 1, true},
		{"two steps late", "287082", 59 + 60, 0, false},
		{"wrong code", "287083", 59, 0, false},
		{"too short", "28708", 59, 0, false},
		{"not digits", "28708a", 59, 0, false},
		{"empty", "", 59, 0, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			step, ok := matchTOTP(rfcSecret, tt.code, time.Unix(tt.at, 0))
			if ok != tt.wantOK || step != tt.wantStep {
				t.Fatalf("matchTOTP(%q, %d) = %d, %v; want %d, %v", tt.code, tt.at, step, ok, tt.wantStep, tt.wantOK)
			}
		})
	}
}

func TestNormalizeBackupCodeReadsWhatPeopleType(t *testing.T) {
	tests := []struct {
		in, want string
		ok       bool
	}{
		{"ABCDE-FGH12", "ABCDEFGH12", true},
		{"abcde fgh12", "ABCDEFGH12", true},
		{"oiL0Q-ZZZZZ", "0110QZZZZZ", true}, // O is 0, I and L are 1
		{"ABCDE-FGH1", "", false},           // too short
		{"ABCDE-FGH123", "", false},         // too long
		{"ABCDE-FGHU2", "", false},          // U is not in the alphabet
		{"123456", "", false},               // a TOTP code
	}
	for _, tt := range tests {
		got, ok := normalizeBackupCode(tt.in)
		if got != tt.want || ok != tt.ok {
			t.Errorf("normalizeBackupCode(%q) = %q, %v; want %q, %v", tt.in, got, ok, tt.want, tt.ok)
		}
	}
}

func TestNewBackupCodesAreDistinctAndStoredHashed(t *testing.T) {
	s := &Service{argon: cheapArgon}
	shown, stored, err := s.newBackupCodes(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if len(shown) != backupCodeCount || len(stored) != backupCodeCount {
		t.Fatalf("%d codes shown, %d stored; want %d", len(shown), len(stored), backupCodeCount)
	}
	selectors := map[string]bool{}
	for i, code := range shown {
		norm, ok := normalizeBackupCode(code)
		if !ok || len(code) != 11 || code[5] != '-' {
			t.Fatalf("code %q is not of the form XXXXX-XXXXX", code)
		}
		if stored[i].Selector != norm[:selectorLen] || selectors[stored[i].Selector] {
			t.Fatalf("code %q: selector %q, want its first characters, unique", code, stored[i].Selector)
		}
		selectors[stored[i].Selector] = true
		if strings.Contains(stored[i].Hash, norm) || !strings.HasPrefix(stored[i].Hash, "$argon2id$") {
			t.Fatalf("code %q stored as %q, want an argon2id hash", code, stored[i].Hash)
		}
		if ok, err := VerifyPassword(t.Context(), norm, stored[i].Hash); err != nil || !ok {
			t.Fatalf("hash of %q does not verify it: %v, %v", code, ok, err)
		}
	}
}

// wrongCode returns a six-digit code that is not the code of secret for
// the time step of at or either neighbour.
func wrongCode(t *testing.T, secret string, at time.Time) string {
	t.Helper()
	taken := map[string]bool{}
	for _, d := range []time.Duration{-totpPeriod * time.Second, 0, totpPeriod * time.Second} {
		c, err := totp.GenerateCode(secret, at.Add(d))
		if err != nil {
			t.Fatal(err)
		}
		taken[c] = true
	}
	for _, c := range []string{"000000", "111111", "222222", "333333"} {
		if !taken[c] {
			return c
		}
	}
	t.Fatal("unreachable: three codes cannot take four values")
	return ""
}

// enrol runs BeginMFA and ConfirmMFA for user at the fixture's clock and
// returns the secret and the backup codes.
func (f *fixture) enrol(t *testing.T, user store.User) (string, []string) {
	t.Helper()
	ctx := t.Context()
	e, err := f.svc.BeginMFA(ctx, user)
	if err != nil {
		t.Fatalf("BeginMFA: %v", err)
	}
	code, err := totp.GenerateCode(e.Secret, f.clock.Now())
	if err != nil {
		t.Fatal(err)
	}
	codes, err := f.svc.ConfirmMFA(ctx, user.ID, code)
	if err != nil {
		t.Fatalf("ConfirmMFA: %v", err)
	}
	return e.Secret, codes
}

func TestBeginMFAGivesASecretItsQRCodeAndLeavesMFAOffUntilConfirmed(t *testing.T) {
	storetest.ForEachDialect(t, func(t *testing.T, st *store.Store) {
		f := newFixture(t, st)
		ctx := t.Context()
		alice := f.user(t, "alice", false)
		e, err := f.svc.BeginMFA(ctx, alice)
		if err != nil {
			t.Fatal(err)
		}
		img, err := png.Decode(bytes.NewReader(e.QRPNG))
		if err != nil || img.Bounds().Dx() != totpQRPixel {
			t.Fatalf("QR code: %v, bounds %v", err, img)
		}
		if !strings.HasPrefix(e.URL, "otpauth://totp/Berth:alice?") || !strings.Contains(e.URL, "secret="+e.Secret) {
			t.Fatalf("otpauth URL = %q", e.URL)
		}
		// Not on yet: the password alone signs in.
		if _, _, err := f.svc.Login(ctx, LoginRequest{Username: "alice", Password: "alice-password"}); err != nil {
			t.Fatalf("login during enrolment: %v", err)
		}
		_, err = f.svc.ConfirmMFA(ctx, alice.ID, wrongCode(t, e.Secret, f.clock.Now()))
		wantFault(t, err, fault.Invalid, "Invalid MFA code")
		code, _ := totp.GenerateCode(e.Secret, f.clock.Now())
		codes, err := f.svc.ConfirmMFA(ctx, alice.ID, code)
		if err != nil || len(codes) != backupCodeCount {
			t.Fatalf("ConfirmMFA = %v, %v", codes, err)
		}
		if _, err := f.svc.ConfirmMFA(ctx, alice.ID, code); err == nil {
			t.Fatal("a second confirmation succeeded")
		} else {
			wantFault(t, err, fault.Invalid, "No MFA setup is in progress: start the setup again")
		}
		u, _ := st.GetUser(ctx, alice.ID)
		if !u.MFAEnabled {
			t.Fatal("MFAEnabled is false after confirmation")
		}
	})
}

func TestBeginMFARefusesAccountsOfIdentityProviders(t *testing.T) {
	storetest.ForEachDialect(t, func(t *testing.T, st *store.Store) {
		f := newFixture(t, st)
		u := store.User{Username: "dirk", AuthProvider: "ldap:corp", IsActive: true}
		if err := st.CreateUser(t.Context(), &u); err != nil {
			t.Fatal(err)
		}
		_, err := f.svc.BeginMFA(t.Context(), u)
		wantFault(t, err, fault.Invalid, errMFALocalOnly.Error())
		if m, _ := st.GetMFA(t.Context(), u.ID); m.PendingSecret != "" {
			t.Fatal("an enrolment was recorded for an LDAP account")
		}
	})
}

func TestLoginWithMFANeedsAFreshCode(t *testing.T) {
	storetest.ForEachDialect(t, func(t *testing.T, st *store.Store) {
		f := newFixture(t, st)
		ctx := t.Context()
		alice := f.user(t, "alice", false)
		secret, _ := f.enrol(t, alice)
		req := LoginRequest{Username: "alice", Password: "alice-password", IP: "192.0.2.9"}

		_, sess, err := f.svc.Login(ctx, req)
		if !errors.Is(err, ErrMFARequired) || sess.Token != "" {
			t.Fatalf("login without a code = %v, session %q; want ErrMFARequired and no session", err, sess.Token)
		}
		// The enrolment's code was spent by the confirmation.
		req.MFAToken, _ = totp.GenerateCode(secret, f.clock.Now())
		_, _, err = f.svc.Login(ctx, req)
		wantFault(t, err, fault.Unauthorized, "Invalid MFA code")

		f.clock.Advance(totpPeriod * time.Second)
		req.MFAToken, _ = totp.GenerateCode(secret, f.clock.Now())
		if _, sess, err = f.svc.Login(ctx, req); err != nil || sess.Token == "" {
			t.Fatalf("login with a fresh code = %v", err)
		}
		_, _, err = f.svc.Login(ctx, req)
		wantFault(t, err, fault.Unauthorized, "Invalid MFA code") // replayed
		// A code of the previous step is older than the one accepted.
		req.MFAToken, _ = totp.GenerateCode(secret, f.clock.Now().Add(-totpPeriod*time.Second))
		_, _, err = f.svc.Login(ctx, req)
		wantFault(t, err, fault.Unauthorized, "Invalid MFA code")
		// The wrong password is still the password's error, code or not.
		f.clock.Advance(totpPeriod * time.Second)
		req.Password = "wrong-password"
		req.MFAToken, _ = totp.GenerateCode(secret, f.clock.Now())
		_, _, err = f.svc.Login(ctx, req)
		wantFault(t, err, fault.Unauthorized, "Invalid username or password")
	})
}

func TestWrongMFACodesCountTowardsTheLoginLimit(t *testing.T) {
	storetest.ForEachDialect(t, func(t *testing.T, st *store.Store) {
		f := newFixture(t, st)
		ctx := t.Context()
		alice := f.user(t, "alice", false)
		f.enrol(t, alice)
		req := LoginRequest{Username: "alice", Password: "alice-password", IP: "192.0.2.9", MFAToken: "not-a-code"}
		for i := 1; i <= 5; i++ {
			// Asking for the code in between neither counts nor resets the count.
			noCode := req
			noCode.MFAToken = ""
			if _, _, err := f.svc.Login(ctx, noCode); !errors.Is(err, ErrMFARequired) {
				t.Fatalf("attempt %d without a code = %v, want ErrMFARequired", i, err)
			}
			_, _, err := f.svc.Login(ctx, req)
			wantFault(t, err, fault.Unauthorized, "Invalid MFA code")
		}
		// Five wrong codes lock the pair, as five wrong passwords do.
		req.MFAToken = ""
		_, _, err := f.svc.Login(ctx, req)
		wantFault(t, err, fault.TooMany, "")
	})
}

func TestBackupCodeSignsInOnce(t *testing.T) {
	storetest.ForEachDialect(t, func(t *testing.T, st *store.Store) {
		f := newFixture(t, st)
		ctx := t.Context()
		alice := f.user(t, "alice", false)
		_, codes := f.enrol(t, alice)
		verifications := 0
		f.countVerifications(&verifications)
		req := LoginRequest{Username: "alice", Password: "alice-password", IP: "192.0.2.9",
			MFAToken: strings.ToLower(codes[3])}
		if _, sess, err := f.svc.Login(ctx, req); err != nil || sess.Token == "" {
			t.Fatalf("login with a backup code = %v", err)
		}
		if verifications != 2 { // the password, then the one code with that selector
			t.Errorf("%d hash verifications for a sign-in with a backup code, want 2", verifications)
		}
		_, _, err := f.svc.Login(ctx, req)
		wantFault(t, err, fault.Unauthorized, "Invalid MFA code")
		if n, _ := st.CountUnusedBackupCodes(ctx, alice.ID); n != backupCodeCount-1 {
			t.Fatalf("%d backup codes left, want %d", n, backupCodeCount-1)
		}
		// Another code still works; after DisableMFA the password alone does.
		req.MFAToken = codes[4]
		if _, _, err := f.svc.Login(ctx, req); err != nil {
			t.Fatalf("login with another backup code = %v", err)
		}
		if err := f.svc.DisableMFA(ctx, alice.ID); err != nil {
			t.Fatal(err)
		}
		req.MFAToken = ""
		if _, _, err := f.svc.Login(ctx, req); err != nil {
			t.Fatalf("login after DisableMFA = %v", err)
		}
	})
}
