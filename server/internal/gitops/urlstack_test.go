package gitops

import (
	"io"
	"log/slog"
	"net/http/cgi"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/berth-dev/berth/server/internal/stacks"
	"github.com/berth-dev/berth/server/internal/store"
	"github.com/berth-dev/berth/server/internal/store/storetest"
	"github.com/berth-dev/berth/shared/enginetest"
	"github.com/berth-dev/berth/shared/fault"
)

// publicRepo serves a bare repository, whose default branch is trunk,
// holding files, over git-http-backend without authentication; it returns
// the clone URL.
func publicRepo(t *testing.T, files map[string]string) string {
	t.Helper()
	enginetest.RequireEnv(t, "git", "BERTH_TEST_GIT", "BERTH_TEST_GIT_HTTP_BACKEND")
	root := t.TempDir()
	work := filepath.Join(root, "work")
	run := func(dir string, args ...string) {
		t.Helper()
		cmd := exec.Command(os.Getenv("BERTH_TEST_GIT"), args...)
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), "GIT_CONFIG_GLOBAL=/dev/null", "GIT_CONFIG_NOSYSTEM=1")
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %s: %v\n%s", strings.Join(args, " "), err, out)
		}
	}
	run(root, "init", "-q", "--bare", "--initial-branch=trunk", "app.git")
	run(root, "init", "-q", "--initial-branch=trunk", "work")
	for name, content := range files {
		p := filepath.Join(work, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	run(work, "add", "-A")
	run(work, "-c", "user.email=dev@example.test", "-c", "user.name=Dev", "commit", "-q", "-m", "stack")
	run(work, "push", "-q", filepath.Join(root, "app.git"), "trunk")
	srv := httptest.NewServer(&cgi.Handler{Path: os.Getenv("BERTH_TEST_GIT_HTTP_BACKEND"),
		Env: []string{"GIT_PROJECT_ROOT=" + root, "GIT_HTTP_EXPORT_ALL=1"}})
	t.Cleanup(srv.Close)
	return srv.URL + "/app.git"
}

// A repository template's stack: its repository is read at its default
// branch and the stack file looked for before anything is recorded; the
// git stack records the stack file and the variables, and a second stack
// of the same repository shares its record. A repository that cannot be
// read, or lacks the stack file, is a 400 that records nothing.
func TestCreateStackFromURLRecordsAGitStackOfTheDefaultBranch(t *testing.T) {
	u := publicRepo(t, map[string]string{"stacks/app/docker-compose.yml": "services:\n  app:\n    image: busybox\n"})
	storetest.ForEachDialect(t, func(t *testing.T, st *store.Store) {
		ctx := t.Context()
		log := slog.New(slog.NewTextHandler(io.Discard, nil))
		env := store.Environment{Name: "local", ConnectionType: "socket", SocketPath: "/nonexistent.sock"}
		if err := st.CreateEnvironment(ctx, &env); err != nil {
			t.Fatal(err)
		}
		s := New(st, stacks.New(st, nil, nil, t.TempDir(), log), log)
		g, err := s.CreateStackFromURL(ctx, URLStackSpec{StackName: "from-template", Environment: env, URL: u,
			ComposePath: "stacks/app/docker-compose.yml", EnvVars: []stacks.Variable{{Key: "COLOR", Value: "red"}}})
		if err != nil {
			t.Fatal(err)
		}
		repo, err := st.GetGitRepository(ctx, g.RepositoryID)
		if err != nil {
			t.Fatal(err)
		}
		if repo.URL != u || repo.Branch != "trunk" || repo.CredentialID != nil || g.ComposePath != "stacks/app/docker-compose.yml" ||
			g.StackName != "from-template" || g.EnvironmentID != env.ID {
			t.Errorf("git stack %+v of repository %+v", g, repo)
		}
		vars, err := s.stacks.Variables(ctx, env, "from-template")
		if err != nil || len(vars) != 1 || vars[0].Key != "COLOR" || vars[0].Value != "red" {
			t.Errorf("variables = %+v, %v", vars, err)
		}
		again, err := s.CreateStackFromURL(ctx, URLStackSpec{StackName: "second", Environment: env, URL: u,
			ComposePath: "stacks/app/docker-compose.yml"})
		if err != nil || again.RepositoryID != repo.ID {
			t.Errorf("second stack of the repository = %+v, %v; want repository %d", again, err, repo.ID)
		}

		for _, c := range []struct {
			spec URLStackSpec
			want string
		}{
			{URLStackSpec{StackName: "x", URL: u, ComposePath: "missing.yml"},
				"Compose file 'missing.yml' not found in the repository " + u + " (branch trunk)"},
			{URLStackSpec{StackName: "x", URL: u}, "Compose file 'docker-compose.yml' not found in the repository " + u + " (branch trunk)"},
			{URLStackSpec{StackName: "x", URL: strings.TrimSuffix(u, "app.git") + "none.git", ComposePath: "a.yml"},
				"Cannot read the repository " + strings.TrimSuffix(u, "app.git") + "none.git: repository not found"},
			{URLStackSpec{StackName: "x", URL: "ftp://example.test/x", ComposePath: "a.yml"}, `Invalid repository URL "ftp://example.test/x": use https, ssh or git`},
			{URLStackSpec{StackName: "x", URL: u, ComposePath: "../a.yml"}, `Invalid compose path "../a.yml": a path inside the repository is required`},
			{URLStackSpec{StackName: "second", URL: u, ComposePath: "stacks/app/docker-compose.yml"}, "Stack 'second' already exists"},
		} {
			c.spec.Environment = env
			_, err := s.CreateStackFromURL(ctx, c.spec)
			if f, ok := fault.As(err); !ok || f.Message != c.want {
				t.Errorf("%+v: %v, want %q", c.spec, err, c.want)
			}
		}
		repos, _ := st.ListGitRepositories(ctx)
		all, _ := st.ListGitStacks(ctx, 0)
		if len(repos) != 1 || len(all) != 2 {
			t.Errorf("after the refusals: %d repositories and %d git stacks, want 1 and 2", len(repos), len(all))
		}
	})
}
