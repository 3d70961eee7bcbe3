package api_test

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"

	"github.com/berth-dev/berth/server/internal/api"
	"github.com/berth-dev/berth/server/internal/apitest"
	"github.com/berth-dev/berth/server/internal/replica"
	"github.com/berth-dev/berth/server/internal/store"
	"github.com/berth-dev/berth/server/internal/store/storetest"
	"github.com/berth-dev/berth/shared/enginetest"
)

// replicaTable is a replica.Locator over the rows of the replicas table,
// which the tests write themselves (the replica registry writes them in a
// real install).
type replicaTable struct {
	db          *sql.DB
	self, token string
}

func (l *replicaTable) Self() string  { return l.self }
func (l *replicaTable) Token() string { return l.token }

func (l *replicaTable) HTTPURLOf(ctx context.Context, id string) (string, bool, error) {
	var addr string
	var live bool
	err := l.db.QueryRowContext(ctx, `SELECT http_url, expires_at > now() FROM replicas WHERE id = $1`, id).Scan(&addr, &live)
	if errors.Is(err, sql.ErrNoRows) {
		return "", false, nil
	}
	return addr, live, err
}

// putReplica writes the replicas row of id: its API address and how long
// it stays live (negative: expired).
func putReplica(t *testing.T, db *sql.DB, id, addr string, ttl time.Duration) {
	t.Helper()
	now := time.Now().UTC()
	if _, err := db.Exec(`INSERT INTO replicas (id, http_url, relay_addr, started_at, renewed_at, expires_at)
		VALUES ($1, $2, '', $3, $3, $4) ON CONFLICT (id) DO UPDATE SET http_url = $2, expires_at = $4`,
		id, addr, now, now.Add(ttl)); err != nil {
		t.Fatal(err)
	}
}

// replicaPair is two Berth servers on one PostgreSQL database, with
// authentication on and a first admin, each knowing the other through the
// replicas table; b trusts loopback as a proxy (X-Forwarded-For).
type replicaPair struct {
	a, b           *harness
	la, lb         *replicaTable
	db             *sql.DB // for the tests' own rows
	admin          *http.Cookie
	adminPW, token string
}

