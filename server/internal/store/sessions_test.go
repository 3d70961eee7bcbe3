package store_test

import (
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/berth-dev/berth/server/internal/store"
	"github.com/berth-dev/berth/server/internal/store/storetest"
)

// sessionAt returns a session of user created at t that expires ttl later.
func sessionAt(id string, userID int64, t time.Time, ttl time.Duration) store.Session {
	return store.Session{
		ID:         id,
		UserID:     userID,
		Provider:   "oidc",
		CreatedAt:  t,
		ExpiresAt:  t.Add(ttl),
		LastSeenAt: t.Add(time.Minute),
		IP:         "2001:db8::1",
		UserAgent:  "Mozilla/5.0 (X11; Linux x86_64) \"quoted\"",
	}
}

func TestSessionRoundTripsEveryField(t *testing.T) {
	storetest.ForEachDialect(t, func(t *testing.T, s *store.Store) {
		ctx := t.Context()
		u := createUser(t, s, "sam")
		in := sessionAt("a3f1c0de", u.ID, time.Date(2026, 1, 2, 3, 4, 5, 678901000, time.FixedZone("X", -5*3600)), 12*time.Hour)
		sess := in
		if err := s.CreateSession(ctx, &sess); err != nil {
			t.Fatalf("CreateSession: %v", err)
		}
		if diff := cmp.Diff(in, sess); diff != "" {
			t.Errorf("CreateSession changed the given fields (-want +got):\n%s", diff)
		}
		got, err := s.GetSession(ctx, in.ID)
		if err != nil {
			t.Fatalf("GetSession: %v", err)
		}
		if diff := cmp.Diff(in, got, approxTime); diff != "" {
			t.Errorf("GetSession mismatch (-want +got):\n%s", diff)
		}
	})
}

func TestCreateSessionFillsZeroTimes(t *testing.T) {
	storetest.ForEachDialect(t, func(t *testing.T, s *store.Store) {
		ctx := t.Context()
		u := createUser(t, s, "sam")
		before := time.Now()
		sess := store.Session{ID: "zero-times", UserID: u.ID, Provider: "local", ExpiresAt: before.Add(time.Hour)}
		if err := s.CreateSession(ctx, &sess); err != nil {
			t.Fatalf("CreateSession: %v", err)
		}
		if sess.CreatedAt.Before(before.Add(-time.Second)) || sess.CreatedAt.After(time.Now().Add(time.Second)) {
			t.Errorf("CreatedAt = %v, want about now", sess.CreatedAt)
		}
		if !sess.LastSeenAt.Equal(sess.CreatedAt) {
			t.Errorf("LastSeenAt = %v, want CreatedAt %v", sess.LastSeenAt, sess.CreatedAt)
		}
		got, err := s.GetSession(ctx, sess.ID)
		if err != nil {
			t.Fatalf("GetSession: %v", err)
		}
		if diff := cmp.Diff(sess, got, approxTime); diff != "" {
			t.Errorf("GetSession mismatch (-want +got):\n%s", diff)
		}
	})
}

func TestGetExpiredSessionReturnsIt(t *testing.T) {
	storetest.ForEachDialect(t, func(t *testing.T, s *store.Store) {
		ctx := t.Context()
		u := createUser(t, s, "sam")
		sess := sessionAt("expired", u.ID, time.Now().Add(-48*time.Hour), time.Hour)
		if err := s.CreateSession(ctx, &sess); err != nil {
			t.Fatalf("CreateSession: %v", err)
		}
		got, err := s.GetSession(ctx, "expired")
		if err != nil {
			t.Fatalf("GetSession of an expired session: %v", err)
		}
		if diff := cmp.Diff(sess, got, approxTime); diff != "" {
			t.Errorf("GetSession mismatch (-want +got):\n%s", diff)
		}
	})
}

