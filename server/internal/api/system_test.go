package api_test

import (
	"bytes"
	"context"
	"crypto/ed25519"
	"crypto/rand"
	"encoding/csv"
	"encoding/json"
	"net"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	"github.com/berth-dev/berth/server/internal/apitest"
	"github.com/berth-dev/berth/server/internal/license"
	"github.com/berth-dev/berth/server/internal/store"
	"github.com/berth-dev/berth/shared/enginetest"
)

// scrape reads /api/metrics and parses it as Prometheus text.
func (h *harness) scrape() map[string]*dto.MetricFamily {
	h.t.Helper()
	status, body := h.do("GET", "/api/metrics", nil)
	if status != 200 {
		h.t.Fatalf("GET /api/metrics = %d %s", status, body)
	}
	p := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := p.TextToMetricFamilies(bytes.NewReader(body))
	if err != nil {
		h.t.Fatalf("parse metrics: %v\n%s", err, body)
	}
	return fams
}

// sample returns the value of the sample of family name whose labels
// include want, and whether there is one.
func sample(fams map[string]*dto.MetricFamily, name string, want map[string]string) (float64, bool) {
	f := fams[name]
	if f == nil {
		return 0, false
	}
	for _, m := range f.GetMetric() {
		got := map[string]string{}
		for _, l := range m.GetLabel() {
			got[l.GetName()] = l.GetValue()
		}
		match := true
		for k, v := range want {
			match = match && got[k] == v
		}
		if !match {
			continue
		}
		switch {
		case m.Gauge != nil:
			return m.GetGauge().GetValue(), true
		case m.Histogram != nil:
			return float64(m.GetHistogram().GetSampleCount()), true
		}
	}
	return 0, false
}

// closedPort returns a loopback port nothing listens on.
func closedPort(t *testing.T) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := l.Addr().(*net.TCPAddr).Port
	l.Close()
	return port
}

func TestPrometheusMetricsCountARunningContainerAndReportAnOfflineEnvironmentDown(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.createContainer("berth-metrics-"+h.label, true, "sleep", "300")
	var env struct{ ID int64 }
	h.must(201, "POST", "/api/environments", map[string]any{"name": "offline-" + h.label, "connectionType": "direct",
		"host": "127.0.0.1", "port": closedPort(t)}, &env)

	// An engine that accepts connections and never answers: the scrape
	// still answers, with the environment down.
	hung := enginetest.NewHanging(t)
	host, port := splitHostPort(t, hung.Addr)
	var hungEnv struct{ ID int64 }
	h.must(201, "POST", "/api/environments", map[string]any{"name": "hung-" + h.label, "connectionType": "direct",
		"host": host, "port": port}, &hungEnv)

	fams := h.scrape()
	if hung.Count() == 0 {
		t.Error("the scrape never tried the hung engine")
	}
	if v, ok := sample(fams, "berth_environment_up", map[string]string{"environment_id": strconv.FormatInt(hungEnv.ID, 10)}); !ok || v != 0 {
		t.Errorf("berth_environment_up of the hung environment = %v (%v), want 0", v, ok)
	}
	for _, name := range []string{"berth_build_info", "berth_environment_up", "berth_environment_containers",
		"berth_environment_images", "berth_environment_volumes", "berth_environment_networks", "berth_environment_stacks",
		"berth_environment_host_cpus", "berth_environment_host_memory_bytes", "berth_http_request_duration_seconds",
		"berth_jobs", "berth_agents_connected", "go_goroutines"} {
		if fams[name] == nil {
			t.Errorf("family %s missing", name)
		}
	}
	if v, ok := sample(fams, "berth_environment_up", map[string]string{"environment_id": "1"}); !ok || v != 1 {
		t.Errorf("berth_environment_up of the local engine = %v (%v), want 1", v, ok)
	}
	offline := map[string]string{"environment_id": strconv.FormatInt(env.ID, 10)}
	if v, ok := sample(fams, "berth_environment_up", offline); !ok || v != 0 {
		t.Errorf("berth_environment_up of the offline environment = %v (%v), want 0", v, ok)
	}
	if _, ok := sample(fams, "berth_environment_containers", offline); ok {
		t.Error("an offline environment reports container counts")
	}
	if v, _ := sample(fams, "berth_environment_containers", map[string]string{"environment_id": "1", "state": "running"}); v < 1 {
		t.Errorf("running containers of the local engine = %v, want at least the test's one", v)
	}
	if v, _ := sample(fams, "berth_environment_host_cpus", map[string]string{"environment_id": "1"}); v < 1 {
		t.Errorf("host CPUs = %v", v)
	}
	// The container's creation is counted under its route pattern.
	if v, _ := sample(fams, "berth_http_request_duration_seconds",
		map[string]string{"route": "/api/containers", "method": "POST", "status": "2xx"}); v < 1 {
		t.Errorf("POST /api/containers requests counted = %v, want 1", v)
	}
}

