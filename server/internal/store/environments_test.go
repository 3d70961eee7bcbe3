package store_test

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/berth-dev/berth/server/internal/store"
	"github.com/berth-dev/berth/server/internal/store/storetest"
)

// approxTime compares times by instant, to the precision both dialects keep.
var approxTime = cmpopts.EquateApproxTime(time.Millisecond)

func ptr[T any](v T) *T { return &v }

// fullEnvironment returns an environment with every field set to a non-zero value.
func fullEnvironment(name string) store.Environment {
	return store.Environment{
		Name:                  name,
		ConnectionType:        "agent-edge",
		Host:                  "docker.example.com",
		Port:                  2376,
		Protocol:              "https",
		SocketPath:            "/var/run/docker.sock",
		TLSCA:                 "-----BEGIN CERTIFICATE-----\nCA\n-----END CERTIFICATE-----",
		TLSCert:               "-----BEGIN CERTIFICATE-----\nCERT\n-----END CERTIFICATE-----",
		TLSKey:                "-----BEGIN PRIVATE KEY-----\nKEY\n-----END PRIVATE KEY-----",
		TLSSkipVerify:         true,
		AgentToken:            "agent-token-1234",
		AgentLastSeen:         ptr(time.Date(2025, 3, 4, 5, 6, 7, 123456789, time.FixedZone("CET", 3600))),
		AgentID:               "agent-id",
		AgentName:             "agent-name",
		AgentVersion:          "1.2.3",
		AgentCapabilities:     []string{"compose", "exec"},
		Icon:                  "server",
		Labels:                []string{"prod", "eu", "ünïcode \"quoted\""},
		CollectActivity:       true,
		CollectMetrics:        true,
		HighlightChanges:      true,
		PublicIP:              ptr("203.0.113.7"),
		UpdateCheckEnabled:    true,
		UpdateCheckAutoUpdate: true,
		ImagePruneEnabled:     true,
		Timezone:              ptr("Europe/Paris"),
	}
}

func createEnvironment(t *testing.T, s *store.Store, name string) store.Environment {
	t.Helper()
	e := fullEnvironment(name)
	if err := s.CreateEnvironment(t.Context(), &e); err != nil {
		t.Fatalf("CreateEnvironment(%q): %v", name, err)
	}
	return e
}

func TestEnvironmentRoundTripsEveryField(t *testing.T) {
	storetest.ForEachDialect(t, func(t *testing.T, s *store.Store) {
		tests := []struct {
			name string
			in   store.Environment
			// want is in as read back, before the store-assigned fields are filled in.
			want store.Environment
		}{
			{
				name: "every field set",
				in:   fullEnvironment("full"),
				want: fullEnvironment("full"),
			},
			{
				name: "nil pointers and lists",
				in:   store.Environment{Name: "sparse", ConnectionType: "socket", Protocol: "http"},
				want: store.Environment{
					Name: "sparse", ConnectionType: "socket", Protocol: "http",
					AgentCapabilities: []string{}, Labels: []string{},
				},
			},
			{
				name: "empty pointers and lists",
				in: store.Environment{
					Name: "empty", PublicIP: ptr(""), Timezone: ptr(""),
					AgentCapabilities: []string{}, Labels: []string{},
				},
				want: store.Environment{
					Name: "empty", PublicIP: ptr(""), Timezone: ptr(""),
					AgentCapabilities: []string{}, Labels: []string{},
				},
			},
		}
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				ctx := t.Context()
				before := time.Now()
				e := tt.in
				if err := s.CreateEnvironment(ctx, &e); err != nil {
					t.Fatalf("CreateEnvironment: %v", err)
				}
				if e.ID == 0 {
					t.Fatal("CreateEnvironment did not set ID")
				}
				if e.CreatedAt.Before(before.Add(-time.Second)) || e.CreatedAt.After(time.Now().Add(time.Second)) {
					t.Errorf("CreatedAt = %v, want about now", e.CreatedAt)
				}
				if !e.UpdatedAt.Equal(e.CreatedAt) {
					t.Errorf("UpdatedAt = %v, want CreatedAt %v", e.UpdatedAt, e.CreatedAt)
				}

				want := tt.want
				want.ID, want.CreatedAt, want.UpdatedAt = e.ID, e.CreatedAt, e.UpdatedAt

				byID, err := s.GetEnvironment(ctx, e.ID)
				if err != nil {
					t.Fatalf("GetEnvironment: %v", err)
				}
				if diff := cmp.Diff(want, byID, approxTime); diff != "" {
					t.Errorf("GetEnvironment mismatch (-want +got):\n%s", diff)
				}
				byName, err := s.GetEnvironmentByName(ctx, e.Name)
				if err != nil {
					t.Fatalf("GetEnvironmentByName: %v", err)
				}
				if diff := cmp.Diff(want, byName, approxTime); diff != "" {
					t.Errorf("GetEnvironmentByName mismatch (-want +got):\n%s", diff)
				}
				for field, got := range map[string]*time.Time{
					"CreatedAt": &byID.CreatedAt, "UpdatedAt": &byID.UpdatedAt, "AgentLastSeen": byID.AgentLastSeen,
				} {
					if got != nil && got.Location() != time.UTC {
						t.Errorf("%s location = %v, want UTC", field, got.Location())
					}
				}
			})
		}
	})
}

