package networks

import (
	"context"
	"errors"
	"net/netip"
	"strings"

	"github.com/berth-dev/berth/server/internal/store"
	"github.com/berth-dev/berth/shared/engine"
	"github.com/berth-dev/berth/shared/fault"
)

// CreateSpec is a network to create, as clients describe it.
type CreateSpec struct {
	Name       string
	Driver     string // default "bridge"
	Internal   bool
	Attachable bool
	EnableIPv6 bool
	Ingress    bool
	Labels     map[string]string
	Options    map[string]string
	IPAMDriver string              // default: the engine's ("default")
	IPAM       []engine.IPAMConfig // subnet, gateway, ipRange
}

// DefaultDriver is the driver of a network that names none.
const DefaultDriver = "bridge"

// MaxNameLen bounds network names (a bridge's interface name is derived
// from the id, not the name, so this is only a sanity limit).
const MaxNameLen = 255

const msgInvalidName = "Invalid network name: use letters, digits, '_', '.' or '-', starting with a letter or digit"

// ValidateName checks a network name: the characters engines and compose
// use, [a-zA-Z0-9][a-zA-Z0-9_.-]*, which keeps names usable in paths.
func ValidateName(name string) error {
	if name == "" {
		return fault.New(fault.Invalid, "Network name is required")
	}
	if len(name) > MaxNameLen {
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
	for i := range sp.IPAM {
		p := &sp.IPAM[i]
		p.Subnet, p.Gateway, p.IPRange = strings.TrimSpace(p.Subnet), strings.TrimSpace(p.Gateway), strings.TrimSpace(p.IPRange)
		var subnet netip.Prefix
		if p.Subnet != "" {
			var err error
			if subnet, err = netip.ParsePrefix(p.Subnet); err != nil {
				return fault.Invalidf("Invalid subnet %q: use CIDR notation such as 172.30.0.0/16", p.Subnet)
			}
		} else if p.Gateway != "" || p.IPRange != "" {
			return fault.New(fault.Invalid, "A gateway or IP range needs a subnet")
		}
		if p.Gateway != "" {
			gw, err := netip.ParseAddr(p.Gateway)
			if err != nil {
				return fault.Invalidf("Invalid gateway %q: use an IP address such as 172.30.0.1", p.Gateway)
			}
			if !subnet.Contains(gw) {
				return fault.Invalidf("Gateway %s is not in subnet %s", p.Gateway, p.Subnet)
			}
		}
		if p.IPRange != "" {
			r, err := netip.ParsePrefix(p.IPRange)
			if err != nil {
				return fault.Invalidf("Invalid IP range %q: use CIDR notation such as 172.30.5.0/24", p.IPRange)
			}
			if r.Bits() < subnet.Bits() || !subnet.Contains(r.Masked().Addr()) {
				return fault.Invalidf("IP range %s is not in subnet %s", p.IPRange, p.Subnet)
			}
		}
	}
	return nil
}

// Create creates a network and returns its id. Names are unique per
// environment: an existing name is 409.
func (s *Service) Create(ctx context.Context, env store.Environment, sp CreateSpec) (string, error) {
	if err := sp.validate(); err != nil {
		return "", err
	}
	c, err := s.engines.Client(ctx, env.Endpoint())
	if err != nil {
		return "", opFault("create network", msgNotFound, err)
	}
	id, err := c.CreateNetwork(ctx, engine.NetworkSpec{
		Name: sp.Name, Driver: sp.Driver, Internal: sp.Internal, Attachable: sp.Attachable,
		EnableIPv6: sp.EnableIPv6, Ingress: sp.Ingress, Labels: sp.Labels, Options: sp.Options, IPAMDriver: sp.IPAMDriver, IPAM: sp.IPAM,
	})
	if err != nil {
		switch {
		case errors.Is(err, engine.ErrConflict):
			return "", fault.Wrap(fault.Conflict, "A network with this name already exists", err).WithDetails(engine.Details(err))
		case errors.Is(err, engine.ErrNotFound): // e.g. an unknown driver plugin
			return "", fault.Wrap(fault.Internal, "Failed to create network", err).WithDetails(engine.Details(err))
		}
		return "", opFault("create network", msgNotFound, err)
	}
	return id, nil
}
