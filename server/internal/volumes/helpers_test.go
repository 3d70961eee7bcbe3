package volumes

import (
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"log/slog"
	"net/url"
	"testing"
	"time"

	"github.com/berth-dev/berth/server/internal/helperimage"
	"github.com/berth-dev/berth/server/internal/helperimage/helperimagetest"
	"github.com/berth-dev/berth/server/internal/store"
	"github.com/berth-dev/berth/shared/engine"
	"github.com/berth-dev/berth/shared/enginetest"
	"github.com/berth-dev/berth/shared/testwait"
)

// helperIDs returns the ids of the helper containers on volume.
func helperIDs(t *testing.T, volume string) []string {
	t.Helper()
	f, _ := json.Marshal(map[string][]string{"label": {HelperVolumeLabel + "=" + volume}})
	var list []struct{ Id string }
	enginetest.Must(t, 200, "GET", "/containers/json?all=1&filters="+url.QueryEscape(string(f)), nil, nil, &list)
	ids := []string{}
	for _, c := range list {
		ids = append(ids, c.Id)
	}
	return ids
}

// waitUntil polls cond until it holds, failing after a minute.
var waitUntil = testwait.Until

// TestHelpersAreReapedSweptAndClosed: an idle browse helper is removed by
// itself; a server's leftover helpers are removed on its first use of the
// environment, another server's are left alone; Close removes what is kept.
func TestHelpersAreReapedSweptAndClosed(t *testing.T) {
	enginetest.Require(t)
	b := make([]byte, 6)
	_, _ = rand.Read(b)
	label := hex.EncodeToString(b)
	vol := "berth-helpers-" + label
	t.Cleanup(func() {
		for _, id := range helperIDs(t, vol) {
			enginetest.Do(t, "DELETE", "/containers/"+id+"?force=1", nil, nil)
		}
		enginetest.RemoveLabelledVolumes(t, label)
	})
	enginetest.Must(t, 201, "POST", "/volumes/create", nil,
		map[string]any{"Name": vol, "Labels": map[string]string{enginetest.Label: label}}, nil)
	log := slog.New(slog.DiscardHandler)
	engines := engine.NewManager(log)
	t.Cleanup(engines.Close)
	env := store.Environment{ID: 1, Name: "local", ConnectionType: "socket", SocketPath: enginetest.Socket}
	ctx := t.Context()

	// Reaped after the idle time.
	h := NewHelpers(engines, helperImages(t), log, "owner-a-"+label, 300*time.Millisecond)
	if _, err := h.List(ctx, env, vol, "/"); err != nil {
		t.Fatal(err)
	}
	if got := helperIDs(t, vol); len(got) != 1 {
		t.Fatalf("helpers after a listing = %v, want one", got)
	}
	waitUntil(t, "the idle helper to be removed", func() bool { return len(helperIDs(t, vol)) == 0 })

	// Leftovers: one of owner-a (kept by a server that is gone), one of
	// owner-b (another server, alive).
	c, err := engines.Client(ctx, env.Endpoint())
	if err != nil {
		t.Fatal(err)
	}
	mk := func(owner string) string {
		id, err := c.CreateHelper(ctx, engine.HelperSpec{Image: enginetest.ImageID(t, enginetest.Image()), Cmd: []string{"true"},
			Labels: map[string]string{HelperLabel: "volume-browse", HelperVolumeLabel: vol, HelperOwnerLabel: owner}})
		if err != nil {
			t.Fatal(err)
		}
		return id
	}
	mine, theirs := mk("owner-a-"+label), mk("owner-b-"+label)
	h2 := NewHelpers(engines, helperImages(t), log, "owner-a-"+label, time.Hour)
	if _, err := h2.List(ctx, env, vol, "/"); err != nil {
		t.Fatal(err)
	}
	kept := h2.BrowseHelperID(env, vol)
	got := map[string]bool{}
	for _, id := range helperIDs(t, vol) {
		got[id] = true
	}
	if got[mine] || !got[theirs] || !got[kept] || len(got) != 2 {
		t.Errorf("after the first use: helpers %v; want the leftover %s gone, %s (another server's) and %s (kept) there",
			got, mine[:12], theirs[:12], kept[:12])
	}
	h2.Close(ctx)
	if ids := helperIDs(t, vol); len(ids) != 1 || ids[0] != theirs {
		t.Errorf("after Close: helpers %v, want only the other server's", ids)
	}
}

// helperImages returns the helper image built for the tests.
func helperImages(t *testing.T) *helperimage.Set {
	t.Helper()
	s, err := helperimagetest.Set()
	if err != nil {
		t.Fatal(err)
	}
	return s
}
