package api_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"runtime/debug"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/berth-dev/berth/server/internal/apitest"
	"github.com/berth-dev/berth/server/internal/scan"
	"github.com/berth-dev/berth/shared/enginetest"
)

// waitHooks waits until the receiver has a notification of each event type
// of want (or a minute has passed) and returns what it got.
func waitHooks(rcv *hookReceiver, want ...string) []map[string]any {
	deadline := time.Now().Add(time.Minute)
	for {
		got := rcv.received()
		missing := false
		for _, w := range want {
			missing = missing || !slices.ContainsFunc(got, func(m map[string]any) bool { return m["event"] == w })
		}
		if !missing || time.Now().After(deadline) {
			return got
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// subscribeHooks makes a webhook channel to a new receiver and subscribes
// environment 1 to types on it.
func (h *harness) subscribeHooks(types ...string) *hookReceiver {
	h.t.Helper()
	rcv := newHookReceiver(h.t, nil)
	var ch notificationOut
	h.must(http.StatusCreated, "POST", "/api/notifications", map[string]any{"name": "hook-" + h.label, "type": "webhook",
		"config": map[string]any{"url": rcv.URL}}, &ch)
	h.must(http.StatusCreated, "POST", "/api/environments/1/notifications", map[string]any{"notificationId": ch.ID,
		"eventTypes": types}, nil)
	return rcv
}

func eventsOf(got []map[string]any, typ string) []map[string]any {
	var out []map[string]any
	for _, m := range got {
		if m["event"] == typ {
			out = append(out, m)
		}
	}
	return out
}

// v1 running, v2 pushed under the same tag: check-updates finds the
// container, records it as pending and notifies updates_detected; a batch
// update streamed recreates it on v2 (container_updated,
// batch_update_success), answers a missing container as failed, and the
// pending update is gone.
func TestCheckUpdatesThenBatchUpdateStreamRecreatesTheContainer(t *testing.T) {
	t.Parallel()
	h, reg := newUpdateHarness(t, scan.Config{})
	rcv := h.subscribeHooks("updates_detected", "container_updated", "batch_update_success")
	ref := reg.host + "/berth-test/bu-" + h.label + ":1"
	name := "bu-" + h.label
	var v1, v2 string
	enginetest.RemoveImages(t, h.label, &v1, &v2)
	v1 = enginetest.BuildImage(t, enginetest.Image(), ref, h.label, "LABEL version=1", `CMD ["sleep", "3600"]`)
	enginetest.Push(t, ref, reg.user, reg.password)
	var ct struct{ ID string }
	enginetest.Must(t, 201, "POST", "/containers/create?name="+name, nil, map[string]any{"Image": ref,
		"Labels": map[string]string{enginetest.Label: h.label, "role": "web"}}, &ct)
	enginetest.Must(t, 204, "POST", "/containers/"+ct.ID+"/start", nil, nil, nil)
	v2 = enginetest.BuildImage(t, enginetest.Image(), ref, h.label, "LABEL version=2", `CMD ["sleep", "3600"]`)
	enginetest.Push(t, ref, reg.user, reg.password)
	enginetest.TagImage(t, v1, ref) // the engine runs v1; v2 is only in the registry

	// Synchronous answer with Accept: application/json.
	h.headers["Accept"] = "application/json"
	var check struct {
		Success        bool
		PendingUpdates []struct{ ContainerName, ContainerID, Image, CurrentImageID, NewDigest string }
		NotChecked     []struct{ Container, Error string }
	}
	h.must(200, "POST", "/api/containers/check-updates?env=1", nil, &check)
	delete(h.headers, "Accept")
	i := slices.IndexFunc(check.PendingUpdates, func(p struct{ ContainerName, ContainerID, Image, CurrentImageID, NewDigest string }) bool {
		return p.ContainerName == name
	})
	if !check.Success || i < 0 || check.PendingUpdates[i].ContainerID != ct.ID || check.PendingUpdates[i].CurrentImageID != v1 ||
		!strings.HasPrefix(check.PendingUpdates[i].NewDigest, "sha256:") || check.NotChecked == nil {
		t.Fatalf("check-updates = %+v", check)
	}
	if inspect(t, name).ID != ct.ID {
		t.Fatal("the check changed the container")
	}
	var pending struct {
		PendingUpdates []struct{ ContainerName string }
	}
	h.must(200, "GET", "/api/containers/pending-updates?env=1", nil, &pending)
	if !slices.ContainsFunc(pending.PendingUpdates, func(p struct{ ContainerName string }) bool { return p.ContainerName == name }) {
		t.Errorf("pending-updates after the check = %+v", pending)
	}
	detected := eventsOf(waitHooks(rcv, "updates_detected"), "updates_detected")
	if len(detected) == 0 || !strings.Contains(fmt.Sprint(detected[0]), name) {
		t.Errorf("updates_detected notifications = %v", detected)
	}

	// The stream: start, log lines and a result per container, then complete.
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	events, resp := h.openStream(ctx, "POST", "/api/containers/batch-update-stream?env=1",
		map[string]any{"containerIds": []string{ct.ID, "no-such-" + h.label}})
	if resp.StatusCode != 200 || resp.Header.Get("X-Job-Id") == "" {
		t.Fatalf("stream = %d, job %q", resp.StatusCode, resp.Header.Get("X-Job-Id"))
	}
	var names []string
	var final struct {
		Success bool
		Results []struct {
			Container, Name, Status, NewContainerID, NewImageID, Error string
			Success                                                    bool
		}
		Summary struct{ Total, Updated, UpToDate, Skipped, Failed int }
	}
	logs := 0
	for ev := range events {
		names = append(names, ev.Name)
		switch ev.Name {
		case "log":
			logs++
		case "complete":
			if err := json.Unmarshal([]byte(ev.Data), &final); err != nil {
				t.Fatal(err)
			}
		}
	}
	if len(names) == 0 || names[0] != "start" || names[len(names)-1] != "complete" || logs == 0 ||
		strings.Count(strings.Join(names, ","), "result") != 2 {
		t.Errorf("stream events = %v", names)
	}
	if final.Success || len(final.Results) != 2 || final.Summary != (struct{ Total, Updated, UpToDate, Skipped, Failed int }{2, 1, 0, 0, 1}) {
		t.Fatalf("final = %+v", final)
	}
	up, missing := final.Results[0], final.Results[1]
	if up.Status != "updated" || !up.Success || up.Name != name || up.NewImageID != v2 || up.NewContainerID == "" {
		t.Errorf("result of the container = %+v", up)
	}
	if missing.Status != "failed" || missing.Success || !strings.Contains(missing.Error, "Container not found") {
		t.Errorf("result of the missing container = %+v", missing)
	}
	after := inspect(t, name)
	if after.ID != up.NewContainerID || after.Image != v2 || !after.State.Running || after.Config.Labels["role"] != "web" {
		t.Errorf("after the batch: %s on %s running %v labels %v", after.ID, after.Image, after.State.Running, after.Config.Labels)
	}
	h.must(200, "GET", "/api/containers/pending-updates?env=1", nil, &pending)
	if slices.ContainsFunc(pending.PendingUpdates, func(p struct{ ContainerName string }) bool { return p.ContainerName == name }) {
		t.Errorf("the pending update stayed after the update: %+v", pending)
	}
	// One failure in the batch: container_updated, but no batch_update_success.
	got := waitHooks(rcv, "container_updated")
	if u := eventsOf(got, "container_updated"); len(u) != 1 || !strings.Contains(fmt.Sprint(u[0]), name) {
		t.Errorf("container_updated notifications = %v", u)
	}
	if b := eventsOf(got, "batch_update_success"); len(b) != 0 {
		t.Errorf("batch_update_success after a failed item: %v", b)
	}

	// The same container again, by name, without streaming: up to date, a
	// batch without failures, which notifies batch_update_success only
	// when it updated something: nothing here.
	var again struct {
		Success bool
		Results []struct{ Status string }
	}
	h.must(200, "POST", "/api/containers/batch-update?env=1", map[string]any{"containers": []string{name}}, &again)
	if !again.Success || len(again.Results) != 1 || again.Results[0].Status != "up_to_date" {
		t.Errorf("second batch = %+v", again)
	}
}

// A batch with one container that updates and no failure notifies
// batch_update_success; a batch update that fails its health gate is rolled
// back and reported failed.
func TestBatchUpdateNotifiesSuccessAndRollsBackAFailingImage(t *testing.T) {
	t.Parallel()
	h, reg := newUpdateHarness(t, scan.Config{})
	rcv := h.subscribeHooks("container_updated", "batch_update_success")
	okRef := reg.host + "/berth-test/bu-ok-" + h.label + ":1"
	badRef := reg.host + "/berth-test/bu-bad-" + h.label + ":1"
	var ok1, ok2, bad1, bad2 string
	enginetest.RemoveImages(t, h.label, &ok1, &ok2, &bad1, &bad2)
	ok1 = enginetest.BuildImage(t, enginetest.Image(), okRef, h.label, "LABEL version=1", `CMD ["sleep", "3600"]`)
	enginetest.Push(t, okRef, reg.user, reg.password)
	bad1 = enginetest.BuildImage(t, enginetest.Image(), badRef, h.label, "LABEL version=1", `CMD ["sleep", "3600"]`)
	enginetest.Push(t, badRef, reg.user, reg.password)
	start := func(name, ref string) string {
		var ct struct{ ID string }
		enginetest.Must(t, 201, "POST", "/containers/create?name="+name, nil, map[string]any{"Image": ref,
			"Labels": map[string]string{enginetest.Label: h.label}}, &ct)
		enginetest.Must(t, 204, "POST", "/containers/"+ct.ID+"/start", nil, nil, nil)
		return ct.ID
	}
	okName, badName := "bu-ok-"+h.label, "bu-bad-"+h.label
	start(okName, okRef)
	badID := start(badName, badRef)
	ok2 = enginetest.BuildImage(t, enginetest.Image(), okRef, h.label, "LABEL version=2", `CMD ["sleep", "3600"]`)
	enginetest.Push(t, okRef, reg.user, reg.password)
	enginetest.TagImage(t, ok1, okRef)
	bad2 = enginetest.BuildImage(t, enginetest.Image(), badRef, h.label, "LABEL version=2", `ENTRYPOINT ["/bin/false"]`)
	enginetest.Push(t, badRef, reg.user, reg.password)
	enginetest.TagImage(t, bad1, badRef)

	type result struct{ Container, Status, Error string }
	var one struct {
		Success bool
		Results []result
	}
	h.must(200, "POST", "/api/containers/batch-update?env=1", map[string]any{"containers": []string{okName}}, &one)
	if !one.Success || len(one.Results) != 1 || one.Results[0].Status != "updated" || inspect(t, okName).Image != ok2 {
		t.Fatalf("batch of the good image = %+v", one)
	}
	got := waitHooks(rcv, "container_updated", "batch_update_success")
	if len(eventsOf(got, "container_updated")) != 1 || len(eventsOf(got, "batch_update_success")) != 1 {
		t.Errorf("notifications = %v", got)
	}

	var two struct {
		Success bool
		Results []result
	}
	h.must(200, "POST", "/api/containers/batch-update?env=1", map[string]any{"containerIds": []string{badName}}, &two)
	if two.Success || len(two.Results) != 1 || two.Results[0].Status != "failed" ||
		!strings.HasPrefix(two.Results[0].Error, "Update rolled back: the new container") {
		t.Fatalf("batch of the failing image = %+v", two)
	}
	if after := inspect(t, badName); after.ID != badID || after.Image != bad1 || !after.State.Running {
		t.Errorf("after the rollback: %s on %s running %v", after.ID, after.Image, after.State.Running)
	}
}

func TestBatchUpdateRefusesBadRequests(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	many := make([]string, 201)
	for i := range many {
		many[i] = "c" + strconv.Itoa(i)
	}
	for _, tc := range []struct {
		body any
		msg  string
	}{
		{map[string]any{}, "containerIds is required"},
		{map[string]any{"containerIds": []string{" "}}, "Container ids must not be empty"},
		{map[string]any{"containerIds": many}, "At most 200 containers per batch"},
		{`{"containerIds": "x"}`, ""},
		{map[string]any{"containerIds": []string{"c1"}, "vulnerabilityCriteria": "some"}, "Invalid vulnerabilityCriteria"},
		{`{`, ""},
	} {
		for _, path := range []string{"/api/containers/batch-update?env=1", "/api/containers/batch-update-stream?env=1"} {
			status, body := h.do("POST", path, tc.body)
			if status != 400 || !strings.Contains(string(body), tc.msg) {
				t.Errorf("%s %v = %d %s, want 400 %q", path, tc.body, status, body, tc.msg)
			}
		}
	}
	if status, _ := h.do("POST", "/api/containers/check-updates?env=999", nil); status != 404 {
		t.Errorf("check-updates of an unknown environment = %d, want 404", status)
	}
}

// The local engine's socket is found and answers; the others are listed
// with whether they exist.
func TestDetectSocketFindsTheLocalEngine(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	var out struct {
		Sockets []struct {
			Path, Kind, ServerVersion, Error string
			Exists, Reachable                bool
		}
		Recommended string
	}
	h.must(200, "GET", "/api/environments/detect-socket", nil, &out)
	paths := map[string]bool{}
	for _, s := range out.Sockets {
		paths[s.Path] = true
		fi, err := os.Stat(s.Path)
		exists := err == nil && fi.Mode()&os.ModeSocket != 0
		if s.Exists != exists || (s.Reachable && (!s.Exists || s.ServerVersion == "")) {
			t.Errorf("socket %+v, exists on disk %v", s, exists)
		}
	}
	for _, p := range []string{"/var/run/docker.sock", "/run/docker.sock", "/run/podman/podman.sock"} {
		if !paths[p] {
			t.Errorf("%s not among the candidates %v", p, paths)
		}
	}
	// The test engine's socket, when it is one of the usual paths, answers.
	host := os.Getenv("DOCKER_HOST")
	local := strings.TrimPrefix(host, "unix://")
	if host == "" {
		local = "/var/run/docker.sock"
	}
	for _, s := range out.Sockets {
		if s.Path == local && (!s.Reachable || out.Recommended == "") {
			t.Errorf("the test engine's socket %s did not answer: %+v", local, s)
		}
	}
	if out.Recommended != "" && !slices.ContainsFunc(out.Sockets, func(s struct {
		Path, Kind, ServerVersion, Error string
		Exists, Reachable                bool
	}) bool {
		return s.Path == out.Recommended && s.Reachable
	}) {
		t.Errorf("recommended %q is not a reachable socket", out.Recommended)
	}
}

func TestChangelogAndDependencies(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	var entries []struct {
		Version, Date string
		Changes       []string
	}
	h.must(200, "GET", "/api/changelog", nil, &entries)
	if len(entries) == 0 || entries[0].Version != "Unreleased" || len(entries[0].Changes) == 0 {
		t.Errorf("changelog = %+v", entries)
	}
	var deps struct {
		GoVersion    string
		Dependencies []struct{ Name, Version string }
	}
	h.must(200, "GET", "/api/dependencies", nil, &deps)
	// The server runs in this test's process: it reports this binary's
	// build information (a test binary records no module dependencies; a
	// built berth lists its modules, gin and gorm among them).
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		t.Fatal("no build information")
	}
	want := []struct{ Name, Version string }{}
	for _, d := range bi.Deps {
		v := d.Version
		if d.Replace != nil && d.Replace.Version != "" {
			v = d.Replace.Version
		}
		want = append(want, struct{ Name, Version string }{d.Path, v})
	}
	if deps.GoVersion != bi.GoVersion || deps.Dependencies == nil || !slices.Equal(deps.Dependencies, want) {
		t.Errorf("dependencies = %s %v, want %s %v", deps.GoVersion, deps.Dependencies, bi.GoVersion, want)
	}
}

func TestLDAPAndOIDCAcceptPUTLikePATCH(t *testing.T) {
	t.Parallel()
	h, dir := newLDAPHarness(t)
	c := h.createLDAP(dir.readerConfig("corp-"+h.label, nil))
	path := "/api/auth/ldap/" + strconv.FormatInt(c.ID, 10)
	var got ldapConfigOut
	h.must(200, "PUT", path, map[string]any{"groupBaseDn": dir.groups(), "bindPassword": "********"}, &got)
	if got.GroupBaseDN != dir.groups() || got.BaseDN != dir.Base || got.Name != c.Name || got.BindPassword != "********" {
		t.Errorf("after PUT = %+v", got)
	}
	if status, body := h.do("PUT", "/api/auth/ldap/999999", map[string]any{"enabled": false}); status != 404 {
		t.Errorf("PUT of a missing configuration = %d %s", status, body)
	}

	callback := h.url + "/api/auth/oidc/callback"
	var prov struct{ ID int64 }
	h.must(201, "POST", "/api/auth/oidc", map[string]any{"name": "idp-" + h.label, "enabled": true,
		"issuerUrl": "http://127.0.0.1:1/dex", "clientId": "x", "clientSecret": "y", "redirectUri": callback}, &prov)
	var p struct {
		Name, ClientID, ClientSecret, IssuerURL string
	}
	h.must(200, "PUT", fmt.Sprintf("/api/auth/oidc/%d", prov.ID), map[string]any{"clientId": "changed"}, &p)
	if p.ClientID != "changed" || p.Name != "idp-"+h.label || p.ClientSecret != "********" || p.IssuerURL != "http://127.0.0.1:1/dex" {
		t.Errorf("OIDC after PUT = %+v", p)
	}
	var audit struct{ Entries []struct{ Action string } }
	h.must(200, "GET", "/api/audit?limit=100", nil, &audit)
	n := 0
	for _, e := range audit.Entries {
		if e.Action == "ldap.update" || e.Action == "oidc.update" {
			n++
		}
	}
	if n != 2 {
		t.Errorf("audited updates = %d, want 2 (%+v)", n, audit)
	}
}

// Authentication on: PUT needs settings:edit like PATCH.
func TestPUTOfAnOIDCProviderNeedsSettingsEdit(t *testing.T) {
	t.Parallel()
	h := newAuthHarness(t, apitest.Options{})
	user, pw := h.setupAdmin()
	admin := h.login(user, pw)
	h.as(admin)
	var prov struct{ ID int64 }
	h.must(201, "POST", "/api/auth/oidc", map[string]any{"name": "idp", "enabled": true, "issuerUrl": "http://127.0.0.1:1/dex",
		"clientId": "x", "clientSecret": "y", "redirectUri": h.url + "/api/auth/oidc/callback"}, &prov)
	h.must(201, "POST", "/api/users", map[string]any{"username": "viewer", "password": "viewer-password-1"}, nil)
	h.as(h.login("viewer", "viewer-password-1"))
	if status, _ := h.do("PUT", fmt.Sprintf("/api/auth/oidc/%d", prov.ID), map[string]any{"clientId": "evil"}); status != 403 {
		t.Errorf("PUT by a viewer = %d, want 403", status)
	}
	h.as(admin)
	var p struct{ ClientID string }
	h.must(200, "GET", fmt.Sprintf("/api/auth/oidc/%d", prov.ID), nil, &p)
	if p.ClientID != "x" {
		t.Errorf("clientId after the refused PUT = %q", p.ClientID)
	}
}
