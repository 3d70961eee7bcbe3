package auth

import (
	"slices"
	"sort"
	"strings"

	"github.com/berth-dev/berth/server/internal/store"
)

// Permissions maps a resource to the actions allowed on it.
type Permissions map[string][]string

// Allows reports whether p grants "<resource>:<action>".
func (p Permissions) Allows(perm string) bool {
	resource, action, ok := strings.Cut(perm, ":")
	if !ok {
		return false
	}
	return slices.Contains(p[resource], action) || slices.Contains(p[resource], "*")
}

// add merges q into p.
func (p Permissions) add(q map[string][]string) {
	for res, actions := range q {
		for _, a := range actions {
			if !slices.Contains(p[res], a) {
				p[res] = append(p[res], a)
			}
		}
	}
}

// sorted returns p with sorted action lists (for stable output).
func (p Permissions) sorted() Permissions {
	for res := range p {
		sort.Strings(p[res])
	}
	return p
}

// Catalog lists every resource and its actions (COMPAT.md).
var Catalog = map[string][]string{
	"containers":    {"view", "create", "start", "stop", "restart", "remove", "exec", "logs", "inspect", "edit"},
	"images":        {"view", "pull", "push", "remove", "build", "inspect"},
	"volumes":       {"view", "create", "remove", "inspect"},
	"networks":      {"view", "create", "remove", "inspect", "connect", "disconnect"},
	"stacks":        {"view", "create", "start", "stop", "remove", "edit"},
	"environments":  {"view", "create", "edit", "delete"},
	"registries":    {"view", "create", "edit", "delete"},
	"notifications": {"view", "create", "edit", "delete"},
	"git":           {"view", "create", "edit", "delete"},
	"settings":      {"view", "edit"},
	"users":         {"view", "create", "edit", "delete"},
	"schedules":     {"view", "edit", "run"},
	"audit_logs":    {"view"},
	"activity":      {"view"},
	"license":       {"manage"},
	"backups":       {"view", "manage"},
}

// Names of the built-in roles.
const (
	RoleAdmin    = "Admin"
	RoleOperator = "Operator"
	RoleViewer   = "Viewer"
)

// BuiltinRoles returns the built-in roles: Admin may do everything; Operator
// runs workloads (containers, images, volumes, networks, stacks, git,
// schedules, backups) but manages no users, settings or environments; Viewer only
// looks: it starts no work, so it lacks images:inspect, which scans need
// (the spec's permission of scans), and with it image details.
func BuiltinRoles() []store.Role {
	all := map[string][]string{}
	for res, actions := range Catalog {
		all[res] = slices.Clone(actions)
	}
	operator := map[string][]string{}
	for _, res := range []string{"containers", "images", "volumes", "networks", "stacks", "git", "schedules", "backups"} {
		operator[res] = slices.Clone(Catalog[res])
	}
	operator["environments"] = []string{"view"}
	operator["registries"] = []string{"view"}
	operator["notifications"] = []string{"view"}
	operator["activity"] = []string{"view"}
	viewer := map[string][]string{
		"containers": {"view", "logs", "inspect"}, "images": {"view"}, "volumes": {"view", "inspect"},
		"networks": {"view", "inspect"}, "stacks": {"view"}, "environments": {"view"}, "registries": {"view"},
		"git": {"view"}, "schedules": {"view"}, "activity": {"view"}, "backups": {"view"},
	}
	return []store.Role{
		{Name: RoleAdmin, Description: "Full access, including users, settings and environments", Permissions: all, IsSystem: true},
		{Name: RoleOperator, Description: "Runs and changes workloads; manages no users, settings or environments", Permissions: operator, IsSystem: true},
		{Name: RoleViewer, Description: "Read-only access", Permissions: viewer, IsSystem: true},
	}
}

// grant is one role assignment with its role resolved.
type grant struct {
	role  store.Role
	envID *int64 // nil: every environment
}

// appliesTo reports whether the grant covers environment env (nil: a global
// operation, covered only by grants for every environment).
func (g grant) appliesTo(env *int64) bool {
	if env == nil {
		return g.envID == nil && g.role.EnvironmentIDs == nil
	}
	if g.envID != nil && *g.envID != *env {
		return false
	}
	return g.role.EnvironmentIDs == nil || slices.Contains(g.role.EnvironmentIDs, *env)
}

// Access is what a user may do: admins everything, others per grant.
type Access struct {
	Admin  bool
	grants []grant
}

// Decision is the outcome of an authorization check.
type Decision int

// The decisions.
const (
	Allowed      Decision = iota
	NoPermission          // 403 Permission denied
	NoEnvAccess           // 403 Access denied to this environment
)

// Check decides perm on environment env (nil for operations not bound to
// one environment). A user with no grant covering env has no access to it.
func (a Access) Check(perm string, env *int64) Decision {
	if a.Admin {
		return Allowed
	}
	covered := false
	for _, g := range a.grants {
		if !g.appliesTo(env) {
			continue
		}
		covered = true
		if Permissions(g.role.Permissions).Allows(perm) {
			return Allowed
		}
	}
	if env != nil && !covered {
		return NoEnvAccess
	}
	return NoPermission
}

// CheckAny decides perm for a listing across environments: it is allowed
// when some grant allows it (the listing then shows only what CanAccess lets
// through).
func (a Access) CheckAny(perm string) Decision {
	if a.Admin {
		return Allowed
	}
	for _, g := range a.grants {
		if Permissions(g.role.Permissions).Allows(perm) {
			return Allowed
		}
	}
	return NoPermission
}

// CanAccess reports whether the user may see environment env at all.
func (a Access) CanAccess(env int64) bool {
	if a.Admin {
		return true
	}
	for _, g := range a.grants {
		if g.appliesTo(&env) {
			return true
		}
	}
	return false
}

// Summary returns the union of the user's permissions over every grant, as
// the session endpoint reports them.
// SummaryFor is what the user may do on environment env: the permissions of
// the grants that cover it (everything for an admin).
func (a Access) SummaryFor(env int64) Permissions {
	p := Permissions{}
	if a.Admin {
		p.add(Catalog)
		return p.sorted()
	}
	for _, g := range a.grants {
		if g.appliesTo(&env) {
			p.add(g.role.Permissions)
		}
	}
	return p.sorted()
}

func (a Access) Summary() Permissions {
	p := Permissions{}
	if a.Admin {
		p.add(Catalog)
		return p.sorted()
	}
	for _, g := range a.grants {
		p.add(g.role.Permissions)
	}
	return p.sorted()
}