func TestMetricsNeedSettingsViewAndAcceptAnAPIToken(t *testing.T) {
	t.Parallel()
	h := newAuthHarness(t, apitest.Options{})
	user, pw := h.setupAdmin()
	if status, _ := h.do("GET", "/api/metrics", nil); status != 401 {
		t.Errorf("metrics without sign-in = %d, want 401", status)
	}
	h.as(h.login(user, pw))
	var tok struct{ Token string }
	h.must(201, "POST", "/api/auth/tokens", map[string]any{"name": "prometheus", "password": pw}, &tok)
	h.must(201, "POST", "/api/users", map[string]any{"username": "viewer", "password": "viewer-password-1"}, nil)
	h.headers = map[string]string{"Authorization": "Bearer " + tok.Token}
	if fams := h.scrape(); fams["berth_environment_up"] == nil {
		t.Error("metrics by token: no berth_environment_up")
	}
	// Prometheus' default path (the reference's) serves the same exposition.
	if status, body := h.do("GET", "/metrics", nil); status != 200 || !strings.Contains(string(body), "berth_environment_up") {
		t.Errorf("GET /metrics by token = %d %.200s", status, body)
	}
	h.as(h.login("viewer", "viewer-password-1"))
	for _, p := range []string{"/api/metrics", "/metrics"} {
		if status, body := h.do("GET", p, nil); status != 403 || !strings.Contains(string(body), "Permission denied") {
			t.Errorf("%s of a user without settings:view = %d %s", p, status, body)
		}
	}
}

func TestSystemHostDiskAndDatabaseHealth(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	var sys struct {
		Version       string
		Database      string
		UptimeSeconds *int64
		Counts        map[string]int64
		Jobs          map[string]int
	}
	h.must(200, "GET", "/api/system", nil, &sys)
	if sys.Version == "" || sys.Database != "sqlite" || sys.UptimeSeconds == nil || sys.Counts["environments"] != 1 {
		t.Errorf("system = %+v", sys)
	}
	var host struct {
		Name, OS, KernelVersion, DockerVersion string
		CPUs                                   int
		MemTotal                               int64
	}
	h.must(200, "GET", "/api/host?env=1", nil, &host)
	if host.Name == "" || host.OS == "" || host.KernelVersion == "" || host.DockerVersion == "" || host.CPUs < 1 || host.MemTotal <= 0 {
		t.Errorf("host = %+v", host)
	}
	if status, body := h.do("GET", "/api/host?env=999", nil); status != 404 {
		t.Errorf("host of an unknown environment = %d %s", status, body)
	}
	var disk struct {
		Images     struct{ Total, Size int64 }
		Containers struct{ Total int64 }
		Volumes    *struct{ Total int64 }
		BuildCache *struct{ Size int64 }
		TotalSize  int64
	}
	h.must(200, "GET", "/api/system/disk?env=1", nil, &disk)
	if disk.Images.Total < 1 || disk.Images.Size <= 0 || disk.Volumes == nil || disk.BuildCache == nil || disk.TotalSize < disk.Images.Size {
		t.Errorf("disk = %+v", disk)
	}
	var db struct {
		Status    string
		Healthy   bool
		LatencyMs *float64
	}
	h.must(200, "GET", "/api/health/database", nil, &db)
	if !db.Healthy || db.Status != "ok" || db.LatencyMs == nil {
		t.Errorf("database health = %+v", db)
	}
}

