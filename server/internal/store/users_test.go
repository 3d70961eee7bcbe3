package store_test

import (
	"database/sql"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/berth-dev/berth/server/internal/store"
	"github.com/berth-dev/berth/server/internal/store/storetest"
)

// fullUser returns a user with every field set to a non-zero value.
func fullUser(username string) store.User {
	return store.User{
		Username:     username,
		Email:        username + "@example.com",
		DisplayName:  "Ünïcode \"Name\"",
		PasswordHash: "$argon2id$v=19$m=65536,t=3,p=4$c2FsdA$aGFzaA",
		IsAdmin:      true,
		IsActive:     true,
		AuthProvider: "oidc:corp",
		MFAEnabled:   true,
		LastLogin:    ptr(time.Date(2025, 6, 7, 8, 9, 10, 123456000, time.FixedZone("CEST", 7200))),
	}
}

func createUser(t *testing.T, s *store.Store, username string) store.User {
	t.Helper()
	u := fullUser(username)
	if err := s.CreateUser(t.Context(), &u); err != nil {
		t.Fatalf("CreateUser(%q): %v", username, err)
	}
	return u
}

func TestUserRoundTripsEveryField(t *testing.T) {
	storetest.ForEachDialect(t, func(t *testing.T, s *store.Store) {
		tests := []struct {
			name string
			in   store.User
		}{
			{"every field set", fullUser("Full.User")},
			{"zero values", store.User{Username: "sparse"}},
		}
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				ctx := t.Context()
				before := time.Now()
				u := tt.in
				if err := s.CreateUser(ctx, &u); err != nil {
					t.Fatalf("CreateUser: %v", err)
				}
				if u.ID == 0 {
					t.Fatal("CreateUser did not set ID")
				}
				if u.CreatedAt.Before(before.Add(-time.Second)) || u.CreatedAt.After(time.Now().Add(time.Second)) {
					t.Errorf("CreatedAt = %v, want about now", u.CreatedAt)
				}
				if !u.UpdatedAt.Equal(u.CreatedAt) {
					t.Errorf("UpdatedAt = %v, want CreatedAt %v", u.UpdatedAt, u.CreatedAt)
				}
				want := tt.in
				want.ID, want.CreatedAt, want.UpdatedAt = u.ID, u.CreatedAt, u.UpdatedAt

				byID, err := s.GetUser(ctx, u.ID)
				if err != nil {
					t.Fatalf("GetUser: %v", err)
				}
				if diff := cmp.Diff(want, byID, approxTime); diff != "" {
					t.Errorf("GetUser mismatch (-want +got):\n%s", diff)
				}
				byName, err := s.GetUserByUsername(ctx, u.Username)
				if err != nil {
					t.Fatalf("GetUserByUsername: %v", err)
				}
				if diff := cmp.Diff(want, byName, approxTime); diff != "" {
					t.Errorf("GetUserByUsername mismatch (-want +got):\n%s", diff)
				}
				if byID.CreatedAt.Location() != time.UTC {
					t.Errorf("CreatedAt location = %v, want UTC", byID.CreatedAt.Location())
				}
			})
		}
	})
}

func TestGetUserByUsernameIgnoresCaseAndKeepsIt(t *testing.T) {
	storetest.ForEachDialect(t, func(t *testing.T, s *store.Store) {
		ctx := t.Context()
		u := createUser(t, s, "MixedCase")
		for _, name := range []string{"MixedCase", "mixedcase", "MIXEDCASE"} {
			got, err := s.GetUserByUsername(ctx, name)
			if err != nil {
				t.Fatalf("GetUserByUsername(%q): %v", name, err)
			}
			if got.ID != u.ID || got.Username != "MixedCase" {
				t.Errorf("GetUserByUsername(%q) = id %d %q, want id %d \"MixedCase\"", name, got.ID, got.Username, u.ID)
			}
		}
	})
}

