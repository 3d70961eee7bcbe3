package stacks

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/berth-dev/berth/server/internal/policy"
	"github.com/berth-dev/berth/server/internal/store"
	"github.com/berth-dev/berth/shared/fault"
)

// Every way a compose service reaches the host is seen: bind mounts
// (relative ones resolved), volumes of host directories or devices, file
// secrets and configs, devices, namespaces, capabilities, security options.
func TestWorkloadsSeeEveryWayAServiceReachesTheHost(t *testing.T) {
	dir := t.TempDir()
	compose := `services:
  web:
    image: busybox
    privileged: true
    network_mode: host
    pid: host
    ipc: host
    cap_add: [NET_ADMIN]
    security_opt: ["seccomp=unconfined"]
    devices: ["/dev/fuse:/dev/fuse"]
    volumes:
      - ./data:/data
      - /etc:/host-etc:ro
      - named:/named
      - hostdir:/hostdir
    secrets: [token]
    configs: [conf]
  quiet:
    image: busybox
    volumes: [named:/named]
volumes:
  named: {}
  hostdir:
    driver_opts: {type: none, o: bind, device: /root}
secrets:
  token:
    file: /var/lib/secret-token
configs:
  conf:
    file: ./conf.ini
`
	p, err := projectSource{name: "probe", composePath: filepath.Join(dir, ComposeFileName), content: []byte(compose)}.load(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	want := []policy.Workload{
		{Service: "quiet", OwnDir: dir},
		{Service: "web", Binds: []string{filepath.Join(dir, "data"), "/etc", "/root", "/var/lib/secret-token", filepath.Join(dir, "conf.ini")},
			Privileged: true, NetworkMode: "host", PIDMode: "host", IPCMode: "host", Devices: []string{"/dev/fuse"},
			CapAdd: []string{"NET_ADMIN"}, SecurityOpt: []string{"seccomp=unconfined"}, OwnDir: dir},
	}
	if diff := cmp.Diff(want, Workloads(p)); diff != "" {
		t.Errorf("Workloads (-want +got):\n%s", diff)
	}
}

// A stack that asks for a forbidden bind mount is refused when a
// non-administrator saves it, and when the system (a git sync, a webhook)
// deploys it, before the engine is asked anything; an administrator saves it.
func TestStackAskingForAForbiddenBindIsRefusedUnlessAnAdminAsks(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	s, st, err := openCrashService(ctx, dir)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	env := store.Environment{Name: "remote", ConnectionType: "direct", Host: "192.0.2.1", Port: 2375}
	if err := st.CreateEnvironment(ctx, &env); err != nil {
		t.Fatal(err)
	}
	set := policy.Defaults()
	set.AllowBindMounts = false
	if _, err := policy.New(st, dir).SetSettings(ctx, env.ID, set); err != nil {
		t.Fatal(err)
	}
	compose := "services:\n  web:\n    image: busybox\n    volumes: [\"/etc:/host-etc\"]\n"
	operator := policy.WithActor(ctx, policy.Actor{Admin: false})
	_, err = s.Create(operator, env, CreateSpec{Name: "binder", Compose: compose})
	const msg = `Service "web": bind mount of /etc is not allowed on this environment (security setting "bind mounts")`
	if fault.KindOf(err) != fault.Forbidden || !strings.Contains(err.Error(), msg) {
		t.Fatalf("operator's create = %v, want 403 %q", err, msg)
	}
	if _, err := st.GetStack(ctx, env.ID, "binder"); err == nil {
		t.Error("the refused stack was recorded")
	}

	admin := policy.WithActor(ctx, policy.Actor{Admin: true})
	if _, err := s.Create(admin, env, CreateSpec{Name: "binder", Compose: compose}); err != nil {
		t.Fatalf("admin's create: %v", err)
	}
	err = s.Up(ctx, env, "binder", false, nil) // no actor: the system
	if fault.KindOf(err) != fault.Forbidden || !strings.Contains(err.Error(), msg) {
		t.Errorf("system deploy = %v, want 403 %q", err, msg)
	}
	err = s.UpdateCompose(operator, env, "binder", UpdateSpec{Content: compose + "    privileged: true\n"})
	if fault.KindOf(err) != fault.Forbidden {
		t.Errorf("operator's update = %v, want 403", err)
	}
}
