package api

import (
	"errors"
	"net/http"
	"regexp"
	"strings"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/berth-dev/berth/server/internal/images"
	"github.com/berth-dev/berth/server/internal/store"
	"github.com/berth-dev/berth/shared/fault"
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
	// LastTest is the outcome of the last connection test of the saved
	// registry (null: never tested, or changed since).
	LastTest *registryTestJSON `json:"lastTest"`
}

// registryTestJSON is the kept outcome of a registry's connection test.
type registryTestJSON struct {
	Success  bool      `json:"success"`
	Message  string    `json:"message"`
	TestedAt time.Time `json:"testedAt"`
}

func toRegistryJSON(r store.Registry) registryJSON {
	out := registryJSON{ID: r.ID, Name: r.Name, URL: r.URL, Username: r.Username, IsDefault: r.IsDefault,
		HasCredentials: r.Username != "" && r.Password != "", CreatedAt: r.CreatedAt, UpdatedAt: r.UpdatedAt}
	if r.LastTest != nil {
		out.LastTest = &registryTestJSON{Success: r.LastTest.Success, Message: r.LastTest.Message, TestedAt: r.LastTest.At}
	}
	return out
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
// registry ({registryId}, Berth's {id}), with the fields the body sends
// overriding the saved ones, or unsaved settings ({url, username,
// password}). The saved password goes only to the registry's own host: a
// url of another host needs the password sent again.
func (s *Server) testRegistry(c *gin.Context) error {
	var req registryTestInput
	if err := bindJSON(c, &req); err != nil {
		return err
	}
	reg, saved, err := s.registryToTest(c, req)
	if err != nil {
		return err
	}
	var out registryTestAnswer
	if err := s.images.TestRegistry(c.Request.Context(), envOf(c), reg); err != nil {
		_, body := errorResponse(err)
		msg := body.Error
		if body.Details != "" {
			msg += ": " + body.Details
		}
		// The engine's login tells a refused sign-in from an unreachable
		// registry only by its message.
		refused := authRefused.MatchString(msg)
		out = registryTestAnswer{Success: false, Connectivity: refused, Authenticated: false, Message: msg, Error: body.Error}
	} else {
		out = registryTestAnswer{Success: true, Connectivity: true, Authenticated: reg.Username != "", Message: "Connected"}
		if out.Authenticated {
			out.Message = "Connected and authenticated as " + reg.Username
		}
	}
	// The outcome is kept for a saved registry tested as saved (not for
	// unsaved settings, nor for a saved one with fields changed in the form).
	if saved {
		err := s.store.RecordRegistryTest(c.Request.Context(), reg.ID, store.RegistryTest{At: time.Now().UTC(), Success: out.Success, Message: out.Message})
		if err != nil && !errors.Is(err, store.ErrNotFound) {
			return err
		}
	}
	return writeJSON(c, http.StatusOK, out)
}

// registryTestAnswer is the reference's {success, connectivity,
// authenticated, message}, with Berth's error on a failure.
type registryTestAnswer struct {
	Success       bool   `json:"success"`
	Connectivity  bool   `json:"connectivity"`
	Authenticated bool   `json:"authenticated"`
	Message       string `json:"message"`
	Error         string `json:"error,omitempty"`
}

// authRefused matches the engine's words for a registry that answered but
// refused the credentials.
var authRefused = regexp.MustCompile(`(?i)unauthorized|authentication (required|failed)|incorrect username or password|status 401|denied`)

// registryToTest is the registry a test asks for: a saved one with the
// body's fields over it, or the body's alone.
func (s *Server) registryToTest(c *gin.Context, req registryTestInput) (reg store.Registry, saved bool, err error) {
	id := req.RegistryID
	switch {
	case req.ID > 0 && req.RegistryID > 0 && req.ID != req.RegistryID:
		return store.Registry{}, false, fault.Invalidf("registryId and id name different registries: send one of them")
	case req.ID > 0:
		id = req.ID
	}
	if id <= 0 {
		reg := store.Registry{URL: req.URL, Password: req.Password.value}
		if req.Username != nil {
			reg.Username = *req.Username
		}
		return reg, false, nil
	}
	reg, err = s.images.Registry(c.Request.Context(), id)
	if err != nil {
		return store.Registry{}, false, err
	}
	stored := reg
	if strings.TrimSpace(req.URL) != "" {
		kept := req.Password.change() == nil && reg.Password != ""
		if err := secretStays("registry password", registryURL(reg.URL), registryURL(req.URL), kept); err != nil {
			return store.Registry{}, false, err
		}
		reg.URL = req.URL
	}
	if req.Username != nil {
		reg.Username = *req.Username
	}
	req.Password.applyTo(&reg.Password)
	return reg, reg.URL == stored.URL && reg.Username == stored.Username && reg.Password == stored.Password, nil
}
