package engine

import "testing"

func TestChangesTellsWritesFromQuietRequests(t *testing.T) {
	for _, c := range []struct {
		method, path string
		want         bool
	}{
		{"GET", "/v1.47/containers/json", false},
		{"HEAD", "/_ping", false},
		{"POST", "/v1.47/containers/create", true},
		{"POST", "/v1.47/containers/abc/stop", true},
		{"DELETE", "/v1.47/containers/abc", true},
		{"POST", "/v1.47/volumes/create", true},
		{"POST", "/volumes/create", true},
		{"POST", "/v1.47/images/create", true},
		{"POST", "/v1.47/containers/abc/exec", false},
		{"POST", "/v1.47/exec/abc/start", false},
		{"POST", "/exec/abc/resize", false},
		{"POST", "/v1.47/containers/abc/attach", false},
		{"POST", "/v1.47/containers/abc/resize", false},
		{"POST", "/v1.47/containers/abc/wait", false},
		{"PUT", "/v1.47/containers/abc/archive", false},
	} {
		if got := changes(c.method, c.path); got != c.want {
			t.Errorf("changes(%s %s) = %v, want %v", c.method, c.path, got, c.want)
		}
	}
}
