package api

import (
	"net/http"
	"strings"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/berth-dev/berth/server/internal/images"
	"github.com/berth-dev/berth/server/internal/store"
)

// registryJSON is a registry as clients decode it (never the password).
type registryJSON struct {
	ID             int64     `json:"id"`
	Name           string    `json:"name"`
	URL            string    `json:"url"`
	Username       string    `json:"username"`
	IsDefault      bool      `json:"isDefault"`
	HasCredentials bool      `json:"hasCredentials"`
	CreatedAt      time.Time `json:"createdAt"`
	UpdatedAt      time.Time `json:"updatedAt"`
}

func toRegistryJSON(r store.Registry) registryJSON {
	return registryJSON{ID: r.ID, Name: r.Name, URL: r.URL, Username: r.Username, IsDefault: r.IsDefault,
		HasCredentials: r.Username != "" && r.Password != "", CreatedAt: r.CreatedAt, UpdatedAt: r.UpdatedAt}
}

// registryRequest is the body of create and update. The password follows
// secretField; the username, half of the credentials, is kept as well when
// absent or null ("" clears it).
type registryRequest struct {
	Name      string      `json:"name"`
	URL       string      `json:"url"`
	Username  *string     `json:"username"`
	Password  secretField `json:"password"`
	IsDefault bool        `json:"isDefault"`
}

func (req registryRequest) spec() images.RegistrySpec {
	return images.RegistrySpec{Name: req.Name, URL: req.URL, Username: req.Username, Password: req.Password.change(),
		IsDefault: req.IsDefault}
}

func (s *Server) listRegistries(c *gin.Context) error {
	list, err := s.images.Registries(c.Request.Context())
	if err != nil {
		return err
	}
	return writeJSON(c, http.StatusOK, convert(list, toRegistryJSON))
}

func (s *Server) getRegistry(c *gin.Context) error {
	id, err := pathID(c, "Registry")
	if err != nil {
		return err
	}
	reg, err := s.images.Registry(c.Request.Context(), id)
	if err != nil {
		return err
	}
	return writeJSON(c, http.StatusOK, toRegistryJSON(reg))
}

func (s *Server) createRegistry(c *gin.Context) error {
	var req registryRequest
	if err := bindJSON(c, &req); err != nil {
		return err
	}
	reg, err := s.images.SaveRegistry(c.Request.Context(), 0, req.spec())
	if err != nil {
		return err
	}
	noteAudit(c, "", reg.Name)
	return writeJSON(c, http.StatusCreated, toRegistryJSON(reg))
}

func (s *Server) updateRegistry(c *gin.Context) error {
	id, err := pathID(c, "Registry")
	if err != nil {
		return err
	}
	var req registryRequest
	if err := bindJSON(c, &req); err != nil {
		return err
	}
	old, err := s.images.Registry(c.Request.Context(), id)
	if err != nil {
		return err
	}
	// The stored password goes only to the registry it was saved for.
	kept := req.Password.change() == nil && old.Password != "" && strings.TrimSpace(req.URL) != ""
	if err := secretStays("registry password", registryURL(old.URL), registryURL(req.URL), kept); err != nil {
		return err
	}
	reg, err := s.images.SaveRegistry(c.Request.Context(), id, req.spec())
	if err != nil {
		return err
	}
	noteAudit(c, "", reg.Name)
	return writeJSON(c, http.StatusOK, toRegistryJSON(reg))
}

// registryURL is a registry's URL with a scheme (https when it names none),
// so that its origin can be told.
func registryURL(u string) string {
	u = strings.TrimSpace(u)
	if u != "" && !strings.Contains(u, "://") {
		return "https://" + u
	}
	return u
}

func (s *Server) deleteRegistry(c *gin.Context) error {
	id, err := pathID(c, "Registry")
	if err != nil {
		return err
	}
	if err := s.images.DeleteRegistry(c.Request.Context(), id); err != nil {
		return err
	}
	return writeJSON(c, http.StatusOK, success)
}

// testRegistry checks credentials from the environment's engine: a saved
// registry ({id}) or unsaved settings ({url, username, password}).
func (s *Server) testRegistry(c *gin.Context) error {
	var req registryTestInput
	if err := bindJSON(c, &req); err != nil {
		return err
	}
	var reg store.Registry
	if req.ID > 0 {
		var err error
		if reg, err = s.images.Registry(c.Request.Context(), req.ID); err != nil {
			return err
		}
	} else {
		reg = store.Registry{URL: req.URL, Password: req.Password.value}
		if req.Username != nil {
			reg.Username = *req.Username
		}
	}
	if err := s.images.TestRegistry(c.Request.Context(), envOf(c), reg); err != nil {
		_, body := errorResponse(err)
		return writeJSON(c, http.StatusOK, map[string]any{"success": false, "error": body.Error})
	}
	return writeJSON(c, http.StatusOK, success)
}
