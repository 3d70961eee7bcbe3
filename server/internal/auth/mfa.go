package auth

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/subtle"
	"errors"
	"fmt"
	"image/png"
	"strings"
	"time"

	"github.com/pquerna/otp"
	"github.com/pquerna/otp/hotp"
	"github.com/pquerna/otp/totp"

	"github.com/berth-dev/berth/server/internal/store"
	"github.com/berth-dev/berth/shared/fault"
)

// TOTP parameters: the RFC 6238 defaults that every authenticator app reads
// from the otpauth URL.
const (
	totpPeriod  = 30 // seconds per time step
	totpSkew    = 1  // steps either side of now accepted, for phones whose clock drifts
	totpDigits  = otp.DigitsSix
	totpIssuer  = "Berth"
	totpQRPixel = 256 // width and height of the enrolment QR code
)

// Backup codes: backupCodeCount codes of backupCodeLen characters from
// backupAlphabet (Crockford's base32: no I, L, O or U to misread), shown as
// two groups of five. The first selectorLen characters are kept in clear to
// find the code's hash; the other 40 bits are only in the argon2id hash.
const (
	backupCodeCount = 10
	backupCodeLen   = 10
	selectorLen     = 2
	backupAlphabet  = "0123456789ABCDEFGHJKMNPQRSTVWXYZ"
)

// ErrMFARequired answers a sign-in whose password is right for a user with
// MFA on, made without a code: the client asks for one and signs in again.
var ErrMFARequired = errors.New("auth: MFA code required")

var (
	// errInvalidMFACode refuses a sign-in with a wrong, reused or malformed code.
	errInvalidMFACode = fault.New(fault.Unauthorized, "Invalid MFA code")
	// errWrongEnrolmentCode refuses the confirmation of an enrolment.
	errWrongEnrolmentCode = fault.New(fault.Invalid, "Invalid MFA code")
	errNoEnrolment        = fault.New(fault.Invalid, "No MFA setup is in progress: start the setup again")
	errMFALocalOnly       = fault.New(fault.Invalid,
		"MFA is available for local accounts only: LDAP and single sign-on accounts are protected by their identity provider")
)

// MFAEnrolment is a started enrolment: the secret to enter in an
// authenticator app, its otpauth URL, and that URL as a PNG QR code.
type MFAEnrolment struct {
	Secret string
	URL    string
	QRPNG  []byte
}

// BeginMFA starts the MFA enrolment of user: a new secret, kept as pending
// until ConfirmMFA sees a code of it (MFA, when already on, stays on with
// the old secret meanwhile). Only local accounts enrol.
func (s *Service) BeginMFA(ctx context.Context, user store.User) (MFAEnrolment, error) {
	if user.AuthProvider != "local" {
		return MFAEnrolment{}, errMFALocalOnly
	}
	key, err := totp.Generate(totp.GenerateOpts{Issuer: totpIssuer, AccountName: user.Username, Period: totpPeriod,
		SecretSize: 20, Digits: totpDigits, Algorithm: otp.AlgorithmSHA1})
	if err != nil {
		return MFAEnrolment{}, fmt.Errorf("auth: generate TOTP secret: %w", err)
	}
	img, err := key.Image(totpQRPixel, totpQRPixel)
	if err != nil {
		return MFAEnrolment{}, fmt.Errorf("auth: TOTP QR code: %w", err)
	}
	var buf bytes.Buffer
	if err := png.Encode(&buf, img); err != nil {
		return MFAEnrolment{}, fmt.Errorf("auth: TOTP QR code: %w", err)
	}
	if err := s.store.SetPendingMFA(ctx, user.ID, key.Secret()); err != nil {
		return MFAEnrolment{}, err
	}
	return MFAEnrolment{Secret: key.Secret(), URL: key.URL(), QRPNG: buf.Bytes()}, nil
}

