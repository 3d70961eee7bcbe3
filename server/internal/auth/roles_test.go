package auth

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/berth-dev/berth/server/internal/store"
	"github.com/berth-dev/berth/server/internal/store/storetest"
	"github.com/berth-dev/berth/shared/fault"
)

var deployer = RoleSpec{Name: "Deployer", Description: "Deploys stacks",
	Permissions: map[string][]string{"stacks": {"view", "create", "start"}, "containers": {"view"}}}

func TestCreateRoleRequiresEnterprise(t *testing.T) {
	storetest.ForEachDialect(t, func(t *testing.T, st *store.Store) {
		f := newFixture(t, st)
		_, err := f.svc.CreateRole(t.Context(), deployer)
		wantFault(t, err, fault.Forbidden, "Enterprise license required")
		if _, err := st.GetRoleByName(t.Context(), deployer.Name); err == nil {
			t.Error("the refused role was stored")
		}
	})
}

func TestCreateRoleWithEnterprise(t *testing.T) {
	storetest.ForEachDialect(t, func(t *testing.T, st *store.Store) {
		f := newFixture(t, st)
		f.edition.enterprise = true
		r, err := f.svc.CreateRole(t.Context(), deployer)
		if err != nil {
			t.Fatal(err)
		}
		got, err := f.svc.GetRole(t.Context(), r.ID)
		if err != nil {
			t.Fatal(err)
		}
		if got.Name != "Deployer" || got.IsSystem || got.EnvironmentIDs != nil {
			t.Errorf("role = %+v, want a custom role Deployer for every environment", got)
		}
		if diff := cmp.Diff(deployer.Permissions, got.Permissions); diff != "" {
			t.Errorf("stored permissions (-want +got):\n%s", diff)
		}
	})
}

func TestCreateRoleValidatesSpec(t *testing.T) {
	storetest.ForEachDialect(t, func(t *testing.T, st *store.Store) {
		f := newFixture(t, st)
		f.edition.enterprise = true
		tests := []struct {
			name string
			spec RoleSpec
			kind fault.Kind
			msg  string
		}{
			{"unknown resource", RoleSpec{Name: "r", Permissions: map[string][]string{"databases": {"view"}}},
				fault.Invalid, `Unknown permission resource "databases"`},
			{"unknown action", RoleSpec{Name: "r", Permissions: map[string][]string{"containers": {"view", "fly"}}},
				fault.Invalid, `Unknown action "fly" for containers`},
			{"wildcard action", RoleSpec{Name: "r", Permissions: map[string][]string{"containers": {"*"}}},
				fault.Invalid, `Unknown action "*" for containers`},
			{"no name", RoleSpec{Name: "  "}, fault.Invalid, "Role name is required"},
			{"built-in name", RoleSpec{Name: RoleAdmin}, fault.Conflict, "A role with this name already exists"},
		}
		for _, tt := range tests {
			_, err := f.svc.CreateRole(t.Context(), tt.spec)
			wantFault(t, err, tt.kind, tt.msg)
		}
	})
}

func TestBuiltinRolesCannotBeChangedOrDeleted(t *testing.T) {
	storetest.ForEachDialect(t, func(t *testing.T, st *store.Store) {
		f := newFixture(t, st)
		f.edition.enterprise = true
		for _, name := range []string{RoleAdmin, RoleOperator, RoleViewer} {
			id := f.roleID(t, name)
			_, err := f.svc.UpdateRole(t.Context(), id, RoleSpec{Name: name, Permissions: map[string][]string{"users": {"view"}}})
			wantFault(t, err, fault.Invalid, "Built-in roles cannot be changed or deleted")
			err = f.svc.DeleteRole(t.Context(), id)
			wantFault(t, err, fault.Invalid, "Built-in roles cannot be changed or deleted")

			got, err := f.svc.GetRole(t.Context(), id)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(builtin(t, name).Permissions, got.Permissions); diff != "" {
				t.Errorf("%s permissions after refused changes (-want +got):\n%s", name, diff)
			}
		}
	})
}

func TestCustomRoleCanBeChangedAndDeleted(t *testing.T) {
	storetest.ForEachDialect(t, func(t *testing.T, st *store.Store) {
		f := newFixture(t, st)
		f.edition.enterprise = true
		r, err := f.svc.CreateRole(t.Context(), deployer)
		if err != nil {
			t.Fatal(err)
		}
		updated, err := f.svc.UpdateRole(t.Context(), r.ID, RoleSpec{Name: "Deployer", EnvironmentIDs: []int64{3},
			Permissions: map[string][]string{"stacks": {"view"}}})
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff([]int64{3}, updated.EnvironmentIDs); diff != "" {
			t.Errorf("EnvironmentIDs (-want +got):\n%s", diff)
		}
		if err := f.svc.DeleteRole(t.Context(), r.ID); err != nil {
			t.Fatal(err)
		}
		_, err = f.svc.GetRole(t.Context(), r.ID)
		wantFault(t, err, fault.NotFound, "Role not found")
	})
}