func startReplicaPair(t *testing.T) *replicaPair {
	t.Helper()
	return startReplicaPairWith(t, apitest.Options{},
		apitest.Options{Boundaries: api.Boundaries{TrustedProxies: []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8")}}})
}

// startReplicaPairWith is startReplicaPair with options of each server
// (the database, data directory, key, authentication and locator are the
// pair's).
func startReplicaPairWith(t *testing.T, oa, ob apitest.Options) *replicaPair {
	t.Helper()
	enginetest.Require(t)
	dbURL, box := storetest.PostgresDatabase(t), storetest.Box(t)
	// The tests' own pool (the locators' and the rows'); opening it first
	// migrates the database before either server starts.
	own, err := store.Open(t.Context(), dbURL, box)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { own.Close() })
	p := &replicaPair{db: own.DB(), token: "relay-" + randomLabel()}
	p.la = &replicaTable{db: p.db, self: "replica-a-" + randomLabel(), token: p.token}
	p.lb = &replicaTable{db: p.db, self: "replica-b-" + randomLabel(), token: p.token}
	oa.DBPath, oa.DataDir, oa.Box, oa.Auth, oa.Replica = dbURL, t.TempDir(), box, true, p.la
	p.a = startHarnessWith(t, oa)
	user, pw := p.a.setupAdmin()
	p.admin, p.adminPW = p.a.login(user, pw), pw
	ob.DBPath, ob.DataDir, ob.Box, ob.Auth, ob.Replica = dbURL, t.TempDir(), box, true, p.lb
	p.b = startHarnessWith(t, ob)
	p.b.label = p.a.label // one label for everything the test creates
	putReplica(t, p.db, p.la.self, p.a.url, time.Hour)
	putReplica(t, p.db, p.lb.self, p.b.url, time.Hour)
	return p
}

// attachVia dials the attach WebSocket of execID through h as the user of
// cookie: the socket, or nil and the refusal's status.
func attachVia(ctx context.Context, t *testing.T, h *harness, execID string, cookie *http.Cookie) (*websocket.Conn, int) {
	t.Helper()
	ws, resp, err := websocket.Dial(ctx, "ws"+strings.TrimPrefix(h.url, "http")+"/api/containers/exec/"+execID+"/attach?envId=1",
		&websocket.DialOptions{HTTPHeader: http.Header{"Cookie": {cookie.Name + "=" + cookie.Value}}})
	if err != nil {
		if resp == nil {
			t.Fatalf("attach: %v", err)
		}
		return nil, resp.StatusCode
	}
	return ws, http.StatusSwitchingProtocols
}

// A terminal session created through one server is attached through
// another, once only across both, and only by its creator.
func TestExecSessionAcrossReplicasIsAttachedOnceByItsCreator(t *testing.T) {
	t.Parallel()
	p := startReplicaPair(t)
	a, b := p.a, p.b
	a.as(p.admin)
	a.userWithRole("ann", "Operator")
	a.userWithRole("ben", "Operator")
	id := a.createContainer("berth-exec-replicas-"+a.label, true, "sleep", "300")
	ann, ben := a.login("ann", "ann-password-1"), b.login("ben", "ben-password-1")

	a.as(ann)
	var inst struct{ ExecID string }
	a.must(200, "POST", "/api/containers/"+id+"/exec?envId=1", map[string]string{}, &inst)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()

	// Another user, through the other server: refused, and the refusal
	// does not use the session up.
	if _, status := attachVia(ctx, t, b, inst.ExecID, ben); status != http.StatusForbidden {
		t.Fatalf("ben attaches ann's exec through B = %d, want 403", status)
	}
	b.as(ben)
	b.expectRefusals([]refusal{{"ben resizes ann's exec through B", "POST",
		"/api/containers/exec/" + inst.ExecID + "/resize?envId=1&h=40&w=120", nil, 403, "belongs to another user"}})

	ws, status := attachVia(ctx, t, b, inst.ExecID, ann)
	if status != http.StatusSwitchingProtocols {
		t.Fatalf("ann attaches her exec through B = %d", status)
	}
	defer ws.CloseNow()
	// A second attach, through the first server, is refused as on one server.
	if _, status := attachVia(ctx, t, a, inst.ExecID, ann); status != http.StatusConflict {
		t.Fatalf("second attach through A = %d, want 409", status)
	}
	// The creator resizes through either server.
	a.must(200, "POST", "/api/containers/exec/"+inst.ExecID+"/resize?envId=1&h=40&w=120", nil, nil)
	if err := ws.Write(ctx, websocket.MessageText, []byte("stty size; echo replica-$((20+3))\n")); err != nil {
		t.Fatal(err)
	}
	var out strings.Builder
	done := regexp.MustCompile(`(?m)^replica-23\r?$`)
	for !done.MatchString(out.String()) {
		_, data, err := ws.Read(ctx)
		if err != nil {
			t.Fatalf("read: %v; output so far %q", err, out.String())
		}
		out.Write(data)
	}
	if !strings.Contains(out.String(), "40 120") {
		t.Errorf("terminal size after a resize through the other server not 40x120: %q", out.String())
	}
	ws.Close(websocket.StatusNormalClosure, "")
}

// stallingRegistry serves the registry API's version check and holds
// every other request until the test ends: a pull from it (host:port, on
// loopback, which the engine treats as an insecure registry) runs until it
// is cancelled.
func stallingRegistry(t *testing.T) string {
	t.Helper()
	release := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/v2/" {
			w.Header().Set("Docker-Distribution-API-Version", "registry/2.0")
			return
		}
		select {
		case <-release:
		case <-r.Context().Done():
		}
		http.NotFound(w, r)
	}))
	t.Cleanup(func() {
		close(release)
		srv.Close()
	})
	return strings.TrimPrefix(srv.URL, "http://")
}