func TestCreateSessionErrors(t *testing.T) {
	storetest.ForEachDialect(t, func(t *testing.T, s *store.Store) {
		ctx := t.Context()
		u := createUser(t, s, "sam")
		first := sessionAt("taken", u.ID, time.Now(), time.Hour)
		if err := s.CreateSession(ctx, &first); err != nil {
			t.Fatalf("CreateSession: %v", err)
		}
		dup := sessionAt("taken", u.ID, time.Now(), time.Hour)
		if err := s.CreateSession(ctx, &dup); !errors.Is(err, store.ErrConflict) {
			t.Errorf("CreateSession with a taken id: err = %v, want ErrConflict", err)
		}
		orphan := sessionAt("orphan", u.ID+100, time.Now(), time.Hour)
		if err := s.CreateSession(ctx, &orphan); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("CreateSession for a missing user: err = %v, want ErrNotFound", err)
		}
	})
}

func TestTouchSessionSetsLastSeenAt(t *testing.T) {
	storetest.ForEachDialect(t, func(t *testing.T, s *store.Store) {
		ctx := t.Context()
		u := createUser(t, s, "sam")
		sess := sessionAt("touched", u.ID, time.Now().Add(-time.Hour), 2*time.Hour)
		if err := s.CreateSession(ctx, &sess); err != nil {
			t.Fatalf("CreateSession: %v", err)
		}
		at := time.Now().UTC().Truncate(time.Microsecond)
		if err := s.TouchSession(ctx, sess.ID, at); err != nil {
			t.Fatalf("TouchSession: %v", err)
		}
		want := sess
		want.LastSeenAt = at
		got, err := s.GetSession(ctx, sess.ID)
		if err != nil {
			t.Fatalf("GetSession: %v", err)
		}
		if diff := cmp.Diff(want, got, approxTime); diff != "" {
			t.Errorf("after TouchSession (-want +got):\n%s", diff)
		}
		if err := s.TouchSession(ctx, "missing", at); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("TouchSession of a missing session: err = %v, want ErrNotFound", err)
		}
		if _, err := s.GetSession(ctx, "missing"); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("GetSession of a missing session: err = %v, want ErrNotFound", err)
		}
	})
}

func TestDeleteSessionAndUserSessions(t *testing.T) {
	storetest.ForEachDialect(t, func(t *testing.T, s *store.Store) {
		ctx := t.Context()
		amy := createUser(t, s, "amy")
		bob := createUser(t, s, "bob")
		for _, sess := range []store.Session{
			sessionAt("amy-1", amy.ID, time.Now(), time.Hour),
			sessionAt("amy-2", amy.ID, time.Now(), time.Hour),
			sessionAt("bob-1", bob.ID, time.Now(), time.Hour),
			sessionAt("bob-2", bob.ID, time.Now(), time.Hour),
		} {
			if err := s.CreateSession(ctx, &sess); err != nil {
				t.Fatalf("CreateSession(%q): %v", sess.ID, err)
			}
		}

		if err := s.DeleteSession(ctx, "bob-1"); err != nil {
			t.Fatalf("DeleteSession: %v", err)
		}
		if err := s.DeleteSession(ctx, "bob-1"); err != nil {
			t.Errorf("DeleteSession of an absent session: %v, want nil", err)
		}
		if err := s.DeleteUserSessions(ctx, amy.ID); err != nil {
			t.Fatalf("DeleteUserSessions: %v", err)
		}
		got := map[string]bool{}
		for _, id := range []string{"amy-1", "amy-2", "bob-1", "bob-2"} {
			_, err := s.GetSession(ctx, id)
			if err != nil && !errors.Is(err, store.ErrNotFound) {
				t.Fatalf("GetSession(%q): %v", id, err)
			}
			got[id] = err == nil
		}
		want := map[string]bool{"amy-1": false, "amy-2": false, "bob-1": false, "bob-2": true}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("sessions left (-want +got):\n%s", diff)
		}
	})
}

