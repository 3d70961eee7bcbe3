package api_test

import (
	"bytes"
	"crypto/ed25519"
	"crypto/rand"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/go-ldap/ldap/v3"

	"github.com/berth-dev/berth/server/internal/apitest"
	"github.com/berth-dev/berth/server/internal/license"
	"github.com/berth-dev/berth/shared/enginetest"
)

// ldapDirectory is the test directory of scripts/test-env.sh: users alice,
// bob and "ev*)(il" under ou=people; groups berth-admins (alice), developers
// (bob) and ops (alice, bob) under ou=groups.
type ldapDirectory struct {
	URL, LDAPSURL, CAFile, Base, BindDN, BindPassword, AdminDN, AdminPassword string
}

func (d ldapDirectory) people() string { return "ou=people," + d.Base }
func (d ldapDirectory) groups() string { return "ou=groups," + d.Base }
func (d ldapDirectory) user(uid string) string {
	return "uid=" + uid + "," + d.people()
}
func (d ldapDirectory) group(cn string) string { return "cn=" + cn + "," + d.groups() }

// requireLDAP returns the test directory, skipping the test when there is
// none, or failing it under CI=true: a skipped suite is not a passing one.
func requireLDAP(t *testing.T) ldapDirectory {
	t.Helper()
	d := ldapDirectory{URL: os.Getenv("BERTH_TEST_LDAP_URL"), LDAPSURL: os.Getenv("BERTH_TEST_LDAPS_URL"),
		CAFile: os.Getenv("BERTH_TEST_LDAP_CA"), Base: os.Getenv("BERTH_TEST_LDAP_BASE"),
		BindDN: os.Getenv("BERTH_TEST_LDAP_BIND_DN"), BindPassword: os.Getenv("BERTH_TEST_LDAP_BIND_PASSWORD"),
		AdminDN: os.Getenv("BERTH_TEST_LDAP_ADMIN_DN"), AdminPassword: os.Getenv("BERTH_TEST_LDAP_ADMIN_PASSWORD")}
	enginetest.RequireEnv(t, "LDAP directory", "BERTH_TEST_LDAP_URL", "BERTH_TEST_LDAP_BASE")
	return d
}

// newLDAPHarness serves a Berth with an enterprise license, signed in as
// its first admin.
func newLDAPHarness(t *testing.T) (*harness, ldapDirectory) {
	t.Helper()
	dir := requireLDAP(t)
	pub, priv, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	h := newAuthHarness(t, apitest.Options{LicenseKeys: []ed25519.PublicKey{pub}})
	h.as(h.login(h.setupAdmin()))
	doc, err := license.Sign(license.License{ID: "L-ldap", Customer: "Test", Edition: "enterprise",
		IssuedAt: time.Now().Add(-time.Hour)}, priv)
	if err != nil {
		t.Fatal(err)
	}
	h.must(200, "POST", "/api/license", map[string]string{"license": doc}, nil)
	return h, dir
}

// ldapConfigOut is an LDAP configuration as the API answers it.
type ldapConfigOut struct {
	ID                   int64
	Name                 string
	Enabled              bool
	ServerURL            string
	BindDN               string
	BindPassword         string
	BaseDN               string
	UserFilter           string
	UsernameAttribute    string
	EmailAttribute       string
	DisplayNameAttribute string
	GroupBaseDN          string
	GroupFilter          string
	AdminGroup           string
	RoleMappings         []struct {
		GroupDN string
		RoleID  int64
	}
	TLSEnabled bool
	TLSCA      string
	CreatedAt  time.Time
}

// readerConfig is an enabled configuration binding as the read-only service
// account, plus extra fields.
func (d ldapDirectory) readerConfig(name string, extra map[string]any) map[string]any {
	c := map[string]any{"name": name, "enabled": true, "serverUrl": d.URL, "bindDn": d.BindDN,
		"bindPassword": d.BindPassword, "baseDn": d.Base}
	for k, v := range extra {
		c[k] = v
	}
	return c
}

func (h *harness) createLDAP(body map[string]any) ldapConfigOut {
	h.t.Helper()
	var c ldapConfigOut
	h.must(201, "POST", "/api/auth/ldap", body, &c)
	return c
}

// loginResult is the answer of POST /api/auth/login.
type loginResult struct {
	status int
	body   string
	cookie *http.Cookie
	user   struct {
		ID       int64
		Username string
		Email    string
		IsAdmin  bool
	}
}

