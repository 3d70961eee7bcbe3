package api

import (
	"context"
	"net/http"
	"strings"

	"github.com/gin-gonic/gin"

	"github.com/berth-dev/berth/server/internal/jobs"
	"github.com/berth-dev/berth/server/internal/stacks"
	"github.com/berth-dev/berth/server/internal/store"
	"github.com/berth-dev/berth/shared/engine"
	"github.com/berth-dev/berth/shared/fault"
)

// listStacks answers env's stacks; without env the answer is [] (spec).
func (s *Server) listStacks(c *gin.Context) error {
	if c.Query("env") == "" {
		return writeJSON(c, http.StatusOK, []any{})
	}
	list, err := s.stacks.List(c.Request.Context(), envOf(c))
	if err != nil {
		return err
	}
	return writeJSON(c, http.StatusOK, list)
}

// createStackRequest is the spec's deploy body.
type createStackRequest struct {
	Name          string            `json:"name"`
	Compose       string            `json:"compose"`
	Start         *bool             `json:"start"`
	EnvVars       []stacks.Variable `json:"envVars"`
	RawEnvContent *string           `json:"rawEnvContent"`
	ComposePath   string            `json:"composePath"`
	EnvPath       string            `json:"envPath"`
}

// createStack writes a stack's files and, unless start is false, brings it
// up; the answer is an event stream ending with {success, started, output?,
// error?}. Invalid input is refused before the stream starts.
func (s *Server) createStack(c *gin.Context) error {
	var req createStackRequest
	if err := bindJSON(c, &req); err != nil {
		return err
	}
	env := envOf(c)
	st, err := s.stacks.Create(c.Request.Context(), env, stacks.CreateSpec{Name: req.Name, Compose: req.Compose, EnvVars: req.EnvVars,
		RawEnvContent: req.RawEnvContent, ComposePath: req.ComposePath, EnvPath: req.EnvPath})
	if err != nil {
		return err
	}
	noteAudit(c, st.Name, st.Name)
	if req.Start != nil && !*req.Start {
		return s.streamJob(c, func(context.Context, jobs.Emit) (string, any, bool) {
			return "", map[string]any{"success": true, "started": false}, false
		})
	}
	return s.streamJob(c, s.upJob(env, st.Name, false, true))
}

// upJob brings a stack up, streaming compose's progress lines as
// {message} events; the final payload is {success, started?, output,
// error?}.
func (s *Server) upJob(env store.Environment, name string, force, reportStarted bool) jobs.Func {
	return s.upJobWith(env, name, engine.UpOptions{Force: force}, reportStarted)
}

// upJobWith is upJob with the up's options.
func (s *Server) upJobWith(env store.Environment, name string, o engine.UpOptions, reportStarted bool) jobs.Func {
	return func(ctx context.Context, emit jobs.Emit) (string, any, bool) {
		var out output
		err := s.stacks.UpWith(ctx, env, name, o, out.streamTo(emit))
		final := map[string]any{"success": err == nil, "output": out.String()}
		if reportStarted {
			final["started"] = err == nil
		}
		if err != nil {
			final["error"] = stacks.Message(err)
		}
		return "", final, err != nil
	}
}

// output collects the progress lines of a compose run as its output.
type output struct{ lines []string }

// streamTo returns the progress callback that collects each line and, when
// emit is set, sends it as a {message} event of the job.
func (o *output) streamTo(emit jobs.Emit) engine.ComposeProgress {
	return func(line string) {
		o.lines = append(o.lines, line)
		if emit != nil {
			emit("", map[string]string{"message": line})
		}
	}
}

func (o *output) String() string { return strings.Join(o.lines, "\n") }

func (s *Server) getStackCompose(c *gin.Context) error {
	f, err := s.stacks.Compose(c.Request.Context(), envOf(c), c.Param("name"))
	if err != nil {
		return err
	}
	return writeJSON(c, http.StatusOK, f)
}

// updateStackRequest is the spec's update body. moveFromDir, oldComposePath
// and oldEnvPath are accepted for clients that send them: Berth knows where
// a stack's files are, so the new paths alone move them.
type updateStackRequest struct {
	Content        *string `json:"content"`
	Restart        bool    `json:"restart"`
	ComposePath    string  `json:"composePath"`
	EnvPath        string  `json:"envPath"`
	MoveFromDir    string  `json:"moveFromDir"`
	OldComposePath string  `json:"oldComposePath"`
	OldEnvPath     string  `json:"oldEnvPath"`
}

