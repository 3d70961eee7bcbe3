package store_test

import (
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/berth-dev/berth/server/internal/store"
	"github.com/berth-dev/berth/server/internal/store/storetest"
)

func createRole(t *testing.T, s *store.Store, name string) store.Role {
	t.Helper()
	r := store.Role{Name: name, Permissions: map[string][]string{"containers": {"view"}}}
	if err := s.CreateRole(t.Context(), &r); err != nil {
		t.Fatalf("CreateRole(%q): %v", name, err)
	}
	return r
}

func assignRole(t *testing.T, s *store.Store, a store.RoleAssignment) store.RoleAssignment {
	t.Helper()
	if err := s.AssignRole(t.Context(), &a); err != nil {
		t.Fatalf("AssignRole(%+v): %v", a, err)
	}
	return a
}

// ignoreAssignmentIdentity compares assignments by what they grant.
var ignoreAssignmentIdentity = cmpopts.IgnoreFields(store.RoleAssignment{}, "ID", "CreatedAt")

func TestRoleRoundTripsEveryField(t *testing.T) {
	storetest.ForEachDialect(t, func(t *testing.T, s *store.Store) {
		tests := []struct {
			name string
			in   store.Role
			want store.Role // before the store-assigned fields
		}{
			{
				name: "every field set",
				in: store.Role{
					Name:        "Deployer",
					Description: "Deploys \"stacks\" — ünïcode",
					Permissions: map[string][]string{
						"containers": {"view", "start", "stop"},
						"stacks":     {"deploy"},
						"images":     {},
					},
					EnvironmentIDs: []int64{3, 1, 2},
					IsSystem:       true,
				},
				want: store.Role{
					Name:        "Deployer",
					Description: "Deploys \"stacks\" — ünïcode",
					Permissions: map[string][]string{
						"containers": {"view", "start", "stop"},
						"stacks":     {"deploy"},
						"images":     {},
					},
					EnvironmentIDs: []int64{3, 1, 2},
					IsSystem:       true,
				},
			},
			{
				name: "nil permissions and every environment",
				in:   store.Role{Name: "Nobody"},
				want: store.Role{Name: "Nobody", Permissions: map[string][]string{}},
			},
			{
				name: "no environment at all",
				in:   store.Role{Name: "Nowhere", Permissions: map[string][]string{}, EnvironmentIDs: []int64{}},
				want: store.Role{Name: "Nowhere", Permissions: map[string][]string{}, EnvironmentIDs: []int64{}},
			},
		}
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				ctx := t.Context()
				r := tt.in
				if err := s.CreateRole(ctx, &r); err != nil {
					t.Fatalf("CreateRole: %v", err)
				}
				if r.ID == 0 || r.CreatedAt.IsZero() || !r.UpdatedAt.Equal(r.CreatedAt) {
					t.Errorf("CreateRole set ID %d, CreatedAt %v, UpdatedAt %v; want them set", r.ID, r.CreatedAt, r.UpdatedAt)
				}
				want := tt.want
				want.ID, want.CreatedAt, want.UpdatedAt = r.ID, r.CreatedAt, r.UpdatedAt
				byID, err := s.GetRole(ctx, r.ID)
				if err != nil {
					t.Fatalf("GetRole: %v", err)
				}
				if diff := cmp.Diff(want, byID, approxTime); diff != "" {
					t.Errorf("GetRole mismatch (-want +got):\n%s", diff)
				}
				byName, err := s.GetRoleByName(ctx, r.Name)
				if err != nil {
					t.Fatalf("GetRoleByName: %v", err)
				}
				if diff := cmp.Diff(want, byName, approxTime); diff != "" {
					t.Errorf("GetRoleByName mismatch (-want +got):\n%s", diff)
				}
			})
		}
	})
}

func TestListRolesIsOrderedByID(t *testing.T) {
	storetest.ForEachDialect(t, func(t *testing.T, s *store.Store) {
		ctx := t.Context()
		got, err := s.ListRoles(ctx)
		if err != nil || got == nil || len(got) != 0 {
			t.Fatalf("ListRoles on empty store = %#v, %v; want empty non-nil slice", got, err)
		}
		var want []store.Role
		for _, name := range []string{"Viewer", "Admin", "Operator"} {
			want = append(want, createRole(t, s, name))
		}
		got, err = s.ListRoles(ctx)
		if err != nil {
			t.Fatalf("ListRoles: %v", err)
		}
		if diff := cmp.Diff(want, got, approxTime); diff != "" {
			t.Errorf("ListRoles (-want +got):\n%s", diff)
		}
	})
}

