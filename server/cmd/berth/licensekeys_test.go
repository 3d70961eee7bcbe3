package main

import (
	"crypto/ed25519"
	"encoding/base64"
	"testing"
)

// A release build (licenseKeysEnv empty) never reads extra keys, whatever the
// environment says; the e2e build reads them and refuses a malformed one.
func TestExtraLicenseKeys(t *testing.T) {
	pub, _, err := ed25519.GenerateKey(nil)
	if err != nil {
		t.Fatal(err)
	}
	env := map[string]string{"BERTH_LICENSE_KEYS": base64.StdEncoding.EncodeToString(pub)}
	getenv := func(k string) string { return env[k] }

	if keys, err := extraLicenseKeys(getenv); err != nil || keys != nil {
		t.Fatalf("release build: %v, %v; want no keys", keys, err)
	}

	old := licenseKeysEnv
	licenseKeysEnv = "BERTH_LICENSE_KEYS"
	t.Cleanup(func() { licenseKeysEnv = old })
	keys, err := extraLicenseKeys(getenv)
	if err != nil || len(keys) != 1 || !keys[0].Equal(pub) {
		t.Fatalf("e2e build: %v, %v", keys, err)
	}
	env["BERTH_LICENSE_KEYS"] = "bm90LWEta2V5"
	if _, err := extraLicenseKeys(getenv); err == nil {
		t.Fatal("a malformed key was accepted")
	}
	env["BERTH_LICENSE_KEYS"] = ""
	if keys, err := extraLicenseKeys(getenv); err != nil || len(keys) != 0 {
		t.Fatalf("unset: %v, %v", keys, err)
	}
}
