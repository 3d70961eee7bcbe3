package api

import (
	"context"
	"errors"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"unicode"

	"github.com/gin-gonic/gin"

	"github.com/berth-dev/berth/server/internal/auth"
	"github.com/berth-dev/berth/server/internal/policy"
	"github.com/berth-dev/berth/server/internal/store"
	"github.com/berth-dev/berth/shared/fault"
)

// SessionCookie is the session cookie's name; third-party clients look it up.
const SessionCookie = "dockhand_session"

var (
	errAuthRequired = errors.New("authentication required")
	errPermission   = fault.New(fault.Forbidden, "Permission denied")
	errEnvAccess    = fault.New(fault.Forbidden, "Access denied to this environment")
	errCrossSite    = fault.New(fault.Forbidden, "Cross-site request refused")
)

type identityKey struct{}

type auditKey struct{}

// auditNote lets a handler name what its change was about, for the audit
// line the route records after it succeeds.
type auditNote struct {
	entityID, entityName string
	quiet                bool // the handler wrote its own line
}

// quietAudit keeps the route's generic line out: the handler wrote its own.
func quietAudit(c *gin.Context) {
	if v, ok := c.Get(auditKey{}); ok {
		v.(*auditNote).quiet = true
	}
}

// noteAudit names the entity of the request's change.
func noteAudit(c *gin.Context, id, name string) {
	if v, ok := c.Get(auditKey{}); ok {
		n := v.(*auditNote)
		n.entityID, n.entityName = id, name
	}
}

// identityOf returns the signed-in user of the request, or nil (anonymous,
// or authentication disabled without a session).
func identityOf(c *gin.Context) *auth.Identity {
	v, _ := c.Get(identityKey{})
	id, _ := v.(*auth.Identity)
	return id
}

// admit is the gin middleware of a route's admission: it answers the
// route's refusal and stops the chain, or lets the request through carrying
// its identity and environment.
func (s *Server) admit(rt route) gin.HandlerFunc {
	return func(c *gin.Context) {
		if err := s.admitted(c, rt); err != nil {
			s.fail(c, err)
			c.Abort()
		}
	}
}

// admitted runs the route's checks in order: who is asking (API token or
// session cookie), cross-site protection, sign-in, the route's environment,
// and the permission on it. It keeps the identity and the environment on the
// gin context.
func (s *Server) admitted(c *gin.Context, rt route) error {
	c.Set(auditKey{}, &auditNote{})
	r := c.Request
	ctx := r.Context()
	st, err := s.auth.Settings(ctx)
	if err != nil {
		return err
	}
	ident, byCookie, err := s.identify(r)
	if err != nil {
		return err
	}
	if ident != nil {
		c.Set(identityKey{}, ident)
		if byCookie && !safeMethod(r.Method) && !sameOrigin(r) {
			return errCrossSite
		}
	}
	if st.AuthEnabled && rt.Perm != Public && ident == nil {
		if !rt.Setup {
			return errAuthRequired
		}
		if need, err := s.auth.SetupRequired(ctx); err != nil {
			return err
		} else if !need {
			return errAuthRequired
		}
	}
	if err := s.withEnvironment(c, rt.Env); err != nil {
		return err
	}
	if rt.Perm != Public { // public routes (webhooks) act as the system
		admin := !st.AuthEnabled || ident != nil && ident.User.IsAdmin
		c.Request = c.Request.WithContext(policy.WithActor(ctx, policy.Actor{Admin: admin}))
	}
	if !st.AuthEnabled || rt.Perm == Public || rt.Perm == Authenticated || ident == nil {
		return nil
	}
	return decide(ident.Access, rt, envOf(c))
}

// decide applies the route's permission to the route's environment.
func decide(acc auth.Access, rt route, env store.Environment) error {
	perm := string(rt.Perm)
	var d auth.Decision
	switch rt.Env {
	case NoEnv:
		d = acc.Check(perm, nil)
	case AnyEnv:
		d = acc.CheckAny(perm)
	default:
		id := env.ID
		d = acc.Check(perm, &id)
	}
	return denial(d)
}

// denial is the 403 of a refused decision (nil when allowed).
func denial(d auth.Decision) error {
	switch d {
	case auth.Allowed:
		return nil
	case auth.NoEnvAccess:
		return errEnvAccess
	}
	return errPermission
}

// identify finds the caller: an API token (Authorization: Bearer) or a
// session cookie. Unknown credentials are anonymous; byCookie tells whether
// a session cookie did it (and cross-site checks apply).
func (s *Server) identify(r *http.Request) (ident *auth.Identity, byCookie bool, err error) {
	ctx := r.Context()
	if h := r.Header.Get("Authorization"); h != "" {
		scheme, tok, _ := strings.Cut(h, " ")
		if strings.EqualFold(scheme, "Bearer") {
			id, err := s.auth.TokenIdentity(ctx, strings.TrimSpace(tok), s.clientIP(r))
			switch {
			case err == nil:
				return &id, false, nil
			case !errors.Is(err, auth.ErrNoCredentials):
				return nil, false, err
			}
			return nil, false, nil
		}
	}
	c, err := r.Cookie(SessionCookie)
	if err != nil || c.Value == "" {
		return nil, false, nil
	}
	id, err := s.auth.SessionIdentity(ctx, c.Value)
	switch {
	case err == nil:
		return &id, true, nil
	case errors.Is(err, auth.ErrNoCredentials):
		return nil, false, nil
	}
	return nil, false, err
}

