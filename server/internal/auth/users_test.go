package auth

import (
	"testing"

	"github.com/berth-dev/berth/server/internal/store"
	"github.com/berth-dev/berth/server/internal/store/storetest"
	"github.com/berth-dev/berth/shared/fault"
)

func TestCreateUserEnforcesPasswordLength(t *testing.T) {
	storetest.ForEachDialect(t, func(t *testing.T, st *store.Store) {
		f := newFixture(t, st)
		for _, pw := range []string{"", "short", "1234567", "pässwör"} { // the last: 7 characters, 9 bytes
			_, err := f.svc.CreateUser(t.Context(), UserSpec{Username: "alice", Password: pw})
			wantFault(t, err, fault.Invalid, "Password must be at least 8 characters")
		}
		u, err := f.svc.CreateUser(t.Context(), UserSpec{Username: "alice", Password: "pässwörd"})
		if err != nil {
			t.Fatalf("CreateUser with 8 characters: %v", err)
		}
		if ok, err := VerifyPassword(t.Context(), "pässwörd", u.PasswordHash); err != nil || !ok {
			t.Errorf("VerifyPassword(stored hash) = %v, %v; want true", ok, err)
		}
	})
}

func TestCreateUserRefusesTakenUsernameInAnyCase(t *testing.T) {
	storetest.ForEachDialect(t, func(t *testing.T, st *store.Store) {
		f := newFixture(t, st)
		f.user(t, "alice", false)
		for _, name := range []string{"alice", "ALICE", " Alice "} {
			_, err := f.svc.CreateUser(t.Context(), UserSpec{Username: name, Password: "other-password"})
			wantFault(t, err, fault.Conflict, "A user with this username already exists")
		}
	})
}

func TestLastActiveAdminCannotBeDemotedOrDisabled(t *testing.T) {
	storetest.ForEachDialect(t, func(t *testing.T, st *store.Store) {
		f := newFixture(t, st)
		root := f.user(t, "root", true)
		// An inactive admin does not count.
		other := f.user(t, "other", true)
		if _, err := f.svc.UpdateUser(t.Context(), other.ID, UserPatch{IsActive: ptr(false)}); err != nil {
			t.Fatal(err)
		}
		for _, p := range []UserPatch{{IsAdmin: ptr(false)}, {IsActive: ptr(false)}} {
			_, err := f.svc.UpdateUser(t.Context(), root.ID, p)
			wantFault(t, err, fault.Invalid, "At least one active admin must remain")
		}
		got, err := st.GetUser(t.Context(), root.ID)
		if err != nil {
			t.Fatal(err)
		}
		if !got.IsAdmin || !got.IsActive {
			t.Errorf("root after refused updates: IsAdmin %v, IsActive %v", got.IsAdmin, got.IsActive)
		}
	})
}

func TestLastActiveAdminCannotBeDeleted(t *testing.T) {
	storetest.ForEachDialect(t, func(t *testing.T, st *store.Store) {
		f := newFixture(t, st)
		root := f.user(t, "root", true)
		err := f.svc.DeleteUser(t.Context(), root.ID)
		wantFault(t, err, fault.Invalid, "At least one active admin must remain")
		if _, err := f.svc.GetUser(t.Context(), root.ID); err != nil {
			t.Errorf("root after a refused deletion: %v", err)
		}
	})
}

func TestAdminCanBeRemovedWhileAnotherRemains(t *testing.T) {
	storetest.ForEachDialect(t, func(t *testing.T, st *store.Store) {
		f := newFixture(t, st)
		ctx := t.Context()
		root := f.user(t, "root", true)
		second := f.user(t, "second", true)

		if _, err := f.svc.UpdateUser(ctx, second.ID, UserPatch{IsAdmin: ptr(false)}); err != nil {
			t.Fatalf("demoting one of two admins: %v", err)
		}
		err := f.svc.DeleteUser(ctx, root.ID)
		wantFault(t, err, fault.Invalid, "At least one active admin must remain")

		if _, err := f.svc.UpdateUser(ctx, second.ID, UserPatch{IsAdmin: ptr(true)}); err != nil {
			t.Fatal(err)
		}
		if err := f.svc.DeleteUser(ctx, root.ID); err != nil {
			t.Fatalf("deleting one of two admins: %v", err)
		}
		_, err = f.svc.GetUser(ctx, root.ID)
		wantFault(t, err, fault.NotFound, "User not found")
		err = f.svc.DeleteUser(ctx, root.ID)
		wantFault(t, err, fault.NotFound, "User not found")
	})
}