// ldapLogin signs in without the harness's session, through provider.
func (h *harness) ldapLogin(provider, username, password string) loginResult {
	h.t.Helper()
	body, _ := json.Marshal(map[string]string{"username": username, "password": password, "provider": provider})
	resp, err := h.http.Post(h.url+"/api/auth/login", "application/json", bytes.NewReader(body))
	if err != nil {
		h.t.Fatal(err)
	}
	defer resp.Body.Close()
	data, _ := io.ReadAll(resp.Body)
	res := loginResult{status: resp.StatusCode, body: string(data)}
	for _, c := range resp.Cookies() {
		if c.Name == "dockhand_session" {
			res.cookie = c
		}
	}
	if res.status == 200 {
		var out struct {
			User *json.RawMessage
		}
		if err := json.Unmarshal(data, &out); err != nil || out.User == nil {
			h.t.Fatalf("login answer %s: %v", data, err)
		}
		if err := json.Unmarshal(*out.User, &res.user); err != nil {
			h.t.Fatal(err)
		}
	}
	return res
}

// mustLDAPLogin signs in and fails the test unless it succeeds.
func (h *harness) mustLDAPLogin(provider, username, password string) loginResult {
	h.t.Helper()
	res := h.ldapLogin(provider, username, password)
	if res.status != 200 || res.cookie == nil {
		h.t.Fatalf("LDAP login %s via %s = %d %s", username, provider, res.status, res.body)
	}
	return res
}

const invalidCredentials = `{"error":"Invalid username or password"}` + "\n"

func TestLDAPRoutesNeedAnEnterpriseLicense(t *testing.T) {
	t.Parallel()
	dir := requireLDAP(t)
	h := newAuthHarness(t, apitest.Options{})
	h.as(h.login(h.setupAdmin()))
	for _, c := range []struct{ method, path string }{
		{"GET", "/api/auth/ldap"}, {"POST", "/api/auth/ldap"}, {"GET", "/api/auth/ldap/1"},
		{"PATCH", "/api/auth/ldap/1"}, {"DELETE", "/api/auth/ldap/1"}, {"POST", "/api/auth/ldap/1/test"},
	} {
		status, body := h.do(c.method, c.path, dir.readerConfig("corp", nil))
		if status != 403 || !strings.Contains(string(body), `"error":"Enterprise license required"`) {
			t.Errorf("%s %s without a license = %d %s, want 403", c.method, c.path, status, body)
		}
	}
	if res := h.ldapLogin("ldap", "alice", "alice-ldap-1"); res.status != 403 {
		t.Errorf("LDAP login without a license = %d %s, want 403", res.status, res.body)
	}
}

