package store_test

import (
	"errors"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/berth-dev/berth/server/internal/store"
	"github.com/berth-dev/berth/server/internal/store/storetest"
)

func TestStackWithSecretsRoundTripsAndNamesAreUniquePerEnvironment(t *testing.T) {
	storetest.ForEachDialect(t, func(t *testing.T, s *store.Store) {
		ctx := t.Context()
		env := createEnvironment(t, s, "env")
		secrets := []store.StackSecret{{Key: "DB_PASSWORD", Value: "s3cret"}, {Key: "API_KEY", Value: "k"}}
		st := store.Stack{EnvironmentID: env.ID, Name: "web", SourceType: store.SourceInternal}
		if err := s.CreateStack(ctx, &st, secrets); err != nil {
			t.Fatal(err)
		}
		got, err := s.GetStack(ctx, env.ID, "web")
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(st, got); diff != "" {
			t.Errorf("GetStack (-want +got):\n%s", diff)
		}
		gotSecrets, err := s.StackSecrets(ctx, st.ID)
		if err != nil || !cmp.Equal(secrets, gotSecrets) {
			t.Errorf("StackSecrets = %v, %v; want %v in order", gotSecrets, err, secrets)
		}
		dup := store.Stack{EnvironmentID: env.ID, Name: "web", SourceType: store.SourceInternal}
		if err := s.CreateStack(ctx, &dup, nil); !errors.Is(err, store.ErrConflict) {
			t.Errorf("duplicate name: err = %v, want ErrConflict", err)
		}
		other := createEnvironment(t, s, "other")
		same := store.Stack{EnvironmentID: other.ID, Name: "web", SourceType: store.SourceInternal}
		if err := s.CreateStack(ctx, &same, nil); err != nil {
			t.Errorf("same name in another environment: %v", err)
		}
		if err := s.ReplaceStackSecrets(ctx, st.ID, secrets[1:]); err != nil {
			t.Fatal(err)
		}
		if gotSecrets, _ := s.StackSecrets(ctx, st.ID); !cmp.Equal(secrets[1:], gotSecrets) {
			t.Errorf("after replace: %v", gotSecrets)
		}
		if err := s.DeleteStack(ctx, st.ID); err != nil {
			t.Fatal(err)
		}
		if _, err := s.GetStack(ctx, env.ID, "web"); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("after delete: err = %v, want ErrNotFound", err)
		}
		if gotSecrets, _ := s.StackSecrets(ctx, st.ID); len(gotSecrets) != 0 {
			t.Errorf("secrets survived the stack: %v", gotSecrets)
		}
	})
}

func TestGitRecordsReferencesAndSyncState(t *testing.T) {
	storetest.ForEachDialect(t, func(t *testing.T, s *store.Store) {
		ctx := t.Context()
		env := createEnvironment(t, s, "env")
		cred := store.GitCredential{Name: "deploy", AuthType: "password", Username: "u", Password: "tok"}
		if err := s.SaveGitCredential(ctx, &cred); err != nil {
			t.Fatal(err)
		}
		repo := store.GitRepository{Name: "app", URL: "https://example.test/app.git", Branch: "main", CredentialID: &cred.ID,
			WebhookEnabled: true, WebhookSecret: "hook"}
		if err := s.SaveGitRepository(ctx, &repo); err != nil {
			t.Fatal(err)
		}
		fetched := time.Date(2026, 11, 22, 9, 0, 0, 0, time.UTC)
		for _, f := range []store.GitFetch{
			{At: fetched, Branch: "main", Status: store.GitFetchSuccess, Commit: "abc123"},
			{At: fetched.Add(time.Minute), Branch: "main", Status: store.GitFetchFailed, Error: "unreachable"},
		} {
			if err := s.RecordGitFetch(ctx, repo.ID, f); err != nil {
				t.Fatal(err)
			}
		}
		if err := s.RecordGitFetch(ctx, 999, store.GitFetch{At: fetched}); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("fetch of an unknown repository: err = %v, want ErrNotFound", err)
		}
		repo.WebhookSecret = "hook2" // an edit keeps the fetch
		if err := s.SaveGitRepository(ctx, &repo); err != nil {
			t.Fatal(err)
		}
		gotRepo, err := s.GetGitRepository(ctx, repo.ID)
		if err != nil {
			t.Fatal(err)
		}
		wantFetch := &store.GitFetch{At: fetched.Add(time.Minute), Branch: "main", Status: store.GitFetchFailed, Error: "unreachable"}
		if diff := cmp.Diff(wantFetch, gotRepo.LastFetch); diff != "" || gotRepo.LastSyncAt == nil || !gotRepo.LastSyncAt.Equal(fetched) {
			t.Errorf("last fetch (-want +got):\n%s; last sync %v, want the successful fetch's %v", diff, gotRepo.LastSyncAt, fetched)
		}
		missing := int64(999)
		bad := store.GitRepository{Name: "bad", URL: "x", Branch: "main", CredentialID: &missing}
		if err := s.SaveGitRepository(ctx, &bad); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("unknown credential: err = %v, want ErrNotFound", err)
		}
		st := store.Stack{EnvironmentID: env.ID, Name: "app", SourceType: store.SourceGit}
		g := store.GitStack{RepositoryID: repo.ID, ComposePath: "compose.yaml", AutoUpdate: true, AutoUpdateCron: "*/5 * * * *",
			WebhookEnabled: true, WebhookSecret: "stack-hook"}
		if err := s.CreateGitStack(ctx, &st, &g, nil); err != nil {
			t.Fatal(err)
		}
		g.ComposePath = "deploy/compose.yaml"
		if err := s.UpdateGitStack(ctx, &g); err != nil {
			t.Fatal(err)
		}
		if rec, err := s.GetStackByID(ctx, st.ID); err != nil || rec.ComposePath != "deploy/compose.yaml" {
			t.Errorf("stack after UpdateGitStack = %+v, %v; want its compose path moved with the git record", rec, err)
		}
		at := time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC)
		if err := s.RecordGitSync(ctx, g.ID, "abc123", "success", "", at); err != nil {
			t.Fatal(err)
		}
		if err := s.RecordGitSync(ctx, g.ID, "", "failed", "boom", at); err != nil {
			t.Fatal(err)
		}
		got, err := s.GetGitStack(ctx, g.ID)
		if err != nil {
			t.Fatal(err)
		}
		want := g
		want.LastCommit, want.LastSyncAt, want.LastSyncStatus, want.LastSyncError = "abc123", &at, "failed", "boom"
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("GetGitStack (-want +got):\n%s", diff)
		}
		if err := s.DeleteGitRepository(ctx, repo.ID); !errors.Is(err, store.ErrInUse) {
			t.Errorf("delete repository in use: err = %v, want ErrInUse", err)
		}
		if err := s.DeleteGitCredential(ctx, cred.ID); !errors.Is(err, store.ErrInUse) {
			t.Errorf("delete credential in use: err = %v, want ErrInUse", err)
		}
		if err := s.DeleteStack(ctx, st.ID); err != nil {
			t.Fatal(err)
		}
		if _, err := s.GetGitStack(ctx, g.ID); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("git stack survived its stack: %v", err)
		}
		if err := s.DeleteGitRepository(ctx, repo.ID); err != nil {
			t.Errorf("delete unused repository: %v", err)
		}
		gotCred, err := s.GetGitCredential(ctx, cred.ID)
		if err != nil || gotCred.Password != "tok" {
			t.Errorf("credential = %+v, %v", gotCred, err)
		}
	})
}