func TestDuplicateRoleNameIsConflict(t *testing.T) {
	storetest.ForEachDialect(t, func(t *testing.T, s *store.Store) {
		ctx := t.Context()
		createRole(t, s, "Viewer")
		dup := store.Role{Name: "Viewer"}
		if err := s.CreateRole(ctx, &dup); !errors.Is(err, store.ErrConflict) {
			t.Errorf("CreateRole with a taken name: err = %v, want ErrConflict", err)
		}
		other := createRole(t, s, "Operator")
		other.Name = "Viewer"
		if err := s.UpdateRole(ctx, &other); !errors.Is(err, store.ErrConflict) {
			t.Errorf("UpdateRole to a taken name: err = %v, want ErrConflict", err)
		}
	})
}

func TestMissingRoleIsNotFound(t *testing.T) {
	storetest.ForEachDialect(t, func(t *testing.T, s *store.Store) {
		ctx := t.Context()
		missing := createRole(t, s, "existing").ID + 100
		tests := []struct {
			name string
			call func() error
		}{
			{"GetRole", func() error { _, err := s.GetRole(ctx, missing); return err }},
			{"GetRoleByName", func() error { _, err := s.GetRoleByName(ctx, "missing"); return err }},
			{"UpdateRole", func() error { return s.UpdateRole(ctx, &store.Role{ID: missing, Name: "missing"}) }},
			{"DeleteRole", func() error { return s.DeleteRole(ctx, missing) }},
		}
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				if err := tt.call(); !errors.Is(err, store.ErrNotFound) {
					t.Errorf("err = %v, want ErrNotFound", err)
				}
			})
		}
	})
}

func TestUpdateRoleWritesEveryFieldAndBumpsUpdatedAt(t *testing.T) {
	storetest.ForEachDialect(t, func(t *testing.T, s *store.Store) {
		ctx := t.Context()
		orig := store.Role{Name: "Before", Description: "d", Permissions: map[string][]string{"a": {"b"}},
			EnvironmentIDs: []int64{1}, IsSystem: true}
		if err := s.CreateRole(ctx, &orig); err != nil {
			t.Fatalf("CreateRole: %v", err)
		}
		changed := store.Role{ID: orig.ID, Name: "After", Description: "", Permissions: map[string][]string{"x": {"y", "z"}}}
		r := changed
		if err := s.UpdateRole(ctx, &r); err != nil {
			t.Fatalf("UpdateRole: %v", err)
		}
		if !r.UpdatedAt.After(orig.UpdatedAt) || !r.CreatedAt.Equal(orig.CreatedAt) {
			t.Errorf("UpdateRole set CreatedAt %v, UpdatedAt %v; want %v and after %v", r.CreatedAt, r.UpdatedAt, orig.CreatedAt, orig.UpdatedAt)
		}
		want := changed
		want.CreatedAt, want.UpdatedAt = orig.CreatedAt, r.UpdatedAt
		got, err := s.GetRole(ctx, orig.ID)
		if err != nil {
			t.Fatalf("GetRole: %v", err)
		}
		if diff := cmp.Diff(want, got, approxTime); diff != "" {
			t.Errorf("after UpdateRole (-want +got):\n%s", diff)
		}
	})
}

