package api_test

import (
	"context"
	"crypto/ed25519"
	"crypto/rand"
	"encoding/pem"
	"fmt"
	"strings"
	"testing"

	"golang.org/x/crypto/ssh"
)

// encryptedSSHKey is a fresh OpenSSH private key encrypted with passphrase.
func encryptedSSHKey(t *testing.T, passphrase string) string {
	t.Helper()
	_, priv, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	block, err := ssh.MarshalPrivateKeyWithPassphrase(priv, "", []byte(passphrase))
	if err != nil {
		t.Fatal(err)
	}
	return string(pem.EncodeToMemory(block))
}

// TestGitCredentialReadsSSHPassphrase: sshPassphrase (the reference's name)
// opens an encrypted SSH key at save time (a wrong or missing one is 400
// with a message that says which), is sealed at rest with the key, and is
// never answered.
func TestGitCredentialReadsSSHPassphrase(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	pass := "right-" + h.label
	key := encryptedSSHKey(t, pass)
	name := "ssh-" + h.label
	var cred map[string]any
	h.must(201, "POST", "/api/git/credentials", map[string]any{"name": name, "authType": "ssh",
		"sshPrivateKey": key, "sshPassphrase": pass}, &cred)
	if cred["hasSshKey"] != true {
		t.Errorf("created = %v, want hasSshKey", cred)
	}
	id := int64(cred["id"].(float64))
	path := fmt.Sprintf("/api/git/credentials/%d", id)
	for _, p := range []string{"/api/git/credentials", path} {
		status, body := h.do("GET", p, nil)
		if status != 200 || strings.Contains(string(body), pass) || strings.Contains(string(body), "PRIVATE KEY") {
			t.Errorf("GET %s = %d %s: the passphrase or key is answered", p, status, body)
		}
	}
	stored, err := h.store.GetGitCredential(context.Background(), id)
	if err != nil || stored.Password != pass || stored.SSHPrivateKey != key {
		t.Fatalf("stored credential = %+v, %v; want the key and its passphrase", stored.Name, err)
	}
	var rawPass, rawKey string
	if err := h.store.DB().QueryRow(`SELECT password, ssh_private_key FROM git_credentials WHERE id = ?`, id).Scan(&rawPass, &rawKey); err != nil {
		t.Fatal(err)
	}
	if rawPass == "" || strings.Contains(rawPass, pass) || strings.Contains(rawKey, "PRIVATE KEY") {
		t.Errorf("at rest: passphrase %q, key %.40q: want both sealed", rawPass, rawKey)
	}

	// The passphrase alone changes on PUT (the key kept), checked again.
	h.must(200, "PUT", path, map[string]any{"name": name, "sshPassphrase": pass}, nil)
	h.expectRefusals([]refusal{
		{"wrong passphrase", "POST", "/api/git/credentials", map[string]any{"name": name + "-w", "authType": "ssh",
			"sshPrivateKey": key, "sshPassphrase": "wrong"}, 400, "Wrong passphrase for the SSH private key"},
		{"no passphrase", "POST", "/api/git/credentials", map[string]any{"name": name + "-n", "authType": "ssh",
			"sshPrivateKey": key}, 400, "SSH private key is encrypted: send its passphrase (sshPassphrase)"},
		{"wrong passphrase on update", "PUT", path, map[string]any{"name": name, "sshPassphrase": "wrong"}, 400,
			"Wrong passphrase for the SSH private key"},
		{"passphrase and password differ", "POST", "/api/git/credentials", map[string]any{"name": name + "-d",
			"authType": "ssh", "sshPrivateKey": key, "sshPassphrase": pass, "password": "other"}, 400, "password and sshPassphrase differ"},
		{"passphrase of a password credential", "POST", "/api/git/credentials", map[string]any{"name": name + "-p",
			"authType": "password", "password": "x", "sshPassphrase": pass}, 400, "it needs authType ssh"},
	})
	if stored, _ := h.store.GetGitCredential(context.Background(), id); stored.Password != pass {
		t.Errorf("a refused update changed the passphrase")
	}
	// Berth's earlier name, password, still carries the passphrase.
	h.must(201, "POST", "/api/git/credentials", map[string]any{"name": name + "-b", "authType": "ssh",
		"sshPrivateKey": key, "password": pass}, nil)
	// A password credential's form may send an empty sshPassphrase.
	h.must(201, "POST", "/api/git/credentials", map[string]any{"name": name + "-e", "authType": "password",
		"password": "x", "sshPassphrase": ""}, nil)
}
