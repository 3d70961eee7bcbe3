package api_test

import (
	"crypto/ed25519"
	"crypto/rand"
	"encoding/base64"
	"encoding/csv"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/berth-dev/berth/server/internal/apitest"
	"github.com/berth-dev/berth/server/internal/license"
)

func TestEnterpriseFeaturesNeedAValidLicenseAndTheAuditLogRecordsChanges(t *testing.T) {
	t.Parallel()
	testPub, testPriv, _ := ed25519.GenerateKey(rand.Reader)
	_, strangerPriv, _ := ed25519.GenerateKey(rand.Reader)
	h := newAuthHarness(t, apitest.Options{LicenseKeys: []ed25519.PublicKey{testPub}})
	user, pw := h.setupAdmin()
	h.as(h.login(user, pw))

	role := map[string]any{"name": "deployer", "permissions": map[string][]string{"containers": {"view", "start"}}}
	for _, c := range []struct{ method, path string }{{"POST", "/api/roles"}, {"GET", "/api/audit"}} {
		status, body := h.do(c.method, c.path, role)
		if status != 403 || !strings.Contains(string(body), "Enterprise license required") {
			t.Errorf("%s %s without a license = %d %s", c.method, c.path, status, body)
		}
	}
	var state map[string]any
	h.must(200, "GET", "/api/license", nil, &state)
	if state["edition"] != "community" {
		t.Errorf("edition = %v", state["edition"])
	}

	doc := func(key ed25519.PrivateKey, expires *time.Time) string {
		d, err := license.Sign(license.License{ID: "L-1", Customer: "Test", Edition: "enterprise",
			IssuedAt: time.Now().Add(-time.Hour), ExpiresAt: expires}, key)
		if err != nil {
			t.Fatal(err)
		}
		return d
	}
	past := time.Now().Add(-time.Minute)
	for name, d := range map[string]string{
		"untrusted key": doc(strangerPriv, nil), "expired": doc(testPriv, &past), "garbage": "abc.def",
		"tampered": tamper(t, doc(testPriv, nil))} {
		status, body := h.do("POST", "/api/license", map[string]string{"license": d})
		if status != 400 || !strings.Contains(string(body), "Invalid license") {
			t.Errorf("%s license = %d %s, want 400 Invalid license", name, status, body)
		}
	}
	future := time.Now().Add(24 * time.Hour)
	// The reference's {name, key}: both are required and the name must be
	// the one the license is issued to; Berth's {license} stays an alias.
	for _, body := range []map[string]string{
		{"key": doc(testPriv, &future)}, {"name": "Test"}, {"name": "Other", "key": doc(testPriv, &future)}} {
		if status, answer := h.do("POST", "/api/license", body); status != 400 {
			t.Errorf("license %v = %d %s, want 400", body, status, answer)
		}
	}
	h.must(200, "POST", "/api/license", map[string]string{"name": "Test", "key": doc(testPriv, &future)}, &state)
	if state["edition"] != "enterprise" {
		t.Fatalf("after install by name and key: %v", state)
	}
	h.must(200, "POST", "/api/license", map[string]string{"license": doc(testPriv, &future)}, &state)
	if state["edition"] != "enterprise" {
		t.Fatalf("after install: %v", state)
	}
	var created struct{ ID int64 }
	h.must(201, "POST", "/api/roles", role, &created)
	status, body := h.do("PUT", "/api/roles/1", role) // built-in Admin
	if status != 400 {
		t.Errorf("changing a built-in role = %d %s", status, body)
	}

	// Changes land in the audit log with who, where, what and when.
	id := h.createContainer("berth-audit-"+h.label, false, "sleep", "300")
	h.must(200, "POST", "/api/containers/"+id+"/start?env=1", nil, nil)
	h.must(200, "DELETE", "/api/containers/"+id+"?env=1&force=true", nil, nil)
	var page struct {
		Entries []struct {
			Timestamp     time.Time
			Username      string
			UserID        *int64
			EnvironmentID *int64
			Action        string
			EntityType    string
			EntityID      string
			EntityName    string
			IPAddress     string
		}
		Total, Limit, Offset int
	}
	h.must(200, "GET", "/api/audit?action=container.*", nil, &page)
	got := map[string]bool{}
	for _, e := range page.Entries {
		got[e.Action] = true
		if e.Username != user || e.UserID == nil || e.EnvironmentID == nil || *e.EnvironmentID != 1 ||
			e.EntityType != "container" || e.IPAddress != "127.0.0.1" || time.Since(e.Timestamp) > time.Minute {
			t.Errorf("audit entry = %+v", e)
		}
	}
	for _, a := range []string{"container.create", "container.start", "container.remove"} {
		if !got[a] {
			t.Errorf("no %s entry in %v", a, got)
		}
	}
	h.must(200, "GET", "/api/audit?action=login&limit=1", nil, &page)
	if len(page.Entries) != 1 || page.Total < 1 || page.Limit != 1 {
		t.Errorf("login page = %+v", page)
	}
	h.must(200, "GET", "/api/audit?action=role.create", nil, &page)
	if page.Total != 1 || page.Entries[0].EntityType != "role" || page.Entries[0].EntityID != strconv.FormatInt(created.ID, 10) ||
		page.Entries[0].EntityName != "deployer" {
		t.Errorf("role.create entries = %+v", page)
	}
	// Users: the setup's own line only (not a second, anonymous one), and a
	// created user named by id and name.
	var other struct{ ID int64 }
	h.must(201, "POST", "/api/users", map[string]any{"username": "audited-" + h.label, "password": "audited-password-1"}, &other)
	h.must(200, "GET", "/api/audit?action=user.create", nil, &page)
	names := map[string]string{}
	for _, e := range page.Entries {
		names[e.EntityName] = e.EntityID
	}
	if page.Total != 2 || names[user] == "" || names["audited-"+h.label] != strconv.FormatInt(other.ID, 10) {
		t.Errorf("user.create entries = %+v", page)
	}
	if status, _ := h.do("GET", "/api/audit?since=yesterday", nil); status != 400 {
		t.Errorf("bad since = %d, want 400", status)
	}

	// Export as CSV: a header and one row per entry.
	status, data := h.do("GET", "/api/audit?format=csv&action=container.*", nil)
	if status != 200 {
		t.Fatalf("csv export = %d", status)
	}
	rows, err := csv.NewReader(strings.NewReader(string(data))).ReadAll()
	if err != nil || len(rows) != 4 || rows[0][5] != "action" {
		t.Fatalf("csv = %v %v", rows, err)
	}
	var all []map[string]any
	h.must(200, "GET", "/api/audit?format=json", nil, &all)
	if len(all) < 5 {
		t.Errorf("json export has %d entries", len(all))
	}

	h.must(200, "DELETE", "/api/license", nil, nil)
	if status, _ := h.do("GET", "/api/audit", nil); status != 403 {
		t.Errorf("audit after removing the license = %d, want 403", status)
	}
}

// tamper changes the payload of a license document (the customer) and keeps
// the original signature.
func tamper(t *testing.T, doc string) string {
	t.Helper()
	payload64, sig, _ := strings.Cut(doc, ".")
	payload, err := base64.RawURLEncoding.DecodeString(payload64)
	if err != nil {
		t.Fatal(err)
	}
	changed := strings.Replace(string(payload), `"customer":"Test"`, `"customer":"Tesu"`, 1)
	if changed == string(payload) {
		t.Fatalf("payload %s has no customer to change", payload)
	}
	return base64.RawURLEncoding.EncodeToString([]byte(changed)) + "." + sig
}
