package api

import (
	"net/http"
	"strconv"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/berth-dev/berth/server/internal/auth"
	"github.com/berth-dev/berth/server/internal/store"
	"github.com/berth-dev/berth/shared/fault"
)

// userJSON is a user as clients decode it (never the password hash).
type userJSON struct {
	ID           int64      `json:"id"`
	Username     string     `json:"username"`
	Email        string     `json:"email"`
	DisplayName  string     `json:"displayName"`
	MFAEnabled   bool       `json:"mfaEnabled"`
	IsAdmin      bool       `json:"isAdmin"`
	IsActive     bool       `json:"isActive"`
	AuthProvider string     `json:"authProvider"`
	LastLogin    *time.Time `json:"lastLogin"`
	CreatedAt    time.Time  `json:"createdAt"`
	UpdatedAt    time.Time  `json:"updatedAt"`
}

func toUserJSON(u store.User) userJSON {
	return userJSON{ID: u.ID, Username: u.Username, Email: u.Email, DisplayName: u.DisplayName, MFAEnabled: u.MFAEnabled,
		IsAdmin: u.IsAdmin, IsActive: u.IsActive, AuthProvider: u.AuthProvider, LastLogin: u.LastLogin,
		CreatedAt: u.CreatedAt, UpdatedAt: u.UpdatedAt}
}

// requireAdmin refuses a signed-in non-admin: only admins create admins,
// change admins, or hand out the Admin role (no escalation through a role
// that merely manages users). With authentication disabled anyone may.
func requireAdmin(c *gin.Context) error {
	if ident := identityOf(c); ident != nil && !ident.Access.Admin {
		return errPermission
	}
	return nil
}

func (s *Server) listUsers(c *gin.Context) error {
	list, err := s.store.ListUsers(c.Request.Context())
	if err != nil {
		return err
	}
	out := convert(list, toUserJSON)
	return writeJSON(c, http.StatusOK, out)
}

// createUser creates a local user. While no user exists, the holder of the
// setup token (header X-Setup-Token or field setupToken) creates the first
// admin.
func (s *Server) createUser(c *gin.Context) error {
	var req createUserInput
	if err := bindJSON(c, &req); err != nil {
		return err
	}
	spec := auth.UserSpec{Username: req.Username, Password: req.Password, Email: req.Email,
		DisplayName: req.DisplayName, IsAdmin: req.IsAdmin}
	if identityOf(c) == nil {
		need, err := s.auth.SetupRequired(c.Request.Context())
		if err != nil {
			return err
		}
		enabled, err := s.auth.Enabled(c.Request.Context())
		if err != nil {
			return err
		}
		if need && enabled {
			tok := c.GetHeader("X-Setup-Token")
			if tok == "" {
				tok = req.SetupToken
			}
			u, err := s.auth.CreateFirstAdmin(c.Request.Context(), tok, spec)
			if err != nil {
				return err
			}
			uid := u.ID
			s.audit(c, store.AuditEntry{Action: "user.create", EntityType: "user", UserID: &uid, Username: u.Username,
				EntityID: strconv.FormatInt(u.ID, 10), EntityName: u.Username, Description: "first admin created with the setup token"})
			quietAudit(c)
			return writeJSON(c, http.StatusCreated, toUserJSON(u))
		}
	}
	if spec.IsAdmin {
		if err := requireAdmin(c); err != nil {
			return err
		}
	}
	u, err := s.auth.CreateUser(c.Request.Context(), spec)
	if err != nil {
		return err
	}
	noteAudit(c, strconv.FormatInt(u.ID, 10), u.Username)
	return writeJSON(c, http.StatusCreated, toUserJSON(u))
}

func (s *Server) getUser(c *gin.Context) error {
	id, err := pathID(c, "User")
	if err != nil {
		return err
	}
	u, err := s.auth.GetUser(c.Request.Context(), id)
	if err != nil {
		return err
	}
	return writeJSON(c, http.StatusOK, toUserJSON(u))
}