func TestDeleteExpiredSessionsKeepsLiveOnes(t *testing.T) {
	storetest.ForEachDialect(t, func(t *testing.T, s *store.Store) {
		ctx := t.Context()
		u := createUser(t, s, "sam")
		clock := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
		for _, sess := range []store.Session{
			sessionAt("long-gone", u.ID, clock.Add(-48*time.Hour), time.Hour),
			sessionAt("just-expired", u.ID, clock.Add(-time.Hour), time.Hour), // expires exactly at clock
			sessionAt("live", u.ID, clock.Add(-time.Hour), time.Hour+time.Microsecond),
			sessionAt("fresh", u.ID, clock, 24*time.Hour),
		} {
			if err := s.CreateSession(ctx, &sess); err != nil {
				t.Fatalf("CreateSession(%q): %v", sess.ID, err)
			}
		}
		n, err := s.DeleteExpiredSessions(ctx, clock)
		if err != nil || n != 2 {
			t.Fatalf("DeleteExpiredSessions = %d, %v; want 2, nil", n, err)
		}
		got := map[string]bool{}
		for _, id := range []string{"long-gone", "just-expired", "live", "fresh"} {
			_, err := s.GetSession(ctx, id)
			got[id] = err == nil
		}
		want := map[string]bool{"long-gone": false, "just-expired": false, "live": true, "fresh": true}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("sessions left (-want +got):\n%s", diff)
		}
		if n, err := s.DeleteExpiredSessions(ctx, clock); err != nil || n != 0 {
			t.Errorf("second DeleteExpiredSessions = %d, %v; want 0, nil", n, err)
		}
	})
}

func TestRevokeUserCredentialsKeepsOneSessionAndOtherUsers(t *testing.T) {
	storetest.ForEachDialect(t, func(t *testing.T, s *store.Store) {
		ctx := t.Context()
		amy := createUser(t, s, "amy")
		bob := createUser(t, s, "bob")
		for _, sess := range []store.Session{
			sessionAt("amy-1", amy.ID, time.Now(), time.Hour),
			sessionAt("amy-2", amy.ID, time.Now(), time.Hour),
			sessionAt("bob-1", bob.ID, time.Now(), time.Hour),
		} {
			if err := s.CreateSession(ctx, &sess); err != nil {
				t.Fatalf("CreateSession(%q): %v", sess.ID, err)
			}
		}
		for i, u := range []store.User{amy, amy, bob} {
			tok := store.APIToken{UserID: u.ID, Name: "t", TokenHash: fmt.Sprintf("hash-%d", i), TokenPrefix: "bth_x"}
			if err := s.CreateAPIToken(ctx, &tok); err != nil {
				t.Fatalf("CreateAPIToken: %v", err)
			}
		}

		if err := s.RevokeUserCredentials(ctx, amy.ID, "amy-2"); err != nil {
			t.Fatalf("RevokeUserCredentials: %v", err)
		}
		got := map[string]bool{}
		for _, id := range []string{"amy-1", "amy-2", "bob-1"} {
			_, err := s.GetSession(ctx, id)
			if err != nil && !errors.Is(err, store.ErrNotFound) {
				t.Fatalf("GetSession(%q): %v", id, err)
			}
			got[id] = err == nil
		}
		if diff := cmp.Diff(map[string]bool{"amy-1": false, "amy-2": true, "bob-1": true}, got); diff != "" {
			t.Errorf("sessions left (-want +got):\n%s", diff)
		}
		for _, c := range []struct {
			user store.User
			want int
		}{{amy, 0}, {bob, 1}} {
			if list, err := s.ListAPITokens(ctx, c.user.ID); err != nil || len(list) != c.want {
				t.Errorf("tokens of %s = %d, %v; want %d", c.user.Username, len(list), err, c.want)
			}
		}
		if err := s.RevokeUserCredentials(ctx, amy.ID, ""); err != nil {
			t.Fatalf("RevokeUserCredentials keeping none: %v", err)
		}
		if _, err := s.GetSession(ctx, "amy-2"); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("amy-2 after revoking with no session kept: %v, want ErrNotFound", err)
		}
	})
}
