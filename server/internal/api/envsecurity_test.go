package api_test

import (
	"crypto/ed25519"
	"crypto/rand"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/berth-dev/berth/server/internal/apitest"
	"github.com/berth-dev/berth/server/internal/license"
	"github.com/berth-dev/berth/shared/enginetest"
)

// envSecurity is the answer of GET /api/environments/{id}/security.
type envSecurity struct {
	AllowBindMounts  bool     `json:"allowBindMounts"`
	AllowedBindPaths []string `json:"allowedBindPaths"`
	AllowPrivileged  bool     `json:"allowPrivileged"`
	AllowHostNetwork bool     `json:"allowHostNetwork"`
	AllowHostPID     bool     `json:"allowHostPID"`
	AllowHostIPC     bool     `json:"allowHostIPC"`
	AllowDevices     bool     `json:"allowDevices"`
	AllowCapAdd      bool     `json:"allowCapAdd"`
	AllowSecurityOpt bool     `json:"allowSecurityOpt"`
	BerthHost        bool     `json:"berthHost"`
}

// withOperator sets up the first admin and an Operator of every
// environment, and returns their session cookies (the harness acts as
// the admin).
func (h *harness) withOperator() (admin, operator *http.Cookie) {
	h.t.Helper()
	user, pw := h.setupAdmin()
	admin = h.login(user, pw)
	h.as(admin)
	h.userWithRole("olga", "Operator")
	return admin, h.login("olga", "olga-password-1")
}

// containerBody is a labelled container that is created, not started.
func (h *harness) containerBody(extra map[string]any) map[string]any {
	body := map[string]any{"image": enginetest.Image(), "command": []string{"true"},
		"labels": map[string]string{enginetest.Label: h.label}}
	for k, v := range extra {
		body[k] = v
	}
	return body
}

// bindStack is a one-service stack of name binding the host path src.
func bindStack(label, src string) string {
	return fmt.Sprintf(`services:
  web:
    image: %[1]s
    command: ["sleep", "3600"]
    volumes:
      - %[4]s:/mnt
    labels:
      %[2]s: %[3]s
networks:
  default:
    labels:
      %[2]s: %[3]s
`, enginetest.Image(), enginetest.Label, label, src)
}

func TestEnvironmentSecuritySettingsAreReadByViewersAndChangedByAdminsOnly(t *testing.T) {
	t.Parallel()
	pub, priv, _ := ed25519.GenerateKey(rand.Reader)
	h := newAuthHarness(t, apitest.Options{LicenseKeys: []ed25519.PublicKey{pub}})
	admin, operator := h.withOperator()

	var got envSecurity
	h.must(200, "GET", "/api/environments/1/security", nil, &got)
	want := envSecurity{AllowBindMounts: true, AllowedBindPaths: []string{}, AllowPrivileged: true, AllowHostNetwork: true,
		AllowHostPID: true, AllowHostIPC: true, AllowDevices: true, AllowCapAdd: true, AllowSecurityOpt: true, BerthHost: true}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("defaults = %+v, want %+v", got, want)
	}
	h.expectRefusals([]refusal{
		{"relative allowed path", "PUT", "/api/environments/1/security", map[string]any{"allowedBindPaths": []string{"srv/data"}},
			400, "is not an absolute path"},
		{"wrong type", "PUT", "/api/environments/1/security", map[string]any{"allowPrivileged": "no"}, 400, ""},
	})
	h.must(200, "PUT", "/api/environments/1/security", map[string]any{"allowPrivileged": false,
		"allowedBindPaths": []string{"/srv/data/", "/srv/data"}}, &got)
	if got.AllowPrivileged || !got.AllowBindMounts || strings.Join(got.AllowedBindPaths, ",") != "/srv/data" {
		t.Errorf("after PUT = %+v, want privileged off, bind mounts kept, one cleaned path", got)
	}
	h.must(200, "GET", "/api/environments/1/security", nil, &got)
	if got.AllowPrivileged || strings.Join(got.AllowedBindPaths, ",") != "/srv/data" {
		t.Errorf("stored = %+v", got)
	}

	h.as(operator)
	h.must(200, "GET", "/api/environments/1/security", nil, &got)
	h.expectRefusals([]refusal{{"operator", "PUT", "/api/environments/1/security", map[string]any{"allowPrivileged": true},
		403, "Permission denied"}})

	// A custom role (an enterprise feature) holding environments:edit
	// must not lift the rules that bind its holder.
	h.as(admin)
	lic, err := license.Sign(license.License{ID: "L-sec", Customer: "Test", Edition: "enterprise",
		IssuedAt: time.Now().Add(-time.Hour)}, priv)
	if err != nil {
		t.Fatal(err)
	}
	h.must(200, "POST", "/api/license", map[string]string{"license": lic}, nil)
	h.must(201, "POST", "/api/roles", map[string]any{"name": "EnvEditor",
		"permissions": map[string][]string{"environments": {"view", "edit"}, "containers": {"view", "create"}}}, nil)
	h.userWithRole("eddie", "EnvEditor")
	h.as(h.login("eddie", "eddie-password-1"))
	h.expectRefusals([]refusal{{"environments:edit without admin", "PUT", "/api/environments/1/security",
		map[string]any{"allowPrivileged": true}, 403, "Only administrators change the security settings of an environment"}})
	h.as(admin)
	h.must(200, "GET", "/api/environments/1/security", nil, &got)
	if got.AllowPrivileged {
		t.Error("a non-admin turned privileged mode back on")
	}
}