// ConfirmMFA completes the user's enrolment with a code of its secret: MFA
// is on from then, the code cannot sign in again, and the answer is the new
// backup codes in clear, which exist nowhere else (only their hashes are
// kept).
func (s *Service) ConfirmMFA(ctx context.Context, userID int64, code string) ([]string, error) {
	m, err := s.store.GetMFA(ctx, userID)
	if err != nil {
		return nil, err
	}
	if m.PendingSecret == "" {
		return nil, errNoEnrolment
	}
	step, ok := matchTOTP(m.PendingSecret, code, s.now())
	if !ok {
		return nil, errWrongEnrolmentCode
	}
	codes, hashed, err := s.newBackupCodes(ctx)
	if err != nil {
		return nil, err
	}
	if err := s.store.EnableMFA(ctx, m, step, hashed); err != nil {
		if errors.Is(err, store.ErrNotFound) {
			return nil, errNoEnrolment // confirmed, replaced or turned off meanwhile
		}
		return nil, err
	}
	return codes, nil
}

// DisableMFA turns MFA off for the user: the secret, any enrolment and the
// backup codes are forgotten.
func (s *Service) DisableMFA(ctx context.Context, userID int64) error {
	return s.store.DisableMFA(ctx, userID)
}

var (
	errConfirmRequired = fault.New(fault.Invalid, "Your current password or a current MFA code is required")
	errConfirmWrong    = fault.New(fault.Forbidden, "Your current password or MFA code is incorrect")
)

// ConfirmIdentity re-checks who is making a sensitive change (turning MFA
// off): the current password of user userID, or a current code of their
// own MFA (TOTP or backup code, spent like at sign-in). A stolen session
// alone does not suffice. Wrong answers count against the login limit of
// that user from ip, so that codes cannot be tried at leisure.
func (s *Service) ConfirmIdentity(ctx context.Context, userID int64, password, code, ip string) error {
	password, code = strings.TrimSpace(password), strings.TrimSpace(code)
	if password == "" && code == "" {
		return errConfirmRequired
	}
	u, err := s.GetUser(ctx, userID)
	if err != nil {
		return err
	}
	key := ip + "\x00" + strings.ToLower(u.Username)
	if wait, locked := s.loginLocked(key, ip); locked {
		return tooMany(wait)
	}
	ok := false
	if password != "" && u.PasswordHash != "" {
		good, err := s.verify(ctx, password, u.PasswordHash)
		if err != nil && ctx.Err() != nil {
			return err
		}
		ok = err == nil && good
	}
	if !ok && code != "" {
		m, err := s.store.GetMFA(ctx, u.ID)
		if err != nil {
			return err
		}
		if m.Enabled() { // checkMFA lets anything through for a user without MFA
			err := s.checkMFA(ctx, u, code)
			if err != nil && !errors.Is(err, errInvalidMFACode) {
				return err
			}
			ok = err == nil
		}
	}
	if !ok {
		if wait, locked := s.loginFailed(key, ip); locked {
			return tooMany(wait)
		}
		return errConfirmWrong
	}
	return nil
}

// checkMFA is the second step of a sign-in of user, whose password was
// right: nil when the user has no MFA or code is a valid TOTP code not
// accepted before or an unused backup code (then spent); ErrMFARequired
// without a code; errInvalidMFACode otherwise.
func (s *Service) checkMFA(ctx context.Context, user store.User, code string) error {
	m, err := s.store.GetMFA(ctx, user.ID)
	if err != nil {
		return err
	}
	if !m.Enabled() {
		return nil
	}
	code = strings.TrimSpace(code)
	if code == "" {
		return ErrMFARequired
	}
	if backup, ok := normalizeBackupCode(code); ok {
		return s.useBackupCode(ctx, user.ID, backup)
	}
	step, ok := matchTOTP(m.Secret, code, s.now())
	if !ok {
		return errInvalidMFACode
	}
	won, err := s.store.UseMFAStep(ctx, m, step)
	if err != nil {
		return err
	}
	if !won {
		return errInvalidMFACode // this step's code, or a later one, was accepted already
	}
	return nil
}

