package gitops

import (
	"crypto/hmac"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
	"encoding/json"
	"strings"

	"github.com/berth-dev/berth/shared/fault"
)

// Webhook verification failures. The spec leaves their status open; 401
// says "your proof of the secret is wrong" without telling which part.
var (
	errBadSignature = fault.New(fault.Unauthorized, "Invalid webhook signature")
	errBadToken     = fault.New(fault.Unauthorized, "Invalid webhook token")
	errNoProof      = fault.New(fault.Unauthorized, "Webhook secret required")
	errBadSecret    = fault.New(fault.Unauthorized, "Invalid webhook secret")
	errBadPayload   = fault.New(fault.Invalid, "Invalid webhook payload")
)

// Proof is what a webhook request offers as knowledge of the secret.
type Proof struct {
	Signature256 string // X-Hub-Signature-256: "sha256=<hex HMAC of the raw body>"
	GitLabToken  string // X-Gitlab-Token
	Secret       string // the GET trigger's secret query parameter
	HasSecret    bool   // the secret parameter was given (possibly empty)
}

// Verify checks proof against the configured secret (spec §Authentication
// 8): the GitHub signature is the HMAC-SHA256 of the raw body, compared in
// constant time; the GitLab token and the GET secret must equal the secret,
// also compared in constant time. Without a configured secret anyone
// knowing the URL may trigger.
func Verify(secret string, body []byte, p Proof) error {
	if secret == "" {
		return nil
	}
	switch {
	case p.Signature256 != "":
		hexSig, ok := strings.CutPrefix(p.Signature256, "sha256=")
		got, err := hex.DecodeString(hexSig)
		if !ok || err != nil {
			return errBadSignature
		}
		mac := hmac.New(sha256.New, []byte(secret))
		mac.Write(body)
		if !hmac.Equal(got, mac.Sum(nil)) {
			return errBadSignature
		}
		return nil
	case p.GitLabToken != "":
		if !equalSecret(p.GitLabToken, secret) {
			return errBadToken
		}
		return nil
	case p.HasSecret:
		if !equalSecret(p.Secret, secret) {
			return errBadSecret
		}
		return nil
	}
	return errNoProof
}

// equalSecret compares in constant time (in the secret's length, which a
// caller cannot learn from the answer).
func equalSecret(got, want string) bool {
	a, b := sha256.Sum256([]byte(got)), sha256.Sum256([]byte(want))
	return subtle.ConstantTimeCompare(a[:], b[:]) == 1
}

// Push is what Berth uses of a push event, GitHub's or GitLab's.
type Push struct {
	Ref         string   `json:"ref"`
	Branch      string   `json:"branch"` // from ref "refs/heads/<branch>"; "" for tags
	CloneURL    string   `json:"cloneUrl"`
	SSHURL      string   `json:"sshUrl"`
	PusherName  string   `json:"pusherName"`
	PusherEmail string   `json:"pusherEmail"`
	Commits     []Commit `json:"commits"`
}

// Commit is one commit of a push.
type Commit struct {
	ID        string `json:"id"`
	Message   string `json:"message"`
	Timestamp string `json:"timestamp"`
}

// ParsePush reads a push payload. An empty body is a push without details
// (a manual trigger); a body that is not a JSON object is refused.
func ParsePush(body []byte) (Push, error) {
	if len(strings.TrimSpace(string(body))) == 0 {
		return Push{Commits: []Commit{}}, nil
	}
	var raw struct {
		Ref        string `json:"ref"`
		Repository *struct {
			CloneURL string `json:"clone_url"`
			SSHURL   string `json:"ssh_url"`
		} `json:"repository"`
		Project *struct {
			HTTPURL string `json:"git_http_url"`
			SSHURL  string `json:"git_ssh_url"`
		} `json:"project"`
		Pusher *struct {
			Name  string `json:"name"`
			Email string `json:"email"`
		} `json:"pusher"`
		UserName  string   `json:"user_name"`
		UserEmail string   `json:"user_email"`
		Commits   []Commit `json:"commits"`
	}
	if err := json.Unmarshal(body, &raw); err != nil {
		return Push{}, errBadPayload
	}
	p := Push{Ref: raw.Ref, Commits: raw.Commits, PusherName: raw.UserName, PusherEmail: raw.UserEmail}
	if p.Commits == nil {
		p.Commits = []Commit{}
	}
	p.Branch, _ = strings.CutPrefix(raw.Ref, "refs/heads/")
	if p.Branch == raw.Ref {
		p.Branch = "" // a tag or another kind of ref
	}
	switch {
	case raw.Repository != nil:
		p.CloneURL, p.SSHURL = raw.Repository.CloneURL, raw.Repository.SSHURL
	case raw.Project != nil:
		p.CloneURL, p.SSHURL = raw.Project.HTTPURL, raw.Project.SSHURL
	}
	if raw.Pusher != nil {
		p.PusherName, p.PusherEmail = raw.Pusher.Name, raw.Pusher.Email
	}
	return p, nil
}
