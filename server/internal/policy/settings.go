// Package policy holds the security settings of an environment — what a
// user who is not an administrator may ask of the host behind its engine
// (bind mounts of host paths, privileged mode, the host's namespaces,
// devices, added capabilities, security-opt overrides) — and the one check
// that every path creating a container or deploying a compose stack calls.
//
// Administrators are never restricted. A caller the context does not name
// (scheduled git syncs, webhooks) is the system, restricted like any
// non-administrator: a stack accepted when it was created cannot gain a
// privileged service through a later push.
package policy

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/berth-dev/berth/server/internal/store"
	"github.com/berth-dev/berth/shared/engine"
	"github.com/berth-dev/berth/shared/fault"
)

// Settings are an environment's security settings: what non-administrators
// may ask of its host. Every Allow… is a switch; AllowedBindPaths, when not
// empty, limits allowed bind mounts to those host directories.
type Settings struct {
	AllowBindMounts  bool     `json:"allowBindMounts"`
	AllowedBindPaths []string `json:"allowedBindPaths"`
	AllowPrivileged  bool     `json:"allowPrivileged"`
	AllowHostNetwork bool     `json:"allowHostNetwork"`
	AllowHostPID     bool     `json:"allowHostPID"`
	AllowHostIPC     bool     `json:"allowHostIPC"`
	AllowDevices     bool     `json:"allowDevices"`
	AllowCapAdd      bool     `json:"allowCapAdd"`
	AllowSecurityOpt bool     `json:"allowSecurityOpt"`
}

// Defaults are the settings of an environment an administrator never
// changed: everything allowed, so that stacks written before these settings
// existed keep deploying. Berth's own data directory stays out of reach of
// non-administrators on its own host whatever the settings (see Service.For).
func Defaults() Settings {
	return Settings{AllowBindMounts: true, AllowedBindPaths: []string{}, AllowPrivileged: true, AllowHostNetwork: true,
		AllowHostPID: true, AllowHostIPC: true, AllowDevices: true, AllowCapAdd: true, AllowSecurityOpt: true}
}

// maxBindPaths bounds the allowed directories list.
const maxBindPaths = 100

// Normalize checks the settings an administrator submits and cleans the
// allowed directories (absolute, cleaned, without duplicates).
func (s *Settings) Normalize() error {
	seen := map[string]bool{}
	paths := []string{}
	if len(s.AllowedBindPaths) > maxBindPaths {
		return fault.Invalidf("allowedBindPaths: at most %d directories", maxBindPaths)
	}
	for _, p := range s.AllowedBindPaths {
		p = strings.TrimSpace(p)
		if p == "" {
			continue
		}
		if !strings.HasPrefix(p, "/") || strings.ContainsRune(p, 0) {
			return fault.Invalidf("allowedBindPaths: %q is not an absolute path", p)
		}
		p = filepath.Clean(p)
		if p == "/" {
			return fault.Invalidf("allowedBindPaths: \"/\" would allow every host path; turn bind mounts on without a list instead")
		}
		if !seen[p] {
			seen[p] = true
			paths = append(paths, p)
		}
	}
	s.AllowedBindPaths = paths
	return nil
}

// Service reads and stores the settings and builds the policy of an
// environment.
type Service struct {
	store   *store.Store
	dataDir string
}

// New returns a Service storing settings in st; dataDir is Berth's data
// directory, never bound by non-administrators on Berth's own host.
func New(st *store.Store, dataDir string) *Service {
	return &Service{store: st, dataDir: dataDir}
}

// settingKey is the settings key of environment envID's security settings.
func settingKey(envID int64) string { return "env." + strconv.FormatInt(envID, 10) + ".security" }

// Settings returns environment envID's security settings (Defaults when an
// administrator never saved any).
func (s *Service) Settings(ctx context.Context, envID int64) (Settings, error) {
	v, err := s.store.GetSetting(ctx, settingKey(envID))
	if errors.Is(err, store.ErrNotFound) {
		return Defaults(), nil
	}
	if err != nil {
		return Settings{}, err
	}
	set := Defaults()
	if err := json.Unmarshal([]byte(v), &set); err != nil {
		return Settings{}, fmt.Errorf("policy: security settings of environment %d: %w", envID, err)
	}
	if set.AllowedBindPaths == nil {
		set.AllowedBindPaths = []string{}
	}
	return set, nil
}

// SetSettings checks and stores environment envID's security settings and
// returns them as stored.
func (s *Service) SetSettings(ctx context.Context, envID int64, set Settings) (Settings, error) {
	if err := set.Normalize(); err != nil {
		return Settings{}, err
	}
	b, err := json.Marshal(set)
	if err != nil {
		return Settings{}, err
	}
	if err := s.store.SetSetting(ctx, settingKey(envID), string(b)); err != nil {
		return Settings{}, err
	}
	return set, nil
}

// For returns the policy restricted callers meet on env: its settings and,
// when env's engine is reached through a socket on Berth's own host,
// Berth's data directory as a protected path.
func (s *Service) For(ctx context.Context, env store.Environment) (Policy, error) {
	set, err := s.Settings(ctx, env.ID)
	if err != nil {
		return Policy{}, err
	}
	p := Policy{Settings: set}
	if OnBerthHost(env) {
		p.local = true
		if s.dataDir != "" {
			if abs, err := filepath.Abs(s.dataDir); err == nil {
				p.protected = append(p.protected, abs)
				if real := resolve(abs); real != abs {
					p.protected = append(p.protected, real)
				}
			}
		}
	}
	return p, nil
}

// OnBerthHost reports whether env's engine runs on Berth's own host: it is
// reached through a socket, which only a local engine offers.
func OnBerthHost(env store.Environment) bool {
	return env.ConnectionType == engine.Socket || env.ConnectionType == ""
}

// Check refuses what the actor of ctx may not ask of env: nothing for an
// administrator, else the first workload asking for what env's policy
// forbids (a 403 naming the rule).
func (s *Service) Check(ctx context.Context, env store.Environment, ws ...Workload) error {
	if ActorFrom(ctx).Admin {
		return nil
	}
	p, err := s.For(ctx, env)
	if err != nil {
		return err
	}
	for _, w := range ws {
		if err := p.Check(w); err != nil {
			return err
		}
	}
	return nil
}
