package images

import (
	"errors"
	"testing"

	"github.com/berth-dev/berth/shared/engine"
)

func TestPullReferenceFollowsTheSpecRules(t *testing.T) {
	cases := map[string]string{
		"nginx":                              "nginx:latest",
		"nginx:1.27":                         "nginx:1.27",
		"library/nginx":                      "library/nginx:latest",
		"localhost:5000/app":                 "localhost:5000/app:latest", // the text after the last ':' holds '/'
		"localhost:5000/app:2":               "localhost:5000/app:2",
		"registry.example.com/team/app:v1.2": "registry.example.com/team/app:v1.2",
		"nginx@sha256:0123abcd":              "nginx@sha256:0123abcd", // digest: no tag added
		"r.example:443/app@sha256:ff":        "r.example:443/app@sha256:ff",
		" nginx ":                            "nginx:latest",
	}
	for in, want := range cases {
		if got := PullReference(in); got != want {
			t.Errorf("PullReference(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestHostOf(t *testing.T) {
	cases := map[string]string{
		"nginx:1": "docker.io", "library/nginx": "docker.io", "ghcr.io/a/b:1": "ghcr.io",
		"127.0.0.1:5000/x:1": "127.0.0.1:5000", "localhost/x": "localhost", "Registry.Example.com/x": "registry.example.com",
	}
	for in, want := range cases {
		if got := hostOf(in); got != want {
			t.Errorf("hostOf(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestPushTargetFollowsTheSpecRules(t *testing.T) {
	cases := []struct{ source, registry, want string }{
		{"myapp:1", "registry.example.com", "registry.example.com/myapp:1"},
		{"team/myapp:1", "https://registry.example.com/v2/", "registry.example.com/team/myapp:1"},
		{"old.example:5000/team/myapp:1", "registry.example.com", "registry.example.com/team/myapp:1"}, // host stripped
		{"localhost/myapp:1", "r.example", "r.example/localhost/myapp:1"},                              // "localhost" has no '.' or ':'
		{"myapp", "r.example:5000", "r.example:5000/myapp:latest"},
		{"team/myapp:1", "docker.io", "team/myapp:1"}, // the default public registry: no host
		{"ghcr.io/team/myapp:1", "https://index.docker.io/v1/", "team/myapp:1"},
		{"team/myapp:1", "registry-1.docker.io", "team/myapp:1"},
	}
	for _, c := range cases {
		if got := PushTarget(c.source, c.registry); got != c.want {
			t.Errorf("PushTarget(%q, %q) = %q, want %q", c.source, c.registry, got, c.want)
		}
	}
}

func TestTransferMessages(t *testing.T) {
	cases := []struct {
		err  error
		want string
	}{
		{&engine.TransferError{Message: "unauthorized: authentication required", Code: 401}, "Authentication failed. Check registry credentials."},
		{&engine.TransferError{Message: "denied", Code: 401}, "Authentication failed. Check registry credentials."},
		{&engine.TransferError{Message: "manifest unknown"}, "manifest unknown"},
		{&engine.TransferError{Message: `Get "https://r.example/v2/": x509: certificate signed by unknown authority`},
			`TLS error talking to the registry: Get "https://r.example/v2/": x509: certificate signed by unknown authority. If the registry uses plain HTTP or a self-signed certificate, add it to the engine's insecure-registries list (daemon.json) and restart the engine.`},
		{errors.New(""), "Failed to push image"},
	}
	for _, c := range cases {
		if got := transferMessage(c.err, "Failed to push image"); got != c.want {
			t.Errorf("transferMessage(%v) = %q, want %q", c.err, got, c.want)
		}
	}
}

func TestPickTagPrefersTheRequestedName(t *testing.T) {
	tags := []string{"a/b:1", "c/d:2", "e:latest"}
	for _, c := range []struct {
		names []string
		want  string
	}{{[]string{"c/d:2"}, "c/d:2"}, {[]string{"sha256:x", "e"}, "e:latest"}, {[]string{"zzz"}, "a/b:1"}, {nil, "a/b:1"}} {
		if got := pickTag(tags, c.names...); got != c.want {
			t.Errorf("pickTag(%v) = %q, want %q", c.names, got, c.want)
		}
	}
	if got := pickTag([]string{"<none>:<none>"}); got != "" {
		t.Errorf("untagged image → %q", got)
	}
}
