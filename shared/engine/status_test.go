package engine

import (
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/moby/moby/api/types/container"
)

func TestExitCodeFromStatus(t *testing.T) {
	code := func(n int) *int { return &n }
	tests := []struct {
		state, status string
		want          *int
	}{
		{"exited", "Exited (0) 5 seconds ago", code(0)},
		{"exited", "Exited (137) 2 minutes ago", code(137)},
		{"exited", "Exited (-1) About an hour ago", code(-1)},
		{"dead", "Dead (1)", code(1)},
		{"running", "Up 5 minutes", nil},
		{"running", "Up 5 minutes (healthy)", nil},
		{"created", "Created", nil},
		{"exited", "Exited", nil},
		{"exited", "Exited (abc) 1 second ago", nil},
		{"exited", "Exited (3", nil},
		{"exited", "", nil},
	}
	for _, tt := range tests {
		if diff := cmp.Diff(tt.want, exitCodeFromStatus(tt.state, tt.status)); diff != "" {
			t.Errorf("exitCodeFromStatus(%q, %q) (-want +got):\n%s", tt.state, tt.status, diff)
		}
	}
}

func TestHealthFromStatus(t *testing.T) {
	tests := []struct{ status, want string }{
		{"Up 5 minutes (healthy)", "healthy"},
		{"Up 5 minutes (unhealthy)", "unhealthy"},
		{"Up 2 seconds (health: starting)", "starting"},
		{"Up 5 minutes", ""},
		{"Exited (0) 3 seconds ago", ""},
		{"", ""},
	}
	for _, tt := range tests {
		if got := healthFromStatus(tt.status); got != tt.want {
			t.Errorf("healthFromStatus(%q) = %q, want %q", tt.status, got, tt.want)
		}
	}
}

func TestRestartPolicy(t *testing.T) {
	valid := []struct {
		in   string
		want container.RestartPolicy
	}{
		{"no", container.RestartPolicy{Name: "no"}},
		{"always", container.RestartPolicy{Name: "always"}},
		{"unless-stopped", container.RestartPolicy{Name: "unless-stopped"}},
		{"on-failure", container.RestartPolicy{Name: "on-failure"}},
		{"on-failure:5", container.RestartPolicy{Name: "on-failure", MaximumRetryCount: 5}},
		{"on-failure:0", container.RestartPolicy{Name: "on-failure"}},
	}
	for _, tt := range valid {
		got, err := restartPolicy(tt.in)
		if err != nil {
			t.Errorf("restartPolicy(%q): %v", tt.in, err)
			continue
		}
		if diff := cmp.Diff(tt.want, got); diff != "" {
			t.Errorf("restartPolicy(%q) (-want +got):\n%s", tt.in, diff)
		}
	}
	for _, in := range []string{"", "sometimes", "Always", "always:3", "no:1", "on-failure:-1", "on-failure:x", "on-failure:1:2", "on-failure:"} {
		if _, err := restartPolicy(in); !errors.Is(err, ErrInvalid) {
			t.Errorf("restartPolicy(%q) = %v, want ErrInvalid", in, err)
		}
	}
}
