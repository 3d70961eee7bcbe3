package auth

import (
	"fmt"
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/berth-dev/berth/server/internal/store"
)

func builtin(t *testing.T, name string) store.Role {
	t.Helper()
	for _, r := range BuiltinRoles() {
		if r.Name == name {
			return r
		}
	}
	t.Fatalf("no built-in role %q", name)
	return store.Role{}
}

func env(id int64) *int64 { return &id }

func decisionName(d Decision) string {
	switch d {
	case Allowed:
		return "Allowed"
	case NoPermission:
		return "NoPermission"
	case NoEnvAccess:
		return "NoEnvAccess"
	}
	return fmt.Sprintf("Decision(%d)", int(d))
}

// onlyEnv3 is a custom role that applies to environment 3 only, wherever
// it is assigned.
var onlyEnv3 = store.Role{Name: "env3-operator", Permissions: map[string][]string{"containers": {"view", "start"}},
	EnvironmentIDs: []int64{3}}

func TestAccessCheck(t *testing.T) {
	admin := Access{Admin: true}
	viewer := Access{grants: []grant{{role: builtin(t, RoleViewer)}}}
	operatorOn2 := Access{grants: []grant{{role: builtin(t, RoleOperator), envID: env(2)}}}
	env3Role := Access{grants: []grant{{role: onlyEnv3}}}
	viewerAndOperatorOn2 := Access{grants: []grant{{role: builtin(t, RoleViewer)}, {role: builtin(t, RoleOperator), envID: env(2)}}}
	nobody := Access{}

	tests := []struct {
		name   string
		access Access
		perm   string
		env    *int64
		want   Decision
	}{
		{"admin manages users", admin, "users:delete", nil, Allowed},
		{"admin execs in any environment", admin, "containers:exec", env(42), Allowed},
		{"admin passes unknown permissions", admin, "whatever:else", env(1), Allowed},

		{"viewer views containers", viewer, "containers:view", env(1), Allowed},
		{"viewer reads logs", viewer, "containers:logs", env(7), Allowed},
		{"viewer cannot start containers", viewer, "containers:start", env(1), NoPermission},
		{"viewer cannot scan images", viewer, "images:inspect", env(1), NoPermission},
		{"viewer views environments globally", viewer, "environments:view", nil, Allowed},
		{"viewer cannot view users", viewer, "users:view", nil, NoPermission},
		{"malformed permission is denied", viewer, "containers", env(1), NoPermission},
		{"empty permission is denied", viewer, "", env(1), NoPermission},

		{"operator starts containers in its environment", operatorOn2, "containers:start", env(2), Allowed},
		{"operator has no access to another environment", operatorOn2, "containers:view", env(1), NoEnvAccess},
		{"environment-scoped grant does not cover global operations", operatorOn2, "containers:view", nil, NoPermission},
		{"operator cannot view users", operatorOn2, "users:view", env(2), NoPermission},

		{"role limited to env 3 allows env 3", env3Role, "containers:start", env(3), Allowed},
		{"role limited to env 3 has no access to env 1", env3Role, "containers:view", env(1), NoEnvAccess},
		{"role limited to env 3 does not cover global operations", env3Role, "containers:view", nil, NoPermission},
		{"role limited to env 3 lacks other permissions there", env3Role, "containers:remove", env(3), NoPermission},

		{"operator grant adds to viewer in env 2", viewerAndOperatorOn2, "containers:start", env(2), Allowed},
		{"viewer grant alone applies in env 1", viewerAndOperatorOn2, "containers:start", env(1), NoPermission},

		{"no grants: no environment access", nobody, "containers:view", env(1), NoEnvAccess},
		{"no grants: no permission", nobody, "containers:view", nil, NoPermission},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := tt.access.Check(tt.perm, tt.env); got != tt.want {
				t.Errorf("Check(%q, %v) = %s, want %s", tt.perm, deref(tt.env), decisionName(got), decisionName(tt.want))
			}
		})
	}
}

func deref(p *int64) any {
	if p == nil {
		return "nil"
	}
	return *p
}