// updateStackCompose saves a stack's compose file; with restart the answer
// is an event stream of the forced recreation ending with {success, output}.
func (s *Server) updateStackCompose(c *gin.Context) error {
	var req updateStackRequest
	if err := bindJSON(c, &req); err != nil {
		return err
	}
	content := ""
	if req.Content != nil {
		content = *req.Content
	}
	env, name := envOf(c), c.Param("name")
	err := s.stacks.UpdateCompose(c.Request.Context(), env, name, stacks.UpdateSpec{Content: content, ComposePath: req.ComposePath, EnvPath: req.EnvPath})
	if err != nil {
		return err
	}
	if !req.Restart {
		return writeJSON(c, http.StatusOK, success)
	}
	return s.streamJob(c, s.upJob(env, name, true, false))
}

// deleteStack deletes a stack: force deletes a running one; the
// reference's volumes says whether its named volumes go (absent: with
// force, as Berth always did) and files=false keeps its compose and env
// files on disk (only Berth's records go).
func (s *Server) deleteStack(c *gin.Context) error {
	force, err := queryBool(c, "force", false)
	if err != nil {
		return err
	}
	volumes, err := queryBool(c, "volumes", force)
	if err != nil {
		return err
	}
	files, err := queryBool(c, "files", true)
	if err != nil {
		return err
	}
	o := stacks.DeleteOptions{Force: force, Volumes: volumes, KeepFiles: !files}
	if err := s.stacks.DeleteWith(c.Request.Context(), envOf(c), c.Param("name"), o); err != nil {
		return err
	}
	return writeJSON(c, http.StatusOK, success)
}

// stackAction returns the handler of a lifecycle action; it answers
// {success, output}.
func (s *Server) stackAction(a stacks.Action) handler {
	return func(c *gin.Context) error {
		var out output
		if err := s.stacks.Run(c.Request.Context(), envOf(c), c.Param("name"), a, out.streamTo(nil)); err != nil {
			return err
		}
		return writeJSON(c, http.StatusOK, map[string]any{"success": true, "output": out.String()})
	}
}

// restartStack restarts a stack's containers, or with the reference's
// mode=recreate recreates them from the stack's files (compose up
// --force-recreate). The answer is {success, output}.
func (s *Server) restartStack(c *gin.Context) error {
	switch c.Query("mode") {
	case "", "restart":
		return s.stackAction(stacks.Restart)(c)
	case "recreate":
		var out output
		if err := s.stacks.Up(c.Request.Context(), envOf(c), c.Param("name"), true, out.streamTo(nil)); err != nil {
			return err
		}
		return writeJSON(c, http.StatusOK, map[string]any{"success": true, "output": out.String()})
	}
	return fault.New(fault.Invalid, `mode must be "restart" or "recreate"`)
}

// stackDownRequest is the body of POST /api/stacks/{name}/down (optional).
type stackDownRequest struct {
	RemoveVolumes bool `json:"removeVolumes"`
}

// stackDown takes a stack down (docker compose down); with removeVolumes
// its named volumes go too (down -v). The answer is {success, output}.
func (s *Server) stackDown(c *gin.Context) error {
	var req stackDownRequest
	if err := bindJSON(c, &req); err != nil {
		return err
	}
	a := stacks.Down
	if req.RemoveVolumes {
		a = stacks.DownVolumes
	}
	return s.stackAction(a)(c)
}

// stackDeployRequest is the body of POST /api/stacks/{name}/deploy
// (optional): the reference's {pull, build, forceRecreate}.
type stackDeployRequest struct {
	Pull          bool `json:"pull"`
	Build         bool `json:"build"`
	ForceRecreate bool `json:"forceRecreate"`
}

// deployStack brings a stack up again from its files (event stream, or the
// final payload as JSON): forceRecreate recreates every container even
// when nothing changed, pull pulls every service image first (compose's
// --pull always), build builds the services that have build: from the
// stack's directory (--build). A build that cannot be done is refused
// (400) before the stream starts.
func (s *Server) deployStack(c *gin.Context) error {
	var req stackDeployRequest
	if err := bindJSON(c, &req); err != nil {
		return err
	}
	env, name := envOf(c), c.Param("name")
	o := engine.UpOptions{Force: req.ForceRecreate, Pull: req.Pull, Build: req.Build}
	if err := s.stacks.CheckUp(c.Request.Context(), env, name, o); err != nil {
		return err
	}
	return s.streamJob(c, s.upJobWith(env, name, o, true))
}

func (s *Server) getStackEnv(c *gin.Context) error {
	vars, err := s.stacks.Variables(c.Request.Context(), envOf(c), c.Param("name"))
	if err != nil {
		return err
	}
	return writeJSON(c, http.StatusOK, map[string]any{"variables": vars})
}

