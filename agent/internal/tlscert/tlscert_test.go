package tlscert

import (
	"crypto/sha256"
	"crypto/x509"
	"encoding/hex"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestSelfSignedPairIsKeptAndItsFingerprintStable(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "tls")
	first, created, err := LoadOrCreate(dir, []string{"agent.example", "10.1.2.3"})
	if err != nil || !created {
		t.Fatalf("first start: created %v, err %v", created, err)
	}
	again, created, err := LoadOrCreate(dir, []string{"other"})
	if err != nil || created {
		t.Fatalf("second start: created %v, err %v", created, err)
	}
	if Fingerprint(first) != Fingerprint(again) {
		t.Error("the fingerprint changed across starts")
	}
	leaf, err := x509.ParseCertificate(first.Certificate[0])
	if err != nil {
		t.Fatal(err)
	}
	if err := leaf.VerifyHostname("agent.example"); err != nil {
		t.Error(err)
	}
	if err := leaf.VerifyHostname("10.1.2.3"); err != nil {
		t.Error(err)
	}
	sum := sha256.Sum256(first.Certificate[0])
	if want := strings.ToUpper(hex.EncodeToString(sum[:])); strings.ReplaceAll(Fingerprint(first), ":", "") != want {
		t.Errorf("Fingerprint = %s, want the SHA-256 of the DER %s", Fingerprint(first), want)
	}
	info, err := os.Stat(filepath.Join(dir, "agent.key"))
	if err != nil {
		t.Fatal(err)
	}
	if info.Mode().Perm() != 0o600 {
		t.Errorf("agent.key mode = %v, want 0600", info.Mode().Perm())
	}
}