func TestDuplicateUsernameIgnoringCaseIsConflict(t *testing.T) {
	storetest.ForEachDialect(t, func(t *testing.T, s *store.Store) {
		ctx := t.Context()
		createUser(t, s, "alice")
		t.Run("CreateUser", func(t *testing.T) {
			for _, name := range []string{"alice", "Alice", "ALICE"} {
				u := fullUser(name)
				if err := s.CreateUser(ctx, &u); !errors.Is(err, store.ErrConflict) {
					t.Errorf("CreateUser(%q): err = %v, want ErrConflict", name, err)
				}
				if u.ID != 0 {
					t.Errorf("failed CreateUser(%q) set ID = %d", name, u.ID)
				}
			}
		})
		t.Run("UpdateUser", func(t *testing.T) {
			bob := createUser(t, s, "bob")
			bob.Username = "ALICE"
			if err := s.UpdateUser(ctx, &bob); !errors.Is(err, store.ErrConflict) {
				t.Errorf("UpdateUser to \"ALICE\": err = %v, want ErrConflict", err)
			}
		})
		t.Run("renaming to another case of one's own name", func(t *testing.T) {
			carol := createUser(t, s, "carol")
			carol.Username = "Carol"
			if err := s.UpdateUser(ctx, &carol); err != nil {
				t.Fatalf("UpdateUser: %v", err)
			}
			got, err := s.GetUser(ctx, carol.ID)
			if err != nil || got.Username != "Carol" {
				t.Errorf("GetUser = %q, %v; want \"Carol\"", got.Username, err)
			}
		})
	})
}

func TestListUsersIsOrderedByID(t *testing.T) {
	storetest.ForEachDialect(t, func(t *testing.T, s *store.Store) {
		ctx := t.Context()
		got, err := s.ListUsers(ctx)
		if err != nil || got == nil || len(got) != 0 {
			t.Fatalf("ListUsers on empty store = %#v, %v; want empty non-nil slice", got, err)
		}
		var want []store.User
		for _, name := range []string{"zed", "amy", "max"} {
			want = append(want, createUser(t, s, name))
		}
		got, err = s.ListUsers(ctx)
		if err != nil {
			t.Fatalf("ListUsers: %v", err)
		}
		if diff := cmp.Diff(want, got, approxTime); diff != "" {
			t.Errorf("ListUsers mismatch (-want +got):\n%s", diff)
		}
	})
}

func TestCountUsersAndActiveAdmins(t *testing.T) {
	storetest.ForEachDialect(t, func(t *testing.T, s *store.Store) {
		ctx := t.Context()
		for _, u := range []store.User{
			{Username: "active-admin", IsAdmin: true, IsActive: true},
			{Username: "inactive-admin", IsAdmin: true, IsActive: false},
			{Username: "active-user", IsAdmin: false, IsActive: true},
			{Username: "second-active-admin", IsAdmin: true, IsActive: true},
		} {
			if err := s.CreateUser(ctx, &u); err != nil {
				t.Fatalf("CreateUser(%q): %v", u.Username, err)
			}
		}
		if n, err := s.CountUsers(ctx); err != nil || n != 4 {
			t.Errorf("CountUsers = %d, %v; want 4", n, err)
		}
		if n, err := s.CountActiveAdmins(ctx); err != nil || n != 2 {
			t.Errorf("CountActiveAdmins = %d, %v; want 2", n, err)
		}
	})
}