func TestLDAPConfigAdministration(t *testing.T) {
	t.Parallel()
	h, dir := newLDAPHarness(t)
	c := h.createLDAP(map[string]any{"name": "corp", "serverUrl": dir.URL, "bindDn": dir.BindDN,
		"bindPassword": dir.BindPassword, "baseDn": dir.Base})
	if c.ID == 0 || c.Name != "corp" || c.BindPassword != "********" || c.Enabled || c.UserFilter != "(uid={{username}})" ||
		c.UsernameAttribute != "uid" || c.EmailAttribute != "mail" || c.DisplayNameAttribute != "cn" ||
		c.RoleMappings == nil || c.CreatedAt.IsZero() {
		t.Errorf("created = %+v", c)
	}
	path := "/api/auth/ldap/" + strconv.FormatInt(c.ID, 10)
	var list []ldapConfigOut
	h.must(200, "GET", "/api/auth/ldap", nil, &list)
	if len(list) != 1 || list[0].BindPassword != "********" || list[0].BindDN != dir.BindDN {
		t.Errorf("list = %+v", list)
	}
	var got ldapConfigOut
	h.must(200, "GET", path, nil, &got)
	if got.BindPassword != "********" {
		t.Errorf("GET bindPassword = %q, want the mask", got.BindPassword)
	}
	// The mask sent back keeps the password: the test still binds.
	h.must(200, "PATCH", path, map[string]any{"bindPassword": "********", "enabled": true,
		"groupBaseDn": dir.groups()}, &got)
	if got.BindPassword != "********" || !got.Enabled || got.GroupBaseDN != dir.groups() || got.BaseDN != dir.Base {
		t.Errorf("after PATCH = %+v", got)
	}
	var test map[string]any
	h.must(200, "POST", path+"/test", nil, &test)
	if test["success"] != true || test["userCount"] != float64(3) {
		t.Errorf("test = %v, want success and 3 users", test)
	}
	var providers struct {
		Providers []struct{ ID, Name, Type string }
	}
	h.must(200, "GET", "/api/auth/providers", nil, &providers)
	want := fmt.Sprintf("ldap:%d corp ldap", c.ID)
	found := false
	for _, p := range providers.Providers {
		found = found || p.ID+" "+p.Name+" "+p.Type == want
	}
	if !found {
		t.Errorf("providers = %+v, want %q among them", providers.Providers, want)
	}

	// The bind password is nowhere in the database files in plain text.
	files, _ := filepath.Glob(filepath.Join(h.dataDir, "berth.db*"))
	if len(files) == 0 {
		t.Fatal("no database files")
	}
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		if bytes.Contains(data, []byte(dir.BindPassword)) {
			t.Errorf("%s holds the bind password in plain text", filepath.Base(f))
		}
	}

	// "" removes the password: a named bind without one fails, reported as such.
	h.must(200, "PATCH", path, map[string]any{"bindPassword": ""}, &got)
	if got.BindPassword != "" {
		t.Errorf("bindPassword after clearing = %q", got.BindPassword)
	}
	h.must(200, "POST", path+"/test", nil, &test)
	if test["success"] != false || !strings.Contains(fmt.Sprint(test["error"]), "LDAP server unavailable") {
		t.Errorf("test without the bind password = %v", test)
	}
	h.must(200, "PATCH", path, map[string]any{"bindPassword": dir.BindPassword}, nil)

	var roles []struct {
		ID   int64
		Name string
	}
	h.must(200, "GET", "/api/roles", nil, &roles)
	for _, bad := range []struct {
		body map[string]any
		msg  string
	}{
		{map[string]any{"serverUrl": dir.URL, "baseDn": dir.Base}, "name is required"},
		{map[string]any{"name": "x", "baseDn": dir.Base}, "serverUrl is required"},
		{map[string]any{"name": "x", "serverUrl": dir.URL}, "baseDn is required"},
		{map[string]any{"name": "x", "serverUrl": "https://ldap.example.com", "baseDn": dir.Base}, "serverUrl must be ldap://host:port or ldaps://host:port"},
		{map[string]any{"name": "x", "serverUrl": dir.URL, "baseDn": dir.Base, "groupBaseDn": dir.groups(),
			"roleMappings": []map[string]any{{"groupDn": dir.group("developers"), "roleId": 9999}}}, "roleMappings: role 9999 does not exist"},
	} {
		status, body := h.do("POST", "/api/auth/ldap", bad.body)
		if status != 400 || !strings.Contains(string(body), `"error":"`+bad.msg+`"`) {
			t.Errorf("create %v = %d %s, want 400 %q", bad.body, status, body, bad.msg)
		}
	}
	if status, body := h.do("POST", "/api/auth/ldap", map[string]any{"name": "corp", "serverUrl": dir.URL, "baseDn": dir.Base}); status != 409 {
		t.Errorf("duplicate name = %d %s, want 409", status, body)
	}
	status, body := h.do("PATCH", path, map[string]any{"roleMappings": []map[string]any{{"groupDn": dir.group("developers"), "roleId": 9999}}})
	if status != 400 {
		t.Errorf("PATCH with an unknown role = %d %s, want 400", status, body)
	}
	h.must(200, "DELETE", path, nil, nil)
	for _, c := range []struct{ method, path string }{{"GET", path}, {"PATCH", path}, {"DELETE", path}, {"POST", path + "/test"}} {
		if status, body := h.do(c.method, c.path, map[string]any{}); status != 404 || !strings.Contains(string(body), "LDAP configuration not found") {
			t.Errorf("%s %s after delete = %d %s, want 404", c.method, c.path, status, body)
		}
	}
	var audit struct {
		Entries []struct{ Action string }
	}
	h.must(200, "GET", "/api/audit?action=ldap.*", nil, &audit)
	actions := map[string]int{}
	for _, e := range audit.Entries {
		actions[e.Action]++
	}
	if actions["ldap.create"] != 1 || actions["ldap.update"] != 3 || actions["ldap.delete"] != 1 {
		t.Errorf("audit actions = %v", actions)
	}
}

