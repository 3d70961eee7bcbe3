package store_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/berth-dev/berth/server/internal/store"
	"github.com/berth-dev/berth/server/internal/store/storetest"
)

// auditBase is the time of the first entry addAudit writes in tests.
var auditBase = time.Date(2026, 5, 1, 10, 0, 0, 0, time.UTC)

func addAudit(t *testing.T, s *store.Store, e store.AuditEntry) store.AuditEntry {
	t.Helper()
	if err := s.AddAudit(t.Context(), &e); err != nil {
		t.Fatalf("AddAudit(%q): %v", e.Action, err)
	}
	return e
}

func TestAuditEntryRoundTripsEveryField(t *testing.T) {
	storetest.ForEachDialect(t, func(t *testing.T, s *store.Store) {
		ctx := t.Context()
		full := store.AuditEntry{
			CreatedAt:     time.Date(2026, 5, 1, 10, 0, 0, 123456000, time.FixedZone("Z", 2*3600)),
			UserID:        ptr(int64(42)),
			Username:      "ünïcode",
			EnvironmentID: ptr(int64(7)),
			Action:        "container.start",
			EntityType:    "container",
			EntityID:      "3f2a9c",
			EntityName:    "web",
			Description:   "Started container \"web\"",
			Details:       `{"image":"nginx:1.27"}`,
			IP:            "192.0.2.1",
		}
		sparse := store.AuditEntry{Action: "login"}
		for _, in := range []store.AuditEntry{full, sparse} {
			before := time.Now()
			e := in
			if err := s.AddAudit(ctx, &e); err != nil {
				t.Fatalf("AddAudit: %v", err)
			}
			if e.ID == 0 {
				t.Error("AddAudit did not set ID")
			}
			want := in
			want.ID = e.ID
			if in.CreatedAt.IsZero() {
				if e.CreatedAt.Before(before.Add(-time.Second)) || e.CreatedAt.After(time.Now().Add(time.Second)) {
					t.Errorf("CreatedAt = %v, want about now", e.CreatedAt)
				}
				want.CreatedAt = e.CreatedAt
			}
			got, _, err := s.ListAudit(ctx, store.AuditFilter{Action: in.Action})
			if err != nil {
				t.Fatalf("ListAudit: %v", err)
			}
			if diff := cmp.Diff([]store.AuditEntry{want}, got, approxTime); diff != "" {
				t.Errorf("ListAudit mismatch (-want +got):\n%s", diff)
			}
		}
	})
}

func TestListAuditFilters(t *testing.T) {
	storetest.ForEachDialect(t, func(t *testing.T, s *store.Store) {
		ctx := t.Context()
		// One entry a minute, oldest first.
		var all []store.AuditEntry
		for i, e := range []store.AuditEntry{
			{UserID: ptr(int64(1)), Username: "amy", Action: "login", EntityType: "session"},
			{UserID: ptr(int64(1)), Username: "amy", EnvironmentID: ptr(int64(1)), Action: "container.start", EntityType: "container"},
			{UserID: ptr(int64(2)), Username: "bob", EnvironmentID: ptr(int64(2)), Action: "container.stop", EntityType: "container"},
			{UserID: ptr(int64(2)), Username: "bob", EnvironmentID: ptr(int64(1)), Action: "containers.prune", EntityType: "container"},
			{Username: "system", Action: "image.pull", EntityType: "image", EnvironmentID: ptr(int64(2))},
			{UserID: ptr(int64(1)), Username: "Amy", Action: "user.create", EntityType: "user"},
			{UserID: ptr(int64(1)), Username: "amy", Action: "container", EntityType: "container"},
			{UserID: ptr(int64(2)), Username: "bob", Action: "con%tainer_x.start", EntityType: "container"},
		} {
			e.CreatedAt = auditBase.Add(time.Duration(i) * time.Minute)
			all = append(all, addAudit(t, s, e))
		}
		// pick returns the entries with the given indexes of all, newest first.
		pick := func(idx ...int) []store.AuditEntry {
			out := []store.AuditEntry{}
			for i := len(idx) - 1; i >= 0; i-- {
				out = append(out, all[idx[i]])
			}
			return out
		}
		tests := []struct {
			name string
			f    store.AuditFilter
			want []store.AuditEntry
		}{
			{"no filter", store.AuditFilter{}, pick(0, 1, 2, 3, 4, 5, 6, 7)},
			{"user id", store.AuditFilter{UserID: ptr(int64(1))}, pick(0, 1, 5, 6)},
			{"username is exact", store.AuditFilter{Username: "amy"}, pick(0, 1, 6)},
			{"environment id", store.AuditFilter{EnvironmentID: ptr(int64(1))}, pick(1, 3)},
			{"exact action", store.AuditFilter{Action: "container.start"}, pick(1)},
			{"exact action is not a prefix", store.AuditFilter{Action: "container"}, pick(6)},
			{"action prefix", store.AuditFilter{Action: "container.*"}, pick(1, 2)},
			{"action prefix without dot", store.AuditFilter{Action: "container*"}, pick(1, 2, 3, 6)},
			{"action prefix with LIKE wildcards", store.AuditFilter{Action: "con%tainer_*"}, pick(7)},
			{"action prefix is case-sensitive", store.AuditFilter{Action: "Container.*"}, pick()},
			{"bare star selects every action", store.AuditFilter{Action: "*"}, pick(0, 1, 2, 3, 4, 5, 6, 7)},
			{"entity type", store.AuditFilter{EntityType: "image"}, pick(4)},
			{"since is inclusive", store.AuditFilter{Since: ptr(all[5].CreatedAt)}, pick(5, 6, 7)},
			{"until is exclusive", store.AuditFilter{Until: ptr(all[2].CreatedAt)}, pick(0, 1)},
			{"since and until", store.AuditFilter{Since: ptr(all[2].CreatedAt), Until: ptr(all[4].CreatedAt)}, pick(2, 3)},
			{"since in another zone", store.AuditFilter{Since: ptr(all[6].CreatedAt.In(time.FixedZone("W", -8*3600)))}, pick(6, 7)},
			{"fields combine", store.AuditFilter{UserID: ptr(int64(2)), EnvironmentID: ptr(int64(1)), Action: "container*", EntityType: "container"}, pick(3)},
			{"nothing matches", store.AuditFilter{Username: "nobody"}, pick()},
		}
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				got, total, err := s.ListAudit(ctx, tt.f)
				if err != nil {
					t.Fatalf("ListAudit: %v", err)
				}
				if got == nil {
					t.Error("ListAudit returned nil, want a non-nil slice")
				}
				if diff := cmp.Diff(tt.want, got, approxTime); diff != "" {
					t.Errorf("ListAudit (-want +got):\n%s", diff)
				}
				if total != len(tt.want) {
					t.Errorf("total = %d, want %d", total, len(tt.want))
				}
			})
		}
	})
}

