package api

import (
	"net/http"
	"strconv"
	"strings"
	"time"

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
}

func (s *Server) login(w http.ResponseWriter, r *http.Request) error {
	var req struct {
		Username string `json:"username"`
		Password string `json:"password"`
		Provider string `json:"provider"`
		MFAToken string `json:"mfaToken"`
	}
	if err := decode(w, r, &req); err != nil {
		return err
	}
	ident, sess, err := s.auth.Login(r.Context(), auth.LoginRequest{Username: req.Username, Password: req.Password,
		Provider: req.Provider, IP: clientIP(r), UserAgent: r.UserAgent()})
	if err != nil {
		if k := fault.KindOf(err); k == fault.Unauthorized || k == fault.TooMany {
			s.audit(r, store.AuditEntry{Action: "login.failure", EntityType: "session", Username: req.Username,
				Description: "failed sign-in"})
		}
		return err
	}
	s.setSessionCookie(w, r, sess)
	uid := ident.User.ID
	s.audit(r, store.AuditEntry{Action: "login", EntityType: "session", UserID: &uid, Username: ident.User.Username,
		EntityID: strconv.FormatInt(uid, 10), EntityName: ident.User.Username, Description: "signed in with " + ident.Provider})
	return writeJSON(w, http.StatusOK, map[string]any{"success": true, "user": sessionUser{ID: ident.User.ID,
		Username: ident.User.Username, Email: ident.User.Email, DisplayName: ident.User.DisplayName, IsAdmin: ident.User.IsAdmin}})
}

// setSessionCookie hands the session token to the browser.
func (s *Server) setSessionCookie(w http.ResponseWriter, r *http.Request, sess auth.Session) {
	http.SetCookie(w, &http.Cookie{Name: SessionCookie, Value: sess.Token, Path: "/", HttpOnly: true,
		SameSite: http.SameSiteLaxMode, Secure: isHTTPS(r), Expires: sess.ExpiresAt,
		MaxAge: int(time.Until(sess.ExpiresAt).Seconds())})
}

func (s *Server) logout(w http.ResponseWriter, r *http.Request) error {
	if c, err := r.Cookie(SessionCookie); err == nil {
		if err := s.auth.Logout(r.Context(), c.Value); err != nil {
			return err
		}
		if ident := identityOf(r); ident != nil {
			s.audit(r, store.AuditEntry{Action: "logout", EntityType: "session", EntityName: ident.User.Username})
		}
	}
	http.SetCookie(w, &http.Cookie{Name: SessionCookie, Value: "", Path: "/", HttpOnly: true,
		SameSite: http.SameSiteLaxMode, Secure: isHTTPS(r), MaxAge: -1})
	return writeJSON(w, http.StatusOK, success)
}

func (s *Server) session(w http.ResponseWriter, r *http.Request) error {
	st, err := s.auth.Settings(r.Context())
	if err != nil {
		return err
	}
	ident := identityOf(r)
	if ident == nil || !st.AuthEnabled {
		out := map[string]any{"authenticated": false, "authEnabled": st.AuthEnabled}
		if st.AuthEnabled {
			need, err := s.auth.SetupRequired(r.Context())
			if err != nil {
				return err
			}
			out["setupRequired"] = need
		}
		return writeJSON(w, http.StatusOK, out)
	}
	provider := ident.Provider
	if provider == "token" {
		provider = ident.User.AuthProvider
	}
	provider, _, _ = strings.Cut(provider, ":") // "oidc:<name>" → "oidc"
	return writeJSON(w, http.StatusOK, map[string]any{"authenticated": true, "authEnabled": true,
		"user": sessionUser{ID: ident.User.ID, Username: ident.User.Username, Email: ident.User.Email,
			DisplayName: ident.User.DisplayName, IsAdmin: ident.User.IsAdmin, Provider: provider,
			Permissions: ident.Access.Summary()}})
}

// provider is one sign-in choice of the login page.
type provider struct {
	ID          string `json:"id"`
	Name        string `json:"name"`
	Type        string `json:"type"`
	InitiateURL string `json:"initiateUrl,omitempty"`
}

func (s *Server) providers(w http.ResponseWriter, r *http.Request) error {
	st, err := s.auth.Settings(r.Context())
	if err != nil {
		return err
	}
	list := []provider{}
	if !s.auth.LocalLoginDisabled() {
		list = append(list, provider{ID: "local", Name: "Local", Type: "local"})
	}
	ldaps, err := s.auth.LDAPProviders(r.Context())
	if err != nil {
		return err
	}
	for _, p := range ldaps {
		list = append(list, provider{ID: p.ID, Name: p.Name, Type: "ldap"})
	}
	oidcs, err := s.auth.OIDCProviders(r.Context())
	if err != nil {
		return err
	}
	for _, p := range oidcs {
		id := strconv.FormatInt(p.ID, 10)
		list = append(list, provider{ID: "oidc:" + id, Name: p.Name, Type: "oidc", InitiateURL: "/api/auth/oidc/" + id + "/initiate"})
	}
	return writeJSON(w, http.StatusOK, map[string]any{"providers": list, "defaultProvider": st.DefaultProvider})
}

func (s *Server) getAuthSettings(w http.ResponseWriter, r *http.Request) error {
	st, err := s.auth.Settings(r.Context())
	if err != nil {
		return err
	}
	return writeJSON(w, http.StatusOK, st)
}

func (s *Server) putAuthSettings(w http.ResponseWriter, r *http.Request) error {
	var p auth.SettingsPatch
	if err := decode(w, r, &p); err != nil {
		return err
	}
	st, err := s.auth.UpdateSettings(r.Context(), p)
	if err != nil {
		return err
	}
	return writeJSON(w, http.StatusOK, st)
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
func signedIn(r *http.Request) (*auth.Identity, error) {
	ident := identityOf(r)
	if ident == nil {
		return nil, errAuthRequired
	}
	return ident, nil
}

func (s *Server) listTokens(w http.ResponseWriter, r *http.Request) error {
	ident, err := signedIn(r)
	if err != nil {
		return err
	}
	all, err := queryBool(r, "all", false)
	if err != nil {
		return err
	}
	list, err := s.auth.ListTokens(r.Context(), ident.User, all)
	if err != nil {
		return err
	}
	out := convert(list, toTokenJSON)
	return writeJSON(w, http.StatusOK, out)
}

func (s *Server) createToken(w http.ResponseWriter, r *http.Request) error {
	ident, err := signedIn(r)
	if err != nil {
		return err
	}
	var req struct {
		Name      string     `json:"name"`
		ExpiresAt *time.Time `json:"expiresAt"`
		Password  string     `json:"password"`
	}
	if err := decode(w, r, &req); err != nil {
		return err
	}
	t, err := s.auth.CreateToken(r.Context(), ident.User, req.Name, req.Password, req.ExpiresAt)
	if err != nil {
		return err
	}
	return writeJSON(w, http.StatusCreated, struct {
		tokenJSON
		Token string `json:"token"`
	}{toTokenJSON(t.APIToken), t.Token})
}

func (s *Server) revokeToken(w http.ResponseWriter, r *http.Request) error {
	ident, err := signedIn(r)
	if err != nil {
		return err
	}
	id, err := pathID(r, "Token")
	if err != nil {
		return err
	}
	if err := s.auth.RevokeToken(r.Context(), ident.User, id); err != nil {
		return err
	}
	return writeJSON(w, http.StatusOK, success)
}
