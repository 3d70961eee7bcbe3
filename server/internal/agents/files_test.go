package agents_test

import (
	"fmt"
	"net/url"
	"testing"
)

// TestAgentEnvironmentsServeContainerFiles runs the file browser through
// both agent kinds: the archive API over the agent's raw Engine pipe, the
// rm/mv commands over the agent's exec on a running container and the
// removal recorded in a stopped container's layer by a helper there.
func TestAgentEnvironmentsServeContainerFiles(t *testing.T) {
	h, _, envs, _ := agentEnvironments(t)
	for _, typ := range []string{"agent-standard", "agent-edge"} {
		env := envs[typ]
		t.Run(typ, func(t *testing.T) {
			u := func(id, op, p string) string {
				return fmt.Sprintf("/api/containers/%s/files%s?env=%d&path=%s", id, op, env, url.QueryEscape(p))
			}
			for _, running := range []bool{false, true} {
				id := createContainer(t, h, env, fmt.Sprintf("files-%s-%v-%s", typ, running, h.label), running, "sleep", "3600")
				h.must(200, "POST", u(id, "/create", ""), map[string]any{"path": "/tmp/dir", "type": "directory"}, nil)
				h.must(200, "PUT", u(id, "/content", "/tmp/dir/a.txt"), map[string]any{"content": "through the agent"}, nil)
				var ct struct{ Content string }
				h.must(200, "GET", u(id, "/content", "/tmp/dir/a.txt"), nil, &ct)
				if ct.Content != "through the agent" {
					t.Fatalf("content = %q", ct.Content)
				}
				h.must(200, "POST", u(id, "/chmod", ""), map[string]any{"path": "/tmp/dir/a.txt", "mode": "0600"}, nil)
				var l struct {
					Entries []struct{ Name, Mode string }
				}
				h.must(200, "GET", u(id, "", "/tmp/dir"), nil, &l)
				if len(l.Entries) != 1 || l.Entries[0].Name != "a.txt" || l.Entries[0].Mode != "0600" {
					t.Fatalf("listing = %+v", l)
				}
				var sh struct{ DefaultShell string }
				h.must(200, "GET", fmt.Sprintf("/api/containers/%s/shells?env=%d", id, env), nil, &sh)
				if sh.DefaultShell != "/bin/sh" {
					t.Fatalf("default shell = %q", sh.DefaultShell)
				}
				h.must(200, "POST", u(id, "/rename", ""), map[string]any{"path": "/tmp/dir/a.txt", "newName": "b.txt"}, nil)
				h.must(200, "DELETE", u(id, "/delete", "/tmp/dir/b.txt"), nil, nil)
				h.must(200, "GET", u(id, "", "/tmp/dir"), nil, &l)
				if len(l.Entries) != 0 {
					t.Fatalf("after rename and delete: %+v", l)
				}
			}
		})
	}
}