func safeMethod(m string) bool {
	return m == http.MethodGet || m == http.MethodHead || m == http.MethodOptions
}

// sameOrigin reports whether a state-changing request comes from this host:
// its Origin (or else Referer) must name the request's host. A request with
// neither (a script, not a browser) passes.
func sameOrigin(r *http.Request) bool {
	src := r.Header.Get("Origin")
	if src == "" {
		src = r.Header.Get("Referer")
	}
	if src == "" {
		return true
	}
	u, err := url.Parse(src)
	return err == nil && u.Host != "" && strings.EqualFold(u.Host, r.Host)
}

// auditAfter is the gin middleware that writes the audit line of a
// state-changing route once its handler succeeded.
func (s *Server) auditAfter(rt route) gin.HandlerFunc {
	return func(c *gin.Context) {
		c.Next()
		if len(c.Errors) == 0 && c.Writer.Status() < 400 {
			s.recordAudit(c, rt)
		}
	}
}

// recordAudit writes the audit line of a successful state-changing route.
func (s *Server) recordAudit(c *gin.Context, rt route) {
	if rt.Audit == "" || rt.Audit == Quiet {
		return
	}
	entityType, _, _ := strings.Cut(rt.Audit, ".")
	e := store.AuditEntry{Action: rt.Audit, EntityType: entityType, EntityID: c.Param("id")}
	for _, name := range []string{"execId", "name"} {
		if e.EntityID == "" {
			e.EntityID = c.Param(name)
		}
	}
	if v, ok := c.Get(auditKey{}); ok {
		n := v.(*auditNote)
		if n.quiet {
			return
		}
		if n.entityID != "" {
			e.EntityID = n.entityID
		}
		e.EntityName = n.entityName
	}
	s.audit(c, e)
}

// audit writes e with the request's user, environment and address. A
// failure is logged: it never fails the operation that already happened.
func (s *Server) audit(c *gin.Context, e store.AuditEntry) {
	if id := identityOf(c); id != nil && e.UserID == nil {
		uid := id.User.ID
		e.UserID, e.Username = &uid, id.User.Username
	}
	if env := envOf(c); env.ID != 0 && e.EnvironmentID == nil {
		envID := env.ID
		e.EnvironmentID = &envID
	}
	if e.IP == "" {
		e.IP = s.clientIP(c.Request)
	}
	if err := s.store.AddAudit(context.WithoutCancel(c.Request.Context()), &e); err != nil {
		s.log.Error("audit entry not written", "action", e.Action, "err", err)
	}
	s.sys.audit.written() // wakes this server's audit streams (audit_stream.go)
}

// pathID parses the numeric {id} path parameter: an id that is not a
// number is the reference's 400 "Invalid <what> ID"; a number no record
// can have (0 or less) is not found.
func pathID(c *gin.Context, what string) (int64, error) {
	id, err := strconv.ParseInt(c.Param("id"), 10, 64)
	switch {
	case err != nil:
		return 0, fault.New(fault.Invalid, "Invalid "+idNoun(what)+" ID")
	case id <= 0:
		return 0, fault.New(fault.NotFound, what+" not found")
	}
	return id, nil
}

// idNoun is what, its first word lower-cased unless it is an acronym
// ("Config set" → "config set", "OIDC provider" stays).
func idNoun(what string) string {
	if len(what) > 1 && unicode.IsUpper(rune(what[0])) && !unicode.IsUpper(rune(what[1])) {
		return strings.ToLower(what[:1]) + what[1:]
	}
	return what
}

// bodyEnvironment honours an environment named in a request's body (the
// reference's clients send {envId} or {environmentId}, named field in
// messages, where Berth reads ?env=): when the query names none, the body's
// environment becomes the request's once the user holds perm in it
// (environmentFor); when both name one, they must agree. id 0 (absent)
// keeps the route's environment, or on a route that resolves none (AnyEnv)
// the query's as EnvQuery resolves it (default 1; malformed 400, unknown
// 404), perm checked in it.
func (s *Server) bodyEnvironment(c *gin.Context, perm Perm, field string, id int64) (store.Environment, error) {
	v, routed := c.Get(envKey{})
	env, _ := v.(store.Environment)
	if !routed && (id == 0 || c.Query("env") != "") {
		q, err := s.environment(c, "env")
		if err != nil {
			return store.Environment{}, err
		}
		if id == 0 || id == q.ID {
			return s.chooseEnvironment(c, perm, q.ID)
		}
	}
	switch {
	case routed && (id == 0 || id == env.ID):
		return env, nil
	case id < 0:
		return store.Environment{}, fault.New(fault.Invalid, "Invalid environment ID: "+field+" must be a positive integer")
	case c.Query("env") != "":
		return store.Environment{}, fault.New(fault.Invalid, field+" and env name different environments")
	}
	return s.chooseEnvironment(c, perm, id)
}

// chooseEnvironment makes environment id the request's once the user holds
// perm in it.
func (s *Server) chooseEnvironment(c *gin.Context, perm Perm, id int64) (store.Environment, error) {
	env, err := s.environmentFor(c, id, string(perm))
	if err != nil {
		return store.Environment{}, err
	}
	c.Set(envKey{}, env)
	return env, nil
}
