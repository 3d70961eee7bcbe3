package main

import (
	"crypto/ed25519"
	"encoding/base64"
	"fmt"
	"strings"
)

// licenseKeysEnv names an environment variable with extra public keys that
// verify licenses. It is empty in every release build, so a release trusts
// the vendor's keys only; the browser tests' binary (make e2e) is linked with
// -X main.licenseKeysEnv=BERTH_LICENSE_KEYS, so that a test can sign a
// license of its own and drive the enterprise screens. A linker flag rather
// than a build tag: only the link step differs from bin/berth.
var licenseKeysEnv string

// extraLicenseKeys reads the comma-separated base64 raw Ed25519 public keys
// of licenseKeysEnv; none when it is unset.
func extraLicenseKeys(getenv func(string) string) ([]ed25519.PublicKey, error) {
	if licenseKeysEnv == "" {
		return nil, nil
	}
	var out []ed25519.PublicKey
	for _, s := range strings.Split(getenv(licenseKeysEnv), ",") {
		if s = strings.TrimSpace(s); s == "" {
			continue
		}
		k, err := base64.StdEncoding.DecodeString(s)
		if err != nil || len(k) != ed25519.PublicKeySize {
			return nil, fmt.Errorf("%s: %q is not a base64 Ed25519 public key", licenseKeysEnv, s)
		}
		out = append(out, k)
	}
	return out, nil
}
