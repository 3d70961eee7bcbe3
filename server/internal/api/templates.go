package api

import (
	"context"
	"encoding/json"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/berth-dev/berth/server/internal/auth"
	"github.com/berth-dev/berth/server/internal/gitops"
	"github.com/berth-dev/berth/server/internal/jobs"
	"github.com/berth-dev/berth/server/internal/stacks"
	"github.com/berth-dev/berth/server/internal/store"
	"github.com/berth-dev/berth/server/internal/templates"
	"github.com/berth-dev/berth/shared/fault"
)

// templatesState holds the template catalogue and the config sets.
type templatesState struct {
	once    sync.Once
	catalog *templates.Service
	sets    *templates.ConfigSets
}

// setup fills the state once.
func (st *templatesState) setup(s *Server) {
	st.once.Do(func() {
		st.catalog = templates.New(templates.Options{Store: s.store, Log: s.log, Outbound: s.outbound})
		st.sets = templates.NewConfigSets(s.store)
	})
}

// templateFilter reads ?category=, ?q=, ?type= (1, 2 or 3) and ?refresh=.
func templateFilter(c *gin.Context) (templates.Filter, error) {
	f := templates.Filter{Category: c.Query("category"), Query: c.Query("q")}
	if t := c.Query("type"); t != "" {
		n, err := strconv.Atoi(t)
		if err != nil || n < templates.TypeContainer || n > templates.TypeCompose {
			return f, fault.Invalidf("Query parameter type must be 1 (container), 2 (swarm stack) or 3 (compose stack)")
		}
		f.Type = n
	}
	refresh, err := queryBool(c, "refresh", false)
	f.Refresh = refresh
	return f, err
}

// isAdmin reports whether the request's user may see templates marked
// administrator_only (everyone may when authentication is off).
func isAdmin(c *gin.Context) bool {
	ident := identityOf(c)
	return ident == nil || ident.Access.Check("settings:edit", nil) == auth.Allowed
}

// listTemplates answers the merged catalogue of the enabled sources and the
// built-in templates.
func (s *Server) listTemplates(c *gin.Context) error {
	f, err := templateFilter(c)
	if err != nil {
		return err
	}
	list, err := s.tpl.catalog.Catalogue(c.Request.Context(), f)
	if err != nil {
		return err
	}
	if !isAdmin(c) {
		kept := list[:0]
		for _, t := range list {
			if !t.AdministratorOnly {
				kept = append(kept, t)
			}
		}
		list = kept
	}
	return writeJSON(c, http.StatusOK, list)
}

// templateLogo answers a template's logo from Berth's own origin (issue
// 22): a built-in template's from the binary, a source template's from the
// copy fetched when its source was read; 404 when Berth has none (the
// console shows its placeholder). Served like an uploaded picture: its own
// type, nosniff, and an SVG sandboxed.
func (s *Server) templateLogo(c *gin.Context) error {
	data, ct, err := s.tpl.catalog.Logo(c.Request.Context(), c.Param("id"), isAdmin(c))
	if err != nil {
		return err
	}
	return writePicture(c, store.Picture{ContentType: ct, Data: data})
}

// templateComposeRequest is the body of POST /api/templates/compose: the
// reference's {template} (an object as GET /api/templates answers it, or
// the reference's {id, type, title, image, repository}); templateId names
// a catalogue template instead. stackName is read to refuse it: deploying
// a template is POST /api/templates/deploy.
type templateComposeRequest struct {
	Template   json.RawMessage   `json:"template"`
	TemplateID string            `json:"templateId"`
	Env        map[string]string `json:"env"`
	StackName  string            `json:"stackName"`
}

// templateComposeAnswer is the answer of POST /api/templates/compose.
type templateComposeAnswer struct {
	Compose string `json:"compose"`
}