func TestOperatorIsHeldToTheEnvironmentSecuritySettings(t *testing.T) {
	t.Parallel()
	h := newAuthHarness(t, apitest.Options{})
	admin, operator := h.withOperator()
	h.must(200, "PUT", "/api/environments/1/security", map[string]any{"allowBindMounts": false, "allowPrivileged": false,
		"allowHostNetwork": false, "allowCapAdd": false}, nil)
	host := t.TempDir()
	volume := "berth-test-sec-" + h.label
	// Its containers first, then the volume they use (the harness removes
	// only containers).
	t.Cleanup(func() {
		enginetest.RemoveLabelled(t, h.label)
		enginetest.RemoveLabelledVolumes(t, h.label)
	})
	h.must(200, "POST", "/api/volumes?env=1", map[string]any{"name": volume, "labels": map[string]string{enginetest.Label: h.label}}, nil)

	h.as(operator)
	const setting = `is not allowed on this environment (security setting "%s")`
	h.expectRefusals([]refusal{
		{"bind mount", "POST", "/api/containers?env=1", h.containerBody(map[string]any{"volumes": []string{host + ":/mnt"}}),
			403, "Bind mount of " + host + " " + fmt.Sprintf(setting, "bind mounts")},
		{"privileged", "POST", "/api/containers?env=1", h.containerBody(map[string]any{"privileged": true}),
			403, fmt.Sprintf(setting, "privileged mode")},
		{"host network", "POST", "/api/containers?env=1", h.containerBody(map[string]any{"networkMode": "host"}),
			403, fmt.Sprintf(setting, "host network")},
		{"cap_add", "POST", "/api/containers?env=1", h.containerBody(map[string]any{"capAdd": []string{"SYS_ADMIN"}}),
			403, "Added capability SYS_ADMIN " + fmt.Sprintf(setting, "added capabilities")},
		{"volume of a host directory", "POST", "/api/volumes?env=1", map[string]any{"name": volume + "-bind",
			"driverOpts": map[string]string{"type": "none", "o": "bind", "device": host}}, 403, fmt.Sprintf(setting, "bind mounts")},
		{"stack with a bind mount", "POST", "/api/stacks?env=1", map[string]any{"name": "sec-" + h.label, "compose": bindStack(h.label, host)},
			403, `Service "web": bind mount of ` + host + " " + fmt.Sprintf(setting, "bind mounts")},
	})
	if _, ok := h.stackEntry("sec-" + h.label); ok {
		t.Error("the refused stack was recorded")
	}
	h.must(200, "POST", "/api/containers?env=1", h.containerBody(map[string]any{"volumes": []string{volume + ":/data"}}), nil)

	// An admin is never restricted: the same container and stack go
	// through, and the stack deploys.
	h.as(admin)
	h.must(200, "POST", "/api/containers?env=1", h.containerBody(map[string]any{"volumes": []string{host + ":/mnt"}, "privileged": true}), nil)
	name := "sec-" + h.label
	_, _, res := h.streamStack("POST", "/api/stacks?env=1", map[string]any{"name": name, "compose": bindStack(h.label, host)})
	if !res.Success {
		t.Fatalf("admin's stack deploy = %+v", res)
	}

	// The operator may not bring up a stack that asks for what the
	// environment forbids, even one an admin wrote.
	other := "sec2-" + h.label
	h.must(200, "POST", "/api/stacks?env=1", map[string]any{"name": other, "compose": bindStack(h.label, host), "start": false}, nil)
	h.as(operator)
	h.expectRefusals([]refusal{{"start of a never-started stack", "POST", "/api/stacks/" + other + "/start?env=1", nil,
		403, `Service "web": bind mount of ` + host}})
	_, _, res = h.streamStack("POST", "/api/stacks/"+other+"/deploy?env=1", nil)
	if res.Success || !strings.Contains(res.Error, `Service "web": bind mount of `+host+" "+fmt.Sprintf(setting, "bind mounts")) {
		t.Errorf("operator's deploy = %+v, want the refusal", res)
	}
	h.as(admin)
	for _, n := range []string{name, other} {
		h.must(200, "DELETE", "/api/stacks/"+n+"?env=1&force=true", nil, nil)
	}
}

