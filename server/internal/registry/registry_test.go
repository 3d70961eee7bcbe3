package registry

import (
	"strings"
	"testing"

	"github.com/berth-dev/berth/server/internal/store"
	"github.com/berth-dev/berth/shared/fault"
)

func TestNextLastReadsTheLinkHeader(t *testing.T) {
	for _, c := range []struct {
		links []string
		want  string
	}{
		{nil, ""},
		{[]string{`</v2/_catalog?last=b%2Fc&n=2>; rel="next"`}, "b/c"},
		{[]string{`<https://r.example/v2/_catalog?n=2&last=x>; rel=next`}, "x"},
		{[]string{`</v2/_catalog?last=a&n=2>; rel="prev", </v2/_catalog?last=z&n=2>; rel="next"`}, "z"},
		{[]string{`</v2/_catalog?n=2>; rel="next"`}, ""},
	} {
		if got := nextLast(c.links); got != c.want {
			t.Errorf("nextLast(%q) = %q, want %q", c.links, got, c.want)
		}
	}
}

// The scheme follows the URL: http:// is plain HTTP; without a scheme,
// HTTPS except on loopback and private addresses, as the engines do.
func TestResolveChoosesTheScheme(t *testing.T) {
	for _, c := range []struct {
		url, scheme, host string
		hub               bool
	}{
		{"http://r.example:5000", "http", "r.example:5000", false},
		{"https://r.example/org", "https", "r.example", false},
		{"r.example", "https", "r.example", false},
		{"127.0.0.1:5000", "http", "127.0.0.1:5000", false},
		{"localhost:5000", "http", "localhost:5000", false},
		{"docker.io", "https", "index.docker.io", true},
		{"https://registry-1.docker.io/", "https", "index.docker.io", true},
	} {
		tg, err := resolve(store.Registry{URL: c.url})
		if err != nil {
			t.Fatalf("resolve(%q): %v", c.url, err)
		}
		if tg.reg.Scheme() != c.scheme || tg.reg.RegistryStr() != c.host || tg.hub != c.hub {
			t.Errorf("resolve(%q) = %s://%s hub=%v, want %s://%s hub=%v", c.url, tg.reg.Scheme(), tg.reg.RegistryStr(),
				tg.hub, c.scheme, c.host, c.hub)
		}
		repo, err := tg.repository("team/app")
		if err != nil || repo.Scheme() != c.scheme {
			t.Errorf("repository of %q: scheme %q, %v", c.url, repo.Scheme(), err)
		}
	}
}

// The path of a registry URL is a namespace of repository names; the
// registry API's own /v2/ is none, and a path that cannot be one is a 400.
func TestResolveReadsTheNamespaceOfTheURLPath(t *testing.T) {
	for _, c := range []struct {
		url, namespace, repo string
	}{
		{"http://r.example:5000", "", "r.example:5000/team/app"},
		{"https://r.example/org", "org", "r.example/org/team/app"},
		{"r.example:5000/org/sub/", "org/sub", "r.example:5000/org/sub/team/app"},
		{"https://r.example/v2/", "", "r.example/team/app"},
		{"docker.io/library", "library", "index.docker.io/library/team/app"},
	} {
		tg, err := resolve(store.Registry{URL: c.url})
		if err != nil {
			t.Fatalf("resolve(%q): %v", c.url, err)
		}
		repo, err := tg.repository("/team/app")
		if tg.namespace != c.namespace || err != nil || repo.Name() != c.repo {
			t.Errorf("resolve(%q): namespace %q, repository %q (%v); want %q, %q", c.url, tg.namespace, repo.Name(), err,
				c.namespace, c.repo)
		}
	}
	for _, u := range []string{"https://r.example/Org", "r.example/a//b", "r.example/a b"} {
		_, err := resolve(store.Registry{URL: u})
		if f, ok := fault.As(err); !ok || f.Kind != fault.Invalid || !strings.Contains(f.Message, "not a valid repository namespace") {
			t.Errorf("resolve(%q) = %v, want the invalid namespace 400", u, err)
		}
	}
}