func TestLDAPSignInWithAnAdminGroupDN(t *testing.T) {
	t.Parallel()
	h, dir := newLDAPHarness(t)
	c := h.createLDAP(dir.readerConfig("corp", map[string]any{"adminGroup": dir.group("berth-admins")}))

	alice := h.mustLDAPLogin("ldap", "alice", "alice-ldap-1")
	if alice.user.Username != "alice" || alice.user.Email != "alice@berth.test" || !alice.user.IsAdmin {
		t.Errorf("alice = %+v", alice.user)
	}
	var user struct {
		Username, Email, DisplayName, AuthProvider string
		IsAdmin, IsActive                          bool
	}
	h.must(200, "GET", fmt.Sprintf("/api/users/%d", alice.user.ID), nil, &user)
	if user.AuthProvider != "ldap:corp" || user.DisplayName != "Alice Admin" || !user.IsAdmin || !user.IsActive {
		t.Errorf("alice's account = %+v", user)
	}
	admin := h.headers
	h.as(alice.cookie)
	var sess struct {
		Authenticated bool
		User          struct {
			Username, Provider string
			IsAdmin            bool
		}
	}
	h.must(200, "GET", "/api/auth/session", nil, &sess)
	if !sess.Authenticated || sess.User.Username != "alice" || sess.User.Provider != "ldap" || !sess.User.IsAdmin {
		t.Errorf("alice's session = %+v", sess)
	}
	h.headers = admin

	bob := h.mustLDAPLogin(fmt.Sprintf("ldap:%d", c.ID), "bob", "bob-ldap-1")
	if bob.user.Username != "bob" || bob.user.IsAdmin {
		t.Errorf("bob = %+v, want no admin", bob.user)
	}
	// Signing in again updates the same account.
	again := h.mustLDAPLogin("ldap", "alice", "alice-ldap-1")
	if again.user.ID != alice.user.ID || !again.user.IsAdmin {
		t.Errorf("alice again = %+v, want account %d", again.user, alice.user.ID)
	}
}

func TestLDAPSignInWithAnAdminGroupName(t *testing.T) {
	t.Parallel()
	h, dir := newLDAPHarness(t)
	h.createLDAP(dir.readerConfig("corp", map[string]any{"adminGroup": "berth-admins", "groupBaseDn": dir.groups()}))
	if alice := h.mustLDAPLogin("ldap", "alice", "alice-ldap-1"); !alice.user.IsAdmin {
		t.Errorf("alice = %+v, want admin", alice.user)
	}
	if bob := h.mustLDAPLogin("ldap", "bob", "bob-ldap-1"); bob.user.IsAdmin {
		t.Errorf("bob = %+v, want no admin", bob.user)
	}
}

// ldapAdmin runs modify on the test directory as its admin.
func ldapAdmin(t *testing.T, dir ldapDirectory, req *ldap.ModifyRequest, ignore ...uint16) {
	t.Helper()
	conn, err := ldap.DialURL(dir.URL)
	if err != nil {
		t.Fatalf("dial the test directory: %v", err)
	}
	defer conn.Close()
	if err := conn.Bind(dir.AdminDN, dir.AdminPassword); err != nil {
		t.Fatalf("bind as the directory admin: %v", err)
	}
	if err := conn.Modify(req); err != nil && !ldap.IsErrorAnyOf(err, ignore...) {
		t.Fatalf("modify %s: %v", req.DN, err)
	}
}

