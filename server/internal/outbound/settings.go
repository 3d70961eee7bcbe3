package outbound

import (
	"context"
	"encoding/json"
	"errors"

	"github.com/berth-dev/berth/server/internal/store"
)

// SettingKey is the settings-table key of the admin's outbound policy.
const SettingKey = "security.outbound"

// settingStore is where the admin's policy is kept: the store.
type settingStore interface {
	GetSetting(ctx context.Context, key string) (string, error)
	SetSetting(ctx context.Context, key, value string) error
}

// Settings is the outbound policy in force: the admin's setting, else the
// configured default (OUTBOUND_ALLOW).
type Settings struct {
	store settingStore
	def   Policy
}

// NewSettings returns the policy kept in st, def until an admin saves one.
func NewSettings(st settingStore, def Policy) *Settings {
	return &Settings{store: st, def: def}
}

// Policy is the policy in force. A nil Settings (a service not wired to
// the admin setting, as in its package tests) answers Open.
func (s *Settings) Policy(ctx context.Context) (Policy, error) {
	if s == nil {
		return Open, nil
	}
	v, err := s.store.GetSetting(ctx, SettingKey)
	if errors.Is(err, store.ErrNotFound) {
		return s.def, nil
	}
	if err != nil {
		return Policy{}, err
	}
	p := s.def
	if err := json.Unmarshal([]byte(v), &p); err != nil {
		return s.def, nil //nolint:nilerr // an unreadable value is no value
	}
	return p, nil
}

// Save stores p as the admin's policy.
func (s *Settings) Save(ctx context.Context, p Policy) error {
	b, err := json.Marshal(p)
	if err != nil {
		return err
	}
	return s.store.SetSetting(ctx, SettingKey, string(b))
}

// Context is ctx carrying the policy in force (WithPolicy), for clients
// built on ContextClient.
func (s *Settings) Context(ctx context.Context) (context.Context, error) {
	p, err := s.Policy(ctx)
	if err != nil {
		return ctx, err
	}
	return WithPolicy(ctx, p), nil
}
