package api

import (
	"errors"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/berth-dev/berth/server/internal/auth"
	"github.com/berth-dev/berth/server/internal/store"
	"github.com/berth-dev/berth/shared/fault"
)

// sessionUser is the user part of the login and session answers.
type sessionUser struct {
	ID          int64            `json:"id"`
	Username    string           `json:"username"`
	Email       string           `json:"email"`
	DisplayName string           `json:"displayName"`
	IsAdmin     bool             `json:"isAdmin"`
	Provider    string           `json:"provider,omitempty"`
	Permissions auth.Permissions `json:"permissions,omitempty"`
	MFAEnabled  *bool            `json:"mfaEnabled,omitempty"` // in the session answer only (the profile shows it)
	// EnvironmentPermissions (session answer, non-admins): what the user may do
	// on each environment it can reach, by environment id, so the console shows
	// only the controls that would be allowed there. Permissions is their union.
	EnvironmentPermissions map[string]auth.Permissions `json:"environmentPermissions,omitempty"`
}

func (s *Server) login(c *gin.Context) error {
	var req loginInput
	if err := bindJSON(c, &req); err != nil {
		return err
	}
	ident, sess, err := s.auth.Login(c.Request.Context(), auth.LoginRequest{Username: req.Username, Password: req.Password,
		Provider: req.Provider, MFAToken: req.MFAToken, IP: s.clientIP(c.Request), UserAgent: c.Request.UserAgent()})
	if errors.Is(err, auth.ErrMFARequired) {
		// The password was right; the client asks for the code and signs in again. No session yet.
		return writeJSON(c, http.StatusOK, map[string]bool{"requiresMfa": true})
	}
	if err != nil {
		if k := fault.KindOf(err); k == fault.Unauthorized || k == fault.TooMany {
			s.audit(c, store.AuditEntry{Action: "login.failure", EntityType: "session", Username: req.Username,
				Description: "failed sign-in"})
		}
		return err
	}
	s.setSessionCookie(c, sess)
	uid := ident.User.ID
	s.audit(c, store.AuditEntry{Action: "login", EntityType: "session", UserID: &uid, Username: ident.User.Username,
		EntityID: strconv.FormatInt(uid, 10), EntityName: ident.User.Username, Description: "signed in with " + ident.Provider})
	return writeJSON(c, http.StatusOK, map[string]any{"success": true, "user": sessionUser{ID: ident.User.ID,
		Username: ident.User.Username, Email: ident.User.Email, DisplayName: ident.User.DisplayName, IsAdmin: ident.User.IsAdmin}})
}

// setSessionCookie hands the session token to the browser.
func (s *Server) setSessionCookie(c *gin.Context, sess auth.Session) {
	http.SetCookie(c.Writer, &http.Cookie{Name: SessionCookie, Value: sess.Token, Path: "/", HttpOnly: true,
		SameSite: http.SameSiteLaxMode, Secure: s.isHTTPS(c.Request), Expires: sess.ExpiresAt,
		MaxAge: int(time.Until(sess.ExpiresAt).Seconds())})
}

func (s *Server) logout(c *gin.Context) error {
	if ck, err := c.Request.Cookie(SessionCookie); err == nil {
		if err := s.auth.Logout(c.Request.Context(), ck.Value); err != nil {
			return err
		}
		if ident := identityOf(c); ident != nil {
			s.audit(c, store.AuditEntry{Action: "logout", EntityType: "session", EntityName: ident.User.Username})
		}
	}
	http.SetCookie(c.Writer, &http.Cookie{Name: SessionCookie, Value: "", Path: "/", HttpOnly: true,
		SameSite: http.SameSiteLaxMode, Secure: s.isHTTPS(c.Request), MaxAge: -1})
	return writeJSON(c, http.StatusOK, success)
}

func (s *Server) session(c *gin.Context) error {
	st, err := s.auth.Settings(c.Request.Context())
	if err != nil {
		return err
	}
	ident := identityOf(c)
	if ident == nil || !st.AuthEnabled {
		out := map[string]any{"authenticated": false, "authEnabled": st.AuthEnabled}
		if st.AuthEnabled {
			need, err := s.auth.SetupRequired(c.Request.Context())
			if err != nil {
				return err
			}
			out["setupRequired"] = need
		}
		return writeJSON(c, http.StatusOK, out)
	}
	provider := ident.Provider
	if provider == "token" {
		provider = ident.User.AuthProvider
	}
	provider, _, _ = strings.Cut(provider, ":") // "oidc:<name>" → "oidc"
	user := sessionUser{ID: ident.User.ID, Username: ident.User.Username, Email: ident.User.Email,
		DisplayName: ident.User.DisplayName, IsAdmin: ident.User.IsAdmin, Provider: provider,
		Permissions: ident.Access.Summary(), MFAEnabled: &ident.User.MFAEnabled}
	if !ident.Access.Admin {
		envs, err := s.store.ListEnvironments(c.Request.Context())
		if err != nil {
			return err
		}
		user.EnvironmentPermissions = map[string]auth.Permissions{}
		for _, e := range envs {
			if ident.Access.CanAccess(e.ID) {
				user.EnvironmentPermissions[strconv.FormatInt(e.ID, 10)] = ident.Access.SummaryFor(e.ID)
			}
		}
	}
	return writeJSON(c, http.StatusOK, map[string]any{"authenticated": true, "authEnabled": true, "user": user})
}

