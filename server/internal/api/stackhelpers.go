package api

import (
	"net/http"
	"path/filepath"
	"strings"

	"github.com/gin-gonic/gin"

	"github.com/berth-dev/berth/server/internal/stacks"
)

// The stack editor's helpers (issue 15). COMPAT names these endpoints but
// not their shapes; the shapes are the stacks package's types, documented
// on each handler.

// stackSources answers GET /api/stacks/sources?env: the environment's
// stacks grouped by source, {environmentId, total, adopted,
// internal|git|external: {count, stacks: [{name, status, adopted}]}}.
func (s *Server) stackSources(c *gin.Context) error {
	out, err := s.stacks.SourcesOf(c.Request.Context(), envOf(c))
	if err != nil {
		return err
	}
	return writeJSON(c, http.StatusOK, out)
}

// stackBasePath answers GET /api/stacks/base-path?env: {basePath,
// environmentId}, the absolute directory new stacks of the environment go
// to (DATA_DIR/stacks/<env>).
func (s *Server) stackBasePath(c *gin.Context) error {
	env := envOf(c)
	return writeJSON(c, http.StatusOK, map[string]any{"basePath": s.stacks.BasePath(env), "environmentId": env.ID})
}

// stackDefaultPath answers GET /api/stacks/default-path?env&name[&location]:
// {name, directory, composePath, envPath, exists, taken}; an invalid name
// is the 400 of stack creation; location (the reference's custom base
// directory) follows the host path rules (400 malformed, 403 outside the
// stack roots).
func (s *Server) stackDefaultPath(c *gin.Context) error {
	out, err := s.stacks.DefaultPathOf(c.Request.Context(), envOf(c), c.Query("name"), c.Query("location"))
	if err != nil {
		return err
	}
	return writeJSON(c, http.StatusOK, out)
}

// stackPathHints answers GET /api/stacks/path-hints?env[&prefix][&name]:
// {basePath, directories, composeFiles, truncated} (bounded depth and
// count; see stacks.Service.Hints); with the reference's name, also
// {stackName, workingDir, configFiles} from that project's containers.
func (s *Server) stackPathHints(c *gin.Context) error {
	out, err := s.stacks.Hints(c.Request.Context(), envOf(c), c.Query("prefix"), c.Query("name"))
	if err != nil {
		return err
	}
	return writeJSON(c, http.StatusOK, out)
}

// validateStackPath answers POST /api/stacks/validate-path {path} with
// {valid, message?, directory, exists, writable, hasComposeFile,
// composeFile?}: stack creation's rules (absolute, no "..", writable). A
// path that breaks them is valid false with the reason, status 200; a
// missing path is a 400, and one outside the allowed stack roots the 403
// of that rule (nothing about the place is told).
func (s *Server) validateStackPath(c *gin.Context) error {
	var req pathInput
	if err := bindJSON(c, &req); err != nil {
		return err
	}
	out, err := s.stacks.CheckLocation(c.Request.Context(), envOf(c), req.Path)
	if err != nil {
		return err
	}
	return writeJSON(c, http.StatusOK, out)
}

// pathChangeInput is the body of check-path-change and relocate: the
// reference's {oldDir?, newComposePath, newEnvPath?}; path (Berth's first
// name, which the console sends) is the new directory or compose file.
type pathChangeInput struct {
	Path           string `json:"path"`
	OldDir         string `json:"oldDir"`
	NewComposePath string `json:"newComposePath"`
	NewEnvPath     string `json:"newEnvPath"`
}

// target is where the body moves the stack's files; newComposePath wins
// over path.
func (r pathChangeInput) target() stacks.Target {
	p := r.NewComposePath
	if strings.TrimSpace(p) == "" {
		p = r.Path
	}
	return stacks.Target{Path: p, EnvPath: r.NewEnvPath, OldDir: r.OldDir}
}

// checkStackPathChange answers POST /api/stacks/{name}/check-path-change
// {newComposePath | path, newEnvPath?} with what relocating the stack there
// would do, changing nothing: the reference's {hasChanges, oldDir, newDir,
// fileCount, currentComposePath} and Berth's {name, from, to, files:
// [{from, to, conflict}], conflicts, left, warnings, canRelocate}. Git and
// adopted stacks are a 400.
func (s *Server) checkStackPathChange(c *gin.Context) error {
	var req pathChangeInput
	if err := bindJSON(c, &req); err != nil {
		return err
	}
	out, err := s.stacks.CheckPathChange(c.Request.Context(), envOf(c), c.Param("name"), req.target())
	if err != nil {
		return err
	}
	return writeJSON(c, http.StatusOK, out)
}