// jobSnapshot is GET /api/jobs/{id} without an event stream.
type jobSnapshot struct {
	ID     string
	Status string
	Lines  []struct{ Event string }
}

// startBatch starts a batch job through h and returns its id.
func startBatch(h *harness, body map[string]any) string {
	h.t.Helper()
	var job struct{ JobID string }
	h.must(200, "POST", "/api/batch?env=1", body, &job)
	if job.JobID == "" {
		h.t.Fatalf("batch %v answered no jobId", body)
	}
	return job.JobID
}

// A job started through one server is read, followed and cancelled
// through the other, for its starter (and admins) only; a job whose
// server stopped is not found, saying so.
func TestJobsAreFollowedThroughAnotherReplica(t *testing.T) {
	t.Parallel()
	p := startReplicaPair(t)
	a, b := p.a, p.b
	a.as(p.admin)
	a.userWithRole("ann", "Operator")
	a.userWithRole("ben", "Operator")
	ann, ben := a.login("ann", "ann-password-1"), a.login("ben", "ben-password-1")

	// A finished job: snapshot, replay and cancel (not running any more)
	// through B.
	a.as(ann)
	missing := "berth-none-" + a.label
	done := startBatch(a, map[string]any{"operation": "start", "entityType": "containers", "items": batchItems(missing)})
	a.followJob(done)
	b.as(ann)
	var snap jobSnapshot
	b.must(200, "GET", "/api/jobs/"+done, nil, &snap)
	if snap.ID != done || snap.Status != "error" || len(snap.Lines) == 0 || snap.Lines[len(snap.Lines)-1].Event != "complete" {
		t.Errorf("snapshot through B = %+v, want the failed batch", snap)
	}
	evs := b.followJob(done)
	if len(evs) < 3 || evs[0].Name != "start" || evs[len(evs)-1].Name != "complete" {
		t.Errorf("replay through B = %+v, want start … complete", evs)
	}
	b.as(ben)
	wantError(t, b, "GET", "/api/jobs/"+done, nil, 404, "Job not found") // another user's, as on one server
	wantError(t, b, "DELETE", "/api/jobs/"+done, nil, 404, "Job not found")
	b.as(p.admin)
	b.must(200, "GET", "/api/jobs/"+done, nil, nil) // admins read every job
	b.as(ann)
	var ans struct{ Cancelled *bool }
	b.must(200, "DELETE", "/api/jobs/"+done, nil, &ans)
	if ans.Cancelled == nil || *ans.Cancelled {
		t.Errorf("DELETE through B of a finished job = %+v, want cancelled false", ans)
	}
	for _, h := range []*harness{a, b} {
		h.as(ann)
		wantError(t, h, "GET", "/api/jobs/"+done, nil, 404, "Job not found")
	}

	// A running job, streamed and cancelled through B: a pull from a
	// registry that holds it until the test ends.
	a.as(ann)
	image := stallingRegistry(t) + "/berth-test/stall-" + a.label + ":1"
	removeImages(t, image)
	var job struct{ JobID string }
	a.must(200, "POST", "/api/images/pull?env=1", map[string]any{"image": image, "scanAfterPull": false}, &job)
	running := job.JobID
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	b.as(ann)
	b.must(200, "GET", "/api/jobs/"+running, nil, &snap)
	if snap.Status != "running" {
		t.Fatalf("pull through B = %+v, want running", snap)
	}
	events, resp := b.openEvents(ctx, "/api/jobs/"+running)
	if resp.StatusCode != 200 || resp.Header.Get("Content-Type") != "text/event-stream" {
		t.Fatalf("job stream through B = %d %s", resp.StatusCode, resp.Header.Get("Content-Type"))
	}
	if n := len(resp.Header.Values("Content-Security-Policy")); n != 1 {
		t.Errorf("forwarded answer carries %d Content-Security-Policy headers, want 1", n)
	}
	ans.Cancelled = nil
	b.must(200, "DELETE", "/api/jobs/"+running, nil, &ans)
	if ans.Cancelled == nil || !*ans.Cancelled {
		t.Errorf("DELETE through B of a running job = %+v, want cancelled true", ans)
	}
	// The job's last event, sent after the stream opened, comes through it.
	var last apitest.Event
	for ev := range events {
		last = ev
	}
	if last.Name != "result" || !strings.Contains(last.Data, `"error"`) {
		t.Errorf("stream through B ended with %+v, want the cancelled pull's result", last)
	}
	wantError(t, a, "GET", "/api/jobs/"+running, nil, 404, "Job not found")

	// The job of a replica that stopped (its row expired, or gone).
	gone := "replica-gone-" + a.label
	putReplica(t, p.db, gone, "http://127.0.0.1:1", -time.Minute)
	for _, job := range []struct{ id, owner string }{{"job-of-expired-" + a.label, gone}, {"job-of-unknown-" + a.label, "replica-never-" + a.label}} {
		if err := a.store.AddJobOwner(t.Context(), job.id, job.owner, time.Now(), time.Time{}); err != nil {
			t.Fatal(err)
		}
		wantError(t, b, "GET", "/api/jobs/"+job.id, nil, 404, "Job not found: the Berth replica that ran it has stopped")
		wantError(t, b, "DELETE", "/api/jobs/"+job.id, nil, 404, "Job not found: the Berth replica that ran it has stopped")
	}
	// A job recorded as B's own that B does not hold: unknown, not forwarded.
	if err := a.store.AddJobOwner(t.Context(), "job-of-b-"+a.label, p.lb.self, time.Now(), time.Time{}); err != nil {
		t.Fatal(err)
	}
	wantError(t, b, "GET", "/api/jobs/job-of-b-"+a.label, nil, 404, "Job not found")
}