func TestLDAPRoleMappingsFollowTheDirectoryOnEverySignIn(t *testing.T) {
	t.Parallel()
	h, dir := newLDAPHarness(t)
	developers, bobDN := dir.group("developers"), dir.user("bob")
	// groupOfNames needs a member: bob's place is kept by a placeholder.
	placeholder := "cn=berth-test-placeholder," + dir.Base
	restore := func() {
		add := ldap.NewModifyRequest(developers, nil)
		add.Add("member", []string{bobDN})
		ldapAdmin(t, dir, add, ldap.LDAPResultAttributeOrValueExists)
		del := ldap.NewModifyRequest(developers, nil)
		del.Delete("member", []string{placeholder})
		ldapAdmin(t, dir, del, ldap.LDAPResultNoSuchAttribute)
	}
	restore() // in case an earlier run was killed half-way
	t.Cleanup(restore)

	var roles []struct {
		ID   int64
		Name string
	}
	h.must(200, "GET", "/api/roles", nil, &roles)
	var operator int64
	for _, r := range roles {
		if r.Name == "Operator" {
			operator = r.ID
		}
	}
	c := h.createLDAP(dir.readerConfig("corp", map[string]any{"groupBaseDn": dir.groups(),
		"roleMappings": []map[string]any{{"groupDn": developers, "roleId": operator}}}))
	if len(c.RoleMappings) != 1 || c.RoleMappings[0].GroupDN != developers || c.RoleMappings[0].RoleID != operator {
		t.Fatalf("roleMappings = %+v", c.RoleMappings)
	}
	type assignment struct {
		RoleID   int64
		RoleName string
		Source   string
	}
	rolesOf := func(id int64) []assignment {
		var out []assignment
		h.must(200, "GET", fmt.Sprintf("/api/users/%d/roles", id), nil, &out)
		return out
	}
	bob := h.mustLDAPLogin("ldap", "bob", "bob-ldap-1")
	want := assignment{RoleID: operator, RoleName: "Operator", Source: fmt.Sprintf("ldap:%d", c.ID)}
	if got := rolesOf(bob.user.ID); len(got) != 1 || got[0] != want {
		t.Fatalf("bob's roles = %+v, want [%+v]", got, want)
	}
	alice := h.mustLDAPLogin("ldap", "alice", "alice-ldap-1")
	if got := rolesOf(alice.user.ID); len(got) != 0 {
		t.Errorf("alice's roles = %+v, want none (not a developer)", got)
	}

	swap := ldap.NewModifyRequest(developers, nil)
	swap.Add("member", []string{placeholder})
	swap.Delete("member", []string{bobDN})
	ldapAdmin(t, dir, swap)
	h.mustLDAPLogin("ldap", "bob", "bob-ldap-1")
	if got := rolesOf(bob.user.ID); len(got) != 0 {
		t.Errorf("bob's roles after leaving developers = %+v, want none", got)
	}
}

func TestLDAPSignInEscapesTheLoginName(t *testing.T) {
	t.Parallel()
	h, dir := newLDAPHarness(t)
	h.createLDAP(dir.readerConfig("corp", nil))
	for _, name := range []string{"*", "ev*", "*)(uid=*", "alice)(uid=*", "*)(|(uid=*", `\2a`, "al*"} {
		for _, pw := range []string{"alice-ldap-1", "eve-ldap-1"} {
			if res := h.ldapLogin("ldap", name, pw); res.status != 401 || res.body != invalidCredentials {
				t.Errorf("login %q = %d %s, want 401 Invalid username or password", name, res.status, res.body)
			}
		}
	}
	eve := h.mustLDAPLogin("ldap", "ev*)(il", "eve-ldap-1")
	if eve.user.Username != "ev*)(il" || eve.user.Email != "eve@berth.test" {
		t.Errorf("eve = %+v", eve.user)
	}
}

func TestLDAPUnknownUserAndWrongPasswordLookAlike(t *testing.T) {
	t.Parallel()
	h, dir := newLDAPHarness(t)
	h.createLDAP(dir.readerConfig("corp", nil))
	wrong := h.ldapLogin("ldap", "alice", "not-alices-password")
	unknown := h.ldapLogin("ldap", "mallory", "not-alices-password")
	if wrong.status != 401 || wrong.status != unknown.status || wrong.body != unknown.body || wrong.body != invalidCredentials {
		t.Errorf("wrong password = %d %s, unknown user = %d %s; want both 401 Invalid username or password",
			wrong.status, wrong.body, unknown.status, unknown.body)
	}
	if res := h.ldapLogin("ldap", "alice", ""); res.status != 400 {
		t.Errorf("empty password = %d %s, want 400", res.status, res.body)
	}
	if res := h.ldapLogin("ldap:999", "alice", "alice-ldap-1"); res.status != 400 || !strings.Contains(res.body, "Unknown sign-in provider") {
		t.Errorf("unknown configuration = %d %s, want 400", res.status, res.body)
	}
}