func TestAccessCheckAny(t *testing.T) {
	operatorOn2 := Access{grants: []grant{{role: builtin(t, RoleOperator), envID: env(2)}}}
	tests := []struct {
		name   string
		access Access
		perm   string
		want   Decision
	}{
		{"admin", Access{Admin: true}, "users:view", Allowed},
		{"a grant on one environment allows listing", operatorOn2, "containers:start", Allowed},
		{"no grant allows it", operatorOn2, "users:view", NoPermission},
		{"viewer cannot list with a write permission", Access{grants: []grant{{role: builtin(t, RoleViewer)}}}, "volumes:create", NoPermission},
		{"no grants", Access{}, "containers:view", NoPermission},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := tt.access.CheckAny(tt.perm); got != tt.want {
				t.Errorf("CheckAny(%q) = %s, want %s", tt.perm, decisionName(got), decisionName(tt.want))
			}
		})
	}
}

func TestAccessCanAccess(t *testing.T) {
	tests := []struct {
		name   string
		access Access
		want   map[int64]bool
	}{
		{"admin", Access{Admin: true}, map[int64]bool{1: true, 2: true, 3: true, 99: true}},
		{"grant for every environment", Access{grants: []grant{{role: builtin(t, RoleViewer)}}},
			map[int64]bool{1: true, 2: true, 3: true, 99: true}},
		{"grant on environment 2", Access{grants: []grant{{role: builtin(t, RoleOperator), envID: env(2)}}},
			map[int64]bool{1: false, 2: true, 3: false, 99: false}},
		{"role limited to env 3, assigned everywhere", Access{grants: []grant{{role: onlyEnv3}}},
			map[int64]bool{1: false, 2: false, 3: true, 99: false}},
		{"role limited to env 3, assigned on env 1", Access{grants: []grant{{role: onlyEnv3, envID: env(1)}}},
			map[int64]bool{1: false, 2: false, 3: false, 99: false}},
		{"no grants", Access{}, map[int64]bool{1: false, 2: false, 3: false, 99: false}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := map[int64]bool{}
			for id := range tt.want {
				got[id] = tt.access.CanAccess(id)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("CanAccess by environment (-want +got):\n%s", diff)
			}
		})
	}
}

func TestAccessSummaryIsTheSortedUnionOfGrants(t *testing.T) {
	custom := store.Role{Name: "deployer", Permissions: map[string][]string{
		"containers": {"view", "start"}, "users": {"view"},
	}}
	acc := Access{grants: []grant{{role: builtin(t, RoleViewer)}, {role: custom, envID: env(2)}}}
	want := Permissions{
		"containers":   {"inspect", "logs", "start", "view"},
		"images":       {"view"}, // not inspect: a Viewer may not start scans (issue 20)
		"volumes":      {"inspect", "view"},
		"networks":     {"inspect", "view"},
		"stacks":       {"view"},
		"environments": {"view"},
		"registries":   {"view"},
		"git":          {"view"},
		"schedules":    {"view"},
		"activity":     {"view"},
		"backups":      {"view"},
		"users":        {"view"},
	}
	if diff := cmp.Diff(want, acc.Summary()); diff != "" {
		t.Errorf("Summary (-want +got):\n%s", diff)
	}
	// The roles themselves are left as they were.
	if diff := cmp.Diff([]string{"view", "start"}, custom.Permissions["containers"]); diff != "" {
		t.Errorf("role permissions changed by Summary (-want +got):\n%s", diff)
	}
}

func TestAdminSummaryIsTheCatalog(t *testing.T) {
	want := Permissions{}
	for res, actions := range Catalog {
		want[res] = slices.Sorted(slices.Values(actions))
	}
	catalogBefore := fmt.Sprint(Catalog)
	if diff := cmp.Diff(want, Access{Admin: true}.Summary()); diff != "" {
		t.Errorf("admin Summary (-want +got):\n%s", diff)
	}
	if after := fmt.Sprint(Catalog); after != catalogBefore {
		t.Errorf("Summary changed Catalog:\nbefore %s\nafter  %s", catalogBefore, after)
	}
}

