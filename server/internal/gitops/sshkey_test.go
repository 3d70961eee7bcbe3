package gitops

import (
	"bytes"
	"crypto/ed25519"
	"crypto/rand"
	"encoding/pem"
	"testing"

	gitssh "github.com/go-git/go-git/v5/plumbing/transport/ssh"
	"golang.org/x/crypto/ssh"

	"github.com/berth-dev/berth/server/internal/store"
)

// TestEncryptedSSHKeySignsWithItsPassphrase: an ssh credential whose key is
// encrypted authenticates git over SSH with the key itself, opened with the
// passphrase it keeps.
func TestEncryptedSSHKeySignsWithItsPassphrase(t *testing.T) {
	pub, priv, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	block, err := ssh.MarshalPrivateKeyWithPassphrase(priv, "", []byte("pass"))
	if err != nil {
		t.Fatal(err)
	}
	key := string(pem.EncodeToMemory(block))
	auth, err := authMethod(&store.GitCredential{AuthType: AuthSSH, SSHPrivateKey: key, Password: "pass"})
	if err != nil {
		t.Fatal(err)
	}
	keys, ok := auth.(*gitssh.PublicKeys)
	if !ok {
		t.Fatalf("auth = %T, want SSH public keys", auth)
	}
	want, _ := ssh.NewPublicKey(pub)
	if !bytes.Equal(keys.Signer.PublicKey().Marshal(), want.Marshal()) || keys.User != "git" {
		t.Errorf("signer of %s, want the key's; user %q", ssh.FingerprintSHA256(keys.Signer.PublicKey()), keys.User)
	}
	for pass, want := range map[string]string{"": "SSH private key is encrypted: send its passphrase (sshPassphrase)",
		"wrong": "Wrong passphrase for the SSH private key"} {
		if _, err := authMethod(&store.GitCredential{AuthType: AuthSSH, SSHPrivateKey: key, Password: pass}); err == nil || err.Error() != want {
			t.Errorf("passphrase %q: %v, want %s", pass, err, want)
		}
	}
}
