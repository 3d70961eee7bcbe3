package auth

import (
	"context"
	"errors"
	"slices"
	"strings"

	"github.com/berth-dev/berth/server/internal/store"
	"github.com/berth-dev/berth/shared/fault"
)

var (
	errRoleNotFound = fault.New(fault.NotFound, "Role not found")
	errRoleTaken    = fault.New(fault.Conflict, "A role with this name already exists")
	errSystemRole   = fault.New(fault.Invalid, "Built-in roles cannot be changed or deleted")
)

// RoleSpec describes a custom role.
type RoleSpec struct {
	Name           string
	Description    string
	Permissions    map[string][]string
	EnvironmentIDs []int64 // nil: every environment
}

func validateRole(spec *RoleSpec) error {
	spec.Name = strings.TrimSpace(spec.Name)
	if spec.Name == "" {
		return fault.New(fault.Invalid, "Role name is required")
	}
	if spec.Permissions == nil {
		spec.Permissions = map[string][]string{}
	}
	for res, actions := range spec.Permissions {
		known, ok := Catalog[res]
		if !ok {
			return fault.Invalidf("Unknown permission resource %q", res)
		}
		for _, a := range actions {
			if !slices.Contains(known, a) {
				return fault.Invalidf("Unknown action %q for %s", a, res)
			}
		}
	}
	return nil
}

// ListRoles lists every role.
func (s *Service) ListRoles(ctx context.Context) ([]store.Role, error) { return s.store.ListRoles(ctx) }

// GetRole returns a role.
func (s *Service) GetRole(ctx context.Context, id int64) (store.Role, error) {
	r, err := s.store.GetRole(ctx, id)
	if errors.Is(err, store.ErrNotFound) {
		return store.Role{}, errRoleNotFound
	}
	return r, err
}

// CreateRole creates a custom role (an enterprise feature).
func (s *Service) CreateRole(ctx context.Context, spec RoleSpec) (store.Role, error) {
	if err := s.RequireEnterprise(); err != nil {
		return store.Role{}, err
	}
	if err := validateRole(&spec); err != nil {
		return store.Role{}, err
	}
	r := store.Role{Name: spec.Name, Description: spec.Description, Permissions: spec.Permissions, EnvironmentIDs: spec.EnvironmentIDs}
	if err := s.store.CreateRole(ctx, &r); err != nil {
		if errors.Is(err, store.ErrConflict) {
			return store.Role{}, errRoleTaken
		}
		return store.Role{}, err
	}
	return r, nil
}

// UpdateRole replaces a custom role's definition (an enterprise feature).
func (s *Service) UpdateRole(ctx context.Context, id int64, spec RoleSpec) (store.Role, error) {
	if err := s.RequireEnterprise(); err != nil {
		return store.Role{}, err
	}
	r, err := s.GetRole(ctx, id)
	if err != nil {
		return store.Role{}, err
	}
	if r.IsSystem {
		return store.Role{}, errSystemRole
	}
	if err := validateRole(&spec); err != nil {
		return store.Role{}, err
	}
	r.Name, r.Description, r.Permissions, r.EnvironmentIDs = spec.Name, spec.Description, spec.Permissions, spec.EnvironmentIDs
	if err := s.store.UpdateRole(ctx, &r); err != nil {
		if errors.Is(err, store.ErrConflict) {
			return store.Role{}, errRoleTaken
		}
		return store.Role{}, err
	}
	return r, nil
}

// DeleteRole deletes a custom role and its assignments.
func (s *Service) DeleteRole(ctx context.Context, id int64) error {
	if err := s.RequireEnterprise(); err != nil {
		return err
	}
	r, err := s.GetRole(ctx, id)
	if err != nil {
		return err
	}
	if r.IsSystem {
		return errSystemRole
	}
	return s.store.DeleteRole(ctx, id)
}

// UserRoles lists a user's role assignments.
func (s *Service) UserRoles(ctx context.Context, userID int64) ([]store.RoleAssignment, error) {
	if _, err := s.GetUser(ctx, userID); err != nil {
		return nil, err
	}
	return s.store.ListUserRoles(ctx, userID)
}

// AssignRole gives a user a role on one environment (or all, when envID is nil).
func (s *Service) AssignRole(ctx context.Context, userID, roleID int64, envID *int64) (store.RoleAssignment, error) {
	if _, err := s.GetUser(ctx, userID); err != nil {
		return store.RoleAssignment{}, err
	}
	r, err := s.GetRole(ctx, roleID)
	if err != nil {
		return store.RoleAssignment{}, err
	}
	if !r.IsSystem && !s.Enterprise() {
		return store.RoleAssignment{}, errEnterprise
	}
	a := store.RoleAssignment{UserID: userID, RoleID: roleID, EnvironmentID: envID, Source: "manual"}
	if err := s.store.AssignRole(ctx, &a); err != nil {
		if errors.Is(err, store.ErrNotFound) {
			return store.RoleAssignment{}, fault.New(fault.NotFound, "Environment not found")
		}
		return store.RoleAssignment{}, err
	}
	return a, nil
}

// UnassignRole takes a role (on one environment, or the all-environments
// assignment when envID is nil) from a user.
func (s *Service) UnassignRole(ctx context.Context, userID, roleID int64, envID *int64) error {
	removed, err := s.store.UnassignRole(ctx, userID, roleID, envID)
	if err != nil {
		return err
	}
	if !removed {
		return fault.New(fault.NotFound, "Role assignment not found")
	}
	return nil
}