func TestEnsureRoleCreatesThenUpdates(t *testing.T) {
	storetest.ForEachDialect(t, func(t *testing.T, s *store.Store) {
		ctx := t.Context()
		createRole(t, s, "Unrelated")
		v1 := store.Role{Name: "Operator", Description: "v1", Permissions: map[string][]string{"containers": {"view"}}, IsSystem: true}
		r := v1
		if err := s.EnsureRole(ctx, &r); err != nil {
			t.Fatalf("EnsureRole (create): %v", err)
		}
		if r.ID == 0 || r.CreatedAt.IsZero() || !r.UpdatedAt.Equal(r.CreatedAt) {
			t.Errorf("EnsureRole (create) set ID %d, CreatedAt %v, UpdatedAt %v; want them set", r.ID, r.CreatedAt, r.UpdatedAt)
		}
		created := r
		want := v1
		want.ID, want.CreatedAt, want.UpdatedAt = r.ID, r.CreatedAt, r.UpdatedAt
		got, err := s.GetRoleByName(ctx, "Operator")
		if err != nil {
			t.Fatalf("GetRoleByName: %v", err)
		}
		if diff := cmp.Diff(want, got, approxTime); diff != "" {
			t.Errorf("after EnsureRole (create) (-want +got):\n%s", diff)
		}

		v2 := store.Role{Name: "Operator", Description: "v2",
			Permissions:    map[string][]string{"containers": {"view", "start"}, "stacks": {"view"}},
			EnvironmentIDs: []int64{7}, IsSystem: false}
		r = v2
		if err := s.EnsureRole(ctx, &r); err != nil {
			t.Fatalf("EnsureRole (update): %v", err)
		}
		if r.ID != created.ID || !r.CreatedAt.Equal(created.CreatedAt) || !r.UpdatedAt.After(created.UpdatedAt) {
			t.Errorf("EnsureRole (update) set ID %d, CreatedAt %v, UpdatedAt %v; want %d, %v, after %v",
				r.ID, r.CreatedAt, r.UpdatedAt, created.ID, created.CreatedAt, created.UpdatedAt)
		}
		want = v2
		want.ID, want.CreatedAt, want.UpdatedAt = created.ID, created.CreatedAt, r.UpdatedAt
		got, err = s.GetRoleByName(ctx, "Operator")
		if err != nil {
			t.Fatalf("GetRoleByName: %v", err)
		}
		if diff := cmp.Diff(want, got, approxTime); diff != "" {
			t.Errorf("after EnsureRole (update) (-want +got):\n%s", diff)
		}
		if roles, err := s.ListRoles(ctx); err != nil || len(roles) != 2 {
			t.Errorf("ListRoles = %d roles, %v; want 2", len(roles), err)
		}
	})
}

func TestAssignRoleIsIdempotent(t *testing.T) {
	storetest.ForEachDialect(t, func(t *testing.T, s *store.Store) {
		ctx := t.Context()
		u := createUser(t, s, "ursula")
		role := createRole(t, s, "Viewer")
		env := createEnvironment(t, s, "prod")
		for _, envID := range []*int64{nil, &env.ID} {
			before := time.Now()
			first := store.RoleAssignment{UserID: u.ID, RoleID: role.ID, EnvironmentID: envID, Source: "manual"}
			if err := s.AssignRole(ctx, &first); err != nil {
				t.Fatalf("AssignRole: %v", err)
			}
			if first.ID == 0 || first.CreatedAt.Before(before.Add(-time.Second)) {
				t.Errorf("AssignRole set ID %d, CreatedAt %v; want them set", first.ID, first.CreatedAt)
			}
			again := store.RoleAssignment{UserID: u.ID, RoleID: role.ID, EnvironmentID: envID, Source: "oidc:corp"}
			if err := s.AssignRole(ctx, &again); err != nil {
				t.Fatalf("second AssignRole: %v", err)
			}
			if diff := cmp.Diff(first, again, approxTime); diff != "" {
				t.Errorf("second AssignRole did not return the existing assignment (-want +got):\n%s", diff)
			}
		}
		got, err := s.ListUserRoles(ctx, u.ID)
		if err != nil {
			t.Fatalf("ListUserRoles: %v", err)
		}
		want := []store.RoleAssignment{
			{UserID: u.ID, RoleID: role.ID, Source: "manual"},
			{UserID: u.ID, RoleID: role.ID, EnvironmentID: &env.ID, Source: "manual"},
		}
		if diff := cmp.Diff(want, got, ignoreAssignmentIdentity); diff != "" {
			t.Errorf("ListUserRoles (-want +got):\n%s", diff)
		}
	})
}

func TestAssignRoleWithEmptySourceIsManual(t *testing.T) {
	storetest.ForEachDialect(t, func(t *testing.T, s *store.Store) {
		a := assignRole(t, s, store.RoleAssignment{UserID: createUser(t, s, "u").ID, RoleID: createRole(t, s, "r").ID})
		if a.Source != "manual" {
			t.Errorf("Source = %q, want \"manual\"", a.Source)
		}
	})
}

