package gitops

import (
	"fmt"
	"io"
	"log/slog"
	"path/filepath"
	"strings"
	"testing"

	"github.com/berth-dev/berth/server/internal/stacks"
	"github.com/berth-dev/berth/server/internal/store"
	"github.com/berth-dev/berth/server/internal/store/storetest"
)

// The outcome of a repository's last fetch is the repository's, not one
// server's: two servers on one database (or one server after a restart)
// tell the same status, a failed fetch keeps the last successful sync's
// time, and a repository never fetched is "never".
func TestMirrorSyncStatusIsTheSameOnEveryServer(t *testing.T) {
	u := publicRepo(t, map[string]string{"compose.yaml": "services:\n  app:\n    image: busybox\n"})
	storetest.ForEachDialect(t, func(t *testing.T, st *store.Store) {
		ctx := t.Context()
		log := slog.New(slog.NewTextHandler(io.Discard, nil))
		server := func() *Mirrors {
			dir := t.TempDir()
			s := New(st, stacks.New(st, nil, nil, t.TempDir(), log), log)
			return NewMirrors(s, func(id int64) string { return filepath.Join(dir, fmt.Sprint(id)) })
		}
		one, two := server(), server()
		r := store.GitRepository{Name: "app", URL: u, Branch: "trunk"}
		if err := st.SaveGitRepository(ctx, &r); err != nil {
			t.Fatal(err)
		}
		if got, err := two.Status(ctx, r.ID); err != nil || got.Status != "never" || got.SyncedAt != nil || got.LastSync != nil {
			t.Fatalf("status before any fetch = %+v, %v", got, err)
		}

		synced, err := one.Sync(ctx, r.ID)
		if err != nil || synced.Status != store.GitFetchSuccess || len(synced.Commit) != 40 || synced.SyncedAt == nil {
			t.Fatalf("sync = %+v, %v", synced, err)
		}
		got, err := two.Status(ctx, r.ID)
		if err != nil || got.Status != store.GitFetchSuccess || got.Commit != synced.Commit || got.Branch != "trunk" ||
			got.SyncedAt == nil || !got.SyncedAt.Equal(*synced.SyncedAt) || got.LastSync == nil || !got.LastSync.Equal(*synced.SyncedAt) {
			t.Errorf("the other server's status after the sync = %+v, %v; want %+v", got, err, synced)
		}

		r.URL = strings.TrimSuffix(u, "app.git") + "none.git"
		if err := st.SaveGitRepository(ctx, &r); err != nil {
			t.Fatal(err)
		}
		failed, err := two.Sync(ctx, r.ID)
		if err != nil || failed.Status != store.GitFetchFailed || failed.Error == "" || failed.Commit != "" {
			t.Fatalf("sync of a missing repository = %+v, %v", failed, err)
		}
		got, err = one.Status(ctx, r.ID)
		if err != nil || got.Status != store.GitFetchFailed || got.Error != failed.Error ||
			got.SyncedAt == nil || !got.SyncedAt.Equal(*failed.SyncedAt) {
			t.Errorf("the first server's status after the failed sync = %+v, %v; want %+v", got, err, failed)
		}
		if got.LastSync == nil || !got.LastSync.Equal(*synced.SyncedAt) {
			t.Errorf("last sync after a failed fetch = %v, want the successful one's %v", got.LastSync, synced.SyncedAt)
		}
	})
}