func TestContainerSizesIsItsOwnRouteAndListsSizes(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	id := h.createContainer("berth-sizes-"+h.label, false, "sleep", "300")
	var sizes []struct {
		ID         string
		SizeRw     *int64 `json:"SizeRw"`
		SizeRootFs int64  `json:"SizeRootFs"`
	}
	h.must(200, "GET", "/api/containers/sizes?env=1", nil, &sizes)
	i := slices.IndexFunc(sizes, func(s struct {
		ID         string
		SizeRw     *int64 `json:"SizeRw"`
		SizeRootFs int64  `json:"SizeRootFs"`
	}) bool {
		return s.ID == id
	})
	if i < 0 || sizes[i].SizeRw == nil || sizes[i].SizeRootFs <= 0 {
		t.Fatalf("sizes lack the test's container with sizes: %+v", sizes)
	}
	// pending-updates is its own route too, never a container named so.
	var pending struct{ PendingUpdates []any }
	h.must(200, "GET", "/api/containers/pending-updates?env=1", nil, &pending)
	if pending.PendingUpdates == nil {
		t.Error("pending-updates answered no list")
	}
}

func TestPruneRemovesOnlyTheLabelledUnusedObjects(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	t.Cleanup(func() {
		enginetest.RemoveLabelledNetworks(t, h.label)
		enginetest.RemoveLabelledVolumes(t, h.label)
	})
	sel := enginetest.Label + "=" + h.label
	stopped := h.createContainer("berth-prune-stopped-"+h.label, false, "sleep", "300")
	running := h.createContainer("berth-prune-running-"+h.label, true, "sleep", "300")
	labels := map[string]string{enginetest.Label: h.label}
	h.must(200, "POST", "/api/volumes?env=1", map[string]any{"name": "berth-prune-" + h.label, "labels": labels}, nil)
	h.must(200, "POST", "/api/networks?env=1", map[string]any{"name": "berth-prune-" + h.label, "labels": labels}, nil)
	h.headers["Accept"] = "application/json"

	if status, body := h.do("POST", "/api/prune/containers?env=1", map[string]any{"labels": []string{"=x"}}); status != 400 {
		t.Errorf("prune with a bad label = %d %s", status, body)
	}
	var rep struct {
		Success bool
		Deleted []string
	}
	h.must(200, "POST", "/api/prune/containers?env=1", map[string]any{"labels": []string{sel}}, &rep)
	if !rep.Success || !slices.Equal(rep.Deleted, []string{stopped}) {
		t.Errorf("pruned containers = %+v, want only %s", rep, stopped)
	}
	if st := h.inspectState(running); !st.Running {
		t.Errorf("running container after prune: %+v", st)
	}
	h.must(200, "POST", "/api/prune/volumes?env=1&label="+sel, nil, &rep)
	if !slices.Equal(rep.Deleted, []string{"berth-prune-" + h.label}) {
		t.Errorf("pruned volumes = %+v", rep)
	}
	var all struct {
		Success  bool
		Networks struct{ Deleted []string }
	}
	h.must(200, "POST", "/api/prune/all?env=1", map[string]any{"labels": []string{sel}}, &all)
	if !all.Success || !slices.Equal(all.Networks.Deleted, []string{"berth-prune-" + h.label}) {
		t.Errorf("prune all = %+v", all)
	}
	// Without Accept: application/json a prune is a job.
	delete(h.headers, "Accept")
	var job struct{ JobID string }
	h.must(200, "POST", "/api/prune/networks?env=1", map[string]any{"labels": []string{sel}}, &job)
	if job.JobID == "" {
		t.Errorf("prune as a job: %+v", job)
	}
}