// provider is one sign-in choice of the login page.
type provider struct {
	ID          string `json:"id"`
	Name        string `json:"name"`
	Type        string `json:"type"`
	InitiateURL string `json:"initiateUrl,omitempty"`
}

func (s *Server) providers(c *gin.Context) error {
	st, err := s.auth.Settings(c.Request.Context())
	if err != nil {
		return err
	}
	list := []provider{}
	if !s.auth.LocalLoginDisabled() {
		list = append(list, provider{ID: "local", Name: "Local", Type: "local"})
	}
	ldaps, err := s.auth.LDAPProviders(c.Request.Context())
	if err != nil {
		return err
	}
	for _, p := range ldaps {
		list = append(list, provider{ID: p.ID, Name: p.Name, Type: "ldap"})
	}
	oidcs, err := s.auth.OIDCProviders(c.Request.Context())
	if err != nil {
		return err
	}
	for _, p := range oidcs {
		id := strconv.FormatInt(p.ID, 10)
		list = append(list, provider{ID: "oidc:" + id, Name: p.Name, Type: "oidc", InitiateURL: "/api/auth/oidc/" + id + "/initiate"})
	}
	return writeJSON(c, http.StatusOK, map[string]any{"providers": list, "defaultProvider": st.DefaultProvider})
}

func (s *Server) getAuthSettings(c *gin.Context) error {
	st, err := s.auth.Settings(c.Request.Context())
	if err != nil {
		return err
	}
	return writeJSON(c, http.StatusOK, st)
}

func (s *Server) putAuthSettings(c *gin.Context) error {
	var p auth.SettingsPatch
	if err := bindJSON(c, &p); err != nil {
		return err
	}
	st, err := s.auth.UpdateSettings(c.Request.Context(), p)
	if err != nil {
		return err
	}
	return writeJSON(c, http.StatusOK, st)
}

// tokenJSON is an API token as listed (never the token itself).
type tokenJSON struct {
	ID          int64      `json:"id"`
	UserID      int64      `json:"userId"`
	Name        string     `json:"name"`
	TokenPrefix string     `json:"tokenPrefix"`
	ExpiresAt   *time.Time `json:"expiresAt"`
	LastUsed    *time.Time `json:"lastUsed"`
	CreatedAt   time.Time  `json:"createdAt"`
}

func toTokenJSON(t store.APIToken) tokenJSON {
	return tokenJSON{ID: t.ID, UserID: t.UserID, Name: t.Name, TokenPrefix: t.TokenPrefix, ExpiresAt: t.ExpiresAt,
		LastUsed: t.LastUsedAt, CreatedAt: t.CreatedAt}
}

// signedIn returns the request's user; token routes need one even when
// authentication is disabled (a token belongs to someone).
func signedIn(c *gin.Context) (*auth.Identity, error) {
	ident := identityOf(c)
	if ident == nil {
		return nil, errAuthRequired
	}
	return ident, nil
}

func (s *Server) listTokens(c *gin.Context) error {
	ident, err := signedIn(c)
	if err != nil {
		return err
	}
	all, err := queryBool(c, "all", false)
	if err != nil {
		return err
	}
	list, err := s.auth.ListTokens(c.Request.Context(), ident.User, all)
	if err != nil {
		return err
	}
	out := convert(list, toTokenJSON)
	return writeJSON(c, http.StatusOK, out)
}

func (s *Server) createToken(c *gin.Context) error {
	ident, err := signedIn(c)
	if err != nil {
		return err
	}
	var req tokenInput
	if err := bindJSON(c, &req); err != nil {
		return err
	}
	t, err := s.auth.CreateToken(c.Request.Context(), ident.User, req.Name, req.Password, req.ExpiresAt)
	if err != nil {
		return err
	}
	noteAudit(c, strconv.FormatInt(t.ID, 10), t.Name)
	return writeJSON(c, http.StatusCreated, struct {
		tokenJSON
		Token string `json:"token"`
	}{toTokenJSON(t.APIToken), t.Token})
}

func (s *Server) revokeToken(c *gin.Context) error {
	ident, err := signedIn(c)
	if err != nil {
		return err
	}
	id, err := pathID(c, "Token")
	if err != nil {
		return err
	}
	if err := s.auth.RevokeToken(c.Request.Context(), ident.User, id); err != nil {
		return err
	}
	return writeJSON(c, http.StatusOK, success)
}
