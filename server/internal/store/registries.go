package store

import (
	"context"
	"fmt"
	"time"

	"gorm.io/gorm"
)

// Registry is an image registry with optional credentials. Password is
// plaintext in memory and encrypted at rest.
type Registry struct {
	ID        int64
	Name      string
	URL       string // host[:port][/path] or a full URL
	Username  string
	Password  string
	IsDefault bool
	CreatedAt time.Time
	UpdatedAt time.Time
	LastTest  *RegistryTest // nil: never tested, or changed since
}

// RegistryTest is the outcome of a registry's last connection test.
type RegistryTest struct {
	At      time.Time
	Success bool
	Message string
}

// registryRow is a row of the registries table, the password sealed.
type registryRow struct {
	ID              int64
	Name            string
	URL             string `gorm:"column:url"`
	Username        string
	Password        string
	IsDefault       bool
	CreatedAt       dbTime
	UpdatedAt       dbTime
	LastTestAt      dbTime
	LastTestOK      bool `gorm:"column:last_test_ok"`
	LastTestMessage string
}

func (registryRow) TableName() string { return "registries" }

func (s *Store) registry(r registryRow) (Registry, error) {
	password, err := s.box.Decrypt(r.Password)
	if err != nil {
		return Registry{}, fmt.Errorf("registry %d: password: %w", r.ID, err)
	}
	reg := Registry{
		ID: r.ID, Name: r.Name, URL: r.URL, Username: r.Username, Password: password, IsDefault: r.IsDefault,
		CreatedAt: r.CreatedAt.Time, UpdatedAt: r.UpdatedAt.Time,
	}
	if r.LastTestAt.Valid {
		reg.LastTest = &RegistryTest{At: r.LastTestAt.Time, Success: r.LastTestOK, Message: r.LastTestMessage}
	}
	return reg, nil
}

// ListRegistries returns every registry ordered by id.
func (s *Store) ListRegistries(ctx context.Context) ([]Registry, error) {
	var rows []registryRow
	if err := s.db.WithContext(ctx).Order("id").Find(&rows).Error; err != nil {
		return nil, fmt.Errorf("store: list registries: %w", err)
	}
	out := make([]Registry, 0, len(rows))
	for _, r := range rows {
		reg, err := s.registry(r)
		if err != nil {
			return nil, fmt.Errorf("store: list registries: %w", err)
		}
		out = append(out, reg)
	}
	return out, nil
}

// GetRegistry returns a registry, or ErrNotFound.
func (s *Store) GetRegistry(ctx context.Context, id int64) (Registry, error) {
	var r registryRow
	if err := s.db.WithContext(ctx).Where("id = ?", id).Take(&r).Error; err != nil {
		return Registry{}, fmt.Errorf("store: get registry %d: %w", id, translate(err))
	}
	reg, err := s.registry(r)
	if err != nil {
		return Registry{}, fmt.Errorf("store: get registry %d: %w", id, err)
	}
	return reg, nil
}

// CreateRegistry inserts r (ErrConflict on a taken name). When r is the
// default, the previous default stops being it, in the same transaction.
func (s *Store) CreateRegistry(ctx context.Context, r *Registry) error {
	password, err := s.box.Encrypt(r.Password)
	if err != nil {
		return fmt.Errorf("store: create registry: %w", err)
	}
	t := now()
	row := registryRow{Name: r.Name, URL: r.URL, Username: r.Username, Password: password, IsDefault: r.IsDefault,
		CreatedAt: timeValue(t), UpdatedAt: timeValue(t)}
	err = s.db.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		if r.IsDefault {
			if err := clearDefaultRegistry(ctx, tx); err != nil {
				return err
			}
		}
		return tx.Create(&row).Error
	})
	if err != nil {
		return fmt.Errorf("store: create registry %q: %w", r.Name, translate(err))
	}
	r.ID, r.CreatedAt, r.UpdatedAt = row.ID, t, t
	return nil
}

// UpdateRegistry writes every field of r by ID (the default moves to r when
// r is the default).
func (s *Store) UpdateRegistry(ctx context.Context, r *Registry) error {
	password, err := s.box.Encrypt(r.Password)
	if err != nil {
		return fmt.Errorf("store: update registry: %w", err)
	}
	t := now()
	err = s.db.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		if r.IsDefault {
			if err := clearDefaultRegistry(ctx, tx); err != nil {
				return err
			}
		}
		return oneRow(tx.Model(&registryRow{}).Where("id = ?", r.ID).Updates(map[string]any{
			"name": r.Name, "url": r.URL, "username": r.Username, "password": password,
			"is_default": r.IsDefault, "updated_at": timeValue(t),
			// A changed registry's last test no longer tells about it.
			"last_test_at": dbTime{}, "last_test_ok": false, "last_test_message": "",
		}))
	})
	if err != nil {
		return fmt.Errorf("store: update registry %d: %w", r.ID, err)
	}
	r.UpdatedAt, r.LastTest = t, nil
	return nil
}

// RecordRegistryTest keeps the outcome of registry id's connection test
// (ErrNotFound when there is no such registry).
func (s *Store) RecordRegistryTest(ctx context.Context, id int64, test RegistryTest) error {
	err := oneRow(s.db.WithContext(ctx).Model(&registryRow{}).Where("id = ?", id).Updates(map[string]any{
		"last_test_at": timeValue(test.At), "last_test_ok": test.Success, "last_test_message": test.Message,
	}))
	if err != nil {
		return fmt.Errorf("store: record test of registry %d: %w", id, err)
	}
	return nil
}

func clearDefaultRegistry(ctx context.Context, tx *gorm.DB) error {
	return tx.WithContext(ctx).Model(&registryRow{}).Where("is_default = ?", true).Update("is_default", false).Error
}

// DeleteRegistry deletes a registry, or answers ErrNotFound.
func (s *Store) DeleteRegistry(ctx context.Context, id int64) error {
	if err := oneRow(s.db.WithContext(ctx).Where("id = ?", id).Delete(&registryRow{})); err != nil {
		return fmt.Errorf("store: delete registry %d: %w", id, err)
	}
	return nil
}