func (s *Server) updateUser(c *gin.Context) error {
	id, err := pathID(c, "User")
	if err != nil {
		return err
	}
	var req updateUserInput
	if err := bindJSON(c, &req); err != nil {
		return err
	}
	target, err := s.auth.GetUser(c.Request.Context(), id)
	if err != nil {
		return err
	}
	if target.IsAdmin || req.IsAdmin != nil {
		if err := requireAdmin(c); err != nil {
			return err
		}
	}
	patch := auth.UserPatch{Username: req.Username, Password: req.Password, Email: req.Email,
		DisplayName: req.DisplayName, IsAdmin: req.IsAdmin, IsActive: req.IsActive}
	if ident := identityOf(c); ident != nil && ident.User.ID == id {
		patch.KeepSession = ident.SessionID // one's own change ends one's other sessions only
	}
	demoting, deactivating := req.IsAdmin != nil && !*req.IsAdmin, req.IsActive != nil && !*req.IsActive
	disableAuth := false
	if demoting || deactivating {
		msg := "Removing admin privileges from this user will disable authentication."
		if !demoting {
			msg = "Deactivating this user will disable authentication."
		}
		if disableAuth, err = s.confirmLastAdmin(c, target, req.ConfirmDisableAuth, msg); err != nil {
			return err
		}
		patch.LeaveNoAdmin = disableAuth
	}
	u, err := s.auth.UpdateUser(c.Request.Context(), id, patch)
	if err != nil {
		return err
	}
	if disableAuth {
		if err := s.auth.SetEnabled(c.Request.Context(), false); err != nil {
			return err
		}
	}
	noteAudit(c, "", u.Username)
	return writeJSON(c, http.StatusOK, updateUserAnswer{userJSON: toUserJSON(u), AuthDisabled: disableAuth})
}

// confirmLastAdmin is the reference's confirmDisableAuth rule: a change
// that takes the last active admin's rights is 409 "This is the last admin
// user" (msg says what it would do) unless confirmed; confirmed, it is
// allowed and authentication is to be turned off (true).
func (s *Server) confirmLastAdmin(c *gin.Context, target store.User, confirmed bool, msg string) (bool, error) {
	last, err := s.auth.LastActiveAdmin(c.Request.Context(), target)
	if err != nil || !last {
		return false, err
	}
	if !confirmed {
		return false, &fault.Error{Kind: fault.Conflict, Message: "This is the last admin user", Details: msg + " Send confirmDisableAuth to proceed."}
	}
	return true, nil
}

func (s *Server) deleteUser(c *gin.Context) error {
	id, err := pathID(c, "User")
	if err != nil {
		return err
	}
	target, err := s.auth.GetUser(c.Request.Context(), id)
	if err != nil {
		return err
	}
	if target.IsAdmin {
		if err := requireAdmin(c); err != nil {
			return err
		}
	}
	confirm := false
	if v := c.Query("confirmDisableAuth"); v != "" {
		if confirm, err = strconv.ParseBool(v); err != nil {
			return fault.New(fault.Invalid, "confirmDisableAuth must be true or false")
		}
	}
	disableAuth, err := s.confirmLastAdmin(c, target, confirm,
		"This is the only admin account. Deleting it will disable authentication and allow anyone to access Berth.")
	if err != nil {
		return err
	}
	if disableAuth {
		err = s.auth.DeleteUserLeavingNoAdmin(c.Request.Context(), id)
	} else {
		err = s.auth.DeleteUser(c.Request.Context(), id)
	}
	if err != nil {
		return err
	}
	if disableAuth {
		if err := s.auth.SetEnabled(c.Request.Context(), false); err != nil {
			return err
		}
	}
	noteAudit(c, "", target.Username)
	return writeJSON(c, http.StatusOK, deleteUserAnswer{Success: true, AuthDisabled: disableAuth})
}

// roleJSON is a role as clients decode it.
type roleJSON struct {
	ID             int64               `json:"id"`
	Name           string              `json:"name"`
	Description    string              `json:"description"`
	Permissions    map[string][]string `json:"permissions"`
	EnvironmentIDs []int64             `json:"environmentIds"`
	IsSystem       bool                `json:"isSystem"`
	CreatedAt      time.Time           `json:"createdAt"`
	UpdatedAt      time.Time           `json:"updatedAt"`
}

func toRoleJSON(r store.Role) roleJSON {
	return roleJSON{ID: r.ID, Name: r.Name, Description: r.Description, Permissions: r.Permissions,
		EnvironmentIDs: r.EnvironmentIDs, IsSystem: r.IsSystem, CreatedAt: r.CreatedAt, UpdatedAt: r.UpdatedAt}
}

type roleRequest struct {
	Name           string              `json:"name"`
	Description    string              `json:"description"`
	Permissions    map[string][]string `json:"permissions"`
	EnvironmentIDs []int64             `json:"environmentIds"`
}

func (req roleRequest) spec() auth.RoleSpec {
	return auth.RoleSpec{Name: req.Name, Description: req.Description, Permissions: req.Permissions, EnvironmentIDs: req.EnvironmentIDs}
}

func (s *Server) listRoles(c *gin.Context) error {
	list, err := s.auth.ListRoles(c.Request.Context())
	if err != nil {
		return err
	}
	out := convert(list, toRoleJSON)
	return writeJSON(c, http.StatusOK, out)
}

func (s *Server) getRole(c *gin.Context) error {
	id, err := pathID(c, "Role")
	if err != nil {
		return err
	}
	role, err := s.auth.GetRole(c.Request.Context(), id)
	if err != nil {
		return err
	}
	return writeJSON(c, http.StatusOK, toRoleJSON(role))
}