// putStackEnv stores a stack's secret variables (the full set; COMPAT) and
// answers {success: true, count} with the number of secrets the stack has
// now. It never rewrites the env file (see stacks.Service.SetSecrets).
func (s *Server) putStackEnv(c *gin.Context) error {
	var req stackVariables
	if err := bindJSON(c, &req); err != nil {
		return err
	}
	count, err := s.stacks.SetSecrets(c.Request.Context(), envOf(c), c.Param("name"), req.Variables)
	if err != nil {
		return err
	}
	return writeJSON(c, http.StatusOK, map[string]any{"success": true, "count": count})
}

func (s *Server) getStackRawEnv(c *gin.Context) error {
	content, err := s.stacks.RawEnv(c.Request.Context(), envOf(c), c.Param("name"))
	if err != nil {
		return err
	}
	return writeJSON(c, http.StatusOK, map[string]string{"content": content})
}

func (s *Server) putStackRawEnv(c *gin.Context) error {
	var req contentBody
	if err := bindJSON(c, &req); err != nil {
		return err
	}
	if err := s.stacks.SetRawEnv(c.Request.Context(), envOf(c), c.Param("name"), req.Content); err != nil {
		return err
	}
	return writeJSON(c, http.StatusOK, success)
}

// scanStacksRequest is the optional body of POST /api/stacks/scan.
type scanStacksRequest struct {
	Path string `json:"path"` // the reference's: a directory to look for compose files in
}

// scanStacks lists the compose projects on the engine Berth does not know;
// with the reference's path, the compose projects whose files are under
// that directory (confined to the stack roots) instead.
func (s *Server) scanStacks(c *gin.Context) error {
	var req scanStacksRequest
	if err := bindJSON(c, &req); err != nil {
		return err
	}
	var (
		found []stacks.Discovered
		err   error
	)
	if strings.TrimSpace(req.Path) != "" {
		found, err = s.stacks.ScanPath(c.Request.Context(), envOf(c), strings.TrimSpace(req.Path))
	} else {
		found, err = s.stacks.Scan(c.Request.Context(), envOf(c))
	}
	if err != nil {
		return err
	}
	if found == nil {
		found = []stacks.Discovered{}
	}
	return writeJSON(c, http.StatusOK, scanStacksAnswer{Stacks: found, Discovered: found, Adopted: []string{}, Skipped: []string{},
		Errors: []scanError{}})
}

// adoptStack makes discovered compose projects stacks of Berth's. The
// reference's body {environmentId, stacks: [{name, composePath}]} adopts
// each (composePath, when missing, is the one the project's containers
// name; every path confined to the stack roots) and answers per stack:
// {adopted: [names], failed: [{name, error}]}. Berth's single form {name |
// stackName, composePath?, envPath?} answers {success, name, sourceType,
// composePath} or the error. The environment is environmentId, else ?env=,
// else 1; the user needs stacks:create in it.
func (s *Server) adoptStack(c *gin.Context) error {
	var req adoptInput
	if err := bindJSON(c, &req); err != nil {
		return err
	}
	env, err := s.bodyEnvironment(c, "stacks:create", "environmentId", req.EnvironmentID)
	if err != nil {
		return err
	}
	ctx := c.Request.Context()
	if req.Stacks == nil {
		if req.Name == "" {
			req.Name = req.StackName
		}
		st, err := s.stacks.Adopt(ctx, env, stacks.AdoptSpec{Name: req.Name, ComposePath: req.ComposePath, EnvPath: req.EnvPath})
		if err != nil {
			return err
		}
		noteAudit(c, st.Name, st.Name)
		return writeJSON(c, http.StatusOK, adoptAnswer{Success: true, Name: st.Name, SourceType: st.SourceType, ComposePath: st.ComposePath})
	}
	if len(req.Stacks) == 0 {
		return fault.Invalidf("No stacks provided")
	}
	for _, it := range req.Stacks {
		if strings.TrimSpace(it.Name) == "" {
			return fault.Invalidf("Each stack needs a name")
		}
	}
	out := adoptListAnswer{Adopted: []string{}, Failed: []adoptFailure{}}
	for _, it := range req.Stacks {
		st, err := s.stacks.Adopt(ctx, env, stacks.AdoptSpec{Name: it.Name, ComposePath: it.ComposePath, EnvPath: it.EnvPath})
		if err != nil {
			status, body := errorResponse(err)
			if status >= 500 {
				s.log.Error("adopt stack", "env", env.ID, "stack", it.Name, "err", err)
			}
			out.Failed = append(out.Failed, adoptFailure{Name: it.Name, Error: body.Error})
			continue
		}
		out.Adopted = append(out.Adopted, st.Name)
	}
	if len(out.Adopted) > 0 {
		noteAudit(c, strings.Join(out.Adopted, ","), strings.Join(out.Adopted, ", "))
	}
	return writeJSON(c, http.StatusOK, out)
}