func TestAssignRoleToMissingUserRoleOrEnvironmentIsNotFound(t *testing.T) {
	storetest.ForEachDialect(t, func(t *testing.T, s *store.Store) {
		ctx := t.Context()
		u := createUser(t, s, "ursula")
		role := createRole(t, s, "Viewer")
		env := createEnvironment(t, s, "prod")
		missing := int64(9999)
		tests := []struct {
			name string
			a    store.RoleAssignment
		}{
			{"user", store.RoleAssignment{UserID: missing, RoleID: role.ID}},
			{"role", store.RoleAssignment{UserID: u.ID, RoleID: missing}},
			{"environment", store.RoleAssignment{UserID: u.ID, RoleID: role.ID, EnvironmentID: &missing}},
		}
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				a := tt.a
				if err := s.AssignRole(ctx, &a); !errors.Is(err, store.ErrNotFound) {
					t.Errorf("AssignRole: err = %v, want ErrNotFound", err)
				}
				if a.ID != 0 {
					t.Errorf("failed AssignRole set ID %d", a.ID)
				}
			})
		}
		// The valid combination still works after the failures.
		assignRole(t, s, store.RoleAssignment{UserID: u.ID, RoleID: role.ID, EnvironmentID: &env.ID})
	})
}

func TestUnassignRoleTellsEveryEnvironmentFromOne(t *testing.T) {
	storetest.ForEachDialect(t, func(t *testing.T, s *store.Store) {
		ctx := t.Context()
		u := createUser(t, s, "ursula")
		role := createRole(t, s, "Viewer")
		env := createEnvironment(t, s, "prod")
		assignRole(t, s, store.RoleAssignment{UserID: u.ID, RoleID: role.ID})
		scoped := assignRole(t, s, store.RoleAssignment{UserID: u.ID, RoleID: role.ID, EnvironmentID: &env.ID})

		removed, err := s.UnassignRole(ctx, u.ID, role.ID, nil)
		if err != nil || !removed {
			t.Fatalf("UnassignRole(nil) = %v, %v; want true, nil", removed, err)
		}
		got, err := s.ListUserRoles(ctx, u.ID)
		if err != nil {
			t.Fatalf("ListUserRoles: %v", err)
		}
		if diff := cmp.Diff([]store.RoleAssignment{scoped}, got, approxTime); diff != "" {
			t.Errorf("after UnassignRole(nil) (-want +got):\n%s", diff)
		}
		if removed, err := s.UnassignRole(ctx, u.ID, role.ID, nil); err != nil || removed {
			t.Errorf("second UnassignRole(nil) = %v, %v; want false, nil", removed, err)
		}

		other := env.ID + 100
		if removed, err := s.UnassignRole(ctx, u.ID, role.ID, &other); err != nil || removed {
			t.Errorf("UnassignRole(other environment) = %v, %v; want false, nil", removed, err)
		}
		if removed, err := s.UnassignRole(ctx, u.ID, role.ID, &env.ID); err != nil || !removed {
			t.Errorf("UnassignRole(environment) = %v, %v; want true, nil", removed, err)
		}
		if got, err := s.ListUserRoles(ctx, u.ID); err != nil || got == nil || len(got) != 0 {
			t.Errorf("ListUserRoles = %#v, %v; want empty non-nil slice", got, err)
		}
	})
}

