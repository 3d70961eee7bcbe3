package store

import (
	"context"
	"errors"
	"fmt"
	"time"

	"gorm.io/gorm"
	"gorm.io/gorm/clause"
)

// MFA is a user's TOTP state. The secrets are base32 plaintext here and
// sealed at rest.
type MFA struct {
	UserID        int64
	Secret        string // the enabled secret; "" while MFA is off
	PendingSecret string // an enrolment awaiting its first code; "" when none
	LastStep      int64  // the last TOTP time step a code was accepted for
	EnabledAt     *time.Time

	// The sealed forms as read, so that a write applies only to the state
	// its caller checked (see EnableMFA and UseMFAStep).
	sealedSecret, sealedPending string
}

// Enabled reports whether sign-ins of the user need a second factor.
func (m MFA) Enabled() bool { return m.Secret != "" }

// BackupCode is a one-time code that stands in for a TOTP code. Hash is the
// PHC string of the whole code; Selector, its first characters in clear, so
// that a sign-in verifies one hash rather than all of them.
type BackupCode struct {
	ID       int64
	UserID   int64
	Selector string
	Hash     string
	UsedAt   *time.Time
}

// mfaRow is a row of the user_mfa table, the secrets sealed.
type mfaRow struct {
	UserID        int64 `gorm:"primaryKey"`
	Secret        string
	PendingSecret string
	LastStep      int64
	EnabledAt     dbTime
	UpdatedAt     dbTime
}

func (mfaRow) TableName() string { return "user_mfa" }

// backupCodeRow is a row of the user_mfa_backup_codes table.
type backupCodeRow struct {
	ID        int64
	UserID    int64
	Selector  string
	CodeHash  string
	UsedAt    dbTime
	CreatedAt dbTime
}

func (backupCodeRow) TableName() string { return "user_mfa_backup_codes" }

// GetMFA returns the MFA state of the user with the given id: the zero state
// (MFA off, no enrolment) when the user never enrolled.
func (s *Store) GetMFA(ctx context.Context, userID int64) (MFA, error) {
	var r mfaRow
	err := s.db.WithContext(ctx).Where("user_id = ?", userID).Take(&r).Error
	if errors.Is(err, gorm.ErrRecordNotFound) {
		return MFA{UserID: userID}, nil
	}
	if err != nil {
		return MFA{}, fmt.Errorf("store: get MFA of user %d: %w", userID, err)
	}
	m := MFA{UserID: r.UserID, LastStep: r.LastStep, EnabledAt: r.EnabledAt.ptr(),
		sealedSecret: r.Secret, sealedPending: r.PendingSecret}
	if m.Secret, err = s.box.Decrypt(r.Secret); err != nil {
		return MFA{}, fmt.Errorf("store: get MFA of user %d: secret: %w", userID, err)
	}
	if m.PendingSecret, err = s.box.Decrypt(r.PendingSecret); err != nil {
		return MFA{}, fmt.Errorf("store: get MFA of user %d: pending secret: %w", userID, err)
	}
	return m, nil
}

// SetPendingMFA records secret as the user's enrolment awaiting its first
// code, replacing any earlier one; an enabled secret stays in force until
// the enrolment is confirmed. A missing user is ErrNotFound.
func (s *Store) SetPendingMFA(ctx context.Context, userID int64, secret string) error {
	sealed, err := s.box.Encrypt(secret)
	if err != nil {
		return fmt.Errorf("store: set pending MFA of user %d: encrypt: %w", userID, err)
	}
	r := mfaRow{UserID: userID, PendingSecret: sealed, UpdatedAt: timeValue(now())}
	err = s.db.WithContext(ctx).Clauses(clause.OnConflict{
		Columns:   []clause.Column{{Name: "user_id"}},
		DoUpdates: clause.AssignmentColumns([]string{"pending_secret", "updated_at"}),
	}).Create(&r).Error
	if isForeignKeyViolation(err) {
		return fmt.Errorf("store: set pending MFA of user %d: user: %w", userID, ErrNotFound)
	}
	if err != nil {
		return fmt.Errorf("store: set pending MFA of user %d: %w", userID, translate(err))
	}
	return nil
}

