package templates

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strings"

	"github.com/berth-dev/berth/server/internal/stacks"
	"github.com/berth-dev/berth/server/internal/store"
	"github.com/berth-dev/berth/shared/fault"
)

// ConfigSets keeps config sets: named container settings (variables,
// labels, ports, volumes, network mode, restart policy) that the container
// create form applies.
type ConfigSets struct{ store *store.Store }

// NewConfigSets returns the config sets kept in st.
func NewConfigSets(st *store.Store) *ConfigSets { return &ConfigSets{store: st} }

var (
	varKey       = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)
	portNumber   = regexp.MustCompile(`^[0-9]{1,5}(-[0-9]{1,5})?$`)
	networkModes = regexp.MustCompile(`^(bridge|host|none|default|container:.+|[A-Za-z0-9][A-Za-z0-9_.-]*)$`)
)

// validate checks c and trims its name.
func validate(c *store.ConfigSet) error {
	c.Name = strings.TrimSpace(c.Name)
	if c.Name == "" {
		return fault.Invalidf("Config set name is required")
	}
	if len(c.Name) > 100 {
		return fault.Invalidf("Config set name must be at most 100 characters")
	}
	seen := map[string]bool{}
	for _, v := range c.EnvVars {
		if !varKey.MatchString(v.Key) {
			return fault.Invalidf("Invalid variable name %q: use letters, digits and '_', not starting with a digit", v.Key)
		}
		if seen[v.Key] {
			return fault.Invalidf("Variable %q is given twice", v.Key)
		}
		seen[v.Key] = true
	}
	seen = map[string]bool{}
	for _, l := range c.Labels {
		if strings.TrimSpace(l.Key) == "" {
			return fault.Invalidf("Label names must not be empty")
		}
		if seen[l.Key] {
			return fault.Invalidf("Label %q is given twice", l.Key)
		}
		seen[l.Key] = true
	}
	for i, p := range c.Ports {
		if !portNumber.MatchString(p.ContainerPort) {
			return fault.Invalidf("Invalid container port %q", p.ContainerPort)
		}
		if p.HostPort != "" && !portNumber.MatchString(p.HostPort) {
			return fault.Invalidf("Invalid host port %q", p.HostPort)
		}
		if p.Protocol == "" {
			c.Ports[i].Protocol = "tcp"
		} else if !slices.Contains([]string{"tcp", "udp", "sctp"}, p.Protocol) {
			return fault.Invalidf("Invalid protocol %q: use tcp, udp or sctp", p.Protocol)
		}
	}
	for i, v := range c.Volumes {
		if err := validateVolume(&c.Volumes[i]); err != nil {
			return fault.Invalidf("Invalid volume %q: %s", v.HostPath+":"+v.ContainerPath, err.Error())
		}
	}
	if c.NetworkMode == "" {
		c.NetworkMode = "bridge"
	}
	if c.RestartPolicy == "" {
		c.RestartPolicy = "no"
	}
	if !networkModes.MatchString(c.NetworkMode) {
		return fault.Invalidf("Invalid network mode %q", c.NetworkMode)
	}
	if !slices.Contains(restartPolicies, c.RestartPolicy) {
		return fault.Invalidf("Invalid restart policy %q: use no, always, on-failure or unless-stopped", c.RestartPolicy)
	}
	return nil
}

