package gitops

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

var update = flag.Bool("update-golden", false, "rewrite the golden files of the payload parser")

// The payloads follow the documented push events of GitHub and GitLab
// (fields trimmed); their .golden.json files are what ParsePush made of
// them, reviewed once and compared ever since.
func TestParsePushGolden(t *testing.T) {
	for _, name := range []string{"github-push", "gitlab-push", "github-ping"} {
		t.Run(name, func(t *testing.T) {
			body, err := os.ReadFile(filepath.Join("testdata", name+".json"))
			if err != nil {
				t.Fatal(err)
			}
			p, err := ParsePush(body)
			if err != nil {
				t.Fatal(err)
			}
			got, _ := json.MarshalIndent(p, "", "  ")
			golden := filepath.Join("testdata", name+".golden.json")
			if *update {
				if err := os.WriteFile(golden, append(got, '\n'), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			want, err := os.ReadFile(golden)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(strings.TrimSpace(string(want)), string(got)); diff != "" {
				t.Errorf("ParsePush (-golden +got):\n%s", diff)
			}
		})
	}
}

func TestParsePushReadsBranchesOnly(t *testing.T) {
	for ref, branch := range map[string]string{"refs/heads/main": "main", "refs/heads/feature/x": "feature/x", "refs/tags/v1": "", "main": ""} {
		p, err := ParsePush([]byte(`{"ref":"` + ref + `"}`))
		if err != nil || p.Branch != branch {
			t.Errorf("ref %q: branch %q, %v; want %q", ref, p.Branch, err, branch)
		}
	}
	for _, bad := range []string{"[", "[]", `"x"`, `{"ref": 1}`} {
		if _, err := ParsePush([]byte(bad)); err != errBadPayload {
			t.Errorf("ParsePush(%q) = %v, want errBadPayload", bad, err)
		}
	}
	if p, err := ParsePush(nil); err != nil || p.Ref != "" {
		t.Errorf("empty body = %+v, %v; want a push without details", p, err)
	}
}

func sig(secret string, body []byte) string {
	mac := hmac.New(sha256.New, []byte(secret))
	mac.Write(body)
	return "sha256=" + hex.EncodeToString(mac.Sum(nil))
}

func TestVerify(t *testing.T) {
	body := []byte(`{"ref":"refs/heads/main"}`)
	tests := []struct {
		name   string
		secret string
		proof  Proof
		want   error
	}{
		{"no secret configured: open", "", Proof{}, nil},
		{"no secret configured ignores a bad signature", "", Proof{Signature256: "sha256=00"}, nil},
		{"GitHub signature", "s3cret", Proof{Signature256: sig("s3cret", body)}, nil},
		{"GitHub signature with the wrong secret", "s3cret", Proof{Signature256: sig("other", body)}, errBadSignature},
		{"GitHub signature of another body", "s3cret", Proof{Signature256: sig("s3cret", []byte("{}"))}, errBadSignature},
		{"uppercase hex is still hex", "s3cret", Proof{Signature256: "sha256=" + strings.ToUpper(strings.TrimPrefix(sig("s3cret", body), "sha256="))}, nil},
		{"sha1 prefix", "s3cret", Proof{Signature256: "sha1=" + strings.TrimPrefix(sig("s3cret", body), "sha256=")}, errBadSignature},
		{"not hex", "s3cret", Proof{Signature256: "sha256=zz"}, errBadSignature},
		{"truncated", "s3cret", Proof{Signature256: sig("s3cret", body)[:20]}, errBadSignature},
		{"GitLab token", "s3cret", Proof{GitLabToken: "s3cret"}, nil},
		{"wrong GitLab token", "s3cret", Proof{GitLabToken: "s3cre"}, errBadToken},
		{"GET secret", "s3cret", Proof{Secret: "s3cret", HasSecret: true}, nil},
		{"wrong GET secret", "s3cret", Proof{Secret: "S3cret", HasSecret: true}, errBadSecret},
		{"empty GET secret", "s3cret", Proof{HasSecret: true}, errBadSecret},
		{"no proof", "s3cret", Proof{}, errNoProof},
		{"a bad signature is not rescued by a good token", "s3cret", Proof{Signature256: "sha256=00", GitLabToken: "s3cret"}, errBadSignature},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := Verify(tt.secret, body, tt.proof); got != tt.want {
				t.Errorf("Verify = %v, want %v", got, tt.want)
			}
		})
	}
}

func FuzzParsePush(f *testing.F) {
	for _, name := range []string{"github-push", "gitlab-push", "github-ping"} {
		b, _ := os.ReadFile(filepath.Join("testdata", name+".json"))
		f.Add(b)
	}
	f.Add([]byte(`{"ref":"refs/heads/"}`))
	f.Fuzz(func(t *testing.T, body []byte) {
		p, err := ParsePush(body)
		if err != nil {
			return
		}
		if p.Commits == nil {
			t.Fatal("nil commits")
		}
		if p.Branch != "" && "refs/heads/"+p.Branch != p.Ref {
			t.Fatalf("branch %q from ref %q", p.Branch, p.Ref)
		}
	})
}

func FuzzVerify(f *testing.F) {
	f.Add("s3cret", []byte("{}"), "sha256=00", "", "")
	f.Fuzz(func(t *testing.T, secret string, body []byte, signature, token, query string) {
		err := Verify(secret, body, Proof{Signature256: signature, GitLabToken: token, Secret: query, HasSecret: query != ""})
		if secret == "" && err != nil {
			t.Fatalf("open webhook refused: %v", err)
		}
		if secret != "" && err == nil && signature != sig(secret, body) && !strings.EqualFold(signature, sig(secret, body)) &&
			token != secret && query != secret {
			t.Fatalf("accepted without knowing the secret: %q %q %q", signature, token, query)
		}
	})
}