func TestListAuditIsNewestFirst(t *testing.T) {
	storetest.ForEachDialect(t, func(t *testing.T, s *store.Store) {
		ctx := t.Context()
		// Written out of time order; two share a timestamp (the later id is newer).
		at := []time.Duration{2 * time.Hour, 0, 3 * time.Hour, time.Hour, time.Hour}
		for i, d := range at {
			addAudit(t, s, store.AuditEntry{Action: fmt.Sprintf("a%d", i), CreatedAt: auditBase.Add(d)})
		}
		got, _, err := s.ListAudit(ctx, store.AuditFilter{})
		if err != nil {
			t.Fatalf("ListAudit: %v", err)
		}
		var gotActions []string
		for _, e := range got {
			gotActions = append(gotActions, e.Action)
		}
		if diff := cmp.Diff([]string{"a2", "a0", "a4", "a3", "a1"}, gotActions); diff != "" {
			t.Errorf("order (-want +got):\n%s", diff)
		}
	})
}

func TestListAuditPagesAndCountsTotal(t *testing.T) {
	storetest.ForEachDialect(t, func(t *testing.T, s *store.Store) {
		ctx := t.Context()
		const n = 1050
		// More than the maximum page, to see the cap; even ones are
		// container actions, odd ones image actions.
		for i := range n {
			action := "container.start"
			if i%2 == 1 {
				action = "image.pull"
			}
			addAudit(t, s, store.AuditEntry{Action: action, EntityID: fmt.Sprint(i), CreatedAt: auditBase.Add(time.Duration(i) * time.Second)})
		}
		ids := func(es []store.AuditEntry) []string {
			var out []string
			for _, e := range es {
				out = append(out, e.EntityID)
			}
			return out
		}
		// newest returns the entity ids of entries i, i-step, … (count of them).
		newest := func(from, step, count int) []string {
			var out []string
			for i := 0; i < count; i++ {
				out = append(out, fmt.Sprint(from-i*step))
			}
			return out
		}
		tests := []struct {
			name      string
			f         store.AuditFilter
			wantIDs   []string
			wantTotal int
		}{
			{"default limit is 100", store.AuditFilter{}, newest(n-1, 1, 100), n},
			{"limit and offset", store.AuditFilter{Limit: 3, Offset: 2}, newest(n-3, 1, 3), n},
			{"limit is at most 1000", store.AuditFilter{Limit: 5000}, newest(n-1, 1, 1000), n},
			{"negative limit is the default", store.AuditFilter{Limit: -1}, newest(n-1, 1, 100), n},
			{"last page is short", store.AuditFilter{Limit: 100, Offset: 1000}, newest(n-1001, 1, 50), n},
			{"offset past the end", store.AuditFilter{Limit: 10, Offset: n}, nil, n},
			{"total counts the filter", store.AuditFilter{Action: "image.*", Limit: 2, Offset: 1}, newest(n-3, 2, 2), n / 2},
		}
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				got, total, err := s.ListAudit(ctx, tt.f)
				if err != nil {
					t.Fatalf("ListAudit: %v", err)
				}
				if diff := cmp.Diff(tt.wantIDs, ids(got)); diff != "" {
					t.Errorf("entity ids (-want +got):\n%s", diff)
				}
				if total != tt.wantTotal {
					t.Errorf("total = %d, want %d", total, tt.wantTotal)
				}
			})
		}
	})
}
