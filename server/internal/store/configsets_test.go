package store_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/berth-dev/berth/server/internal/store"
	"github.com/berth-dev/berth/server/internal/store/storetest"
)

func TestConfigSetsRoundTripWithSecretsSealed(t *testing.T) {
	storetest.ForEachDialect(t, func(t *testing.T, s *store.Store) {
		ctx := context.Background()
		c := store.ConfigSet{Name: "web", Description: "d",
			EnvVars:     []store.ConfigVar{{Key: "TZ", Value: "UTC"}, {Key: "PW", Value: "hunter2", IsSecret: true}},
			Labels:      []store.ConfigLabel{{Key: "team", Value: "web"}},
			Ports:       []store.ConfigPort{{ContainerPort: "80", HostPort: "8080", Protocol: "tcp"}},
			Volumes:     []store.ConfigVolume{{HostPath: "data", ContainerPath: "/data", Mode: "rw"}},
			NetworkMode: "bridge", RestartPolicy: "always"}
		if err := s.CreateConfigSet(ctx, &c); err != nil {
			t.Fatal(err)
		}
		got, err := s.GetConfigSet(ctx, c.ID)
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(c, got); diff != "" {
			t.Errorf("read back (-want +got):\n%s", diff)
		}
		var raw string
		if err := s.DB().QueryRow("SELECT env_vars FROM config_sets WHERE id = $1", c.ID).Scan(&raw); err != nil {
			t.Fatal(err)
		}
		if strings.Contains(raw, "hunter2") {
			t.Errorf("raw row holds the secret: %s", raw)
		}
		dup := store.ConfigSet{Name: "web"}
		if err := s.CreateConfigSet(ctx, &dup); !errors.Is(err, store.ErrConflict) {
			t.Errorf("duplicate: %v", err)
		}
		c.Name, c.EnvVars = "web2", nil
		if err := s.UpdateConfigSet(ctx, &c); err != nil {
			t.Fatal(err)
		}
		got, _ = s.GetConfigSet(ctx, c.ID)
		if got.Name != "web2" || len(got.EnvVars) != 0 {
			t.Errorf("updated = %+v", got)
		}
		if err := s.DeleteConfigSet(ctx, c.ID); err != nil {
			t.Fatal(err)
		}
		if _, err := s.GetConfigSet(ctx, c.ID); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("after delete: %v", err)
		}
		if err := s.DeleteConfigSet(ctx, c.ID); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("second delete: %v", err)
		}
	})
}

// TestConfigSetsReadRowsOfTheEarlierShape reads a row written when labels
// were an object and volumes "source:target[:mode]" strings.
func TestConfigSetsReadRowsOfTheEarlierShape(t *testing.T) {
	storetest.ForEachDialect(t, func(t *testing.T, s *store.Store) {
		ctx := context.Background()
		c := store.ConfigSet{Name: "old"}
		if err := s.CreateConfigSet(ctx, &c); err != nil {
			t.Fatal(err)
		}
		if _, err := s.DB().Exec("UPDATE config_sets SET labels = $1, volumes = $2 WHERE id = $3",
			`{"b":"2","a":"1"}`, `["data:/data","/srv/conf:/etc/conf:ro"]`, c.ID); err != nil {
			t.Fatal(err)
		}
		got, err := s.GetConfigSet(ctx, c.ID)
		if err != nil {
			t.Fatal(err)
		}
		wantLabels := []store.ConfigLabel{{Key: "a", Value: "1"}, {Key: "b", Value: "2"}}
		wantVolumes := []store.ConfigVolume{{HostPath: "data", ContainerPath: "/data", Mode: "rw"},
			{HostPath: "/srv/conf", ContainerPath: "/etc/conf", Mode: "ro"}}
		if diff := cmp.Diff(wantLabels, got.Labels); diff != "" {
			t.Errorf("labels (-want +got):\n%s", diff)
		}
		if diff := cmp.Diff(wantVolumes, got.Volumes); diff != "" {
			t.Errorf("volumes (-want +got):\n%s", diff)
		}
	})
}

func TestLabelsAreUniqueByName(t *testing.T) {
	storetest.ForEachDialect(t, func(t *testing.T, s *store.Store) {
		ctx := context.Background()
		for _, n := range []string{"prod", "dev"} {
			l := store.Label{Name: n, Color: "#fff"}
			if err := s.CreateLabel(ctx, &l); err != nil || l.ID == 0 {
				t.Fatal(l, err)
			}
		}
		if err := s.CreateLabel(ctx, &store.Label{Name: "prod"}); !errors.Is(err, store.ErrConflict) {
			t.Errorf("duplicate: %v", err)
		}
		list, err := s.ListLabels(ctx)
		if err != nil || len(list) != 2 || list[0].Name != "dev" {
			t.Errorf("list = %+v, %v", list, err)
		}
	})
}

// TestRelabelIsOneTransaction checks that a refusal by the change undoes
// every environment already rewritten, and that a rename moves the defined
// label's colour; SetLabelColor defines a label or recolours it.
func TestRelabelIsOneTransaction(t *testing.T) {
	storetest.ForEachDialect(t, func(t *testing.T, s *store.Store) {
		ctx := context.Background()
		var ids []int64
		for _, n := range []string{"one", "two"} {
			e := store.Environment{Name: n, ConnectionType: "direct", Host: "203.0.113.1", Port: 2375, Protocol: "http", Labels: []string{"old"}}
			if err := s.CreateEnvironment(ctx, &e); err != nil {
				t.Fatal(err)
			}
			ids = append(ids, e.ID)
		}
		if err := s.SetLabelColor(ctx, "old", "#111111"); err != nil {
			t.Fatal(err)
		}
		refused := errors.New("refused")
		_, err := s.Relabel(ctx, "old", "new", func(id int64, l []string) ([]string, bool, error) {
			if id == ids[1] {
				return nil, false, refused
			}
			return []string{"new"}, true, nil
		})
		if !errors.Is(err, refused) {
			t.Fatalf("Relabel = %v", err)
		}
		for _, id := range ids {
			if e, _ := s.GetEnvironment(ctx, id); len(e.Labels) != 1 || e.Labels[0] != "old" {
				t.Errorf("environment %d after a refused relabel: %v", id, e.Labels)
			}
		}
		n, err := s.Relabel(ctx, "old", "new", func(_ int64, l []string) ([]string, bool, error) { return []string{"new"}, true, nil })
		if err != nil || n != 2 {
			t.Fatal(n, err)
		}
		list, _ := s.ListLabels(ctx)
		if len(list) != 1 || list[0].Name != "new" || list[0].Color != "#111111" {
			t.Errorf("defined labels after rename = %+v", list)
		}
		if err := s.SetLabelColor(ctx, "new", "#222222"); err != nil {
			t.Fatal(err)
		}
		if list, _ = s.ListLabels(ctx); len(list) != 1 || list[0].Color != "#222222" {
			t.Errorf("after recolour = %+v", list)
		}
	})
}