// EnableMFA confirms the enrolment of m, as read by GetMFA: its pending
// secret becomes the user's secret, with step as the last accepted time
// step, codes replace the user's backup codes, and the user's MFAEnabled
// becomes true, all in one transaction. When the enrolment is no longer the
// one m read (confirmed, replaced or cancelled meanwhile) nothing changes
// and the answer is ErrNotFound.
func (s *Store) EnableMFA(ctx context.Context, m MFA, step int64, codes []BackupCode) error {
	if m.sealedPending == "" {
		return fmt.Errorf("store: enable MFA of user %d: no enrolment: %w", m.UserID, ErrNotFound)
	}
	t := now()
	err := s.db.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		err := oneRow(tx.Model(&mfaRow{}).Where("user_id = ? AND pending_secret = ?", m.UserID, m.sealedPending).
			Updates(map[string]any{"secret": m.sealedPending, "pending_secret": "", "last_step": step,
				"enabled_at": timeValue(t), "updated_at": timeValue(t)}))
		if err != nil {
			return err
		}
		if err := tx.Where("user_id = ?", m.UserID).Delete(&backupCodeRow{}).Error; err != nil {
			return err
		}
		if len(codes) > 0 {
			rows := make([]backupCodeRow, 0, len(codes))
			for _, c := range codes {
				rows = append(rows, backupCodeRow{UserID: m.UserID, Selector: c.Selector, CodeHash: c.Hash,
					CreatedAt: timeValue(t)})
			}
			if err := tx.Create(&rows).Error; err != nil {
				return err
			}
		}
		return oneRow(tx.Model(&userRow{}).Where("id = ?", m.UserID).
			Updates(map[string]any{"mfa_enabled": true, "updated_at": timeValue(t)}))
	})
	if err != nil {
		return fmt.Errorf("store: enable MFA of user %d: %w", m.UserID, translate(err))
	}
	return nil
}

// DisableMFA turns MFA off for the user with the given id: the secret, any
// enrolment and the backup codes go, and MFAEnabled becomes false, in one
// transaction. A missing user is ErrNotFound.
func (s *Store) DisableMFA(ctx context.Context, userID int64) error {
	t := now()
	err := s.db.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		err := oneRow(tx.Model(&userRow{}).Where("id = ?", userID).
			Updates(map[string]any{"mfa_enabled": false, "updated_at": timeValue(t)}))
		if err != nil {
			return err
		}
		if err := tx.Where("user_id = ?", userID).Delete(&backupCodeRow{}).Error; err != nil {
			return err
		}
		return tx.Where("user_id = ?", userID).Delete(&mfaRow{}).Error
	})
	if err != nil {
		return fmt.Errorf("store: disable MFA of user %d: %w", userID, err)
	}
	return nil
}

// UseMFAStep records step as the last time step a code of m's secret (as
// read by GetMFA) was accepted for. It reports false, changing nothing, when
// a code for this step or a later one was accepted already (a replay), or
// when the secret changed or MFA was turned off meanwhile. The check and the
// write are one statement, so of concurrent sign-ins with one code exactly
// one wins.
func (s *Store) UseMFAStep(ctx context.Context, m MFA, step int64) (bool, error) {
	if m.sealedSecret == "" {
		return false, nil
	}
	res := s.db.WithContext(ctx).Model(&mfaRow{}).
		Where("user_id = ? AND secret = ? AND last_step < ?", m.UserID, m.sealedSecret, step).
		Updates(map[string]any{"last_step": step, "updated_at": timeValue(now())})
	if res.Error != nil {
		return false, fmt.Errorf("store: use MFA step of user %d: %w", m.UserID, res.Error)
	}
	return res.RowsAffected == 1, nil
}

// UnusedBackupCodes returns the user's backup codes with the given selector
// that were not used yet.
func (s *Store) UnusedBackupCodes(ctx context.Context, userID int64, selector string) ([]BackupCode, error) {
	var rows []backupCodeRow
	err := s.db.WithContext(ctx).Where("user_id = ? AND selector = ? AND used_at IS NULL", userID, selector).
		Order("id").Find(&rows).Error
	if err != nil {
		return nil, fmt.Errorf("store: backup codes of user %d: %w", userID, err)
	}
	out := make([]BackupCode, 0, len(rows))
	for _, r := range rows {
		out = append(out, BackupCode{ID: r.ID, UserID: r.UserID, Selector: r.Selector, Hash: r.CodeHash,
			UsedAt: r.UsedAt.ptr()})
	}
	return out, nil
}

// CountUnusedBackupCodes returns how many of the user's backup codes are left.
func (s *Store) CountUnusedBackupCodes(ctx context.Context, userID int64) (int, error) {
	var n int64
	err := s.db.WithContext(ctx).Model(&backupCodeRow{}).Where("user_id = ? AND used_at IS NULL", userID).
		Count(&n).Error
	if err != nil {
		return 0, fmt.Errorf("store: count backup codes of user %d: %w", userID, err)
	}
	return int(n), nil
}

// UseBackupCode marks the backup code with the given id used at at. It
// reports false, changing nothing, when the code was used already or is
// gone; of concurrent uses exactly one wins.
func (s *Store) UseBackupCode(ctx context.Context, id int64, at time.Time) (bool, error) {
	res := s.db.WithContext(ctx).Model(&backupCodeRow{}).Where("id = ? AND used_at IS NULL", id).
		Update("used_at", timeValue(at.UTC()))
	if res.Error != nil {
		return false, fmt.Errorf("store: use backup code %d: %w", id, res.Error)
	}
	return res.RowsAffected == 1, nil
}