func TestGetMissingUserIsNotFound(t *testing.T) {
	storetest.ForEachDialect(t, func(t *testing.T, s *store.Store) {
		ctx := t.Context()
		missing := createUser(t, s, "existing").ID + 100
		tests := []struct {
			name string
			call func() error
		}{
			{"GetUser", func() error { _, err := s.GetUser(ctx, missing); return err }},
			{"GetUserByUsername", func() error { _, err := s.GetUserByUsername(ctx, "missing"); return err }},
			{"UpdateUser", func() error {
				u := fullUser("missing")
				u.ID = missing
				return s.UpdateUser(ctx, &u)
			}},
			{"DeleteUser", func() error { return s.DeleteUser(ctx, missing) }},
			{"TouchLogin", func() error { return s.TouchLogin(ctx, missing, time.Now()) }},
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

func TestUpdateUserWritesEveryFieldAndBumpsUpdatedAt(t *testing.T) {
	storetest.ForEachDialect(t, func(t *testing.T, s *store.Store) {
		ctx := t.Context()
		orig := createUser(t, s, "before")
		other := createUser(t, s, "other")

		changed := store.User{
			ID:           orig.ID,
			Username:     "after",
			Email:        "after@example.org",
			DisplayName:  "After",
			PasswordHash: "",
			IsAdmin:      false,
			IsActive:     false,
			AuthProvider: "local",
			MFAEnabled:   false,
			LastLogin:    nil,
		}
		u := changed
		if err := s.UpdateUser(ctx, &u); err != nil {
			t.Fatalf("UpdateUser: %v", err)
		}
		if !u.UpdatedAt.After(orig.UpdatedAt) {
			t.Errorf("UpdatedAt = %v, want after %v", u.UpdatedAt, orig.UpdatedAt)
		}
		if !u.CreatedAt.Equal(orig.CreatedAt) {
			t.Errorf("UpdateUser set CreatedAt = %v, want the stored %v", u.CreatedAt, orig.CreatedAt)
		}
		want := changed
		want.CreatedAt, want.UpdatedAt = orig.CreatedAt, u.UpdatedAt
		want.MFAEnabled = orig.MFAEnabled // only EnableMFA and DisableMFA change it
		got, err := s.GetUser(ctx, orig.ID)
		if err != nil {
			t.Fatalf("GetUser: %v", err)
		}
		if diff := cmp.Diff(want, got, approxTime); diff != "" {
			t.Errorf("after UpdateUser (-want +got):\n%s", diff)
		}
		gotOther, err := s.GetUser(ctx, other.ID)
		if err != nil {
			t.Fatalf("GetUser(other): %v", err)
		}
		if diff := cmp.Diff(other, gotOther, approxTime); diff != "" {
			t.Errorf("other user changed (-want +got):\n%s", diff)
		}
	})
}

func TestTouchLoginSetsLastLoginOnly(t *testing.T) {
	storetest.ForEachDialect(t, func(t *testing.T, s *store.Store) {
		ctx := t.Context()
		u := store.User{Username: "dave", IsActive: true}
		if err := s.CreateUser(ctx, &u); err != nil {
			t.Fatalf("CreateUser: %v", err)
		}
		at := time.Date(2026, 2, 3, 4, 5, 6, 789000, time.UTC)
		if err := s.TouchLogin(ctx, u.ID, at); err != nil {
			t.Fatalf("TouchLogin: %v", err)
		}
		want := u
		want.LastLogin = &at
		got, err := s.GetUser(ctx, u.ID)
		if err != nil {
			t.Fatalf("GetUser: %v", err)
		}
		if diff := cmp.Diff(want, got, approxTime); diff != "" {
			t.Errorf("after TouchLogin (-want +got):\n%s", diff)
		}
	})
}

func TestCreateFirstUserCreatesOnlyOnce(t *testing.T) {
	storetest.ForEachDialect(t, func(t *testing.T, s *store.Store) {
		ctx := t.Context()
		first := fullUser("admin")
		created, err := s.CreateFirstUser(ctx, &first)
		if err != nil || !created {
			t.Fatalf("first CreateFirstUser = %v, %v; want true, nil", created, err)
		}
		if first.ID == 0 || first.CreatedAt.IsZero() {
			t.Errorf("CreateFirstUser set ID %d, CreatedAt %v; want them set", first.ID, first.CreatedAt)
		}
		got, err := s.GetUser(ctx, first.ID)
		if err != nil {
			t.Fatalf("GetUser: %v", err)
		}
		if diff := cmp.Diff(first, got, approxTime); diff != "" {
			t.Errorf("GetUser after CreateFirstUser (-want +got):\n%s", diff)
		}

		second := fullUser("intruder")
		if created, err := s.CreateFirstUser(ctx, &second); err != nil || created {
			t.Errorf("second CreateFirstUser = %v, %v; want false, nil", created, err)
		}
		if second.ID != 0 {
			t.Errorf("second CreateFirstUser set ID %d", second.ID)
		}
		if n, err := s.CountUsers(ctx); err != nil || n != 1 {
			t.Errorf("CountUsers = %d, %v; want 1", n, err)
		}
	})
}

func TestConcurrentCreateFirstUserCreatesExactlyOne(t *testing.T) {
	storetest.ForEachDialect(t, func(t *testing.T, s *store.Store) {
		ctx := t.Context()
		const n = 8
		warmPool(t, s, n)
		var (
			wg    sync.WaitGroup
			start = make(chan struct{})
		)
		created := make([]bool, n)
		errs := make([]error, n)
		for i := range n {
			wg.Go(func() {
				u := store.User{Username: "admin" + string(rune('a'+i)), IsAdmin: true, IsActive: true}
				<-start
				created[i], errs[i] = s.CreateFirstUser(ctx, &u)
			})
		}
		close(start)
		wg.Wait()
		winners := 0
		for i := range n {
			if errs[i] != nil {
				t.Errorf("CreateFirstUser #%d: %v", i, errs[i])
			}
			if created[i] {
				winners++
			}
		}
		if winners != 1 {
			t.Errorf("%d calls created a user, want exactly 1", winners)
		}
		if count, err := s.CountUsers(ctx); err != nil || count != 1 {
			t.Errorf("CountUsers = %d, %v; want 1", count, err)
		}
	})
}

func TestDeleteUserRemovesItsSessionsTokensAndAssignments(t *testing.T) {
	storetest.ForEachDialect(t, func(t *testing.T, s *store.Store) {
		ctx := t.Context()
		gone := createUser(t, s, "gone")
		kept := createUser(t, s, "kept")
		role := createRole(t, s, "Viewer")
		for _, u := range []store.User{gone, kept} {
			sess := store.Session{ID: "session-" + u.Username, UserID: u.ID, Provider: "local", ExpiresAt: time.Now().Add(time.Hour)}
			if err := s.CreateSession(ctx, &sess); err != nil {
				t.Fatalf("CreateSession: %v", err)
			}
			tok := store.APIToken{UserID: u.ID, Name: "ci", TokenHash: "hash-" + u.Username, TokenPrefix: "brt_"}
			if err := s.CreateAPIToken(ctx, &tok); err != nil {
				t.Fatalf("CreateAPIToken: %v", err)
			}
			a := store.RoleAssignment{UserID: u.ID, RoleID: role.ID, Source: "manual"}
			if err := s.AssignRole(ctx, &a); err != nil {
				t.Fatalf("AssignRole: %v", err)
			}
		}

		if err := s.DeleteUser(ctx, gone.ID); err != nil {
			t.Fatalf("DeleteUser: %v", err)
		}
		if _, err := s.GetUser(ctx, gone.ID); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("GetUser after delete: err = %v, want ErrNotFound", err)
		}
		if _, err := s.GetSession(ctx, "session-gone"); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("session of the deleted user: err = %v, want ErrNotFound", err)
		}
		if _, err := s.GetAPITokenByHash(ctx, "hash-gone"); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("API token of the deleted user: err = %v, want ErrNotFound", err)
		}
		if got, err := s.ListUserRoles(ctx, gone.ID); err != nil || len(got) != 0 {
			t.Errorf("ListUserRoles of the deleted user = %v, %v; want none", got, err)
		}

		if _, err := s.GetSession(ctx, "session-kept"); err != nil {
			t.Errorf("session of the kept user: %v", err)
		}
		if _, err := s.GetAPITokenByHash(ctx, "hash-kept"); err != nil {
			t.Errorf("API token of the kept user: %v", err)
		}
		if got, err := s.ListUserRoles(ctx, kept.ID); err != nil || len(got) != 1 {
			t.Errorf("ListUserRoles of the kept user = %v, %v; want one", got, err)
		}
	})
}

// warmPool opens n connections and keeps them idle in s's pool, so that n
// concurrent calls run at once instead of queueing behind new connections.
func warmPool(t *testing.T, s *store.Store, n int) {
	t.Helper()
	s.DB().SetMaxIdleConns(n)
	var conns []*sql.Conn
	for range n {
		c, err := s.DB().Conn(t.Context())
		if err != nil {
			t.Fatalf("Conn: %v", err)
		}
		conns = append(conns, c)
	}
	for _, c := range conns {
		c.Close()
	}
}
