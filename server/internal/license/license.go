// Package license provides the edition of a Berth instance: a license is a
// document signed with Ed25519 by the vendor and verified against public keys
// compiled into the binary. A valid, unexpired enterprise license unlocks the
// enterprise features (LDAP, role mappings, custom roles, the audit listing).
//
// Document format: base64url(JSON payload) "." base64url(signature of the
// payload bytes).
package license

import (
	"context"
	"crypto/ed25519"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/berth-dev/berth/server/internal/store"
	"github.com/berth-dev/berth/shared/fault"
)

// VendorKey is the public key that signs production licenses (base64).
// The private key never enters this repository.
const VendorKey = "jeG9BLDMj1QIKbdAyKTw6cM2muy0rc100C8571Gj05Q="

// settingKey stores the installed document.
const settingKey = "license.document"

// License is the signed payload.
type License struct {
	ID        string     `json:"id"`
	Customer  string     `json:"customer"`
	Edition   string     `json:"edition"` // "enterprise"
	IssuedAt  time.Time  `json:"issuedAt"`
	ExpiresAt *time.Time `json:"expiresAt,omitempty"` // nil: perpetual
}

// Manager holds the installed license.
type Manager struct {
	store *store.Store
	keys  []ed25519.PublicKey
	now   func() time.Time

	mu       sync.Mutex
	current  *License
	loadedAt time.Time // when current was read from the store
}

// reloadAfter bounds how long a license installed or removed through
// another replica sharing the database takes to show here.
const reloadAfter = 2 * time.Second

// VendorKeys returns the compiled-in trusted keys.
func VendorKeys() []ed25519.PublicKey {
	k, err := base64.StdEncoding.DecodeString(VendorKey)
	if err != nil || len(k) != ed25519.PublicKeySize {
		return nil // a broken constant: no license verifies, which fails safe
	}
	return []ed25519.PublicKey{k}
}

// New returns a Manager trusting keys and loads the installed license, if
// any (a stored document that no longer verifies is ignored).
func New(ctx context.Context, st *store.Store, keys []ed25519.PublicKey, now func() time.Time) (*Manager, error) {
	if now == nil {
		now = time.Now
	}
	m := &Manager{store: st, keys: keys, now: now}
	l, err := m.load(ctx)
	if err != nil {
		return nil, err
	}
	m.current, m.loadedAt = l, now()
	return m, nil
}

// load reads the installed license from the store: nil when there is none
// or the stored document no longer verifies.
func (m *Manager) load(ctx context.Context) (*License, error) {
	doc, err := m.store.GetSetting(ctx, settingKey)
	if errors.Is(err, store.ErrNotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	if l, err := m.verify(doc); err == nil {
		return &l, nil
	}
	return nil, nil
}

var errInvalid = fault.New(fault.Invalid, "Invalid license")

// verify checks a document's signature against the trusted keys and decodes it.
func (m *Manager) verify(doc string) (License, error) {
	payload64, sig64, ok := strings.Cut(strings.TrimSpace(doc), ".")
	if !ok {
		return License{}, errInvalid
	}
	payload, err1 := base64.RawURLEncoding.DecodeString(payload64)
	sig, err2 := base64.RawURLEncoding.DecodeString(sig64)
	if err1 != nil || err2 != nil || len(sig) != ed25519.SignatureSize {
		return License{}, errInvalid
	}
	trusted := false
	for _, k := range m.keys {
		if len(k) == ed25519.PublicKeySize && ed25519.Verify(k, payload, sig) {
			trusted = true
			break
		}
	}
	if !trusted {
		return License{}, errInvalid.WithDetails("the signature does not match any trusted key")
	}
	var l License
	if err := json.Unmarshal(payload, &l); err != nil {
		return License{}, errInvalid.WithDetails("malformed payload")
	}
	if l.Edition != "enterprise" {
		return License{}, errInvalid.WithDetails(fmt.Sprintf("unknown edition %q", l.Edition))
	}
	return l, nil
}

// Install verifies doc and makes it the instance's license. A non-empty
// customer must be the name the license is issued to (the reference
// activates a license by name and key).
func (m *Manager) Install(ctx context.Context, doc, customer string) (License, error) {
	l, err := m.verify(doc)
	if err != nil {
		return License{}, err
	}
	if customer = strings.TrimSpace(customer); customer != "" && customer != l.Customer {
		return License{}, errInvalid.WithDetails("the license is issued to another name")
	}
	if l.ExpiresAt != nil && !m.now().Before(*l.ExpiresAt) {
		return License{}, errInvalid.WithDetails("the license has expired")
	}
	if err := m.store.SetSetting(ctx, settingKey, strings.TrimSpace(doc)); err != nil {
		return License{}, err
	}
	m.mu.Lock()
	m.current, m.loadedAt = &l, m.now()
	m.mu.Unlock()
	return l, nil
}

// Remove uninstalls the license.
func (m *Manager) Remove(ctx context.Context) error {
	if err := m.store.SetSetting(ctx, settingKey, ""); err != nil {
		return err
	}
	m.mu.Lock()
	m.current, m.loadedAt = nil, m.now()
	m.mu.Unlock()
	return nil
}

// Current returns the installed license, read again from the store when
// the last read is older than reloadAfter (another replica may have
// installed or removed one); when the store cannot be read, the last
// license read stays.
func (m *Manager) Current() (License, bool) {
	m.mu.Lock()
	stale := m.now().Sub(m.loadedAt) >= reloadAfter
	m.mu.Unlock()
	if stale {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		l, err := m.load(ctx)
		cancel()
		m.mu.Lock()
		m.loadedAt = m.now() // after a failed read too: asked again after reloadAfter
		if err == nil {
			m.current = l
		}
		m.mu.Unlock()
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.current == nil {
		return License{}, false
	}
	return *m.current, true
}

// Expiry returns when the installed license expires; false when none is
// installed or it is perpetual.
func (m *Manager) Expiry() (time.Time, bool) {
	l, ok := m.Current()
	if !ok || l.ExpiresAt == nil {
		return time.Time{}, false
	}
	return *l.ExpiresAt, true
}

// Enterprise reports whether a valid, unexpired enterprise license is installed.
func (m *Manager) Enterprise() bool {
	l, ok := m.Current()
	return ok && (l.ExpiresAt == nil || m.now().Before(*l.ExpiresAt))
}

// Sign makes a license document with a vendor private key (the vendor's
// tooling and tests use it; Berth itself only verifies).
func Sign(l License, key ed25519.PrivateKey) (string, error) {
	payload, err := json.Marshal(l)
	if err != nil {
		return "", err
	}
	sig := ed25519.Sign(key, payload)
	return base64.RawURLEncoding.EncodeToString(payload) + "." + base64.RawURLEncoding.EncodeToString(sig), nil
}