func TestListEnvironmentsIsOrderedByID(t *testing.T) {
	storetest.ForEachDialect(t, func(t *testing.T, s *store.Store) {
		ctx := t.Context()
		got, err := s.ListEnvironments(ctx)
		if err != nil {
			t.Fatalf("ListEnvironments: %v", err)
		}
		if got == nil || len(got) != 0 {
			t.Fatalf("ListEnvironments on empty store = %#v, want empty non-nil slice", got)
		}

		var want []store.Environment
		for _, name := range []string{"zulu", "alpha", "mike"} {
			want = append(want, createEnvironment(t, s, name))
		}
		got, err = s.ListEnvironments(ctx)
		if err != nil {
			t.Fatalf("ListEnvironments: %v", err)
		}
		if diff := cmp.Diff(want, got, approxTime); diff != "" {
			t.Errorf("ListEnvironments mismatch (-want +got):\n%s", diff)
		}
	})
}

func TestCreateEnvironmentDuplicateNameIsConflict(t *testing.T) {
	storetest.ForEachDialect(t, func(t *testing.T, s *store.Store) {
		createEnvironment(t, s, "dup")
		e := fullEnvironment("dup")
		err := s.CreateEnvironment(t.Context(), &e)
		if !errors.Is(err, store.ErrConflict) {
			t.Fatalf("CreateEnvironment with a taken name: err = %v, want ErrConflict", err)
		}
		if e.ID != 0 {
			t.Errorf("failed CreateEnvironment set ID = %d", e.ID)
		}
	})
}