// relocateAnswer is the answer of a relocation: the reference's {success,
// movedFiles (names), composeContent, rawEnvContent, envVars} with the
// change as check-path-change describes it.
type relocateAnswer struct {
	Success        bool              `json:"success"`
	MovedFiles     []string          `json:"movedFiles"`
	ComposeContent string            `json:"composeContent"`
	RawEnvContent  string            `json:"rawEnvContent"`
	EnvVars        []stacks.Variable `json:"envVars"`
	Name           string            `json:"name"`
	From           string            `json:"from"`
	To             string            `json:"to"`
	Files          []stacks.FileMove `json:"files"`
	Left           []string          `json:"left"`
	Warnings       []string          `json:"warnings"`
}

// relocateStack answers POST /api/stacks/{name}/relocate {oldDir?,
// newComposePath | path, newEnvPath?}: the stack's compose and env files
// move (see stacks.Service.Relocate; every path confined to the stack
// roots). A target file already there is a 409 and nothing moves; an
// oldDir that is not the stack's directory is a 400.
func (s *Server) relocateStack(c *gin.Context) error {
	var req pathChangeInput
	if err := bindJSON(c, &req); err != nil {
		return err
	}
	ctx, env, name := c.Request.Context(), envOf(c), c.Param("name")
	ch, err := s.stacks.Relocate(ctx, env, name, req.target())
	if err != nil {
		return err
	}
	noteAudit(c, name, name)
	out := relocateAnswer{Success: true, MovedFiles: []string{}, EnvVars: []stacks.Variable{}, Name: ch.Name, From: ch.From,
		To: ch.To, Files: ch.Files, Left: ch.Left, Warnings: ch.Warnings}
	for _, m := range ch.Files {
		out.MovedFiles = append(out.MovedFiles, filepath.Base(m.From))
	}
	// The files as the editor shows them after the move; the move itself
	// succeeded, so a file that cannot be read now leaves its part empty.
	if f, err := s.stacks.Compose(ctx, env, name); err == nil {
		out.ComposeContent = f.Content
	}
	if raw, err := s.stacks.RawEnv(ctx, env, name); err == nil {
		out.RawEnvContent = raw
	}
	if vars, err := s.stacks.Variables(ctx, env, name); err == nil && vars != nil {
		out.EnvVars = vars
	}
	return writeJSON(c, http.StatusOK, out)
}

// validateStackEnv answers POST /api/stacks/{name}/env/validate with an
// env report; the body is {content?: env file text, variables?: [{key,
// value, isSecret}]} (neither: the stack's env file on disk), and the
// reference's compose?: compose text to check against instead of the
// stack's compose file. The answer
// is {valid, errors: [{line, message}], warnings, duplicates: [{key,
// lines}], missing, unused, defined, referenced: [{name, defaultValue?,
// required}]}; values are never echoed.
func (s *Server) validateStackEnv(c *gin.Context) error {
	var req envValidateInput
	if err := bindJSON(c, &req); err != nil {
		return err
	}
	out, err := s.stacks.ValidateEnv(c.Request.Context(), envOf(c), c.Param("name"),
		stacks.EnvInput{Content: req.Content, Variables: req.Variables, Compose: req.Compose})
	if err != nil {
		return err
	}
	return writeJSON(c, http.StatusOK, out)
}

// stackDeletePreview answers GET /api/stacks/{name}/delete-preview?env&force
// with what DELETE /api/stacks/{name} with the same force would remove:
// {name, sourceType, running, requiresForce, removeVolumes, containers:
// [{id, name, service, state}], networks, volumes, keptVolumes, files,
// directories, clone?, records, message}.
func (s *Server) stackDeletePreview(c *gin.Context) error {
	force, err := queryBool(c, "force", false)
	if err != nil {
		return err
	}
	out, err := s.stacks.DeletePreview(c.Request.Context(), envOf(c), c.Param("name"), force)
	if err != nil {
		return err
	}
	return writeJSON(c, http.StatusOK, out)
}