// templateCompose answers POST /api/templates/compose with {compose}: the
// compose file of a template, generated for a container template, the
// template's own for a compose template, fetched from the repository's
// default branch for a repository stack template. A template whose id is
// in the catalogue is the catalogue's (its repository is the source's, not
// the client's); any other is the client's object, whose repository must
// be reached over http(s), ssh or git. Variables are left as ${NAME}
// references (env, when given, checks select values). Nothing is
// deployed or saved.
func (s *Server) templateCompose(c *gin.Context) error {
	var req templateComposeRequest
	if err := bindJSON(c, &req); err != nil {
		return err
	}
	if strings.TrimSpace(req.StackName) != "" {
		return fault.Invalidf("POST /api/templates/compose only answers a template's compose file; deploy a template with POST /api/templates/deploy")
	}
	ctx := c.Request.Context()
	given := len(req.Template) > 0 && string(req.Template) != "null"
	id := strings.TrimSpace(req.TemplateID)
	if given {
		var named struct {
			ID string `json:"id"`
		}
		_ = json.Unmarshal(req.Template, &named)
		id = strings.TrimSpace(named.ID)
	} else if id == "" {
		return fault.Invalidf("Template is required")
	}
	var t templates.Template
	found := false
	if id != "" {
		var err error
		t, err = s.tpl.catalog.Template(ctx, id)
		if f, ok := fault.As(err); err != nil && (!given || !ok || f.Kind != fault.NotFound) {
			return err
		}
		found = err == nil
	}
	if !found {
		var err error
		if t, err = templates.Decode(req.Template); err != nil {
			return err
		}
	}
	if t.AdministratorOnly && !isAdmin(c) {
		return errPermission
	}
	if t.Type != templates.TypeContainer && t.Repository != nil && strings.TrimSpace(t.Compose) == "" {
		compose, err := s.git.ReadComposeAtHead(ctx, t.Repository.URL, t.Repository.StackFile)
		if err != nil {
			return err
		}
		return writeJSON(c, http.StatusOK, templateComposeAnswer{Compose: compose})
	}
	r, err := templates.Render(t, req.Env, nil)
	if err != nil {
		return err
	}
	return writeJSON(c, http.StatusOK, templateComposeAnswer{Compose: r.Compose})
}

// deployTemplateRequest is the body of POST /api/templates/deploy (Berth's
// deploy-from-template; until issue 21 it was POST /api/templates/compose).
type deployTemplateRequest struct {
	TemplateID    string            `json:"templateId"`
	StackName     string            `json:"stackName"`
	Env           map[string]string `json:"env"`
	SecretKeys    []string          `json:"secretKeys"` // variables to keep as secrets besides those named like one
	EnvironmentID int64             `json:"environmentId"`
	Start         *bool             `json:"start"`
}

// deployTemplate renders a template into a compose file and creates and
// deploys it as a stack, exactly as POST /api/stacks does: the answer is
// the deploy's event stream (or, with Accept: application/json, its final
// payload) {success, started, output?, error?, name, environmentId}. The
// environment is environmentId, else ?env=, else 1; the user needs
// stacks:create in it.
func (s *Server) deployTemplate(c *gin.Context) error {
	var req deployTemplateRequest
	if err := bindJSON(c, &req); err != nil {
		return err
	}
	if strings.TrimSpace(req.TemplateID) == "" {
		return fault.Invalidf("Template ID is required")
	}
	if strings.TrimSpace(req.StackName) == "" {
		return fault.Invalidf("Stack name is required")
	}
	if err := stacks.CheckName(req.StackName); err != nil {
		return err
	}
	env, err := s.bodyEnvironment(c, "stacks:create", "environmentId", req.EnvironmentID)
	if err != nil {
		return err
	}
	ctx := c.Request.Context()
	t, err := s.tpl.catalog.Template(ctx, req.TemplateID)
	if err != nil {
		return err
	}
	if t.AdministratorOnly && !isAdmin(c) {
		return errPermission
	}
	if t.FromRepository() {
		return s.deployRepositoryTemplate(c, env, t, req)
	}
	r, err := templates.Render(t, req.Env, req.SecretKeys)
	if err != nil {
		return err
	}
	st, err := s.stacks.Create(ctx, env, stacks.CreateSpec{Name: req.StackName, Compose: r.Compose, EnvVars: r.EnvVars})
	if err != nil {
		return err
	}
	noteAudit(c, st.Name, st.Name+" from template "+t.Title)
	named := func(final any) any {
		if m, ok := final.(map[string]any); ok {
			m["name"], m["environmentId"], m["templateId"] = st.Name, env.ID, t.ID
		}
		return final
	}
	if req.Start != nil && !*req.Start {
		return s.streamJob(c, func(context.Context, jobs.Emit) (string, any, bool) {
			return "", named(map[string]any{"success": true, "started": false}), false
		})
	}
	up := s.upJob(env, st.Name, false, true)
	return s.streamJob(c, func(ctx context.Context, emit jobs.Emit) (string, any, bool) {
		name, final, failed := up(ctx, emit)
		return name, named(final), failed
	})
}

