package notify

import (
	"context"
	"crypto/ed25519"
	"crypto/rand"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/berth-dev/berth/server/internal/license"
	"github.com/berth-dev/berth/server/internal/store"
	"github.com/berth-dev/berth/server/internal/store/storetest"
)

// installLicense installs a real signed enterprise license expiring at
// expires on st and returns its manager.
func installLicense(t *testing.T, st *store.Store, expires time.Time) *license.Manager {
	t.Helper()
	pub, priv, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	m, err := license.New(context.Background(), st, []ed25519.PublicKey{pub}, nil)
	if err != nil {
		t.Fatal(err)
	}
	doc, err := license.Sign(license.License{ID: "lic-test", Edition: "enterprise", Customer: "Berth tests",
		ExpiresAt: &expires}, priv)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := m.Install(context.Background(), doc, ""); err != nil {
		t.Fatal(err)
	}
	return m
}

// license_expiring is told once per window (30, 14, 7, 3 and 1 days before
// the expiry), by one of the servers sharing the database, and neither
// before the first window nor after the expiry.
func TestLicenseExpiringIsToldOncePerWindow(t *testing.T) {
	st, err := store.Open(context.Background(), filepath.Join(t.TempDir(), "berth.db"), storetest.Box(t))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	expires := time.Now().Add(100 * 24 * time.Hour).Truncate(time.Second)
	lic := installLicense(t, st, expires)
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	a := New(Options{Store: st, Log: log, Node: "a", License: lic})
	b := New(Options{Store: st, Log: log, Node: "b", License: lic})
	t.Cleanup(a.Close)
	t.Cleanup(b.Close)
	day := 24 * time.Hour
	steps := []struct {
		s    *Service
		left time.Duration
		told bool
	}{
		{a, 40 * day, false}, {a, 29 * day, true}, {b, 29 * day, false}, {a, 20 * day, false},
		{b, 13 * day, true}, {a, 13 * day, false}, {a, 6 * day, true}, {a, 2 * day, true}, {b, 12 * time.Hour, true},
		{a, time.Hour, false}, {a, -time.Hour, false},
	}
	for i, step := range steps {
		if got := step.s.checkLicense(t.Context(), expires.Add(-step.left)); got != step.told {
			t.Errorf("step %d (server %s, %v before the expiry): told = %v, want %v", i, step.s.o.Node, step.left, got, step.told)
		}
	}
	// A perpetual license, or none, is never told.
	if err := lic.Remove(t.Context()); err != nil {
		t.Fatal(err)
	}
	if a.checkLicense(t.Context(), expires.Add(-day/2)) {
		t.Error("told without a license")
	}
}

// A server that starts with a license expiring within the week sends
// license_expiring through a channel that takes it (system-wide: no
// environment subscription needed).
func TestLicenseExpiringIsDeliveredAtStart(t *testing.T) {
	st, err := store.Open(context.Background(), filepath.Join(t.TempDir(), "berth.db"), storetest.Box(t))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	got := make(chan map[string]any, 4)
	rcv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var m map[string]any
		_ = json.NewDecoder(r.Body).Decode(&m)
		got <- m
	}))
	t.Cleanup(rcv.Close)
	ch := store.NotificationChannel{Type: "webhook", Name: "licence", Enabled: true,
		Config: json.RawMessage(`{"url":"` + rcv.URL + `"}`), EventTypes: []string{"license_expiring"}}
	if err := st.CreateNotificationChannel(t.Context(), &ch); err != nil {
		t.Fatal(err)
	}
	lic := installLicense(t, st, time.Now().Add(5*24*time.Hour))
	s := New(Options{Store: st, Log: slog.New(slog.NewTextHandler(io.Discard, nil)), Node: "a", License: lic})
	s.Start()
	t.Cleanup(s.Close)
	select {
	case m := <-got:
		if m["event"] != "license_expiring" || m["title"] != "Berth license expiring" ||
			!strings.Contains(m["message"].(string), "(in 5 days)") {
			t.Errorf("message = %v", m)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("no license_expiring message within 30 s of the start")
	}
}