func TestSyncMappedRolesChangesOnlyItsSource(t *testing.T) {
	storetest.ForEachDialect(t, func(t *testing.T, s *store.Store) {
		ctx := t.Context()
		u := createUser(t, s, "ursula")
		other := createUser(t, s, "other")
		env := createEnvironment(t, s, "prod")
		var r [5]store.Role
		for i, name := range []string{"r0", "r1", "r2", "r3", "r4"} {
			r[i] = createRole(t, s, name)
		}
		const src = "oidc:corp"
		// Manual: r0 everywhere; r1 in prod. Another source: r2. Another user: r1 from src.
		assignRole(t, s, store.RoleAssignment{UserID: u.ID, RoleID: r[0].ID, Source: "manual"})
		assignRole(t, s, store.RoleAssignment{UserID: u.ID, RoleID: r[1].ID, EnvironmentID: &env.ID, Source: "manual"})
		assignRole(t, s, store.RoleAssignment{UserID: u.ID, RoleID: r[2].ID, Source: "ldap:1"})
		assignRole(t, s, store.RoleAssignment{UserID: other.ID, RoleID: r[1].ID, Source: src})
		// A scoped assignment of src is not what a sync grants: it goes.
		assignRole(t, s, store.RoleAssignment{UserID: u.ID, RoleID: r[4].ID, EnvironmentID: &env.ID, Source: src})

		steps := []struct {
			name string
			want []int64
			// mapped is the user's src assignments (all for every environment) after the step.
			mapped []int64
		}{
			{"add", []int64{r[1].ID, r[3].ID, r[3].ID}, []int64{r[1].ID, r[3].ID}},
			{"same again", []int64{r[3].ID, r[1].ID}, []int64{r[1].ID, r[3].ID}},
			{"remove one, add one", []int64{r[3].ID, r[4].ID}, []int64{r[3].ID, r[4].ID}},
			// r0 is held manually for every environment: not added again.
			{"already held manually", []int64{r[0].ID, r[4].ID}, []int64{r[4].ID}},
			{"none", nil, nil},
		}
		unchanged := []store.RoleAssignment{
			{UserID: u.ID, RoleID: r[0].ID, Source: "manual"},
			{UserID: u.ID, RoleID: r[1].ID, EnvironmentID: &env.ID, Source: "manual"},
			{UserID: u.ID, RoleID: r[2].ID, Source: "ldap:1"},
		}
		for _, st := range steps {
			if err := s.SyncMappedRoles(ctx, u.ID, src, st.want); err != nil {
				t.Fatalf("%s: SyncMappedRoles: %v", st.name, err)
			}
			want := append([]store.RoleAssignment{}, unchanged...)
			for _, id := range st.mapped {
				want = append(want, store.RoleAssignment{UserID: u.ID, RoleID: id, Source: src})
			}
			got, err := s.ListUserRoles(ctx, u.ID)
			if err != nil {
				t.Fatalf("%s: ListUserRoles: %v", st.name, err)
			}
			sortByRole := cmpopts.SortSlices(func(a, b store.RoleAssignment) bool {
				return a.RoleID < b.RoleID || a.RoleID == b.RoleID && a.Source < b.Source
			})
			if diff := cmp.Diff(want, got, ignoreAssignmentIdentity, sortByRole); diff != "" {
				t.Errorf("%s: assignments (-want +got):\n%s", st.name, diff)
			}
		}
		otherGot, err := s.ListUserRoles(ctx, other.ID)
		if err != nil {
			t.Fatalf("ListUserRoles(other): %v", err)
		}
		if diff := cmp.Diff([]store.RoleAssignment{{UserID: other.ID, RoleID: r[1].ID, Source: src}}, otherGot, ignoreAssignmentIdentity); diff != "" {
			t.Errorf("other user's assignments (-want +got):\n%s", diff)
		}
	})
}

func TestSyncMappedRolesKeepsExistingRows(t *testing.T) {
	storetest.ForEachDialect(t, func(t *testing.T, s *store.Store) {
		ctx := t.Context()
		u := createUser(t, s, "ursula")
		role := createRole(t, s, "Viewer")
		if err := s.SyncMappedRoles(ctx, u.ID, "ldap:1", []int64{role.ID}); err != nil {
			t.Fatalf("SyncMappedRoles: %v", err)
		}
		before, err := s.ListUserRoles(ctx, u.ID)
		if err != nil {
			t.Fatalf("ListUserRoles: %v", err)
		}
		if err := s.SyncMappedRoles(ctx, u.ID, "ldap:1", []int64{role.ID}); err != nil {
			t.Fatalf("second SyncMappedRoles: %v", err)
		}
		after, err := s.ListUserRoles(ctx, u.ID)
		if err != nil {
			t.Fatalf("ListUserRoles: %v", err)
		}
		if diff := cmp.Diff(before, after, approxTime); diff != "" {
			t.Errorf("an unchanged sync rewrote assignments (-before +after):\n%s", diff)
		}
	})
}

func TestSyncMappedRolesErrors(t *testing.T) {
	storetest.ForEachDialect(t, func(t *testing.T, s *store.Store) {
		ctx := t.Context()
		u := createUser(t, s, "ursula")
		role := createRole(t, s, "Viewer")
		manual := assignRole(t, s, store.RoleAssignment{UserID: u.ID, RoleID: role.ID, Source: "manual"})
		for _, src := range []string{"", "manual"} {
			if err := s.SyncMappedRoles(ctx, u.ID, src, nil); err == nil {
				t.Errorf("SyncMappedRoles with source %q succeeded, want an error", src)
			}
		}
		if err := s.SyncMappedRoles(ctx, u.ID, "oidc:corp", []int64{role.ID + 100}); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("SyncMappedRoles with a missing role: err = %v, want ErrNotFound", err)
		}
		if err := s.SyncMappedRoles(ctx, u.ID+100, "oidc:corp", []int64{role.ID}); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("SyncMappedRoles for a missing user: err = %v, want ErrNotFound", err)
		}
		got, err := s.ListUserRoles(ctx, u.ID)
		if err != nil {
			t.Fatalf("ListUserRoles: %v", err)
		}
		if diff := cmp.Diff([]store.RoleAssignment{manual}, got, approxTime); diff != "" {
			t.Errorf("assignments after failed syncs (-want +got):\n%s", diff)
		}
	})
}

