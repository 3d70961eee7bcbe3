package store_test

import (
	"errors"
	"slices"
	"testing"

	"github.com/berth-dev/berth/server/internal/store"
	"github.com/berth-dev/berth/server/internal/store/storetest"
)

func TestPreferencesAreReplacedPerUserAndScope(t *testing.T) {
	storetest.ForEachDialect(t, func(t *testing.T, s *store.Store) {
		ctx := t.Context()
		if _, err := s.GetPreferences(ctx, 1, store.PrefsDashboard); !errors.Is(err, store.ErrNotFound) {
			t.Fatalf("preferences before any = %v, want ErrNotFound", err)
		}
		for _, step := range []struct {
			user         int64
			scope, value string
		}{{1, store.PrefsDashboard, `{"a":1}`}, {0, store.PrefsDashboard, `{"anon":true}`}, {1, store.PrefsProfile, `{"p":2}`},
			{1, store.PrefsDashboard, `{"a":3}`}} {
			if err := s.SetPreferences(ctx, step.user, step.scope, step.value); err != nil {
				t.Fatal(err)
			}
		}
		for _, want := range []struct {
			user         int64
			scope, value string
		}{{1, store.PrefsDashboard, `{"a":3}`}, {0, store.PrefsDashboard, `{"anon":true}`}, {1, store.PrefsProfile, `{"p":2}`}} {
			got, err := s.GetPreferences(ctx, want.user, want.scope)
			if err != nil || got != want.value {
				t.Errorf("preferences %d/%s = %q, %v; want %q", want.user, want.scope, got, err, want.value)
			}
		}
	})
}

func TestAuditAfterUsernamesAndCounts(t *testing.T) {
	storetest.ForEachDialect(t, func(t *testing.T, s *store.Store) {
		ctx := t.Context()
		last, err := s.LastAuditID(ctx)
		if err != nil || last != 0 {
			t.Fatalf("LastAuditID of an empty log = %d, %v", last, err)
		}
		var ids []int64
		for _, e := range []store.AuditEntry{{Action: "login", Username: "bob"}, {Action: "role.create", Username: "alice"},
			{Action: "role.delete", Username: "bob"}, {Action: "login.failure"}} {
			if err := s.AddAudit(ctx, &e); err != nil {
				t.Fatal(err)
			}
			ids = append(ids, e.ID)
		}
		if last, _ := s.LastAuditID(ctx); last != ids[3] {
			t.Errorf("LastAuditID = %d, want %d", last, ids[3])
		}
		got, err := s.AuditAfter(ctx, ids[0], store.AuditFilter{Action: "role.*"}, 10)
		if err != nil {
			t.Fatal(err)
		}
		var actions []string
		for _, e := range got {
			actions = append(actions, e.Action)
		}
		if !slices.Equal(actions, []string{"role.create", "role.delete"}) {
			t.Errorf("AuditAfter = %v, want the role entries oldest first", actions)
		}
		if got, _ := s.AuditAfter(ctx, ids[1], store.AuditFilter{}, 1); len(got) != 1 || got[0].ID != ids[2] {
			t.Errorf("AuditAfter with limit 1 = %+v", got)
		}
		names, err := s.AuditUsernames(ctx)
		if err != nil || !slices.Equal(names, []string{"alice", "bob"}) {
			t.Errorf("AuditUsernames = %v, %v", names, err)
		}
		counts, err := s.Counts(ctx)
		if err != nil || counts["auditEntries"] != 4 || counts["users"] != 0 {
			t.Errorf("Counts = %v, %v", counts, err)
		}
	})
}
