package volumes

import (
	"context"
	"errors"
	"maps"
	"slices"
	"strings"

	"github.com/berth-dev/berth/server/internal/store"
	"github.com/berth-dev/berth/shared/engine"
	"github.com/berth-dev/berth/shared/fault"
)

// CreateSpec is a volume to create, as clients describe it.
type CreateSpec struct {
	Name       string
	Driver     string            // default "local"
	DriverOpts map[string]string // for the local driver: type, device, o
	Labels     map[string]string
}

// DefaultDriver is the driver of a volume that names none.
const DefaultDriver = "local"

// MaxNameLen is the longest volume name: the local driver keeps each volume
// in a directory of that name, and file names have at most 255 bytes.
const MaxNameLen = 255

// localOpts are the options the local driver knows.
var localOpts = []string{"type", "device", "o"}

// Messages of invalid specs.
const (
	msgNameRequired = "Volume name is required"
	msgInvalidName  = "Invalid volume name: use 2 to 255 letters, digits, '_', '.' or '-', starting with a letter or digit"
)

// ValidateName checks a volume name against the rule every engine driver
// accepts: the spec's characters (letters, digits, '_', '.', '-') and the
// local driver's stricter [a-zA-Z0-9][a-zA-Z0-9_.-]+ (so at least two
// characters), at most MaxNameLen of them.
func ValidateName(name string) error {
	if name == "" {
		return fault.New(fault.Invalid, msgNameRequired)
	}
	if len(name) < 2 || len(name) > MaxNameLen {
		return fault.New(fault.Invalid, msgInvalidName)
	}
	if !engine.ValidName(name) {
		return fault.New(fault.Invalid, msgInvalidName)
	}
	return nil
}

// validate checks the spec and fills in the defaults.
func (sp *CreateSpec) validate() error {
	sp.Name = strings.TrimSpace(sp.Name)
	if err := ValidateName(sp.Name); err != nil {
		return err
	}
	sp.Driver = strings.TrimSpace(sp.Driver)
	if sp.Driver == "" {
		sp.Driver = DefaultDriver
	}
	if sp.Driver == DefaultDriver && len(sp.DriverOpts) > 0 {
		for _, k := range slices.Sorted(maps.Keys(sp.DriverOpts)) {
			if !slices.Contains(localOpts, k) {
				return fault.Invalidf("Invalid driver option %q: the local driver accepts type, device and o", k)
			}
		}
		if sp.DriverOpts["device"] == "" {
			return fault.New(fault.Invalid, "The local driver needs the device option when options are given")
		}
	}
	return nil
}

// Create creates a volume. Names are unique per environment: an existing
// name fails with 500 Failed to create volume and details naming it, as does
// every refusal of the engine. (The engine checks for an existing volume and
// creates in two calls; two creations of one name racing between them both
// succeed with the one volume, as the engine's own create would.)
func (s *Service) Create(ctx context.Context, env store.Environment, sp CreateSpec) (engine.Volume, error) {
	if err := sp.validate(); err != nil {
		return engine.Volume{}, err
	}
	c, err := s.engines.Client(ctx, env.Endpoint())
	if err != nil {
		return engine.Volume{}, opFault("create volume", err)
	}
	v, err := c.CreateVolume(ctx, engine.VolumeSpec{
		Name: sp.Name, Driver: sp.Driver, DriverOpts: sp.DriverOpts, Labels: sp.Labels,
	})
	if err != nil {
		if errors.Is(err, engine.ErrNotFound) { // e.g. an unknown driver plugin: not a missing volume
			return engine.Volume{}, createFault(err)
		}
		return engine.Volume{}, opFault("create volume", err)
	}
	return v, nil
}

// createFault is the 500 of a creation the engine refused, with its reason.
func createFault(err error) error {
	details := err.Error()
	var e *engine.Error
	if errors.As(err, &e) {
		details = strings.TrimPrefix(e.Msg, "Error response from daemon: ")
	}
	return fault.Wrap(fault.Internal, "Failed to create volume", err).WithDetails(details)
}