func TestAssignCustomRoleRequiresEnterprise(t *testing.T) {
	storetest.ForEachDialect(t, func(t *testing.T, st *store.Store) {
		f := newFixture(t, st)
		alice := f.user(t, "alice", false)
		f.edition.enterprise = true
		custom, err := f.svc.CreateRole(t.Context(), deployer)
		if err != nil {
			t.Fatal(err)
		}
		f.edition.enterprise = false // the license lapsed

		_, err = f.svc.AssignRole(t.Context(), alice.ID, custom.ID, nil)
		wantFault(t, err, fault.Forbidden, "Enterprise license required")
		if _, err := f.svc.AssignRole(t.Context(), alice.ID, f.roleID(t, RoleViewer), nil); err != nil {
			t.Errorf("assigning a built-in role without enterprise: %v", err)
		}
		got, err := f.svc.UserRoles(t.Context(), alice.ID)
		if err != nil {
			t.Fatal(err)
		}
		if len(got) != 1 || got[0].RoleID != f.roleID(t, RoleViewer) {
			t.Errorf("UserRoles = %+v, want only Viewer", got)
		}
	})
}

func TestAssignRoleToMissingTargets(t *testing.T) {
	storetest.ForEachDialect(t, func(t *testing.T, st *store.Store) {
		f := newFixture(t, st)
		alice := f.user(t, "alice", false)
		viewer := f.roleID(t, RoleViewer)
		_, err := f.svc.AssignRole(t.Context(), alice.ID, viewer, env(999))
		wantFault(t, err, fault.NotFound, "Environment not found")
		_, err = f.svc.AssignRole(t.Context(), alice.ID+1000, viewer, nil)
		wantFault(t, err, fault.NotFound, "User not found")
		_, err = f.svc.AssignRole(t.Context(), alice.ID, viewer+1000, nil)
		wantFault(t, err, fault.NotFound, "Role not found")
	})
}

func TestUnassignMissingAssignmentIsNotFound(t *testing.T) {
	storetest.ForEachDialect(t, func(t *testing.T, st *store.Store) {
		f := newFixture(t, st)
		alice := f.user(t, "alice", false)
		viewer := f.roleID(t, RoleViewer)
		e := f.environment(t, "one")
		if _, err := f.svc.AssignRole(t.Context(), alice.ID, viewer, &e); err != nil {
			t.Fatal(err)
		}
		// Assigned on environment e only: there is no every-environment assignment.
		err := f.svc.UnassignRole(t.Context(), alice.ID, viewer, nil)
		wantFault(t, err, fault.NotFound, "Role assignment not found")
		err = f.svc.UnassignRole(t.Context(), alice.ID, f.roleID(t, RoleOperator), &e)
		wantFault(t, err, fault.NotFound, "Role assignment not found")
		if err := f.svc.UnassignRole(t.Context(), alice.ID, viewer, &e); err != nil {
			t.Errorf("UnassignRole of the assignment: %v", err)
		}
	})
}

func TestAssignedRolesGrantAccess(t *testing.T) {
	storetest.ForEachDialect(t, func(t *testing.T, st *store.Store) {
		f := newFixture(t, st)
		ctx := t.Context()
		alice := f.user(t, "alice", false)
		one, two := f.environment(t, "one"), f.environment(t, "two")
		operator := f.roleID(t, RoleOperator)
		if _, err := f.svc.AssignRole(ctx, alice.ID, operator, &two); err != nil {
			t.Fatal(err)
		}
		_, sess := f.login(t, "alice")

		check := func(want map[int64]Decision) {
			t.Helper()
			ident, err := f.svc.SessionIdentity(ctx, sess.Token)
			if err != nil {
				t.Fatal(err)
			}
			got := map[int64]Decision{}
			for id := range want {
				got[id] = ident.Access.Check("containers:start", &id)
			}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("containers:start by environment (-want +got):\n%s", diff)
			}
		}
		check(map[int64]Decision{one: NoEnvAccess, two: Allowed})
		if err := f.svc.UnassignRole(ctx, alice.ID, operator, &two); err != nil {
			t.Fatal(err)
		}
		check(map[int64]Decision{one: NoEnvAccess, two: NoEnvAccess})
	})
}
