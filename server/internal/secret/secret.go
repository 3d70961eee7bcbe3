// Package secret provides AES-256-GCM encryption of secret fields stored at rest
// (TLS keys, agent tokens, passwords), and the loading of the key.
package secret

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/rand"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/berth-dev/berth/shared/atomicfile"
	"strings"
)

// KeyFile is the name of the generated key file inside the data directory.
const KeyFile = ".encryption_key"

// prefix marks an encrypted value, so that a plain value is never mistaken for one.
const prefix = "enc:v1:"

// Box encrypts and decrypts field values with one key.
type Box struct {
	aead cipher.AEAD
}

// New returns a Box for a 32-byte key.
func New(key []byte) (*Box, error) {
	if len(key) != 32 {
		return nil, fmt.Errorf("secret: key must be 32 bytes, got %d", len(key))
	}
	block, err := aes.NewCipher(key)
	if err != nil {
		return nil, err
	}
	aead, err := cipher.NewGCM(block)
	if err != nil {
		return nil, err
	}
	return &Box{aead: aead}, nil
}

// Encrypt returns the sealed form of plain. The empty string stays empty, so
// that "no secret" needs no decryption.
func (b *Box) Encrypt(plain string) (string, error) {
	if plain == "" {
		return "", nil
	}
	nonce := make([]byte, b.aead.NonceSize())
	if _, err := rand.Read(nonce); err != nil {
		return "", err
	}
	sealed := b.aead.Seal(nonce, nonce, []byte(plain), nil)
	return prefix + base64.RawStdEncoding.EncodeToString(sealed), nil
}

// Decrypt opens a value produced by Encrypt.
func (b *Box) Decrypt(sealed string) (string, error) {
	if sealed == "" {
		return "", nil
	}
	rest, ok := strings.CutPrefix(sealed, prefix)
	if !ok {
		return "", errors.New("secret: value is not encrypted")
	}
	raw, err := base64.RawStdEncoding.DecodeString(rest)
	if err != nil {
		return "", fmt.Errorf("secret: decode: %w", err)
	}
	n := b.aead.NonceSize()
	if len(raw) < n {
		return "", errors.New("secret: value too short")
	}
	plain, err := b.aead.Open(nil, raw[:n], raw[n:], nil)
	if err != nil {
		return "", errors.New("secret: cannot decrypt (wrong ENCRYPTION_KEY?)")
	}
	return string(plain), nil
}

// LoadKey returns the encryption key. A non-empty configured key is used as is:
// 64 hex digits or base64 of 32 bytes. Otherwise the key is read from
// dataDir/.encryption_key, which is generated (mode 0600) when absent.
func LoadKey(dataDir, configured string) ([]byte, error) {
	if configured != "" {
		return parseKey(configured)
	}
	path := filepath.Join(dataDir, KeyFile)
	data, err := os.ReadFile(path)
	if err == nil {
		return parseKey(strings.TrimSpace(string(data)))
	}
	if !errors.Is(err, os.ErrNotExist) {
		return nil, fmt.Errorf("secret: read key file: %w", err)
	}
	key := make([]byte, 32)
	if _, err := rand.Read(key); err != nil {
		return nil, err
	}
	if err := atomicfile.Write(path, []byte(hex.EncodeToString(key)+"\n"), 0o600); err != nil {
		return nil, fmt.Errorf("secret: write key file: %w", err)
	}
	return key, nil
}

func parseKey(s string) ([]byte, error) {
	if len(s) == 64 {
		if k, err := hex.DecodeString(s); err == nil {
			return k, nil
		}
	}
	for _, enc := range []*base64.Encoding{base64.StdEncoding, base64.RawStdEncoding, base64.URLEncoding, base64.RawURLEncoding} {
		if k, err := enc.DecodeString(s); err == nil && len(k) == 32 {
			return k, nil
		}
	}
	return nil, errors.New("secret: ENCRYPTION_KEY must be 64 hex digits or base64 of 32 bytes")
}
