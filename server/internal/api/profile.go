package api

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"net/http"

	"github.com/gin-gonic/gin"

	"github.com/berth-dev/berth/server/internal/auth"
	"github.com/berth-dev/berth/server/internal/store"
	"github.com/berth-dev/berth/shared/fault"
)

var errNoProfile = fault.New(fault.Invalid, "Authentication is disabled: there is no signed-in user and no profile")

// getProfile answers the signed-in user.
func (s *Server) getProfile(c *gin.Context) error {
	ident := identityOf(c)
	if ident == nil {
		return errNoProfile
	}
	u, err := s.auth.GetUser(c.Request.Context(), ident.User.ID)
	if err != nil {
		return err
	}
	return writeJSON(c, http.StatusOK, toUserJSON(u))
}

// putProfile changes the signed-in user's display name and email, and, for
// a local account, the password: newPassword with currentPassword, which
// must be right. A password change ends the user's other sessions and
// revokes their API tokens (as an administrator's change does); the session
// making it stays.
func (s *Server) putProfile(c *gin.Context) error {
	ident := identityOf(c)
	if ident == nil {
		return errNoProfile
	}
	var req profileInput
	if err := bindJSON(c, &req); err != nil {
		return err
	}
	ctx := c.Request.Context()
	u, err := s.auth.GetUser(ctx, ident.User.ID)
	if err != nil {
		return err
	}
	patch := auth.UserPatch{DisplayName: req.DisplayName, Email: req.Email, KeepSession: ident.SessionID}
	if req.NewPassword != nil {
		if u.AuthProvider != "local" || u.PasswordHash == "" {
			return fault.New(fault.Invalid, "Users of an external provider have no local password")
		}
		if req.CurrentPassword == "" {
			return fault.New(fault.Invalid, "Current password is required to change the password")
		}
		ok, err := auth.VerifyPassword(ctx, req.CurrentPassword, u.PasswordHash)
		if err != nil {
			return err
		}
		if !ok {
			return fault.New(fault.Invalid, "Current password is incorrect")
		}
		patch.Password = req.NewPassword
	}
	u, err = s.auth.UpdateUser(ctx, u.ID, patch)
	if err != nil {
		return err
	}
	noteAudit(c, "", u.Username)
	return writeJSON(c, http.StatusOK, toUserJSON(u))
}

// maxPreferences bounds a stored preferences object.
const maxPreferences = 64 << 10

// preferencesOwner is the user whose preferences a request reads (0: the
// anonymous user of an instance without authentication).
func preferencesOwner(c *gin.Context) int64 {
	if ident := identityOf(c); ident != nil {
		return ident.User.ID
	}
	return 0
}

// getPreferences answers the caller's preferences of scope: the JSON object
// last stored, or {} when none.
func (s *Server) getPreferences(scope string) handler {
	return func(c *gin.Context) error {
		v, err := s.store.GetPreferences(c.Request.Context(), preferencesOwner(c), scope)
		if errors.Is(err, store.ErrNotFound) {
			v = "{}"
		} else if err != nil {
			return err
		}
		return writeRawJSON(c, v)
	}
}

// putPreferences replaces the caller's preferences of scope with the
// request's JSON object (at most 64 KB) and answers it.
func (s *Server) putPreferences(scope string) handler {
	return func(c *gin.Context) error {
		obj, err := readObject(c, "Preferences")
		if err != nil {
			return err
		}
		if err := s.store.SetPreferences(c.Request.Context(), preferencesOwner(c), scope, obj); err != nil {
			return err
		}
		return writeRawJSON(c, obj)
	}
}

// readObject reads a request body that must be a JSON object of at most
// 64 KB (what names it in messages) and returns it compacted.
func readObject(c *gin.Context, what string) (string, error) {
	raw, err := io.ReadAll(io.LimitReader(c.Request.Body, maxPreferences+1))
	if err != nil {
		return "", err
	}
	if len(raw) > maxPreferences {
		return "", fault.New(fault.Invalid, what+" are limited to 64 KB")
	}
	var obj map[string]json.RawMessage
	if err := json.Unmarshal(raw, &obj); err != nil || obj == nil {
		return "", fault.New(fault.Invalid, what+" must be a JSON object")
	}
	var compact bytes.Buffer
	if err := json.Compact(&compact, raw); err != nil {
		return "", fault.New(fault.Invalid, what+" must be a JSON object")
	}
	return compact.String(), nil
}

// writeRawJSON answers v, already JSON text.
func writeRawJSON(c *gin.Context, v string) error {
	c.Header("Content-Type", "application/json; charset=utf-8")
	c.Status(http.StatusOK)
	_, err := c.Writer.WriteString(v)
	return err
}

// Settings keys of the general and theme settings.
const (
	generalSettingsKey = "console.general"
	themeSettingsKey   = "console.theme"
)

// getSettingsObject answers the JSON object stored under key, or def when
// none was stored.
func (s *Server) getSettingsObject(key, def string) handler {
	return func(c *gin.Context) error {
		v, err := s.store.GetSetting(c.Request.Context(), key)
		if errors.Is(err, store.ErrNotFound) {
			v = def
		} else if err != nil {
			return err
		}
		return writeRawJSON(c, v)
	}
}

// putSettingsObject replaces the JSON object stored under key (at most 64
// KB) and answers it. The theme object, which the sign-in page reads, may
// only name the theme: {"theme": "light"|"dark"|"system"}.
func (s *Server) putSettingsObject(key string) handler {
	return func(c *gin.Context) error {
		obj, err := readObject(c, "Settings")
		if err != nil {
			return err
		}
		if key == themeSettingsKey {
			var t themeObject
			var all map[string]json.RawMessage
			_ = json.Unmarshal([]byte(obj), &all)
			_ = json.Unmarshal([]byte(obj), &t)
			if len(all) != 1 || (t.Theme != "light" && t.Theme != "dark" && t.Theme != "system") {
				return fault.New(fault.Invalid, `theme must be "light", "dark" or "system"`)
			}
		}
		if err := s.store.SetSetting(c.Request.Context(), key, obj); err != nil {
			return err
		}
		return writeRawJSON(c, obj)
	}
}