// deployRepositoryTemplate deploys a stack template whose compose file is in
// a git repository (Portainer's repository {url, stackfile}): a git stack of
// that repository's default branch is recorded (its repository record made
// or reused) and deployed like any git stack, streamed the same way.
func (s *Server) deployRepositoryTemplate(c *gin.Context, env store.Environment, t templates.Template, req deployTemplateRequest) error {
	rs, err := templates.RenderRepository(t, req.Env, req.SecretKeys)
	if err != nil {
		return err
	}
	g, err := s.git.CreateStackFromURL(c.Request.Context(), gitops.URLStackSpec{StackName: req.StackName, Environment: env,
		URL: rs.URL, ComposePath: rs.StackFile, EnvVars: rs.EnvVars})
	if err != nil {
		return err
	}
	noteAudit(c, req.StackName, req.StackName+" from template "+t.Title+" ("+rs.URL+")")
	named := func(final any) any {
		if m, ok := final.(map[string]any); ok {
			m["name"], m["environmentId"], m["templateId"], m["gitStackId"] = req.StackName, env.ID, t.ID, g.ID
			if _, ok := m["started"]; !ok {
				m["started"] = m["success"]
			}
		}
		return final
	}
	if req.Start != nil && !*req.Start {
		return s.streamJob(c, func(context.Context, jobs.Emit) (string, any, bool) {
			return "", named(map[string]any{"success": true, "started": false}), false
		})
	}
	deploy := s.gitDeployJob(env, g.ID, false)
	return s.streamJob(c, func(ctx context.Context, emit jobs.Emit) (string, any, bool) {
		name, final, failed := deploy(ctx, emit)
		return name, named(final), failed
	})
}

// templateSourceJSON is a template source as clients see it.
type templateSourceJSON struct {
	ID            int64      `json:"id"`
	Name          string     `json:"name"`
	URL           string     `json:"url"`
	Enabled       bool       `json:"enabled"`
	LastError     *string    `json:"lastError"`
	LastFetchedAt *time.Time `json:"lastFetchedAt"`
	TemplateCount int        `json:"templateCount"`
	CreatedAt     time.Time  `json:"createdAt"`
	UpdatedAt     time.Time  `json:"updatedAt"`
}

func toTemplateSourceJSON(src store.TemplateSource) templateSourceJSON {
	out := templateSourceJSON{ID: src.ID, Name: src.Name, URL: src.URL, Enabled: src.Enabled, LastFetchedAt: src.LastFetchedAt,
		TemplateCount: src.TemplateCount, CreatedAt: src.CreatedAt, UpdatedAt: src.UpdatedAt}
	if src.LastError != "" {
		out.LastError = &src.LastError
	}
	return out
}

func (s *Server) listTemplateSources(c *gin.Context) error {
	list, err := s.tpl.catalog.Sources(c.Request.Context())
	if err != nil {
		return err
	}
	return writeJSON(c, http.StatusOK, convert(list, toTemplateSourceJSON))
}

// templateSourceRequest is the body of the source routes; PUT and DELETE
// name the source by id in the body or in ?id=.
type templateSourceRequest struct {
	ID      int64  `json:"id"`
	Name    string `json:"name"`
	URL     string `json:"url"`
	Enabled *bool  `json:"enabled"`
}

func (r templateSourceRequest) spec() templates.SourceSpec {
	return templates.SourceSpec{Name: r.Name, URL: r.URL, Enabled: r.Enabled}
}

func (s *Server) createTemplateSource(c *gin.Context) error {
	var req templateSourceRequest
	if err := bindJSON(c, &req); err != nil {
		return err
	}
	src, err := s.tpl.catalog.CreateSource(c.Request.Context(), req.spec())
	if err != nil {
		return err
	}
	noteAudit(c, strconv.FormatInt(src.ID, 10), src.Name)
	return writeJSON(c, http.StatusCreated, toTemplateSourceJSON(src))
}

// sourceID is the source a PUT or DELETE names: ?id=, else the body's id.
func sourceID(c *gin.Context, bodyID int64) (int64, error) {
	if q := c.Query("id"); q != "" {
		n, err := strconv.ParseInt(q, 10, 64)
		if err != nil || n <= 0 {
			return 0, fault.Invalidf("Query parameter id must be a positive number")
		}
		return n, nil
	}
	if bodyID <= 0 {
		return 0, fault.Invalidf("Source ID is required")
	}
	return bodyID, nil
}

func (s *Server) updateTemplateSource(c *gin.Context) error {
	var req templateSourceRequest
	if err := bindJSON(c, &req); err != nil {
		return err
	}
	id, err := sourceID(c, req.ID)
	if err != nil {
		return err
	}
	src, err := s.tpl.catalog.UpdateSource(c.Request.Context(), id, req.spec())
	if err != nil {
		return err
	}
	noteAudit(c, strconv.FormatInt(src.ID, 10), src.Name)
	return writeJSON(c, http.StatusOK, toTemplateSourceJSON(src))
}

func (s *Server) deleteTemplateSource(c *gin.Context) error {
	var req templateSourceRequest
	if c.Query("id") == "" {
		if err := bindJSON(c, &req); err != nil {
			return err
		}
	}
	id, err := sourceID(c, req.ID)
	if err != nil {
		return err
	}
	ctx := c.Request.Context()
	src, err := s.tpl.catalog.Source(ctx, id)
	if err != nil {
		return err
	}
	if err := s.tpl.catalog.DeleteSource(ctx, id); err != nil {
		return err
	}
	noteAudit(c, strconv.FormatInt(id, 10), src.Name)
	return writeJSON(c, http.StatusOK, success)
}