// useBackupCode spends the user's backup code (normalized). An unknown code
// costs one hash verification too, like a known one.
func (s *Service) useBackupCode(ctx context.Context, userID int64, code string) error {
	list, err := s.store.UnusedBackupCodes(ctx, userID, code[:selectorLen])
	if err != nil {
		return err
	}
	if len(list) == 0 {
		if _, err := s.verify(ctx, code, s.dummyHash); err != nil && ctx.Err() != nil {
			return err
		}
		return errInvalidMFACode
	}
	for _, c := range list {
		ok, err := s.verify(ctx, code, c.Hash)
		if err != nil && ctx.Err() != nil {
			return err
		}
		if err != nil {
			s.log.Error("stored backup code hash is malformed", "user_id", userID, "code_id", c.ID)
			continue
		}
		if !ok {
			continue
		}
		won, err := s.store.UseBackupCode(ctx, c.ID, s.now())
		if err != nil {
			return err
		}
		if !won {
			return errInvalidMFACode // spent by a concurrent sign-in
		}
		return nil
	}
	return errInvalidMFACode
}

// newBackupCodes returns backupCodeCount fresh backup codes as shown to the
// user (XXXXX-XXXXX) and as stored (selector and argon2id hash of the
// normalized code). The selectors differ, so a sign-in verifies one hash.
func (s *Service) newBackupCodes(ctx context.Context) ([]string, []store.BackupCode, error) {
	shown := make([]string, 0, backupCodeCount)
	stored := make([]store.BackupCode, 0, backupCodeCount)
	selectors := map[string]bool{}
	for len(shown) < backupCodeCount {
		code := randomBackupCode()
		sel := code[:selectorLen]
		if selectors[sel] {
			continue
		}
		selectors[sel] = true
		hash, err := HashPassword(ctx, code, s.argon)
		if err != nil {
			return nil, nil, err
		}
		shown = append(shown, code[:5]+"-"+code[5:])
		stored = append(stored, store.BackupCode{Selector: sel, Hash: hash})
	}
	return shown, stored, nil
}

// randomBackupCode returns backupCodeLen random characters of backupAlphabet.
func randomBackupCode() string {
	b := make([]byte, backupCodeLen)
	_, _ = rand.Read(b) // crypto/rand never fails on supported platforms
	for i := range b {
		b[i] = backupAlphabet[b[i]%byte(len(backupAlphabet))] // 256 is a multiple of 32: no bias
	}
	return string(b)
}

// normalizeBackupCode returns code as stored when it has the form of a
// backup code: case, spaces and dashes ignored, and the letters people type
// for digits read as those digits (Crockford's rules: I and L are 1, O is 0).
func normalizeBackupCode(code string) (string, bool) {
	var b strings.Builder
	for _, r := range strings.ToUpper(code) {
		switch {
		case r == '-' || r == ' ':
			continue
		case r == 'I' || r == 'L':
			r = '1'
		case r == 'O':
			r = '0'
		}
		if !strings.ContainsRune(backupAlphabet, r) {
			return "", false
		}
		b.WriteRune(r)
	}
	if b.Len() != backupCodeLen {
		return "", false
	}
	return b.String(), true
}

// totpStep is the RFC 6238 time step of t.
func totpStep(t time.Time) int64 {
	return t.Unix() / totpPeriod
}

// matchTOTP reports whether code (six digits, spaces ignored) is the code of
// secret for the time step of now or one within totpSkew of it, and which
// step it is the code of.
func matchTOTP(secret, code string, now time.Time) (int64, bool) {
	code = strings.ReplaceAll(strings.TrimSpace(code), " ", "")
	if len(code) != totpDigits.Length() || strings.Trim(code, "0123456789") != "" {
		return 0, false
	}
	opts := hotp.ValidateOpts{Digits: totpDigits, Algorithm: otp.AlgorithmSHA1}
	cur := totpStep(now)
	for _, step := range []int64{cur, cur - 1, cur + 1} {
		if step < 0 || step-cur > totpSkew || cur-step > totpSkew {
			continue
		}
		want, err := hotp.GenerateCodeCustom(secret, uint64(step), opts)
		if err != nil {
			return 0, false // not base32: never written by BeginMFA
		}
		if subtle.ConstantTimeCompare([]byte(want), []byte(code)) == 1 {
			return step, true
		}
	}
	return 0, false
}
