package license

import (
	"context"
	"crypto/ed25519"
	"crypto/rand"
	"encoding/base64"
	"strings"
	"testing"
	"time"

	"github.com/berth-dev/berth/server/internal/store"
	"github.com/berth-dev/berth/server/internal/store/storetest"
	"github.com/berth-dev/berth/shared/clocktest"
	"github.com/berth-dev/berth/shared/fault"
)

func TestVendorKeyIsAValidPublicKey(t *testing.T) {
	if keys := VendorKeys(); len(keys) != 1 || len(keys[0]) != ed25519.PublicKeySize {
		t.Fatalf("VendorKeys() = %v", keys)
	}
}

func TestInstallVerifiesSignatureEditionAndExpiry(t *testing.T) {
	storetest.ForEachDialect(t, func(t *testing.T, st *store.Store) {
		ctx := context.Background()
		pub, priv, _ := ed25519.GenerateKey(rand.Reader)
		_, other, _ := ed25519.GenerateKey(rand.Reader)
		clock := clocktest.New(time.Date(2026, 6, 1, 0, 0, 0, 0, time.UTC))
		m, err := New(ctx, st, []ed25519.PublicKey{pub}, clock.Now)
		if err != nil {
			t.Fatal(err)
		}
		if m.Enterprise() {
			t.Fatal("enterprise without a license")
		}
		expires := clock.Now().Add(48 * time.Hour)
		sign := func(l License, k ed25519.PrivateKey) string {
			d, err := Sign(l, k)
			if err != nil {
				t.Fatal(err)
			}
			return d
		}
		good := License{ID: "1", Customer: "ACME", Edition: "enterprise", IssuedAt: clock.Now(), ExpiresAt: &expires}
		past := clock.Now().Add(-time.Second)
		expired := good
		expired.ExpiresAt = &past
		community := good
		community.Edition = "community"
		valid := sign(good, priv)
		payload, sig, _ := strings.Cut(valid, ".")
		rawSig, _ := base64.RawURLEncoding.DecodeString(sig)
		rawSig[0] ^= 1
		for name, doc := range map[string]string{
			"other key": sign(good, other), "expired": sign(expired, priv), "other edition": sign(community, priv),
			"flipped signature bit": payload + "." + base64.RawURLEncoding.EncodeToString(rawSig),
			"no signature":          payload, "empty": "", "garbage": "x.y",
		} {
			if _, err := m.Install(ctx, doc, ""); fault.KindOf(err) != fault.Invalid {
				t.Errorf("%s: Install = %v, want an Invalid fault", name, err)
			}
		}
		if m.Enterprise() {
			t.Fatal("a refused license unlocked enterprise features")
		}
		if _, err := m.Install(ctx, valid, ""); err != nil {
			t.Fatal(err)
		}
		if !m.Enterprise() {
			t.Fatal("a valid license did not unlock enterprise features")
		}
		// A restart finds it again; a key change does not trust it.
		again, _ := New(ctx, st, []ed25519.PublicKey{pub}, clock.Now)
		if !again.Enterprise() {
			t.Error("the installed license was not loaded at start")
		}
		if untrusting, _ := New(ctx, st, nil, clock.Now); untrusting.Enterprise() {
			t.Error("a Manager without trusted keys accepted the stored license")
		}
		// It expires in place.
		clock.Advance(48 * time.Hour)
		if m.Enterprise() {
			t.Error("still enterprise after expiry")
		}
		if err := m.Remove(ctx); err != nil {
			t.Fatal(err)
		}
		if _, ok := m.Current(); ok {
			t.Error("license still present after Remove")
		}
	})
}

// A license installed or removed through one replica shows on the others
// sharing the database within reloadAfter.
func TestLicenseInstalledThroughAnotherReplicaShows(t *testing.T) {
	storetest.ForEachDialect(t, func(t *testing.T, st *store.Store) {
		ctx := context.Background()
		pub, priv, _ := ed25519.GenerateKey(rand.Reader)
		clock := clocktest.New(time.Date(2026, 6, 1, 0, 0, 0, 0, time.UTC))
		a, err := New(ctx, st, []ed25519.PublicKey{pub}, clock.Now)
		if err != nil {
			t.Fatal(err)
		}
		b, err := New(ctx, st, []ed25519.PublicKey{pub}, clock.Now)
		if err != nil {
			t.Fatal(err)
		}
		doc, err := Sign(License{ID: "l-1", Customer: "Acme", Edition: "enterprise", IssuedAt: clock.Now()}, priv)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := a.Install(ctx, doc, ""); err != nil {
			t.Fatal(err)
		}
		if !a.Enterprise() {
			t.Fatal("the installing replica is not enterprise")
		}
		clock.Advance(reloadAfter)
		if l, ok := b.Current(); !ok || l.ID != "l-1" || !b.Enterprise() {
			t.Fatalf("the other replica after %v: %+v, %v", reloadAfter, l, ok)
		}
		if err := a.Remove(ctx); err != nil {
			t.Fatal(err)
		}
		clock.Advance(reloadAfter)
		if b.Enterprise() {
			t.Fatal("the other replica still enterprise after the license was removed")
		}
	})
}
