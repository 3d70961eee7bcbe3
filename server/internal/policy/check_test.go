package policy

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// forbidAll are settings that allow nothing.
var forbidAll = Settings{}

func TestCheckNamesTheSettingThatRefuses(t *testing.T) {
	tests := []struct {
		name string
		set  Settings
		w    Workload
		want string // "" allowed; else a part of the message
	}{
		{"nothing asked", forbidAll, Workload{}, ""},
		{"bind forbidden", forbidAll, Workload{Binds: []string{"/etc"}},
			`Bind mount of /etc is not allowed on this environment (security setting "bind mounts")`},
		{"bind of a service", forbidAll, Workload{Service: "web", Binds: []string{"/etc"}},
			`Service "web": bind mount of /etc is not allowed on this environment (security setting "bind mounts")`},
		{"privileged", forbidAll, Workload{Privileged: true}, `(security setting "privileged mode")`},
		{"host network", forbidAll, Workload{NetworkMode: "host"}, `(security setting "host network")`},
		{"bridge network", forbidAll, Workload{NetworkMode: "bridge"}, ""},
		{"host pid", forbidAll, Workload{PIDMode: "host"}, `(security setting "host PID")`},
		{"host ipc", forbidAll, Workload{IPCMode: "host"}, `(security setting "host IPC")`},
		{"shareable ipc", forbidAll, Workload{IPCMode: "shareable"}, ""},
		{"device", forbidAll, Workload{Devices: []string{"/dev/sda"}}, `Device /dev/sda is not allowed on this environment (security setting "devices")`},
		{"cap_add", forbidAll, Workload{CapAdd: []string{"SYS_ADMIN"}}, `Added capability SYS_ADMIN is not allowed on this environment (security setting "added capabilities")`},
		{"cap_add ALL", forbidAll, Workload{CapAdd: []string{"ALL"}}, `(security setting "added capabilities")`},
		{"cap_add of a default capability changes nothing", forbidAll, Workload{CapAdd: []string{"CAP_NET_BIND_SERVICE", "chown"}}, ""},
		{"security opt", forbidAll, Workload{SecurityOpt: []string{"seccomp=unconfined"}}, `Security option seccomp=unconfined is not allowed on this environment (security setting "security options")`},
		{"no-new-privileges only tightens", forbidAll, Workload{SecurityOpt: []string{"no-new-privileges:true"}}, ""},
		{"everything allowed", Defaults(), Workload{Privileged: true, NetworkMode: "host", PIDMode: "host", IPCMode: "host",
			Devices: []string{"/dev/fuse"}, CapAdd: []string{"SYS_ADMIN"}, SecurityOpt: []string{"apparmor=unconfined"}, Binds: []string{"/"}}, ""},
		{"under an allowed path", Settings{AllowBindMounts: true, AllowedBindPaths: []string{"/srv/data"}},
			Workload{Binds: []string{"/srv/data/app"}}, ""},
		{"the allowed path itself", Settings{AllowBindMounts: true, AllowedBindPaths: []string{"/srv/data"}},
			Workload{Binds: []string{"/srv/data"}}, ""},
		{"a sibling sharing the prefix", Settings{AllowBindMounts: true, AllowedBindPaths: []string{"/srv/data"}},
			Workload{Binds: []string{"/srv/database"}}, `(security setting "allowed bind paths")`},
		{"dot-dot escape", Settings{AllowBindMounts: true, AllowedBindPaths: []string{"/srv/data"}},
			Workload{Binds: []string{"/srv/data/../../etc"}}, `Bind mount of /etc is not allowed on this environment (security setting "allowed bind paths")`},
		{"own directory outside the list", Settings{AllowBindMounts: true, AllowedBindPaths: []string{"/srv/data"}},
			Workload{Service: "web", OwnDir: "/stacks/web", Binds: []string{"/stacks/web/data"}}, ""},
		{"own directory does not lift a ban", forbidAll,
			Workload{Service: "web", OwnDir: "/stacks/web", Binds: []string{"/stacks/web/data"}}, `(security setting "bind mounts")`},
		{"climbing out of the own directory", Settings{AllowBindMounts: true, AllowedBindPaths: []string{"/srv/data"}},
			Workload{Service: "web", OwnDir: "/stacks/web", Binds: []string{"/stacks/web/../other"}}, `bind mount of /stacks/other`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			set := tt.set
			if err := set.Normalize(); err != nil {
				t.Fatal(err)
			}
			err := Policy{Settings: set}.Check(tt.w)
			switch {
			case tt.want == "" && err != nil:
				t.Errorf("Check = %v, want allowed", err)
			case tt.want != "" && (err == nil || !strings.Contains(err.Error(), tt.want)):
				t.Errorf("Check = %v, want a refusal containing %q", err, tt.want)
			}
		})
	}
}

