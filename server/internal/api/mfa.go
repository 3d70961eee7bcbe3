package api

import (
	"encoding/base64"
	"net/http"
	"strconv"

	"github.com/gin-gonic/gin"

	"github.com/berth-dev/berth/server/internal/auth"
	"github.com/berth-dev/berth/server/internal/store"
	"github.com/berth-dev/berth/shared/fault"
)

// mfaTarget returns the user of the request's {id} when the caller may
// manage that user's MFA: the user themself, or a holder of users:edit (and,
// for an admin's MFA, an admin). Someone else is refused before the user is
// looked up, so that a refusal does not tell which ids exist.
func (s *Server) mfaTarget(c *gin.Context) (store.User, error) {
	id, err := pathID(c, "User")
	if err != nil {
		return store.User{}, err
	}
	ident := identityOf(c)
	other := ident != nil && ident.User.ID != id
	if other && ident.Access.Check("users:edit", nil) != auth.Allowed {
		return store.User{}, errPermission
	}
	u, err := s.auth.GetUser(c.Request.Context(), id)
	if err != nil {
		return store.User{}, err
	}
	if other && u.IsAdmin {
		if err := requireAdmin(c); err != nil {
			return store.User{}, err
		}
	}
	return u, nil
}

// postMFA starts the MFA enrolment of a user ({} → the secret and its QR
// code) or completes it ({action: "verify", token} → the backup codes,
// shown this once).
func (s *Server) postMFA(c *gin.Context) error {
	var req struct {
		Action string `json:"action"`
		Token  string `json:"token"`
	}
	if err := bindJSON(c, &req); err != nil {
		return err
	}
	if req.Action != "" && req.Action != "setup" && req.Action != "verify" {
		return fault.Invalidf("Unknown action %q: send {} to start the MFA setup, then {action: \"verify\", token}", req.Action)
	}
	u, err := s.mfaTarget(c)
	if err != nil {
		return err
	}
	ctx := c.Request.Context()
	entry := store.AuditEntry{EntityType: "user", EntityID: strconv.FormatInt(u.ID, 10), EntityName: u.Username}
	c.Header("Cache-Control", "no-store") // both answers carry secrets
	if req.Action == "verify" {
		codes, err := s.auth.ConfirmMFA(ctx, u.ID, req.Token)
		if err != nil {
			return err
		}
		entry.Action, entry.Description = "user.mfa_enable", "MFA enabled"
		s.audit(c, entry)
		return writeJSON(c, http.StatusOK, map[string]any{"success": true,
			"message":     "MFA enabled. Keep the backup codes somewhere safe: each signs in once, and they are not shown again.",
			"backupCodes": codes})
	}
	e, err := s.auth.BeginMFA(ctx, u)
	if err != nil {
		return err
	}
	entry.Action, entry.Description = "user.mfa_setup", "MFA setup started"
	s.audit(c, entry)
	return writeJSON(c, http.StatusOK, map[string]any{"secret": e.Secret, "otpauthUrl": e.URL,
		"qrDataUrl": "data:image/png;base64," + base64.StdEncoding.EncodeToString(e.QRPNG)})
}

// disableMFAInput confirms who turns MFA off: the caller's current
// password, or a current code of the caller's own MFA.
type disableMFAInput struct {
	Password string `json:"password"`
	Token    string `json:"token"`
}

// deleteMFA turns a user's MFA off. The caller confirms it is them (their
// own password or MFA code, also when an admin turns off someone else's),
// so that a session alone cannot strip the second factor.
func (s *Server) deleteMFA(c *gin.Context) error {
	var req disableMFAInput
	if err := bindJSON(c, &req); err != nil {
		return err
	}
	u, err := s.mfaTarget(c)
	if err != nil {
		return err
	}
	if ident := identityOf(c); ident != nil {
		if err := s.auth.ConfirmIdentity(c.Request.Context(), ident.User.ID, req.Password, req.Token, s.clientIP(c.Request)); err != nil {
			return err
		}
	}
	if err := s.auth.DisableMFA(c.Request.Context(), u.ID); err != nil {
		return err
	}
	noteAudit(c, strconv.FormatInt(u.ID, 10), u.Username)
	return writeJSON(c, http.StatusOK, map[string]any{"success": true, "message": "MFA disabled"})
}