func TestLDAPSignInWithAnAnonymousBind(t *testing.T) {
	t.Parallel()
	h, dir := newLDAPHarness(t)
	c := h.createLDAP(map[string]any{"name": "anon", "enabled": true, "serverUrl": dir.URL, "baseDn": dir.Base,
		"adminGroup": dir.group("berth-admins")})
	if c.BindDN != "" || c.BindPassword != "" {
		t.Errorf("anonymous configuration = %+v", c)
	}
	if alice := h.mustLDAPLogin("ldap", "alice", "alice-ldap-1"); !alice.user.IsAdmin {
		t.Errorf("alice = %+v, want admin", alice.user)
	}
	var test map[string]any
	h.must(200, "POST", fmt.Sprintf("/api/auth/ldap/%d/test", c.ID), nil, &test)
	if test["success"] != true || test["userCount"] != float64(3) {
		t.Errorf("test = %v", test)
	}
}

func TestLDAPOverTLSValidatesAgainstTheConfiguredCA(t *testing.T) {
	t.Parallel()
	h, dir := newLDAPHarness(t)
	ca, err := os.ReadFile(dir.CAFile)
	if err != nil {
		t.Fatalf("read the test CA: %v", err)
	}
	// Each configuration signs in its own user: an account belongs to the
	// configuration that created it.
	for _, tt := range []struct {
		name     string
		fields   map[string]any
		user, pw string
		success  bool
	}{
		{"ldaps with the CA", map[string]any{"serverUrl": dir.LDAPSURL, "tlsEnabled": true, "tlsCa": string(ca)}, "alice", "alice-ldap-1", true},
		{"StartTLS with the CA", map[string]any{"tlsEnabled": true, "tlsCa": string(ca)}, "bob", "bob-ldap-1", true},
		{"ldaps with the system CAs", map[string]any{"serverUrl": dir.LDAPSURL, "tlsEnabled": true}, "alice", "alice-ldap-1", false},
		{"StartTLS with the system CAs", map[string]any{"tlsEnabled": true}, "alice", "alice-ldap-1", false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			h.t = t
			c := h.createLDAP(dir.readerConfig(strings.ReplaceAll(tt.name, " ", "-"), tt.fields))
			provider := fmt.Sprintf("ldap:%d", c.ID)
			var test map[string]any
			h.must(200, "POST", fmt.Sprintf("/api/auth/ldap/%d/test", c.ID), nil, &test)
			res := h.ldapLogin(provider, tt.user, tt.pw)
			if tt.success {
				if test["success"] != true || test["userCount"] != float64(3) || res.status != 200 {
					t.Errorf("test = %v, login = %d %s; want both to succeed", test, res.status, res.body)
				}
				return
			}
			if test["success"] != false || !strings.Contains(fmt.Sprint(test["error"]), "certificate signed by unknown authority") {
				t.Errorf("test = %v, want success false and the certificate error", test)
			}
			// Sign-in is public: the cause is logged, not shown.
			if res.status != 500 || res.body != `{"error":"LDAP server unavailable"}`+"\n" {
				t.Errorf("login = %d %s, want 500 LDAP server unavailable", res.status, res.body)
			}
		})
	}
	h.t = t
	logs := h.logs.String()
	if !strings.Contains(logs, "certificate signed by unknown authority") {
		t.Error("the TLS failure is not in the log")
	}
	for _, secret := range []string{dir.BindPassword, "alice-ldap-1", "bob-ldap-1"} {
		if strings.Contains(logs, secret) {
			t.Errorf("the log holds the password %q", secret)
		}
	}
}

func TestLDAPDoesNotTakeOverALocalUser(t *testing.T) {
	t.Parallel()
	h, dir := newLDAPHarness(t)
	h.createLDAP(dir.readerConfig("corp", map[string]any{"adminGroup": dir.group("berth-admins")}))
	var local struct {
		ID           int64
		AuthProvider string
	}
	h.must(201, "POST", "/api/users", map[string]any{"username": "alice", "password": "local-alice-pw"}, &local)
	if res := h.ldapLogin("ldap", "alice", "alice-ldap-1"); res.status != 401 || res.body != invalidCredentials {
		t.Errorf("LDAP login as the local alice = %d %s, want 401", res.status, res.body)
	}
	var user struct {
		AuthProvider string
		IsAdmin      bool
	}
	h.must(200, "GET", fmt.Sprintf("/api/users/%d", local.ID), nil, &user)
	if user.AuthProvider != "local" || user.IsAdmin {
		t.Errorf("local alice after the attempt = %+v", user)
	}
	if res := h.ldapLogin("local", "alice", "local-alice-pw"); res.status != 200 {
		t.Errorf("local login = %d %s", res.status, res.body)
	}
}