func TestMergedLogsInterleaveContainersByTime(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	// b starts after a; asked for as "b,a", a merge that did not sort would
	// send b's lines first.
	a := h.createContainer("berth-merge-a-"+h.label, true, "sh", "-c", "echo a1; sleep 2; echo a2; sleep 300")
	b := h.createContainer("berth-merge-b-"+h.label, true, "sh", "-c", "echo b1; sleep 2; echo b2; sleep 300")
	deadline := time.Now().Add(20 * time.Second)
	for time.Now().Before(deadline) { // until both wrote their lines
		var la, lb struct{ Logs string }
		h.must(200, "GET", "/api/containers/"+a+"/logs?env=1", nil, &la)
		h.must(200, "GET", "/api/containers/"+b+"/logs?env=1", nil, &lb)
		if strings.Contains(la.Logs, "a2") && strings.Contains(lb.Logs, "b2") {
			break
		}
		time.Sleep(200 * time.Millisecond)
	}
	if status, _ := h.do("GET", "/api/logs/merged?env=1", nil); status != 400 {
		t.Errorf("merged logs without containers = %d", status)
	}
	if status, _ := h.do("GET", "/api/logs/merged?env=1&containers=berth-no-such-"+h.label, nil); status != 404 {
		t.Errorf("merged logs of an unknown container = %d", status)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	events, resp := h.openEvents(ctx, "/api/logs/merged?env=1&containers="+b+","+a)
	if resp.StatusCode != 200 {
		t.Fatalf("merged logs = %d", resp.StatusCode)
	}
	type line struct {
		ContainerID string
		Text        string
		Timestamp   time.Time
	}
	var lines []line
	for e := range events {
		if e.Name == "log" {
			var l line
			if err := json.Unmarshal([]byte(e.Data), &l); err != nil {
				t.Fatal(err)
			}
			lines = append(lines, l)
		}
		if len(lines) == 4 {
			break
		}
	}
	var texts []string
	for i, l := range lines {
		texts = append(texts, l.Text)
		if i > 0 && l.Timestamp.Before(lines[i-1].Timestamp) {
			t.Errorf("line %d (%s at %s) comes after a later one (%s)", i, l.Text, l.Timestamp, lines[i-1].Timestamp)
		}
	}
	slices.Sort(texts)
	if want := []string{"a1", "a2", "b1", "b2"}; !slices.Equal(texts, want) {
		t.Errorf("merged lines = %v, want %v", texts, want)
	}
	if len(lines) == 4 && (lines[0].Text != "a1" || lines[0].ContainerID != a) {
		t.Errorf("first line = %+v, want a1 of a", lines[0])
	}
}

// enterpriseAdmin serves an authenticated Berth with an enterprise license
// installed and signs in as its admin.
func enterpriseAdmin(t *testing.T) (*harness, string) {
	t.Helper()
	pub, priv, _ := ed25519.GenerateKey(rand.Reader)
	h := newAuthHarness(t, apitest.Options{LicenseKeys: []ed25519.PublicKey{pub}})
	user, pw := h.setupAdmin()
	h.as(h.login(user, pw))
	doc, err := license.Sign(license.License{ID: "L-sys", Customer: "Test", Edition: "enterprise",
		IssuedAt: time.Now().Add(-time.Hour)}, priv)
	if err != nil {
		t.Fatal(err)
	}
	h.must(200, "POST", "/api/license", map[string]string{"license": doc}, nil)
	return h, pw
}

func TestAuditStreamUsersAndExport(t *testing.T) {
	t.Parallel()
	h, _ := enterpriseAdmin(t)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	events, resp := h.openEvents(ctx, "/api/audit/events?action=role.*")
	if resp.StatusCode != 200 {
		t.Fatalf("audit events = %d", resp.StatusCode)
	}
	if e := <-events; e.Name != "connected" {
		t.Fatalf("first event = %+v", e)
	}
	// An entry of another action, which the filter leaves out, then the one it selects.
	h.must(201, "POST", "/api/users", map[string]any{"username": "someone", "password": "someone-password-1"}, nil)
	h.must(201, "POST", "/api/roles", map[string]any{"name": "streamed", "permissions": map[string][]string{"containers": {"view"}}}, nil)
	var got struct{ Action, Username string }
	for e := range events {
		if e.Name == "entry" {
			if err := json.Unmarshal([]byte(e.Data), &got); err != nil {
				t.Fatal(err)
			}
			break
		}
	}
	if got.Action != "role.create" || got.Username != "root" {
		t.Errorf("streamed entry = %+v", got)
	}
	// An entry another server wrote (straight into the shared database, no
	// wake-up here) arrives by polling.
	if err := h.store.AddAudit(context.Background(), &store.AuditEntry{Action: "role.delete", EntityType: "role",
		Username: "elsewhere"}); err != nil {
		t.Fatal(err)
	}
	got.Action = ""
	for e := range events {
		if e.Name == "entry" {
			if err := json.Unmarshal([]byte(e.Data), &got); err != nil {
				t.Fatal(err)
			}
			break
		}
	}
	if got.Action != "role.delete" || got.Username != "elsewhere" {
		t.Errorf("entry of another server = %+v", got)
	}

	var users []string
	h.must(200, "GET", "/api/audit/users", nil, &users)
	if !slices.Equal(users, []string{"elsewhere", "root"}) {
		t.Errorf("audit users = %v", users)
	}
	status, body := h.do("GET", "/api/audit/export?action=role.create", nil)
	if status != 200 {
		t.Fatalf("export = %d %s", status, body)
	}
	rows, err := csv.NewReader(bytes.NewReader(body)).ReadAll()
	if err != nil || len(rows) != 2 || rows[0][0] != "id" || rows[1][5] != "role.create" {
		t.Errorf("export csv = %v (%v)", rows, err)
	}
	var entries []struct{ Action string }
	h.must(200, "GET", "/api/audit/export?format=json&action=role.create", nil, &entries)
	if len(entries) != 1 {
		t.Errorf("export json = %+v", entries)
	}
	if status, _ := h.do("GET", "/api/audit/export?format=xml", nil); status != 400 {
		t.Errorf("export as xml = %d", status)
	}
}

func TestAuditStreamNeedsTheEnterpriseLicense(t *testing.T) {
	t.Parallel()
	h := newAuthHarness(t, apitest.Options{})
	user, pw := h.setupAdmin()
	h.as(h.login(user, pw))
	for _, p := range []string{"/api/audit/events", "/api/audit/users", "/api/audit/export"} {
		if status, body := h.do("GET", p, nil); status != 403 || !strings.Contains(string(body), "Enterprise license required") {
			t.Errorf("%s without a license = %d %s", p, status, body)
		}
	}
}

func TestProfileChangesOwnDetailsAndPasswordWithTheCurrentOne(t *testing.T) {
	t.Parallel()
	h := newAuthHarness(t, apitest.Options{})
	user, pw := h.setupAdmin()
	h.as(h.login(user, pw))
	var me struct{ Username, DisplayName, Email string }
	h.must(200, "GET", "/api/profile", nil, &me)
	if me.Username != "root" {
		t.Fatalf("profile = %+v", me)
	}
	h.must(200, "PUT", "/api/profile", map[string]any{"displayName": "Root User", "email": "root@example.com"}, &me)
	if me.DisplayName != "Root User" || me.Email != "root@example.com" {
		t.Errorf("after update = %+v", me)
	}
	for _, body := range []map[string]any{
		{"newPassword": "another-password-1"},
		{"newPassword": "another-password-1", "currentPassword": "wrong-password"},
		{"newPassword": "short", "currentPassword": pw},
		{"email": "not an email"},
	} {
		if status, resp := h.do("PUT", "/api/profile", body); status != 400 {
			t.Errorf("profile %v = %d %s", body, status, resp)
		}
	}
	h.must(200, "PUT", "/api/profile", map[string]any{"newPassword": "another-password-1", "currentPassword": pw}, nil)
	h.as(h.login(user, "another-password-1"))
	h.must(200, "GET", "/api/profile", nil, &me)
	if me.Email != "root@example.com" {
		t.Errorf("a refused update changed the email: %+v", me)
	}
}

func TestPreferencesAreKeptPerUserAndScope(t *testing.T) {
	t.Parallel()
	h := newAuthHarness(t, apitest.Options{})
	user, pw := h.setupAdmin()
	h.as(h.login(user, pw))
	var prefs map[string]any
	h.must(200, "GET", "/api/dashboard/preferences", nil, &prefs)
	if len(prefs) != 0 {
		t.Errorf("preferences before any = %v", prefs)
	}
	h.must(200, "POST", "/api/dashboard/preferences", map[string]any{"layout": "grid", "hidden": []int{2}}, nil)
	h.must(200, "PUT", "/api/profile/preferences", map[string]any{"theme": "dark"}, nil)
	prefs = nil
	h.must(200, "GET", "/api/dashboard/preferences", nil, &prefs)
	if prefs["layout"] != "grid" || prefs["theme"] != nil {
		t.Errorf("dashboard preferences = %v", prefs)
	}
	for _, body := range []string{"[1,2]", "null", "{bad", strings.Repeat(" ", 70<<10) + "{}"} {
		if status, resp := h.do("POST", "/api/dashboard/preferences", body); status != 400 {
			t.Errorf("preferences %.20q = %d %s", body, status, resp)
		}
	}
	h.must(201, "POST", "/api/users", map[string]any{"username": "other", "password": "other-password-1"}, nil)
	h.as(h.login("other", "other-password-1"))
	prefs = nil
	h.must(200, "GET", "/api/dashboard/preferences", nil, &prefs)
	if len(prefs) != 0 {
		t.Errorf("another user's preferences = %v", prefs)
	}
}

func TestGeneralAndThemeSettings(t *testing.T) {
	t.Parallel()
	h := newAuthHarness(t, apitest.Options{})
	var theme map[string]string
	h.must(200, "GET", "/api/settings/theme", nil, &theme) // public: the sign-in page reads it
	if theme["theme"] != "system" {
		t.Errorf("default theme = %v", theme)
	}
	if status, _ := h.do("GET", "/api/settings/general", nil); status != 401 {
		t.Errorf("general settings without sign-in = %d", status)
	}
	user, pw := h.setupAdmin()
	h.as(h.login(user, pw))
	for _, body := range []any{map[string]any{"theme": "purple"}, map[string]any{"theme": "dark", "x": 1}, "[]"} {
		if status, resp := h.do("PUT", "/api/settings/theme", body); status != 400 {
			t.Errorf("theme %v = %d %s", body, status, resp)
		}
	}
	h.must(200, "PUT", "/api/settings/theme", map[string]string{"theme": "dark"}, nil)
	h.must(200, "POST", "/api/settings/general", map[string]any{"instanceName": "Prod"}, nil)
	theme = nil
	h.must(200, "GET", "/api/settings/theme", nil, &theme)
	var general map[string]any
	h.must(200, "GET", "/api/settings/general", nil, &general)
	if theme["theme"] != "dark" || general["instanceName"] != "Prod" {
		t.Errorf("after saving: theme %v, general %v", theme, general)
	}
}

func TestMergedLogsFollowNewLinesWithoutRepeatingTheLastOnes(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	id := h.createContainer("berth-merge-follow-"+h.label, true, "sh", "-c",
		`i=0; while true; do echo tick$i; i=$((i+1)); sleep 0.3; done`)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	events, resp := h.openEvents(ctx, "/api/logs/merged?env=1&tail=2&containers="+id)
	if resp.StatusCode != 200 {
		t.Fatalf("merged logs = %d", resp.StatusCode)
	}
	var ticks []int
	for e := range events {
		if e.Name != "log" {
			continue
		}
		var l struct{ Text string }
		if err := json.Unmarshal([]byte(e.Data), &l); err != nil {
			t.Fatal(err)
		}
		n, err := strconv.Atoi(strings.TrimPrefix(l.Text, "tick"))
		if err != nil {
			t.Fatalf("line %q", l.Text)
		}
		ticks = append(ticks, n)
		if len(ticks) == 8 {
			break
		}
	}
	if len(ticks) != 8 {
		t.Fatalf("lines = %v, want 8", ticks)
	}
	for i := 1; i < len(ticks); i++ {
		if ticks[i] != ticks[i-1]+1 {
			t.Errorf("lines %v: not consecutive (a line repeated or lost between the last lines and the followed ones)", ticks)
			break
		}
	}
}

func TestBatchAndPruneNeedThePermissionOfWhatTheyDo(t *testing.T) {
	t.Parallel()
	h, _ := enterpriseAdmin(t)
	admin := h.headers
	id := h.createContainer("berth-batch-perm-"+h.label, false, "sleep", "300")
	var role struct{ ID int64 }
	h.must(201, "POST", "/api/roles", map[string]any{"name": "starter",
		"permissions": map[string][]string{"containers": {"view", "start", "remove"}}}, &role)
	var u struct{ ID int64 }
	h.must(201, "POST", "/api/users", map[string]any{"username": "starter", "password": "starter-password-1"}, &u)
	h.must(201, "POST", "/api/users/"+strconv.FormatInt(u.ID, 10)+"/roles", map[string]any{"roleId": role.ID}, nil)
	h.as(h.login("starter", "starter-password-1"))
	h.headers["Accept"] = "application/json"
	if status, body := h.do("POST", "/api/batch?env=1", map[string]any{"action": "stop", "containers": []string{id}}); status != 403 {
		t.Errorf("batch stop without containers:stop = %d %s", status, body)
	}
	// A prune of everything needs images:remove and the rest too.
	if status, body := h.do("POST", "/api/prune/all?env=1", map[string]any{"labels": []string{enginetest.Label + "=" + h.label}}); status != 403 {
		t.Errorf("prune all without images:remove = %d %s", status, body)
	}
	// Items of a kind the role may not touch: 403 before anything runs.
	if status, body := h.do("POST", "/api/batch?env=1", map[string]any{"operation": "remove", "entityType": "images",
		"items": []map[string]string{{"id": enginetest.Image(), "name": enginetest.Image()}}}); status != 403 {
		t.Errorf("batch image remove without images:remove = %d %s", status, body)
	}
	var out batchOutcome
	h.must(200, "POST", "/api/batch?env=1", map[string]any{"action": "start", "containers": []string{id}}, &out)
	if out.Summary.Success != 1 {
		t.Errorf("batch start = %+v", out)
	}
	// A job is its starter's: another user neither reads nor cancels it;
	// an admin does both.
	delete(h.headers, "Accept")
	var job struct{ JobID string }
	h.must(200, "POST", "/api/batch?env=1", map[string]any{"action": "start", "containers": []string{id}}, &job)
	starter := h.headers
	h.headers = admin
	if !h.inspectState(id).Running {
		t.Error("batch start did not start the container")
	}
	var adminJob struct{ JobID string }
	h.must(200, "POST", "/api/batch?env=1", map[string]any{"operation": "restart", "entityType": "containers",
		"items": []map[string]string{{"id": id, "name": "perm"}}}, &adminJob)
	h.headers = starter
	for _, method := range []string{"GET", "DELETE"} {
		if status, body := h.do(method, "/api/jobs/"+adminJob.JobID, nil); status != 404 {
			t.Errorf("%s of an admin's job by another user = %d %s, want 404", method, status, body)
		}
	}
	h.must(200, "DELETE", "/api/jobs/"+job.JobID, nil, nil)
	h.headers = admin
	h.must(200, "DELETE", "/api/jobs/"+adminJob.JobID, nil, nil)
}

// GET /api/system?env= adds that environment's engine facts (the
// reference's docker, host, stats); without env they are null; an unknown
// environment is 404 and a malformed one 400.
func TestSystemAnswersTheEnvironmentsEngineFacts(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.createContainer("berth-sysfacts-"+h.label, false, "true")
	type facts struct {
		Version string
		Docker  *struct {
			Version, APIVersion string
			Connection          struct{ Type string }
		}
		Host *struct {
			Name string
			CPUs int
		}
		Stats *struct {
			Containers struct{ Total, Running, Stopped int }
			Images     int
			Networks   int
		}
	}
	var plain facts
	h.must(200, "GET", "/api/system", nil, &plain)
	if plain.Version == "" || plain.Docker != nil || plain.Host != nil {
		t.Errorf("without env = %+v", plain)
	}
	var got facts
	h.must(200, "GET", "/api/system?env=1", nil, &got)
	if got.Version == "" || got.Docker == nil || got.Docker.Version == "" || got.Docker.APIVersion == "" ||
		got.Docker.Connection.Type != "socket" || got.Host == nil || got.Host.CPUs < 1 || got.Stats == nil ||
		got.Stats.Containers.Total < 1 || got.Stats.Containers.Stopped < 1 || got.Stats.Images < 1 || got.Stats.Networks < 3 {
		t.Errorf("env=1 = %+v docker %+v host %+v stats %+v", got, got.Docker, got.Host, got.Stats)
	}
	wantError(t, h, "GET", "/api/system?env=99999", nil, 404, "Environment not found")
	wantError(t, h, "GET", "/api/system?env=abc", nil, 400, "Invalid environment ID: env must be a positive integer")
}