func TestDeleteEnvironmentRemovesAssignmentsScopedToIt(t *testing.T) {
	storetest.ForEachDialect(t, func(t *testing.T, s *store.Store) {
		ctx := t.Context()
		u := createUser(t, s, "ursula")
		role := createRole(t, s, "Viewer")
		gone := createEnvironment(t, s, "gone")
		kept := createEnvironment(t, s, "kept")
		everywhere := assignRole(t, s, store.RoleAssignment{UserID: u.ID, RoleID: role.ID})
		assignRole(t, s, store.RoleAssignment{UserID: u.ID, RoleID: role.ID, EnvironmentID: &gone.ID})
		inKept := assignRole(t, s, store.RoleAssignment{UserID: u.ID, RoleID: role.ID, EnvironmentID: &kept.ID})
		if err := s.DeleteEnvironment(ctx, gone.ID); err != nil {
			t.Fatalf("DeleteEnvironment: %v", err)
		}
		got, err := s.ListUserRoles(ctx, u.ID)
		if err != nil {
			t.Fatalf("ListUserRoles: %v", err)
		}
		if diff := cmp.Diff([]store.RoleAssignment{everywhere, inKept}, got, approxTime); diff != "" {
			t.Errorf("assignments after deleting an environment (-want +got):\n%s", diff)
		}
	})
}

func TestDeleteRoleRemovesItsAssignments(t *testing.T) {
	storetest.ForEachDialect(t, func(t *testing.T, s *store.Store) {
		ctx := t.Context()
		u := createUser(t, s, "ursula")
		gone := createRole(t, s, "Gone")
		kept := createRole(t, s, "Kept")
		assignRole(t, s, store.RoleAssignment{UserID: u.ID, RoleID: gone.ID})
		keptA := assignRole(t, s, store.RoleAssignment{UserID: u.ID, RoleID: kept.ID})
		if err := s.DeleteRole(ctx, gone.ID); err != nil {
			t.Fatalf("DeleteRole: %v", err)
		}
		if _, err := s.GetRole(ctx, gone.ID); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("GetRole after delete: err = %v, want ErrNotFound", err)
		}
		got, err := s.ListUserRoles(ctx, u.ID)
		if err != nil {
			t.Fatalf("ListUserRoles: %v", err)
		}
		if diff := cmp.Diff([]store.RoleAssignment{keptA}, got, approxTime); diff != "" {
			t.Errorf("assignments after deleting a role (-want +got):\n%s", diff)
		}
	})
}

func TestConcurrentRoleWritesDoNotFailOrDuplicate(t *testing.T) {
	storetest.ForEachDialect(t, func(t *testing.T, s *store.Store) {
		ctx := t.Context()
		u := createUser(t, s, "ursula")
		viewer := createRole(t, s, "Viewer")
		const n = 8
		warmPool(t, s, n)
		var (
			wg    sync.WaitGroup
			start = make(chan struct{})
			errs  = make([]error, 3*n)
		)
		for i := range n {
			wg.Go(func() {
				<-start
				errs[i] = s.EnsureRole(ctx, &store.Role{Name: "Operator", IsSystem: true})
			})
			wg.Go(func() {
				<-start
				errs[n+i] = s.AssignRole(ctx, &store.RoleAssignment{UserID: u.ID, RoleID: viewer.ID})
			})
			wg.Go(func() {
				<-start
				errs[2*n+i] = s.SyncMappedRoles(ctx, u.ID, "oidc:corp", []int64{viewer.ID})
			})
		}
		close(start)
		wg.Wait()
		for i, err := range errs {
			if err != nil {
				t.Errorf("call %d: %v", i, err)
			}
		}
		roles, err := s.ListRoles(ctx)
		if err != nil || len(roles) != 2 {
			t.Errorf("ListRoles = %d roles, %v; want 2", len(roles), err)
		}
		got, err := s.ListUserRoles(ctx, u.ID)
		if err != nil {
			t.Fatalf("ListUserRoles: %v", err)
		}
		// The manual assignment and the mapped one share a key: one row.
		if len(got) != 1 {
			t.Errorf("ListUserRoles = %+v, want one assignment", got)
		}
	})
}
