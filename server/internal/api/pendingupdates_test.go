package api_test

import (
	"context"
	"net/http"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/berth-dev/berth/server/internal/store"
)

// DELETE /api/containers/pending-updates dismisses one container's pending
// update (?containerName=) or all of the environment's, and no other
// environment's; GET shows what is left.
func TestClearPendingUpdates(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	ctx := context.Background()
	var other store.Environment
	h.must(http.StatusCreated, "POST", "/api/environments", map[string]any{"name": "other-" + h.label,
		"connectionType": "direct", "host": "127.0.0.1", "port": 1, "protocol": "http"}, &other)
	now := time.Now().UTC()
	for envID, names := range map[int64][]string{1: {"a-" + h.label, "b-" + h.label, "c-" + h.label}, other.ID: {"d-" + h.label}} {
		var list []store.PendingUpdate
		for _, n := range names {
			list = append(list, store.PendingUpdate{ContainerName: n, ContainerID: "id-" + n, Image: "img:1",
				CurrentImageID: "sha256:old", NewDigest: "sha256:new", CheckedAt: now})
		}
		if err := h.store.ReplacePendingUpdates(ctx, envID, list); err != nil {
			t.Fatal(err)
		}
	}
	pending := func(env string) []string {
		var out struct {
			PendingUpdates []struct{ ContainerName string }
		}
		h.must(http.StatusOK, "GET", "/api/containers/pending-updates?env="+env, nil, &out)
		var names []string
		for _, p := range out.PendingUpdates {
			names = append(names, p.ContainerName)
		}
		return names
	}
	var res struct {
		Success bool
		Deleted int
	}
	h.must(http.StatusOK, "DELETE", "/api/containers/pending-updates?env=1&containerName=b-"+h.label, nil, &res)
	if !res.Success || res.Deleted != 1 {
		t.Errorf("delete one = %+v, want success and 1 deleted", res)
	}
	if got := pending("1"); !slices.Equal(got, []string{"a-" + h.label, "c-" + h.label}) {
		t.Errorf("pending after deleting b = %v", got)
	}
	h.must(http.StatusOK, "DELETE", "/api/containers/pending-updates?env=1&containerName=b-"+h.label, nil, &res)
	if res.Deleted != 0 {
		t.Errorf("deleting b again deleted %d", res.Deleted)
	}
	h.must(http.StatusOK, "DELETE", "/api/containers/pending-updates?env=1", nil, &res)
	if res.Deleted != 2 || len(pending("1")) != 0 {
		t.Errorf("delete all = %+v, left %v", res, pending("1"))
	}
	if got := pending(strconv.FormatInt(other.ID, 10)); !slices.Equal(got, []string{"d-" + h.label}) {
		t.Errorf("the other environment's pending updates = %v, want untouched", got)
	}
}
