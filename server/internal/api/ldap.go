package api

import (
	"errors"
	"net/http"
	"strconv"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/berth-dev/berth/server/internal/auth"
	"github.com/berth-dev/berth/server/internal/store"
)

// ldapConfigJSON is an LDAP configuration as clients see it (bind password
// masked).
type ldapConfigJSON struct {
	ID                   int64                   `json:"id"`
	Name                 string                  `json:"name"`
	Enabled              bool                    `json:"enabled"`
	ServerURL            string                  `json:"serverUrl"`
	BindDN               string                  `json:"bindDn"`
	BindPassword         string                  `json:"bindPassword"`
	BaseDN               string                  `json:"baseDn"`
	UserFilter           string                  `json:"userFilter"`
	UsernameAttribute    string                  `json:"usernameAttribute"`
	EmailAttribute       string                  `json:"emailAttribute"`
	DisplayNameAttribute string                  `json:"displayNameAttribute"`
	GroupBaseDN          string                  `json:"groupBaseDn"`
	GroupFilter          string                  `json:"groupFilter"`
	AdminGroup           string                  `json:"adminGroup"`
	RoleMappings         []store.LDAPRoleMapping `json:"roleMappings"`
	TLSEnabled           bool                    `json:"tlsEnabled"`
	TLSCA                string                  `json:"tlsCa"`
	CreatedAt            time.Time               `json:"createdAt"`
	UpdatedAt            time.Time               `json:"updatedAt"`
}

func toLDAPConfigJSON(c store.LDAPConfig) ldapConfigJSON {
	mask := ""
	if c.BindPassword != "" {
		mask = secretMask
	}
	mappings := c.RoleMappings
	if mappings == nil {
		mappings = []store.LDAPRoleMapping{}
	}
	return ldapConfigJSON{ID: c.ID, Name: c.Name, Enabled: c.Enabled, ServerURL: c.ServerURL, BindDN: c.BindDN,
		BindPassword: mask, BaseDN: c.BaseDN, UserFilter: c.UserFilter, UsernameAttribute: c.UsernameAttribute,
		EmailAttribute: c.EmailAttribute, DisplayNameAttribute: c.DisplayNameAttribute, GroupBaseDN: c.GroupBaseDN,
		GroupFilter: c.GroupFilter, AdminGroup: c.AdminGroup, RoleMappings: mappings, TLSEnabled: c.TLSEnabled,
		TLSCA: c.TLSCA, CreatedAt: c.CreatedAt, UpdatedAt: c.UpdatedAt}
}

// ldapConfigRequest is the body of create (absent fields take defaults) and
// PATCH (absent fields keep their value; the bind password follows
// secretField).
type ldapConfigRequest struct {
	Name                 *string                  `json:"name"`
	Enabled              *bool                    `json:"enabled"`
	ServerURL            *string                  `json:"serverUrl"`
	BindDN               *string                  `json:"bindDn"`
	BindPassword         secretField              `json:"bindPassword"`
	BaseDN               *string                  `json:"baseDn"`
	UserFilter           *string                  `json:"userFilter"`
	UsernameAttribute    *string                  `json:"usernameAttribute"`
	EmailAttribute       *string                  `json:"emailAttribute"`
	DisplayNameAttribute *string                  `json:"displayNameAttribute"`
	GroupBaseDN          *string                  `json:"groupBaseDn"`
	GroupFilter          *string                  `json:"groupFilter"`
	AdminGroup           *string                  `json:"adminGroup"`
	RoleMappings         *[]store.LDAPRoleMapping `json:"roleMappings"`
	TLSEnabled           *bool                    `json:"tlsEnabled"`
	TLSCA                *string                  `json:"tlsCa"`
}

func (req ldapConfigRequest) patch() auth.LDAPConfigPatch {
	return auth.LDAPConfigPatch{Name: req.Name, Enabled: req.Enabled, ServerURL: req.ServerURL, BindDN: req.BindDN,
		BindPassword: req.BindPassword.change(), BaseDN: req.BaseDN, UserFilter: req.UserFilter,
		UsernameAttribute: req.UsernameAttribute, EmailAttribute: req.EmailAttribute,
		DisplayNameAttribute: req.DisplayNameAttribute, GroupBaseDN: req.GroupBaseDN, GroupFilter: req.GroupFilter,
		AdminGroup: req.AdminGroup, RoleMappings: req.RoleMappings, TLSEnabled: req.TLSEnabled, TLSCA: req.TLSCA}
}

func (s *Server) listLDAP(c *gin.Context) error {
	list, err := s.auth.LDAPConfigs(c.Request.Context())
	if err != nil {
		return err
	}
	out := convert(list, toLDAPConfigJSON)
	return writeJSON(c, http.StatusOK, out)
}

func (s *Server) getLDAP(c *gin.Context) error {
	id, err := pathID(c, "LDAP configuration")
	if err != nil {
		return err
	}
	cfg, err := s.auth.LDAPConfig(c.Request.Context(), id)
	if err != nil {
		return err
	}
	return writeJSON(c, http.StatusOK, toLDAPConfigJSON(cfg))
}

func (s *Server) createLDAP(c *gin.Context) error {
	if err := s.auth.RequireEnterprise(); err != nil {
		return err
	}
	var req ldapConfigRequest
	if err := bindJSON(c, &req); err != nil {
		return err
	}
	cfg, err := s.auth.CreateLDAPConfig(c.Request.Context(), req.patch())
	if err != nil {
		return err
	}
	noteAudit(c, strconv.FormatInt(cfg.ID, 10), cfg.Name)
	return writeJSON(c, http.StatusCreated, toLDAPConfigJSON(cfg))
}

func (s *Server) patchLDAP(c *gin.Context) error {
	if err := s.auth.RequireEnterprise(); err != nil {
		return err
	}
	id, err := pathID(c, "LDAP configuration")
	if err != nil {
		return err
	}
	var req ldapConfigRequest
	if err := bindJSON(c, &req); err != nil {
		return err
	}
	if req.ServerURL != nil {
		old, err := s.auth.LDAPConfig(c.Request.Context(), id)
		if err != nil {
			return err
		}
		stored := req.BindPassword.change() == nil && old.BindPassword != ""
		if err := secretStays("bind password", old.ServerURL, *req.ServerURL, stored); err != nil {
			return err
		}
	}
	cfg, err := s.auth.UpdateLDAPConfig(c.Request.Context(), id, req.patch())
	if err != nil {
		return err
	}
	noteAudit(c, "", cfg.Name)
	return writeJSON(c, http.StatusOK, toLDAPConfigJSON(cfg))
}

func (s *Server) deleteLDAP(c *gin.Context) error {
	id, err := pathID(c, "LDAP configuration")
	if err != nil {
		return err
	}
	if err := s.auth.DeleteLDAPConfig(c.Request.Context(), id); err != nil {
		return err
	}
	return writeJSON(c, http.StatusOK, success)
}

// testLDAP binds and searches with * as the login name: {success, userCount},
// or {success: false, error} when the directory cannot be used.
func (s *Server) testLDAP(c *gin.Context) error {
	id, err := pathID(c, "LDAP configuration")
	if err != nil {
		return err
	}
	n, err := s.auth.TestLDAP(c.Request.Context(), id)
	var derr *auth.DirectoryError
	switch {
	case errors.As(err, &derr):
		return writeJSON(c, http.StatusOK, map[string]any{"success": false, "error": "LDAP server unavailable: " + derr.Error()})
	case err != nil:
		return err
	}
	return writeJSON(c, http.StatusOK, map[string]any{"success": true, "userCount": n})
}