// A forwarded request is never forwarded again, and only the replicas'
// token makes a request's forwarding headers believed.
func TestRelayTokenStopsLoopsAndIsTheOnlyTrust(t *testing.T) {
	t.Parallel()
	p := startReplicaPair(t)
	a, b := p.a, p.b
	a.as(p.admin)
	b.as(p.admin)
	items := batchItems("berth-none-" + a.label)
	newJob := func() string {
		t.Helper()
		id := startBatch(a, map[string]any{"operation": "start", "entityType": "containers", "items": items})
		a.followJob(id)
		return id
	}

	// A replica whose address is B's own: B forwards the request to itself,
	// which, relayed, answers without forwarding again.
	loop := "replica-loop-" + a.label
	putReplica(t, p.db, loop, b.url, time.Hour)
	if err := a.store.AddJobOwner(t.Context(), "job-loop-"+a.label, loop, time.Now(), time.Time{}); err != nil {
		t.Fatal(err)
	}
	wantError(t, b, "GET", "/api/jobs/job-loop-"+a.label, nil, 404, "Job not found")

	job := newJob()
	// With the right token, B answers itself (the request claims to come
	// from a replica): the job is A's, so it is not found there.
	b.headers[replica.RelayHeader] = p.token
	wantError(t, b, "GET", "/api/jobs/"+job, nil, 404, "Job not found")
	// A wrong token is an ordinary request: forwarded to A as any other.
	b.headers[replica.RelayHeader] = "not-the-token"
	b.must(200, "GET", "/api/jobs/"+job, nil, nil)
	delete(b.headers, replica.RelayHeader)

	// Which client address A records for a cancel: only the token makes it
	// believe X-Forwarded-For (A trusts no proxy).
	ipOfCancel := func(job string) string {
		t.Helper()
		list, _, err := a.store.ListAudit(t.Context(), store.AuditFilter{Action: "job.cancel"})
		if err != nil {
			t.Fatal(err)
		}
		var ips []string
		for _, e := range list {
			if e.EntityID == job {
				ips = append(ips, e.IP)
			}
		}
		if len(ips) != 1 {
			t.Fatalf("audit lines of the cancel of %s = %v, want one", job, ips)
		}
		return ips[0]
	}
	for _, tc := range []struct {
		name, token, want string
	}{
		{"wrong token", "not-the-token", "127.0.0.1"},
		{"no token", "", "127.0.0.1"},
		{"the replicas' token", p.token, "203.0.113.7"},
	} {
		job := newJob()
		a.headers["X-Forwarded-For"] = "203.0.113.7"
		if tc.token != "" {
			a.headers[replica.RelayHeader] = tc.token
		}
		a.must(200, "DELETE", "/api/jobs/"+job, nil, nil)
		a.as(p.admin)
		if got := ipOfCancel(job); got != tc.want {
			t.Errorf("%s: cancel recorded from %s, want %s", tc.name, got, tc.want)
		}
	}

	// Through B, which trusts loopback as a proxy: A records the client B
	// saw, once (B writes no line of its own).
	cancels := func() int {
		t.Helper()
		_, n, err := a.store.ListAudit(t.Context(), store.AuditFilter{Action: "job.cancel"})
		if err != nil {
			t.Fatal(err)
		}
		return n
	}
	job = newJob()
	before := cancels()
	b.headers["X-Forwarded-For"] = "198.51.100.4"
	b.must(200, "DELETE", "/api/jobs/"+job, nil, nil)
	if got := ipOfCancel(job); got != "198.51.100.4" {
		t.Errorf("cancel through B recorded from %s, want the client B saw", got)
	}
	if n := cancels() - before; n != 1 {
		t.Errorf("%d audit lines for one cancel through B, want 1", n)
	}
}