func TestGetMissingEnvironmentIsNotFound(t *testing.T) {
	storetest.ForEachDialect(t, func(t *testing.T, s *store.Store) {
		ctx := t.Context()
		existing := createEnvironment(t, s, "existing")
		missing := existing.ID + 100
		tests := []struct {
			name string
			call func() error
		}{
			{"GetEnvironment", func() error { _, err := s.GetEnvironment(ctx, missing); return err }},
			{"GetEnvironmentByName", func() error { _, err := s.GetEnvironmentByName(ctx, "missing"); return err }},
			{"UpdateEnvironment", func() error {
				e := fullEnvironment("missing")
				e.ID = missing
				return s.UpdateEnvironment(ctx, &e)
			}},
			{"DeleteEnvironment", func() error { return s.DeleteEnvironment(ctx, missing) }},
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

func TestUpdateEnvironmentWritesEveryFieldAndBumpsUpdatedAt(t *testing.T) {
	storetest.ForEachDialect(t, func(t *testing.T, s *store.Store) {
		ctx := t.Context()
		orig := createEnvironment(t, s, "before")
		other := createEnvironment(t, s, "other")

		changed := store.Environment{
			ID:               orig.ID,
			Name:             "after",
			ConnectionType:   "direct",
			Host:             "10.0.0.2",
			Port:             2375,
			Protocol:         "http",
			TLSKey:           "new key",
			AgentLastSeen:    ptr(time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)),
			Labels:           []string{"staging"},
			CollectMetrics:   true,
			PublicIP:         nil,
			Timezone:         ptr("UTC"),
			HighlightChanges: false,
		}
		e := changed
		if err := s.UpdateEnvironment(ctx, &e); err != nil {
			t.Fatalf("UpdateEnvironment: %v", err)
		}
		if !e.UpdatedAt.After(orig.UpdatedAt) {
			t.Errorf("UpdatedAt = %v, want after %v", e.UpdatedAt, orig.UpdatedAt)
		}
		if !e.CreatedAt.Equal(orig.CreatedAt) {
			t.Errorf("UpdateEnvironment set CreatedAt = %v, want the stored %v", e.CreatedAt, orig.CreatedAt)
		}

		want := changed
		want.AgentCapabilities = []string{}
		want.CreatedAt, want.UpdatedAt = orig.CreatedAt, e.UpdatedAt
		got, err := s.GetEnvironment(ctx, orig.ID)
		if err != nil {
			t.Fatalf("GetEnvironment: %v", err)
		}
		if diff := cmp.Diff(want, got, approxTime); diff != "" {
			t.Errorf("after UpdateEnvironment (-want +got):\n%s", diff)
		}

		// The other environment is untouched.
		gotOther, err := s.GetEnvironment(ctx, other.ID)
		if err != nil {
			t.Fatalf("GetEnvironment(other): %v", err)
		}
		if diff := cmp.Diff(other, gotOther, approxTime); diff != "" {
			t.Errorf("other environment changed (-want +got):\n%s", diff)
		}
	})
}

func TestUpdateEnvironmentToTakenNameIsConflict(t *testing.T) {
	storetest.ForEachDialect(t, func(t *testing.T, s *store.Store) {
		createEnvironment(t, s, "taken")
		e := createEnvironment(t, s, "mine")
		e.Name = "taken"
		if err := s.UpdateEnvironment(t.Context(), &e); !errors.Is(err, store.ErrConflict) {
			t.Fatalf("UpdateEnvironment to a taken name: err = %v, want ErrConflict", err)
		}
	})
}

func TestDeleteEnvironment(t *testing.T) {
	storetest.ForEachDialect(t, func(t *testing.T, s *store.Store) {
		ctx := t.Context()
		gone := createEnvironment(t, s, "gone")
		kept := createEnvironment(t, s, "kept")
		if err := s.DeleteEnvironment(ctx, gone.ID); err != nil {
			t.Fatalf("DeleteEnvironment: %v", err)
		}
		if _, err := s.GetEnvironment(ctx, gone.ID); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("GetEnvironment after delete: err = %v, want ErrNotFound", err)
		}
		got, err := s.ListEnvironments(ctx)
		if err != nil {
			t.Fatalf("ListEnvironments: %v", err)
		}
		if diff := cmp.Diff([]store.Environment{kept}, got, approxTime); diff != "" {
			t.Errorf("ListEnvironments after delete (-want +got):\n%s", diff)
		}
		if err := s.DeleteEnvironment(ctx, gone.ID); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("second DeleteEnvironment: err = %v, want ErrNotFound", err)
		}
	})
}

func TestDeleteEnvironmentRemovesItsAutoUpdates(t *testing.T) {
	storetest.ForEachDialect(t, func(t *testing.T, s *store.Store) {
		ctx := t.Context()
		gone := createEnvironment(t, s, "gone")
		kept := createEnvironment(t, s, "kept")
		for _, a := range []store.AutoUpdate{
			{ContainerName: "web", EnvironmentID: &gone.ID, ScheduleType: "daily", VulnerabilityCriteria: "never"},
			{ContainerName: "web", EnvironmentID: &kept.ID, ScheduleType: "daily", VulnerabilityCriteria: "never"},
			{ContainerName: "web", EnvironmentID: nil, ScheduleType: "daily", VulnerabilityCriteria: "never"},
		} {
			if err := s.UpsertAutoUpdate(ctx, &a); err != nil {
				t.Fatalf("UpsertAutoUpdate: %v", err)
			}
		}
		if err := s.DeleteEnvironment(ctx, gone.ID); err != nil {
			t.Fatalf("DeleteEnvironment: %v", err)
		}
		if _, err := s.GetAutoUpdate(ctx, &gone.ID, "web"); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("auto-update of the deleted environment: err = %v, want ErrNotFound", err)
		}
		list, err := s.ListAutoUpdates(ctx)
		if err != nil {
			t.Fatalf("ListAutoUpdates: %v", err)
		}
		var gotEnvs []*int64
		for _, a := range list {
			gotEnvs = append(gotEnvs, a.EnvironmentID)
		}
		if diff := cmp.Diff([]*int64{&kept.ID, nil}, gotEnvs); diff != "" {
			t.Errorf("remaining auto-updates' environments (-want +got):\n%s", diff)
		}
	})
}

