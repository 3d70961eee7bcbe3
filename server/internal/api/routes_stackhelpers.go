package api

import "github.com/berth-dev/berth/server/internal/gitops"

// stackHelpersRoutes are the routes of the stack editor's and git helpers (issue 15).
// Building them sets up the repositories' mirrors the git helpers fetch
// into (once per handler).
//
// Permissions: reads of stacks need stacks:view; the path helpers that list
// or probe the host's directories need stacks:create; a relocation is an
// edit. Testing or previewing a repository by URL needs git:create, because
// it may send a stored credential to that URL (as creating a repository
// with it would). Testing a saved repository or git stack, or reading one
// of its env files, fetches from the repository with its stored credential:
// git:edit, as syncing does (a Viewer starts no work).
func (s *Server) stackHelpersRoutes() []route {
	m := gitops.NewMirrors(s.git, s.stacks.RepositoryDir)
	return []route{
		{"GET", "/api/stacks/sources", "stacks:view", EnvQuery, "", false, s.stackSources},
		{"GET", "/api/stacks/base-path", "stacks:view", EnvQuery, "", false, s.stackBasePath},
		{"GET", "/api/stacks/default-path", "stacks:view", EnvQuery, "", false, s.stackDefaultPath},
		{"GET", "/api/stacks/path-hints", "stacks:create", EnvQuery, "", false, s.stackPathHints},
		{"POST", "/api/stacks/validate-path", "stacks:create", EnvQuery, Quiet, false, s.validateStackPath},
		{"POST", "/api/stacks/{name}/check-path-change", "stacks:edit", EnvQuery, Quiet, false, s.checkStackPathChange},
		{"POST", "/api/stacks/{name}/relocate", "stacks:edit", EnvQuery, "stack.relocate", false, s.relocateStack},
		{"POST", "/api/stacks/{name}/env/validate", "stacks:edit", EnvQuery, Quiet, false, s.validateStackEnv},
		{"GET", "/api/stacks/{name}/delete-preview", "stacks:view", EnvQuery, "", false, s.stackDeletePreview},

		{"POST", "/api/git/repositories/test", "git:create", NoEnv, Quiet, false, s.testNewGitRepository},
		{"POST", "/api/git/repositories/{id}/test", "git:edit", NoEnv, Quiet, false, s.testGitRepository},
		{"GET", "/api/git/repositories/{id}/sync", "git:view", NoEnv, "", false, s.gitRepositorySync(m)},
		{"POST", "/api/git/repositories/{id}/sync", "git:edit", NoEnv, "git_repository.sync", false, s.gitRepositorySync(m)},
		// The handler also checks stacks:start in each stack's environment.
		{"POST", "/api/git/repositories/{id}/deploy", "git:edit", NoEnv, "git_repository.deploy", false, s.deployGitRepository},
		{"POST", "/api/git/stacks/{id}/test", "git:edit", NoEnv, Quiet, false, s.testGitStack(m)},
		{"GET", "/api/git/stacks/{id}/env-files", "git:view", NoEnv, "", false, s.gitStackEnvFiles(m)},
		{"POST", "/api/git/stacks/{id}/env-files", "git:edit", NoEnv, Quiet, false, s.gitStackEnvFiles(m)},
		{"POST", "/api/git/stacks/{id}/deploy-stream", "git:edit", NoEnv, "git_stack.deploy", false, s.deployGitStackStream},
		{"POST", "/api/git/preview-env", "git:create", NoEnv, Quiet, false, s.previewGitEnv(m)},
	}
}