func (s *Server) createRole(c *gin.Context) error {
	var req roleRequest
	if err := bindJSON(c, &req); err != nil {
		return err
	}
	role, err := s.auth.CreateRole(c.Request.Context(), req.spec())
	if err != nil {
		return err
	}
	noteAudit(c, strconv.FormatInt(role.ID, 10), role.Name)
	return writeJSON(c, http.StatusCreated, toRoleJSON(role))
}

func (s *Server) updateRole(c *gin.Context) error {
	id, err := pathID(c, "Role")
	if err != nil {
		return err
	}
	var req roleRequest
	if err := bindJSON(c, &req); err != nil {
		return err
	}
	role, err := s.auth.UpdateRole(c.Request.Context(), id, req.spec())
	if err != nil {
		return err
	}
	noteAudit(c, "", role.Name)
	return writeJSON(c, http.StatusOK, toRoleJSON(role))
}

func (s *Server) deleteRole(c *gin.Context) error {
	id, err := pathID(c, "Role")
	if err != nil {
		return err
	}
	if err := s.auth.DeleteRole(c.Request.Context(), id); err != nil {
		return err
	}
	return writeJSON(c, http.StatusOK, success)
}

// assignmentJSON is one role of a user.
type assignmentJSON struct {
	ID            int64     `json:"id"`
	RoleID        int64     `json:"roleId"`
	RoleName      string    `json:"roleName"`
	EnvironmentID *int64    `json:"environmentId"`
	Source        string    `json:"source"`
	CreatedAt     time.Time `json:"createdAt"`
}

func (s *Server) listUserRoles(c *gin.Context) error {
	id, err := pathID(c, "User")
	if err != nil {
		return err
	}
	list, err := s.auth.UserRoles(c.Request.Context(), id)
	if err != nil {
		return err
	}
	names := map[int64]string{}
	roles, err := s.auth.ListRoles(c.Request.Context())
	if err != nil {
		return err
	}
	for _, x := range roles {
		names[x.ID] = x.Name
	}
	out := make([]assignmentJSON, 0, len(list))
	for _, a := range list {
		out = append(out, assignmentJSON{ID: a.ID, RoleID: a.RoleID, RoleName: names[a.RoleID],
			EnvironmentID: a.EnvironmentID, Source: a.Source, CreatedAt: a.CreatedAt})
	}
	return writeJSON(c, http.StatusOK, out)
}

type assignmentRequest struct {
	RoleID        int64  `json:"roleId"`
	EnvironmentID *int64 `json:"environmentId"`
}

func (s *Server) assignRole(c *gin.Context) error {
	id, err := pathID(c, "User")
	if err != nil {
		return err
	}
	var req assignmentRequest
	if err := bindJSON(c, &req); err != nil {
		return err
	}
	if req.RoleID <= 0 {
		return fault.New(fault.Invalid, "roleId is required")
	}
	role, err := s.auth.GetRole(c.Request.Context(), req.RoleID)
	if err != nil {
		return err
	}
	if role.Name == auth.RoleAdmin {
		if err := requireAdmin(c); err != nil {
			return err
		}
	}
	a, err := s.auth.AssignRole(c.Request.Context(), id, req.RoleID, req.EnvironmentID)
	if err != nil {
		return err
	}
	return writeJSON(c, http.StatusCreated, assignmentJSON{ID: a.ID, RoleID: a.RoleID, RoleName: role.Name,
		EnvironmentID: a.EnvironmentID, Source: a.Source, CreatedAt: a.CreatedAt})
}

// unassignRole takes {roleId, environmentId} from the body or the query.
func (s *Server) unassignRole(c *gin.Context) error {
	id, err := pathID(c, "User")
	if err != nil {
		return err
	}
	var req assignmentRequest
	if err := bindJSON(c, &req); err != nil {
		return err
	}
	q := c.Request.URL.Query()
	if v := q.Get("roleId"); v != "" {
		if req.RoleID, err = strconv.ParseInt(v, 10, 64); err != nil {
			return fault.New(fault.Invalid, "roleId must be a number")
		}
	}
	if v := q.Get("environmentId"); v != "" {
		envID, err := strconv.ParseInt(v, 10, 64)
		if err != nil {
			return fault.New(fault.Invalid, "environmentId must be a number")
		}
		req.EnvironmentID = &envID
	}
	if req.RoleID <= 0 {
		return fault.New(fault.Invalid, "roleId is required")
	}
	if role, err := s.auth.GetRole(c.Request.Context(), req.RoleID); err == nil && role.Name == auth.RoleAdmin {
		if err := requireAdmin(c); err != nil {
			return err
		}
	}
	if err := s.auth.UnassignRole(c.Request.Context(), id, req.RoleID, req.EnvironmentID); err != nil {
		return err
	}
	return writeJSON(c, http.StatusOK, success)
}
