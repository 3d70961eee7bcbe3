package store_test

import (
	"errors"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/berth-dev/berth/server/internal/store"
	"github.com/berth-dev/berth/server/internal/store/storetest"
)

func createAPIToken(t *testing.T, s *store.Store, userID int64, name, hash string) store.APIToken {
	t.Helper()
	tok := store.APIToken{UserID: userID, Name: name, TokenHash: hash, TokenPrefix: "brt_" + hash[:4]}
	if err := s.CreateAPIToken(t.Context(), &tok); err != nil {
		t.Fatalf("CreateAPIToken(%q): %v", name, err)
	}
	return tok
}

func TestAPITokenRoundTripsEveryField(t *testing.T) {
	storetest.ForEachDialect(t, func(t *testing.T, s *store.Store) {
		u := createUser(t, s, "tina")
		tests := []struct {
			name string
			in   store.APIToken
		}{
			{"every field set", store.APIToken{
				UserID:      u.ID,
				Name:        "deploy \"bot\"",
				TokenHash:   "9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08",
				TokenPrefix: "brt_9f86",
				ExpiresAt:   ptr(time.Date(2027, 1, 1, 0, 0, 0, 0, time.UTC)),
				LastUsedAt:  ptr(time.Date(2026, 5, 6, 7, 8, 9, 10000, time.FixedZone("Y", 3600))),
				CreatedAt:   time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC),
			}},
			{"never expires, never used", store.APIToken{
				UserID:      u.ID,
				Name:        "forever",
				TokenHash:   "60303ae22b998861bce3b28f33eec1be758a213c86c93c076dbe9f558c11c752",
				TokenPrefix: "brt_6030",
			}},
		}
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				ctx := t.Context()
				before := time.Now()
				tok := tt.in
				if err := s.CreateAPIToken(ctx, &tok); err != nil {
					t.Fatalf("CreateAPIToken: %v", err)
				}
				if tok.ID == 0 {
					t.Fatal("CreateAPIToken did not set ID")
				}
				want := tt.in
				want.ID = tok.ID
				if want.CreatedAt.IsZero() {
					if tok.CreatedAt.Before(before.Add(-time.Second)) || tok.CreatedAt.After(time.Now().Add(time.Second)) {
						t.Errorf("CreatedAt = %v, want about now", tok.CreatedAt)
					}
					want.CreatedAt = tok.CreatedAt
				}
				byID, err := s.GetAPIToken(ctx, tok.ID)
				if err != nil {
					t.Fatalf("GetAPIToken: %v", err)
				}
				if diff := cmp.Diff(want, byID, approxTime); diff != "" {
					t.Errorf("GetAPIToken mismatch (-want +got):\n%s", diff)
				}
				byHash, err := s.GetAPITokenByHash(ctx, tok.TokenHash)
				if err != nil {
					t.Fatalf("GetAPITokenByHash: %v", err)
				}
				if diff := cmp.Diff(want, byHash, approxTime); diff != "" {
					t.Errorf("GetAPITokenByHash mismatch (-want +got):\n%s", diff)
				}
			})
		}
	})
}

func TestGetAPITokenByHashFindsOnlyThatHash(t *testing.T) {
	storetest.ForEachDialect(t, func(t *testing.T, s *store.Store) {
		ctx := t.Context()
		u := createUser(t, s, "tina")
		a := createAPIToken(t, s, u.ID, "a", "aaaa1111")
		b := createAPIToken(t, s, u.ID, "b", "bbbb2222")
		for _, want := range []store.APIToken{a, b} {
			got, err := s.GetAPITokenByHash(ctx, want.TokenHash)
			if err != nil {
				t.Fatalf("GetAPITokenByHash(%q): %v", want.TokenHash, err)
			}
			if got.ID != want.ID {
				t.Errorf("GetAPITokenByHash(%q) = token %d, want %d", want.TokenHash, got.ID, want.ID)
			}
		}
		for _, hash := range []string{"cccc3333", "AAAA1111", "aaaa111", ""} {
			if _, err := s.GetAPITokenByHash(ctx, hash); !errors.Is(err, store.ErrNotFound) {
				t.Errorf("GetAPITokenByHash(%q): err = %v, want ErrNotFound", hash, err)
			}
		}
	})
}