func TestPermissionsAllows(t *testing.T) {
	p := Permissions{"containers": {"view", "start"}, "images": {"*"}, "volumes": {}}
	tests := []struct {
		perm string
		want bool
	}{
		{"containers:view", true},
		{"containers:start", true},
		{"containers:stop", false},
		{"images:pull", true},
		{"images:remove", true},
		{"volumes:view", false},
		{"networks:view", false},
		{"containers", false},
		{"containersview", false},
		{"", false},
		{":view", false},
		{"containers:", false},
		{"containers:view:extra", false},
		{"*:view", false},
	}
	for _, tt := range tests {
		if got := p.Allows(tt.perm); got != tt.want {
			t.Errorf("Allows(%q) = %v, want %v", tt.perm, got, tt.want)
		}
	}
}

func TestBuiltinRolesAreSystemRolesForEveryEnvironment(t *testing.T) {
	var names []string
	for _, r := range BuiltinRoles() {
		names = append(names, r.Name)
		if !r.IsSystem || r.EnvironmentIDs != nil {
			t.Errorf("%s: IsSystem = %v, EnvironmentIDs = %v; want true, nil", r.Name, r.IsSystem, r.EnvironmentIDs)
		}
		spec := RoleSpec{Name: r.Name, Permissions: r.Permissions}
		if err := validateRole(&spec); err != nil {
			t.Errorf("%s: permissions outside the catalog: %v", r.Name, err)
		}
	}
	if diff := cmp.Diff([]string{RoleAdmin, RoleOperator, RoleViewer}, names); diff != "" {
		t.Errorf("built-in roles (-want +got):\n%s", diff)
	}
}

func TestBuiltinAdminHasEveryCatalogAction(t *testing.T) {
	admin := Permissions(builtin(t, RoleAdmin).Permissions)
	for res, actions := range Catalog {
		for _, a := range actions {
			if !admin.Allows(res + ":" + a) {
				t.Errorf("Admin lacks %s:%s", res, a)
			}
		}
	}
}

func TestBuiltinViewerOnlyLooks(t *testing.T) {
	for res, actions := range builtin(t, RoleViewer).Permissions {
		for _, a := range actions {
			if a != "view" && a != "logs" && a != "inspect" {
				t.Errorf("Viewer may %s:%s", res, a)
			}
		}
	}
	viewer := Permissions(builtin(t, RoleViewer).Permissions)
	if !viewer.Allows("containers:view") || !viewer.Allows("containers:logs") || !viewer.Allows("backups:view") {
		t.Errorf("Viewer cannot view containers, read their logs or list backups: %v", viewer)
	}
	if viewer.Allows("backups:manage") {
		t.Errorf("Viewer may backups:manage")
	}
}

func TestBuiltinOperatorManagesNoUsersSettingsOrEnvironments(t *testing.T) {
	op := builtin(t, RoleOperator).Permissions
	for _, res := range []string{"users", "settings", "license", "audit_logs"} {
		if actions, ok := op[res]; ok {
			t.Errorf("Operator has %s: %v", res, actions)
		}
	}
	for _, a := range []string{"create", "edit", "delete"} {
		if Permissions(op).Allows("environments:" + a) {
			t.Errorf("Operator may environments:%s", a)
		}
	}
	for _, perm := range []string{"containers:start", "containers:exec", "stacks:create", "images:pull", "environments:view",
		"backups:view", "backups:manage"} {
		if !Permissions(op).Allows(perm) {
			t.Errorf("Operator may not %s", perm)
		}
	}
}

func TestBuiltinRolesDoNotShareTheCatalog(t *testing.T) {
	saved := slices.Clone(Catalog["containers"])
	t.Cleanup(func() { Catalog["containers"] = saved })

	builtin(t, RoleAdmin).Permissions["containers"][0] = "changed"
	builtin(t, RoleOperator).Permissions["containers"][0] = "changed"

	if diff := cmp.Diff(saved, Catalog["containers"]); diff != "" {
		t.Errorf("changing built-in roles changed Catalog (-want +got):\n%s", diff)
	}
}