// volumeName is a named volume's name as the engine allows it.
var volumeName = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9_.-]*$`)

// volumeModes are the words a bind's mode may combine (comma-separated).
var volumeModes = []string{"rw", "ro", "z", "Z", "shared", "rshared", "slave", "rslave", "private", "rprivate", "nocopy"}

// validateVolume checks v: an absolute host path or a volume name, an
// absolute container path, a known mode ("" is rw). Whether a host path
// may be mounted is decided, per environment, when a container is created
// from the set (the environment's security settings).
func validateVolume(v *store.ConfigVolume) error {
	v.HostPath, v.ContainerPath, v.Mode = strings.TrimSpace(v.HostPath), strings.TrimSpace(v.ContainerPath), strings.TrimSpace(v.Mode)
	switch {
	case v.HostPath == "":
		return errors.New("hostPath is required")
	case strings.Contains(v.HostPath, ":"):
		return errors.New("hostPath must not contain ':'")
	case !strings.HasPrefix(v.HostPath, "/") && !volumeName.MatchString(v.HostPath):
		return errors.New("hostPath must be an absolute path or a volume name")
	case !strings.HasPrefix(v.ContainerPath, "/") || strings.Contains(v.ContainerPath, ":"):
		return errors.New("containerPath must be an absolute path in the container")
	}
	if v.Mode == "" {
		v.Mode = "rw"
	}
	for _, m := range strings.Split(v.Mode, ",") {
		if !slices.Contains(volumeModes, m) {
			return fmt.Errorf("unknown mode %q: use rw or ro", m)
		}
	}
	return nil
}

func errConfigSetNotFound(id int64) error {
	return fault.New(fault.NotFound, fmt.Sprintf("Config set %d not found", id))
}

func errConfigSetExists(name string) error {
	return fault.New(fault.Conflict, fmt.Sprintf("A config set named '%s' already exists", name))
}

// translateSet turns the store's sentinels into the faults clients see.
func translateSet(err error, id int64, name string) error {
	switch {
	case errors.Is(err, store.ErrNotFound):
		return errConfigSetNotFound(id)
	case errors.Is(err, store.ErrConflict):
		return errConfigSetExists(name)
	}
	return err
}

// List returns every config set.
func (s *ConfigSets) List(ctx context.Context) ([]store.ConfigSet, error) {
	return s.store.ListConfigSets(ctx)
}

// Get returns one config set, or the 404.
func (s *ConfigSets) Get(ctx context.Context, id int64) (store.ConfigSet, error) {
	c, err := s.store.GetConfigSet(ctx, id)
	return c, translateSet(err, id, "")
}

// Create validates and records c.
func (s *ConfigSets) Create(ctx context.Context, c *store.ConfigSet) error {
	if err := validate(c); err != nil {
		return err
	}
	for _, v := range c.EnvVars {
		if v.IsSecret && v.Value == stacks.Mask {
			return fault.Invalidf("Variable %s: a new secret needs its value", v.Key)
		}
	}
	return translateSet(s.store.CreateConfigSet(ctx, c), 0, c.Name)
}

// Update replaces config set c.ID with c. A secret sent back masked keeps
// its stored value.
func (s *ConfigSets) Update(ctx context.Context, c *store.ConfigSet) error {
	if err := validate(c); err != nil {
		return err
	}
	old, err := s.Get(ctx, c.ID)
	if err != nil {
		return err
	}
	for i, v := range c.EnvVars {
		if !v.IsSecret || v.Value != stacks.Mask {
			continue
		}
		j := slices.IndexFunc(old.EnvVars, func(o store.ConfigVar) bool { return o.Key == v.Key && o.IsSecret })
		if j < 0 {
			return fault.Invalidf("Variable %s: a new secret needs its value", v.Key)
		}
		c.EnvVars[i].Value = old.EnvVars[j].Value
	}
	c.CreatedAt = old.CreatedAt
	return translateSet(s.store.UpdateConfigSet(ctx, c), c.ID, c.Name)
}

// Delete removes a config set.
func (s *ConfigSets) Delete(ctx context.Context, id int64) error {
	return translateSet(s.store.DeleteConfigSet(ctx, id), id, "")
}

// Masked returns c with its secret values replaced by the mask clients
// see (and send back to keep them).
func Masked(c store.ConfigSet) store.ConfigSet {
	vars := make([]store.ConfigVar, len(c.EnvVars))
	for i, v := range c.EnvVars {
		if v.IsSecret {
			v.Value = stacks.Mask
		}
		vars[i] = v
	}
	c.EnvVars = vars
	return c
}