func TestCreateAPITokenErrors(t *testing.T) {
	storetest.ForEachDialect(t, func(t *testing.T, s *store.Store) {
		ctx := t.Context()
		u := createUser(t, s, "tina")
		createAPIToken(t, s, u.ID, "first", "samehash")
		dup := store.APIToken{UserID: u.ID, Name: "second", TokenHash: "samehash"}
		if err := s.CreateAPIToken(ctx, &dup); !errors.Is(err, store.ErrConflict) {
			t.Errorf("CreateAPIToken with a taken hash: err = %v, want ErrConflict", err)
		}
		orphan := store.APIToken{UserID: u.ID + 100, Name: "orphan", TokenHash: "orphanhash"}
		if err := s.CreateAPIToken(ctx, &orphan); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("CreateAPIToken for a missing user: err = %v, want ErrNotFound", err)
		}
	})
}

func TestListAPITokensOfOneUserOrAll(t *testing.T) {
	storetest.ForEachDialect(t, func(t *testing.T, s *store.Store) {
		ctx := t.Context()
		amy := createUser(t, s, "amy")
		bob := createUser(t, s, "bob")
		idle := createUser(t, s, "idle")
		a1 := createAPIToken(t, s, amy.ID, "a1", "hash0001")
		b1 := createAPIToken(t, s, bob.ID, "b1", "hash0002")
		a2 := createAPIToken(t, s, amy.ID, "a2", "hash0003")
		tests := []struct {
			name   string
			userID int64
			want   []store.APIToken
		}{
			{"amy", amy.ID, []store.APIToken{a1, a2}},
			{"bob", bob.ID, []store.APIToken{b1}},
			{"a user without tokens", idle.ID, []store.APIToken{}},
			{"everyone", 0, []store.APIToken{a1, b1, a2}},
		}
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				got, err := s.ListAPITokens(ctx, tt.userID)
				if err != nil {
					t.Fatalf("ListAPITokens: %v", err)
				}
				if got == nil {
					t.Error("ListAPITokens returned nil, want a non-nil slice")
				}
				if diff := cmp.Diff(tt.want, got, approxTime); diff != "" {
					t.Errorf("ListAPITokens(%d) (-want +got):\n%s", tt.userID, diff)
				}
			})
		}
	})
}

func TestDeleteAndTouchAPIToken(t *testing.T) {
	storetest.ForEachDialect(t, func(t *testing.T, s *store.Store) {
		ctx := t.Context()
		u := createUser(t, s, "tina")
		gone := createAPIToken(t, s, u.ID, "gone", "hashgone")
		kept := createAPIToken(t, s, u.ID, "kept", "hashkept")

		at := time.Date(2026, 4, 5, 6, 7, 8, 0, time.UTC)
		if err := s.TouchAPIToken(ctx, kept.ID, at); err != nil {
			t.Fatalf("TouchAPIToken: %v", err)
		}
		want := kept
		want.LastUsedAt = &at
		got, err := s.GetAPIToken(ctx, kept.ID)
		if err != nil {
			t.Fatalf("GetAPIToken: %v", err)
		}
		if diff := cmp.Diff(want, got, approxTime); diff != "" {
			t.Errorf("after TouchAPIToken (-want +got):\n%s", diff)
		}

		if err := s.DeleteAPIToken(ctx, gone.ID); err != nil {
			t.Fatalf("DeleteAPIToken: %v", err)
		}
		if _, err := s.GetAPIToken(ctx, gone.ID); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("GetAPIToken after delete: err = %v, want ErrNotFound", err)
		}
		if _, err := s.GetAPITokenByHash(ctx, gone.TokenHash); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("GetAPITokenByHash after delete: err = %v, want ErrNotFound", err)
		}
		if err := s.DeleteAPIToken(ctx, gone.ID); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("second DeleteAPIToken: err = %v, want ErrNotFound", err)
		}
		if err := s.TouchAPIToken(ctx, gone.ID, at); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("TouchAPIToken of a deleted token: err = %v, want ErrNotFound", err)
		}
		if _, err := s.GetAPIToken(ctx, kept.ID); err != nil {
			t.Errorf("GetAPIToken of the kept token: %v", err)
		}
	})
}