func TestPasswordChangeEndsTheUsersSessions(t *testing.T) {
	storetest.ForEachDialect(t, func(t *testing.T, st *store.Store) {
		f := newFixture(t, st)
		ctx := t.Context()
		alice := f.user(t, "alice", false)
		f.user(t, "bob", false)
		_, aliceSess := f.login(t, "alice")
		_, bobSess := f.login(t, "bob")

		// Other changes keep the sessions.
		if _, err := f.svc.UpdateUser(ctx, alice.ID, UserPatch{DisplayName: ptr("Alice")}); err != nil {
			t.Fatal(err)
		}
		if _, err := f.svc.SessionIdentity(ctx, aliceSess.Token); err != nil {
			t.Fatalf("session after a display name change: %v", err)
		}

		if _, err := f.svc.UpdateUser(ctx, alice.ID, UserPatch{Password: ptr("new-alice-password")}); err != nil {
			t.Fatal(err)
		}
		_, err := f.svc.SessionIdentity(ctx, aliceSess.Token)
		wantNoCredentials(t, err)
		if _, err := f.svc.SessionIdentity(ctx, bobSess.Token); err != nil {
			t.Errorf("another user's session after the change: %v", err)
		}
		if _, _, err := f.svc.Login(ctx, LoginRequest{Username: "alice", Password: "alice-password"}); err != ErrInvalidCredentials {
			t.Errorf("Login with the old password: %v, want ErrInvalidCredentials", err)
		}
		if _, _, err := f.svc.Login(ctx, LoginRequest{Username: "alice", Password: "new-alice-password"}); err != nil {
			t.Errorf("Login with the new password: %v", err)
		}
	})
}

func TestDisablingUserEndsTheirSessions(t *testing.T) {
	storetest.ForEachDialect(t, func(t *testing.T, st *store.Store) {
		f := newFixture(t, st)
		alice := f.user(t, "alice", false)
		_, sess := f.login(t, "alice")
		if _, err := f.svc.UpdateUser(t.Context(), alice.ID, UserPatch{IsActive: ptr(false)}); err != nil {
			t.Fatal(err)
		}
		if _, err := st.GetSession(t.Context(), sha256Hex(sess.Token)); err == nil {
			t.Error("the disabled user's session is still stored")
		}
	})
}

func TestResetPasswordSetsPasswordAndReactivates(t *testing.T) {
	storetest.ForEachDialect(t, func(t *testing.T, st *store.Store) {
		f := newFixture(t, st)
		ctx := t.Context()
		alice := f.user(t, "alice", false)
		if _, err := f.svc.UpdateUser(ctx, alice.ID, UserPatch{IsActive: ptr(false)}); err != nil {
			t.Fatal(err)
		}

		u, err := f.svc.ResetPassword(ctx, "ALICE", "recovered-password")
		if err != nil {
			t.Fatal(err)
		}
		if u.ID != alice.ID || !u.IsActive {
			t.Errorf("ResetPassword = user %d, IsActive %v; want user %d, active", u.ID, u.IsActive, alice.ID)
		}
		if _, _, err := f.svc.Login(ctx, LoginRequest{Username: "alice", Password: "recovered-password"}); err != nil {
			t.Errorf("Login with the reset password: %v", err)
		}

		_, err = f.svc.ResetPassword(ctx, "nobody", "recovered-password")
		wantFault(t, err, fault.NotFound, "User not found")
		_, err = f.svc.ResetPassword(ctx, "alice", "short")
		wantFault(t, err, fault.Invalid, "Password must be at least 8 characters")
	})
}