// The identity provider sends the browser back to whichever replica the
// load balancer picks (here: always A, the redirect URI's port); the
// sign-in B began completes on B. Not parallel: the redirect URI's port is
// the one TestOIDCSignInAgainstARealProvider listens on.
func TestOIDCSignInCompletesOnTheReplicaThatBeganIt(t *testing.T) {
	env := requireOIDC(t)
	p := startReplicaPairWith(t, apitest.Options{Addr: "127.0.0.1:" + env.port}, apitest.Options{})
	a, b := p.a, p.b
	a.as(p.admin)
	callback := "http://127.0.0.1:" + env.port + "/api/auth/oidc/callback"
	var prov struct{ ID int64 }
	a.must(201, "POST", "/api/auth/oidc", map[string]any{"name": "dex", "enabled": true, "issuerUrl": env.issuer,
		"clientId": env.clientID, "clientSecret": env.clientSecret, "redirectUri": callback,
		"scopes": "openid profile email groups"}, &prov)
	initiate := fmt.Sprintf("%s/api/auth/oidc/%d/initiate", b.url, prov.ID)

	c := browser(t)
	resp, body := signIn(t, c, initiate+"?redirect=/containers", env.logins["alice"])
	if resp.Request.URL.Path != "/containers" {
		t.Fatalf("landed on %s (%d %.200s), want /containers", resp.Request.URL, resp.StatusCode, body)
	}
	for _, h := range []*harness{a, b} {
		resp, err := c.Get(h.url + "/api/auth/session")
		if err != nil {
			t.Fatal(err)
		}
		var sess struct{ User struct{ Username string } }
		_ = jsonDecode(resp.Body, &sess)
		resp.Body.Close()
		if sess.User.Username != "alice" {
			t.Errorf("session through %s = %+v, want alice", h.url, sess)
		}
	}

	// The replica that began a sign-in stopped: the callback says so.
	putReplica(t, p.db, p.lb.self, b.url, -time.Minute)
	final, _ := signIn(t, browser(t), initiate, env.logins["alice"])
	if final.Request.URL.Path != "/login" ||
		!strings.Contains(final.Request.URL.RawQuery, url.QueryEscape("The sign-in was begun by a Berth replica that has stopped")) {
		t.Errorf("sign-in begun by a stopped replica landed on %s", final.Request.URL)
	}
}
