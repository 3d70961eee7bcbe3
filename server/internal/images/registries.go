package images

import (
	"context"
	"errors"
	"strings"

	"github.com/berth-dev/berth/server/internal/store"
	"github.com/berth-dev/berth/shared/engine"
	"github.com/berth-dev/berth/shared/fault"
)

var (
	errRegistryNotFound = fault.New(fault.NotFound, "Registry not found")
	errRegistryTaken    = fault.New(fault.Conflict, "A registry with this name already exists")
)

// RegistrySpec is a registry as an administrator describes it; a nil
// Username or Password keeps the stored one on update (none, on creation),
// "" removes it.
type RegistrySpec struct {
	Name      string
	URL       string
	Username  *string
	Password  *string
	IsDefault bool
}

func (sp *RegistrySpec) validate() error {
	sp.Name, sp.URL = strings.TrimSpace(sp.Name), strings.TrimSpace(sp.URL)
	if sp.Username != nil {
		u := strings.TrimSpace(*sp.Username)
		sp.Username = &u
	}
	if sp.Name == "" {
		return fault.New(fault.Invalid, "Registry name is required")
	}
	if sp.URL == "" || registryHost(sp.URL) == "" || strings.ContainsAny(registryHost(sp.URL), " \t") {
		return fault.New(fault.Invalid, "Registry URL is required (host[:port] or https://host[:port])")
	}
	return nil
}

// Registries lists the configured registries.
func (s *Service) Registries(ctx context.Context) ([]store.Registry, error) {
	return s.store.ListRegistries(ctx)
}

// Registry returns one registry.
func (s *Service) Registry(ctx context.Context, id int64) (store.Registry, error) {
	r, err := s.store.GetRegistry(ctx, id)
	if errors.Is(err, store.ErrNotFound) {
		return store.Registry{}, errRegistryNotFound
	}
	return r, err
}

// SaveRegistry creates (id 0) or updates a registry.
func (s *Service) SaveRegistry(ctx context.Context, id int64, sp RegistrySpec) (store.Registry, error) {
	if err := sp.validate(); err != nil {
		return store.Registry{}, err
	}
	r := store.Registry{}
	if id != 0 {
		var err error
		if r, err = s.Registry(ctx, id); err != nil {
			return store.Registry{}, err
		}
	}
	r.Name, r.URL, r.IsDefault = sp.Name, sp.URL, sp.IsDefault
	if sp.Username != nil {
		r.Username = *sp.Username
	}
	if sp.Password != nil {
		r.Password = *sp.Password
	}
	var err error
	if id == 0 {
		err = s.store.CreateRegistry(ctx, &r)
	} else {
		err = s.store.UpdateRegistry(ctx, &r)
	}
	switch {
	case errors.Is(err, store.ErrConflict):
		return store.Registry{}, errRegistryTaken
	case errors.Is(err, store.ErrNotFound):
		return store.Registry{}, errRegistryNotFound
	}
	return r, err
}

// DeleteRegistry deletes a registry.
func (s *Service) DeleteRegistry(ctx context.Context, id int64) error {
	if err := s.store.DeleteRegistry(ctx, id); err != nil {
		if errors.Is(err, store.ErrNotFound) {
			return errRegistryNotFound
		}
		return err
	}
	return nil
}

// credentialsFor returns the credentials of the configured registry whose
// host is the image's, or nil (anonymous). Credentials never come from a
// request.
func (s *Service) credentialsFor(ctx context.Context, ref string) (*engine.Credentials, error) {
	host := hostOf(ref)
	list, err := s.store.ListRegistries(ctx)
	if err != nil {
		return nil, err
	}
	for _, r := range list {
		rh := registryHost(r.URL)
		if rh == host || (isDockerHub(rh) && isDockerHub(host)) {
			return registryCredentials(r), nil
		}
	}
	return nil, nil
}

// PullCredentials returns the credentials of every configured registry that
// has them, for pulls that name many images at once (stack deploys).
func (s *Service) PullCredentials(ctx context.Context) ([]engine.Credentials, error) {
	list, err := s.store.ListRegistries(ctx)
	if err != nil {
		return nil, err
	}
	out := []engine.Credentials{}
	for _, r := range list {
		if c := registryCredentials(r); c.Username != "" {
			out = append(out, *c)
		}
	}
	return out, nil
}

// registryCredentials are a registry's username and password when both are
// set, otherwise only its address.
func registryCredentials(r store.Registry) *engine.Credentials {
	c := &engine.Credentials{ServerAddress: registryHost(r.URL)}
	if r.Username != "" && r.Password != "" {
		c.Username, c.Password = r.Username, r.Password
	}
	return c
}

// TestRegistry checks a registry's credentials from env's engine.
func (s *Service) TestRegistry(ctx context.Context, env store.Environment, r store.Registry) error {
	c, err := s.engines.Client(ctx, env.Endpoint())
	if err != nil {
		return fault.Wrap(fault.Internal, "Failed to test registry", err).WithDetails("Environment is offline")
	}
	if err := c.Login(ctx, *registryCredentials(r)); err != nil {
		return fault.Wrap(fault.Invalid, transferMessage(err, "Failed to test registry"), err)
	}
	return nil
}

// CredentialsFor returns the credentials of the configured registry of an
// image reference, or nil (anonymous).
func (s *Service) CredentialsFor(ctx context.Context, ref string) (*engine.Credentials, error) {
	return s.credentialsFor(ctx, ref)
}
