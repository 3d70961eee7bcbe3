package api_test

import (
	"context"
	"crypto/ed25519"
	"crypto/rand"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"maps"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"golang.org/x/crypto/ssh"
)

// secretState is what a record's secret looks like from outside: the flag
// (or mask) the API answers with, and the plaintext the store opens.
type secretState struct {
	Has   bool
	Plain string
}

// secretRecord is one record with a sealed secret, as the table test of
// the rule drives it.
type secretRecord struct {
	name   string
	field  string // the secret's JSON field
	method string // of the update: PUT or PATCH
	// create makes the record with secret and answers its path.
	create func(h *harness, secret string) string
	// base is the body of an update that does not name the secret.
	base map[string]any
	// clearWith and setWith are fields sent along with "" and with a new
	// value (a TLS key goes with its certificate).
	clearWith, setWith map[string]any
	// required is the 400 message when "" cannot clear the secret because
	// the record's type needs it ("" then keeps nothing: the update fails).
	required string
	has      func(resp map[string]any) bool
	plain    func(h *harness, path string) string
	// works checks that the stored secret still does its job (optional).
	works  func(h *harness, path string) bool
	first  string
	second string
}

// TestEveryUpdateKeepsAnOmittedSecret checks the one rule for every record
// with a sealed secret: an update that omits the secret (or sends null, or
// the mask) keeps it, "" clears it, a value replaces it — and the flag the
// API answers with follows.
func TestEveryUpdateKeepsAnOmittedSecret(t *testing.T) {
	t.Parallel()
	h, dir := newLDAPHarness(t)
	reg := requireRegistry(t)
	key := sshKey(t)
	ctx := context.Background()
	idOf := func(_ *harness, path string) int64 { return lastID(path) }
	flag := func(name string) func(map[string]any) bool {
		return func(m map[string]any) bool { return m[name] == true }
	}
	masked := func(name string) func(map[string]any) bool {
		return func(m map[string]any) bool { return m[name] == "********" }
	}
	created := func(h *harness, path string, body map[string]any) string {
		var out struct {
			ID int64 `json:"id"`
		}
		h.must(201, "POST", path, body, &out)
		return fmt.Sprintf("%s/%d", path, out.ID)
	}
	repoID := lastID(created(h, "/api/git/repositories", map[string]any{"name": "stack-repo-" + h.label,
		"url": "https://example.test/app.git"}))

	records := []secretRecord{
		{
			name: "registry password", field: "password", method: "PUT",
			create: func(h *harness, secret string) string {
				return created(h, "/api/registries", map[string]any{"name": "reg-" + h.label, "url": reg.host,
					"username": reg.user, "password": secret})
			},
			// A client editing the name and URL: no username, no password.
			base: map[string]any{"name": "reg-" + h.label + "-renamed", "url": reg.host},
			has:  flag("hasCredentials"),
			plain: func(h *harness, path string) string {
				r, err := h.store.GetRegistry(ctx, idOf(h, path))
				if err != nil {
					h.t.Fatal(err)
				}
				if r.Username != reg.user {
					h.t.Errorf("registry username = %q, want %q kept", r.Username, reg.user)
				}
				return r.Password
			},
			works: func(h *harness, path string) bool {
				var test map[string]any
				h.must(200, "POST", "/api/registries/test?env=1", map[string]any{"id": idOf(h, path)}, &test)
				return test["success"] == true
			},
			first: reg.password, second: reg.password,
		},
		{
			name: "git credential password", field: "password", method: "PUT",
			create: func(h *harness, secret string) string {
				return created(h, "/api/git/credentials", map[string]any{"name": "cred-pw-" + h.label, "authType": "password",
					"username": "deploy", "password": secret})
			},
			base:     map[string]any{"name": "cred-pw-" + h.label + "-renamed"},
			required: "Password or token is required",
			has:      flag("hasPassword"),
			plain: func(h *harness, path string) string {
				c, err := h.store.GetGitCredential(ctx, idOf(h, path))
				if err != nil {
					h.t.Fatal(err)
				}
				if c.AuthType != "password" || c.Username != "deploy" {
					h.t.Errorf("credential = %s/%s, want password/deploy kept", c.AuthType, c.Username)
				}
				return c.Password
			},
			first: "token-1", second: "token-2",
		},
		{
			name: "git credential SSH key passphrase", field: "password", method: "PUT",
			create: func(h *harness, secret string) string {
				return created(h, "/api/git/credentials", map[string]any{"name": "cred-pass-" + h.label, "authType": "ssh",
					"sshPrivateKey": key, "password": secret})
			},
			base: map[string]any{"name": "cred-pass-" + h.label + "-renamed"},
			has:  flag("hasPassword"),
			plain: func(h *harness, path string) string {
				c, err := h.store.GetGitCredential(ctx, idOf(h, path))
				if err != nil {
					h.t.Fatal(err)
				}
				if c.AuthType != "ssh" || c.SSHPrivateKey != key {
					h.t.Errorf("credential = %s with key %t, want ssh and the key kept", c.AuthType, c.SSHPrivateKey == key)
				}
				return c.Password
			},
			first: "passphrase-1", second: "passphrase-2",
		},
		{
			name: "git credential SSH key", field: "sshPrivateKey", method: "PUT",
			create: func(h *harness, secret string) string {
				return created(h, "/api/git/credentials", map[string]any{"name": "cred-ssh-" + h.label, "authType": "ssh",
					"username": "git", "sshPrivateKey": secret})
			},
			base:     map[string]any{"name": "cred-ssh-" + h.label + "-renamed"},
			required: "SSH private key is required",
			has:      flag("hasSshKey"),
			plain: func(h *harness, path string) string {
				c, err := h.store.GetGitCredential(ctx, idOf(h, path))
				if err != nil {
					h.t.Fatal(err)
				}
				return c.SSHPrivateKey
			},
			first: key, second: sshKey(t),
		},
		{
			name: "git repository webhook secret", field: "webhookSecret", method: "PUT",
			create: func(h *harness, secret string) string {
				return created(h, "/api/git/repositories", map[string]any{"name": "repo-" + h.label,
					"url": "https://example.test/repo.git", "webhookEnabled": true, "webhookSecret": secret})
			},
			base: map[string]any{"name": "repo-" + h.label, "url": "https://example.test/repo.git", "webhookEnabled": true},
			has:  flag("hasWebhookSecret"),
			plain: func(h *harness, path string) string {
				r, err := h.store.GetGitRepository(ctx, idOf(h, path))
				if err != nil {
					h.t.Fatal(err)
				}
				return r.WebhookSecret
			},
			first: "hook-1", second: "hook-2",
		},
		{
			name: "git stack webhook secret", field: "webhookSecret", method: "PUT",
			create: func(h *harness, secret string) string {
				return created(h, "/api/git/stacks", map[string]any{"stackName": "gs-" + h.label, "environmentId": 1,
					"repositoryId": repoID, "webhookEnabled": true, "webhookSecret": secret})
			},
			base: map[string]any{"repositoryId": repoID, "webhookEnabled": true},
			has:  flag("hasWebhookSecret"),
			plain: func(h *harness, path string) string {
				g, err := h.store.GetGitStack(ctx, idOf(h, path))
				if err != nil {
					h.t.Fatal(err)
				}
				return g.WebhookSecret
			},
			first: "stack-hook-1", second: "stack-hook-2",
		},
		{
			name: "LDAP bind password", field: "bindPassword", method: "PATCH",
			create: func(h *harness, secret string) string {
				return created(h, "/api/auth/ldap", map[string]any{"name": "corp-" + h.label, "serverUrl": dir.URL,
					"bindDn": dir.BindDN, "bindPassword": secret, "baseDn": dir.Base})
			},
			base: map[string]any{"name": "corp-" + h.label + "-renamed"},
			has:  masked("bindPassword"),
			plain: func(h *harness, path string) string {
				c, err := h.store.GetLDAPConfig(ctx, idOf(h, path))
				if err != nil {
					h.t.Fatal(err)
				}
				return c.BindPassword
			},
			works: func(h *harness, path string) bool {
				var test map[string]any
				h.must(200, "POST", path+"/test", nil, &test)
				return test["success"] == true
			},
			first: dir.BindPassword, second: dir.BindPassword,
		},
		{
			name: "OIDC client secret", field: "clientSecret", method: "PATCH",
			create: func(h *harness, secret string) string {
				return created(h, "/api/auth/oidc", map[string]any{"name": "idp-" + h.label, "issuerUrl": "https://idp.example.test",
					"clientId": "berth", "clientSecret": secret, "redirectUri": "https://berth.example.test/api/auth/oidc/callback"})
			},
			base:     map[string]any{"name": "idp-" + h.label + "-renamed"},
			required: "clientSecret is required",
			has:      masked("clientSecret"),
			plain: func(h *harness, path string) string {
				p, err := h.store.GetOIDCProvider(ctx, idOf(h, path))
				if err != nil {
					h.t.Fatal(err)
				}
				return p.ClientSecret
			},
			first: "client-secret-1", second: "client-secret-2",
		},
		{
			name: "environment agent token", field: "agentToken", method: "PUT",
			create: func(h *harness, secret string) string {
				return created(h, "/api/environments", map[string]any{"name": "agent-" + h.label, "connectionType": "agent-edge",
					"agentToken": secret})
			},
			base: map[string]any{"name": "agent-" + h.label + "-renamed"},
			has:  flag("hasAgentToken"),
			plain: func(h *harness, path string) string {
				e, err := h.store.GetEnvironment(ctx, idOf(h, path))
				if err != nil {
					h.t.Fatal(err)
				}
				return e.AgentToken
			},
			first: "agent-token-1", second: "agent-token-2",
		},
		{
			name: "environment TLS key", field: "tlsKey", method: "PUT",
			create: func(h *harness, secret string) string {
				return created(h, "/api/environments", map[string]any{"name": "tls-" + h.label, "connectionType": "direct",
					"host": "127.0.0.1", "port": 2376, "protocol": "https", "tlsCert": "CERT", "tlsKey": secret})
			},
			base:      map[string]any{"name": "tls-" + h.label + "-renamed"},
			clearWith: map[string]any{"tlsCert": ""},
			setWith:   map[string]any{"tlsCert": "CERT"},
			has:       flag("hasTlsKey"),
			plain: func(h *harness, path string) string {
				e, err := h.store.GetEnvironment(ctx, idOf(h, path))
				if err != nil {
					h.t.Fatal(err)
				}
				return e.TLSKey
			},
			first: "KEY-1", second: "KEY-2",
		},
	}
	for _, r := range records {
		t.Run(r.name, func(t *testing.T) {
			parent := h.t
			h.t = t
			defer func() { h.t = parent }()
			path := r.create(h, r.first)
			update := func(want int, secret any, present bool, extra map[string]any) map[string]any {
				t.Helper()
				body := maps.Clone(r.base)
				maps.Copy(body, extra)
				if present {
					body[r.field] = secret
				}
				var out map[string]any
				h.must(want, r.method, path, body, &out)
				if out["createdAt"] == "0001-01-01T00:00:00Z" {
					t.Errorf("%s %s answered a zero createdAt: %v", r.method, path, out)
				}
				return out
			}
			check := func(step string, resp map[string]any, want secretState) {
				t.Helper()
				got := secretState{Plain: r.plain(h, path)}
				if resp != nil {
					got.Has = r.has(resp)
				} else {
					got.Has = want.Has
				}
				if diff := cmp.Diff(want, got); diff != "" {
					t.Errorf("%s: secret state (-want +got):\n%s", step, diff)
				}
				if r.works != nil {
					if works := r.works(h, path); works != want.Has {
						t.Errorf("%s: the stored secret works = %t, want %t", step, works, want.Has)
					}
				}
			}
			kept := secretState{Has: true, Plain: r.first}
			check("after create", nil, kept)
			check("update without the secret", update(200, nil, false, nil), kept)
			check("update with null", update(200, nil, true, nil), kept)
			check("update with the mask", update(200, "********", true, nil), kept)
			if r.required != "" {
				body := maps.Clone(r.base)
				body[r.field] = ""
				status, data := h.do(r.method, path, body)
				var failed map[string]any
				_ = json.Unmarshal(data, &failed)
				if status != 400 || failed["error"] != r.required {
					t.Errorf(`update with "" = %d %s, want 400 %q (the type needs the secret)`, status, data, r.required)
				}
				check(`after the refused ""`, nil, kept)
			} else {
				check(`update with ""`, update(200, "", true, r.clearWith), secretState{})
			}
			check("update with a new value", update(200, r.second, true, r.setWith), secretState{Has: true, Plain: r.second})
		})
	}
}

// lastID is the number at the end of a record path.
func lastID(path string) int64 {
	i := strings.LastIndexByte(path, '/')
	id, _ := strconv.ParseInt(path[i+1:], 10, 64)
	return id
}

// sshKey is a fresh unencrypted OpenSSH private key.
func sshKey(t *testing.T) string {
	t.Helper()
	_, priv, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	block, err := ssh.MarshalPrivateKey(priv, "")
	if err != nil {
		t.Fatal(err)
	}
	return string(pem.EncodeToMemory(block))
}