func TestSecretsAreEncryptedAtRest(t *testing.T) {
	storetest.ForEachDialect(t, func(t *testing.T, s *store.Store) {
		ctx := t.Context()
		e := createEnvironment(t, s, "secretive")
		check := func(t *testing.T, tlsKey, agentToken string) {
			t.Helper()
			var rawKey, rawToken string
			err := s.DB().QueryRowContext(ctx,
				`SELECT tls_key, agent_token FROM environments WHERE name = 'secretive'`).Scan(&rawKey, &rawToken)
			if err != nil {
				t.Fatalf("raw select: %v", err)
			}
			for _, c := range []struct{ column, raw, plain string }{
				{"tls_key", rawKey, tlsKey},
				{"agent_token", rawToken, agentToken},
			} {
				if c.raw == "" || strings.Contains(c.raw, c.plain) {
					t.Errorf("%s at rest = %q, want it encrypted", c.column, c.raw)
				}
			}
			got, err := s.GetEnvironment(ctx, e.ID)
			if err != nil {
				t.Fatalf("GetEnvironment: %v", err)
			}
			if got.TLSKey != tlsKey || got.AgentToken != agentToken {
				t.Errorf("GetEnvironment secrets = (%q, %q), want (%q, %q)", got.TLSKey, got.AgentToken, tlsKey, agentToken)
			}
		}
		t.Run("create", func(t *testing.T) { check(t, e.TLSKey, e.AgentToken) })
		t.Run("update", func(t *testing.T) {
			e.TLSKey, e.AgentToken = "-----BEGIN PRIVATE KEY-----\nNEW\n", "rotated-token"
			if err := s.UpdateEnvironment(ctx, &e); err != nil {
				t.Fatalf("UpdateEnvironment: %v", err)
			}
			check(t, e.TLSKey, e.AgentToken)
		})
	})
}

func TestCreateFirstEnvironmentGetsIDOneOnlyOnce(t *testing.T) {
	storetest.ForEachDialect(t, func(t *testing.T, s *store.Store) {
		ctx := t.Context()
		local := store.Environment{Name: "local", ConnectionType: "socket", SocketPath: "/var/run/docker.sock"}

		first := local
		created, err := s.CreateFirstEnvironment(ctx, &first)
		if err != nil || !created {
			t.Fatalf("first CreateFirstEnvironment = %v, %v; want true, nil", created, err)
		}
		if first.ID != 1 || first.CreatedAt.IsZero() {
			t.Errorf("first CreateFirstEnvironment set ID %d, CreatedAt %v; want 1 and now", first.ID, first.CreatedAt)
		}
		got, err := s.GetEnvironment(ctx, 1)
		if err != nil {
			t.Fatalf("GetEnvironment(1): %v", err)
		}
		if got.Name != "local" || got.SocketPath != local.SocketPath {
			t.Errorf("GetEnvironment(1) = %q %q, want the created environment", got.Name, got.SocketPath)
		}
		if v, err := s.GetSetting(ctx, "bootstrap.local_environment"); err != nil || v != "done" {
			t.Errorf("bootstrap setting = %q, %v; want done", v, err)
		}

		second := local
		second.Name = "local-2"
		if created, err := s.CreateFirstEnvironment(ctx, &second); err != nil || created {
			t.Errorf("second CreateFirstEnvironment = %v, %v; want false, nil", created, err)
		}
		if second.ID != 0 {
			t.Errorf("second CreateFirstEnvironment set ID %d", second.ID)
		}

		next := createEnvironment(t, s, "next")
		if next.ID != 2 {
			t.Errorf("CreateEnvironment after the first environment got ID %d, want 2", next.ID)
		}

		for _, id := range []int64{1, 2} {
			if err := s.DeleteEnvironment(ctx, id); err != nil {
				t.Fatalf("DeleteEnvironment(%d): %v", id, err)
			}
		}
		third := local
		if created, err := s.CreateFirstEnvironment(ctx, &third); err != nil || created {
			t.Errorf("CreateFirstEnvironment after deleting everything = %v, %v; want false, nil", created, err)
		}
		list, err := s.ListEnvironments(ctx)
		if err != nil {
			t.Fatalf("ListEnvironments: %v", err)
		}
		if len(list) != 0 {
			t.Errorf("ListEnvironments = %d environments, want none", len(list))
		}
	})
}

func TestCreateFirstEnvironmentDoesNothingWhenEnvironmentsExist(t *testing.T) {
	storetest.ForEachDialect(t, func(t *testing.T, s *store.Store) {
		ctx := t.Context()
		existing := createEnvironment(t, s, "existing")
		e := store.Environment{Name: "local"}
		if created, err := s.CreateFirstEnvironment(ctx, &e); err != nil || created {
			t.Fatalf("CreateFirstEnvironment = %v, %v; want false, nil", created, err)
		}
		list, err := s.ListEnvironments(ctx)
		if err != nil {
			t.Fatalf("ListEnvironments: %v", err)
		}
		if diff := cmp.Diff([]store.Environment{existing}, list, approxTime); diff != "" {
			t.Errorf("ListEnvironments (-want +got):\n%s", diff)
		}
	})
}