func TestBerthsDataDirectoryIsNeverBoundOnItsHost(t *testing.T) {
	data := t.TempDir()
	p := Policy{Settings: Defaults(), protected: []string{data}, local: true}
	for _, src := range []string{data, filepath.Join(data, "berth.db"), filepath.Dir(data), "/"} {
		err := p.Check(Workload{Binds: []string{src}})
		if err == nil || !strings.Contains(err.Error(), "Berth's data directory") {
			t.Errorf("bind of %s = %v, want the data directory refusal", src, err)
		}
	}
	own := filepath.Join(data, "stacks", "1", "web")
	if err := p.Check(Workload{Service: "web", OwnDir: own, Binds: []string{filepath.Join(own, "data")}}); err != nil {
		t.Errorf("a stack's own directory inside the data directory: %v", err)
	}
	if err := p.Check(Workload{Binds: []string{filepath.Join(t.TempDir(), "elsewhere")}}); err != nil {
		t.Errorf("a path beside the data directory: %v", err)
	}
}

func TestSymbolicLinksAreFollowedOnBerthsHost(t *testing.T) {
	allowed := t.TempDir()
	if err := os.Symlink("/", filepath.Join(allowed, "root")); err != nil {
		t.Fatal(err)
	}
	set := Settings{AllowBindMounts: true, AllowedBindPaths: []string{allowed}}
	w := Workload{Binds: []string{filepath.Join(allowed, "root", "etc")}}
	if err := (Policy{Settings: set, local: true}).Check(w); err == nil || !strings.Contains(err.Error(), `"allowed bind paths"`) {
		t.Errorf("link out of an allowed directory = %v, want refused", err)
	}
	own := t.TempDir()
	if err := os.Symlink("/etc", filepath.Join(own, "data")); err != nil {
		t.Fatal(err)
	}
	w = Workload{Service: "web", OwnDir: own, Binds: []string{filepath.Join(own, "data")}}
	if err := (Policy{Settings: set, local: true}).Check(w); err == nil {
		t.Error("link out of the stack's own directory is allowed")
	}
}

func TestNormalizeRefusesRelativeAndRootPaths(t *testing.T) {
	for _, p := range []string{"srv/data", "/", "/srv/.."} {
		s := Settings{AllowedBindPaths: []string{p}}
		if err := s.Normalize(); err == nil {
			t.Errorf("Normalize(%q) accepted", p)
		}
	}
	s := Settings{AllowedBindPaths: []string{" /srv/data/ ", "/srv/data", "", "/opt//x"}}
	if err := s.Normalize(); err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(s.AllowedBindPaths, ","); got != "/srv/data,/opt/x" {
		t.Errorf("normalized = %s", got)
	}
}

func TestHostDeviceSeesBindVolumes(t *testing.T) {
	tests := []struct {
		driver string
		opts   map[string]string
		want   string
	}{
		{"", map[string]string{"type": "none", "o": "bind", "device": "/etc"}, "/etc"},
		{"local", map[string]string{"type": "ext4", "device": "/dev/sda1"}, "/dev/sda1"},
		{"local", map[string]string{"type": "nfs", "o": "addr=10.0.0.1,rw", "device": ":/export"}, ""},
		{"local", map[string]string{"type": "tmpfs", "device": "tmpfs"}, ""},
		{"local", nil, ""},
		{"rexray", map[string]string{"device": "/dev/sda1"}, ""},
	}
	for _, tt := range tests {
		got, ok := HostDevice(tt.driver, tt.opts)
		if got != tt.want || ok != (tt.want != "") {
			t.Errorf("HostDevice(%q, %v) = %q, %v; want %q", tt.driver, tt.opts, got, ok, tt.want)
		}
	}
}

func TestActorIsTheSystemUnlessNamed(t *testing.T) {
	if ActorFrom(context.Background()).Admin {
		t.Error("no actor is an admin")
	}
	if !ActorFrom(WithActor(context.Background(), Actor{Admin: true})).Admin {
		t.Error("admin actor lost")
	}
}