func TestAllowedBindPathsConfineOperatorsBindMounts(t *testing.T) {
	t.Parallel()
	h := newAuthHarness(t, apitest.Options{})
	_, operator := h.withOperator()
	allowed := t.TempDir()
	if err := os.Symlink("/etc", filepath.Join(allowed, "etc-link")); err != nil {
		t.Fatal(err)
	}
	h.must(200, "PUT", "/api/environments/1/security", map[string]any{"allowBindMounts": true, "allowedBindPaths": []string{allowed}}, nil)

	h.as(operator)
	h.must(200, "POST", "/api/containers?env=1", h.containerBody(map[string]any{"volumes": []string{allowed + "/app:/mnt"}}), nil)
	const refused = `is not allowed on this environment (security setting "allowed bind paths")`
	h.expectRefusals([]refusal{
		{"outside the list", "POST", "/api/containers?env=1", h.containerBody(map[string]any{"volumes": []string{"/etc:/mnt"}}),
			403, "Bind mount of /etc " + refused},
		{"dot-dot escape", "POST", "/api/containers?env=1", h.containerBody(map[string]any{"volumes": []string{allowed + strings.Repeat("/..", strings.Count(allowed, "/")) + "/etc:/mnt"}}),
			403, "Bind mount of /etc " + refused},
		{"link out of the allowed directory", "POST", "/api/containers?env=1",
			h.containerBody(map[string]any{"volumes": []string{allowed + "/etc-link:/mnt"}}), 403, refused},
		{"stack climbing out of its directory", "POST", "/api/stacks?env=1", map[string]any{"name": "esc-" + h.label,
			"compose": bindStack(h.label, "../../.."), "start": false}, 403, `Service "web": bind mount of `},
	})
	// A stack's own directory (./data) may be bound whatever the list.
	h.must(200, "POST", "/api/stacks?env=1", map[string]any{"name": "own-" + h.label, "compose": bindStack(h.label, "./data"),
		"start": false}, nil)
}

func TestBerthsDataDirectoryIsNeverBoundByOperatorsOnItsHost(t *testing.T) {
	t.Parallel()
	h := newAuthHarness(t, apitest.Options{})
	admin, operator := h.withOperator()
	h.as(operator) // the default settings allow every bind mount
	h.must(200, "POST", "/api/containers?env=1", h.containerBody(map[string]any{"volumes": []string{t.TempDir() + ":/mnt"}}), nil)
	const refused = "is not allowed on this environment (Berth's data directory is never bound by non-administrators)"
	var cases []refusal
	for _, src := range []string{h.dataDir, filepath.Join(h.dataDir, "berth.db"), filepath.Dir(h.dataDir), "/"} {
		cases = append(cases, refusal{src, "POST", "/api/containers?env=1",
			h.containerBody(map[string]any{"volumes": []string{src + ":/mnt"}}), 403, refused})
	}
	cases = append(cases, refusal{"stack", "POST", "/api/stacks?env=1", map[string]any{"name": "data-" + h.label,
		"compose": bindStack(h.label, h.dataDir), "start": false}, 403, `Service "web": bind mount of ` + h.dataDir + " " + refused})
	h.expectRefusals(cases)
	h.as(admin)
	h.must(200, "POST", "/api/containers?env=1", h.containerBody(map[string]any{"volumes": []string{h.dataDir + ":/mnt"}}), nil)
}
