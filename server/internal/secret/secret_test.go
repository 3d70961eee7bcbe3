package secret

import (
	"bytes"
	"encoding/base64"
	"encoding/hex"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestEncryptDecryptRoundTrip(t *testing.T) {
	key := bytes.Repeat([]byte{7}, 32)
	b, err := New(key)
	if err != nil {
		t.Fatal(err)
	}
	for _, plain := range []string{"", "x", "-----BEGIN PRIVATE KEY-----\nabc\n", strings.Repeat("ü", 1000)} {
		sealed, err := b.Encrypt(plain)
		if err != nil {
			t.Fatal(err)
		}
		if plain != "" && (len(plain) > 4 && strings.Contains(sealed, plain) || !strings.HasPrefix(sealed, prefix)) {
			t.Errorf("sealed %q leaks or lacks the prefix", sealed)
		}
		got, err := b.Decrypt(sealed)
		if err != nil || got != plain {
			t.Errorf("Decrypt(Encrypt(%q)) = %q, %v", plain, got, err)
		}
	}
	a, _ := b.Encrypt("same")
	c, _ := b.Encrypt("same")
	if a == c {
		t.Error("two encryptions of one value are identical (nonce reuse)")
	}
}

func TestDecryptRejectsTamperingAndWrongKey(t *testing.T) {
	b1, _ := New(bytes.Repeat([]byte{1}, 32))
	b2, _ := New(bytes.Repeat([]byte{2}, 32))
	sealed, _ := b1.Encrypt("secret")
	if _, err := b2.Decrypt(sealed); err == nil {
		t.Error("decrypted with the wrong key")
	}
	raw, _ := base64.RawStdEncoding.DecodeString(strings.TrimPrefix(sealed, prefix))
	raw[len(raw)-1] ^= 1
	if _, err := b1.Decrypt(prefix + base64.RawStdEncoding.EncodeToString(raw)); err == nil {
		t.Error("decrypted a tampered value")
	}
	for _, bad := range []string{"plain", prefix + "!!", prefix + "AAAA"} {
		if _, err := b1.Decrypt(bad); err == nil {
			t.Errorf("Decrypt(%q) succeeded", bad)
		}
	}
}

func TestLoadKey(t *testing.T) {
	dir := t.TempDir()
	k1, err := LoadKey(dir, "")
	if err != nil || len(k1) != 32 {
		t.Fatalf("generated key: %d bytes, %v", len(k1), err)
	}
	fi, err := os.Stat(filepath.Join(dir, KeyFile))
	if err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("key file: %v, %v; want mode 0600", fi, err)
	}
	k2, err := LoadKey(dir, "")
	if err != nil || !bytes.Equal(k1, k2) {
		t.Fatalf("second load gave another key: %v", err)
	}
	want := bytes.Repeat([]byte{9}, 32)
	for _, configured := range []string{hex.EncodeToString(want), base64.StdEncoding.EncodeToString(want), base64.RawURLEncoding.EncodeToString(want)} {
		got, err := LoadKey(t.TempDir(), configured)
		if err != nil || !bytes.Equal(got, want) {
			t.Errorf("LoadKey(%q) = %x, %v", configured, got, err)
		}
	}
	for _, bad := range []string{"short", hex.EncodeToString(want[:16]), strings.Repeat("z", 64)} {
		if _, err := LoadKey(t.TempDir(), bad); err == nil {
			t.Errorf("LoadKey(%q) accepted a bad key", bad)
		}
	}
	if _, err := New(want[:16]); err == nil {
		t.Error("New accepted a 16-byte key")
	}
}
