package files

import (
	"context"
	"errors"
	"math"
	"regexp"
	"strconv"
	"strings"

	"github.com/berth-dev/berth/server/internal/store"
	"github.com/berth-dev/berth/shared/engine"
	"github.com/berth-dev/berth/shared/fault"
)

// UpdateSpec is a change of a container's resources and restart policy as
// clients send it; nil fields are left unchanged.
type UpdateSpec struct {
	Memory            *int64
	MemorySwap        *int64
	MemoryReservation *int64
	CPUShares         *int64
	NanoCPUs          *int64
	CPUs              *float64 // alternative to NanoCPUs, in CPUs
	CPUQuota          *int64
	CPUPeriod         *int64
	CpusetCpus        *string
	PidsLimit         *int64
	RestartPolicy     string // no, always, unless-stopped, on-failure[:N]
	MaxRetryCount     *int   // with on-failure
}

// minMemory is the engine's own lower bound of a memory limit.
const minMemory = 6 << 20

var cpusetPattern = regexp.MustCompile(`^[0-9]+(-[0-9]+)?(,[0-9]+(-[0-9]+)?)*$`)

// resourceUpdate validates sp and turns it into the engine's form.
func (sp UpdateSpec) resourceUpdate() (engine.ResourceUpdate, error) {
	var u engine.ResourceUpdate
	nonNegative := func(name string, v *int64) (int64, error) {
		if v == nil {
			return 0, nil
		}
		if *v < 0 {
			return 0, fault.Invalidf("%s must not be negative", name)
		}
		return *v, nil
	}
	var err error
	if sp.Memory != nil && *sp.Memory != 0 && *sp.Memory < minMemory {
		return u, fault.Invalidf("memory must be at least 6 MiB (%d bytes)", minMemory)
	}
	if u.Memory, err = nonNegative("memory", sp.Memory); err != nil {
		return u, err
	}
	if sp.MemorySwap != nil {
		switch {
		case *sp.MemorySwap < -1:
			return u, fault.New(fault.Invalid, "memorySwap must be -1 (unlimited), 0 or a number of bytes")
		case *sp.MemorySwap > 0 && sp.Memory != nil && *sp.MemorySwap < *sp.Memory:
			return u, fault.New(fault.Invalid, "memorySwap must not be less than memory (it counts memory plus swap)")
		}
		u.MemorySwap = *sp.MemorySwap
	}
	if u.MemoryReservation, err = nonNegative("memoryReservation", sp.MemoryReservation); err != nil {
		return u, err
	}
	if sp.CPUShares != nil && *sp.CPUShares != 0 && *sp.CPUShares < 2 {
		return u, fault.New(fault.Invalid, "cpuShares must be at least 2 (or 0 to keep the current value)")
	}
	if u.CPUShares, err = nonNegative("cpuShares", sp.CPUShares); err != nil {
		return u, err
	}
	if u.NanoCPUs, err = nonNegative("nanoCpus", sp.NanoCPUs); err != nil {
		return u, err
	}
	if sp.CPUs != nil {
		if *sp.CPUs < 0 || math.IsNaN(*sp.CPUs) || math.IsInf(*sp.CPUs, 0) {
			return u, fault.New(fault.Invalid, "cpus must be a non-negative number")
		}
		n := int64(math.Round(*sp.CPUs * 1e9))
		if sp.NanoCPUs != nil && *sp.NanoCPUs != n {
			return u, fault.New(fault.Invalid, "cpus and nanoCpus disagree: send one of them")
		}
		u.NanoCPUs = n
	}
	if u.CPUQuota, err = nonNegative("cpuQuota", sp.CPUQuota); err != nil {
		return u, err
	}
	if u.CPUPeriod, err = nonNegative("cpuPeriod", sp.CPUPeriod); err != nil {
		return u, err
	}
	if u.NanoCPUs != 0 && (u.CPUQuota != 0 || u.CPUPeriod != 0) {
		return u, fault.New(fault.Invalid, "nanoCpus (cpus) and cpuQuota/cpuPeriod cannot be set together")
	}
	if sp.CpusetCpus != nil {
		v := strings.ReplaceAll(*sp.CpusetCpus, " ", "")
		if v != "" && !cpusetPattern.MatchString(v) {
			return u, fault.Invalidf("Invalid cpusetCpus %q: use CPU numbers and ranges such as 0-2,4", *sp.CpusetCpus)
		}
		u.CpusetCpus = v
	}
	if sp.PidsLimit != nil {
		if *sp.PidsLimit < -1 {
			return u, fault.New(fault.Invalid, "pidsLimit must be -1 or 0 (unlimited) or a positive number")
		}
		v := *sp.PidsLimit
		u.PidsLimit = &v
	}
	if sp.RestartPolicy != "" {
		rp := strings.TrimSpace(sp.RestartPolicy)
		name, count, hasCount := strings.Cut(rp, ":")
		switch name {
		case "no", "always", "unless-stopped":
			if hasCount {
				return u, fault.Invalidf("Restart policy %q takes no retry count", name)
			}
		case "on-failure":
			if n, err := strconv.Atoi(count); hasCount && (err != nil || n < 0) {
				return u, fault.Invalidf("Invalid retry count %q of the on-failure restart policy", count)
			}
		default:
			return u, fault.Invalidf("Invalid restart policy %q: use no, always, unless-stopped or on-failure", name)
		}
		if sp.MaxRetryCount != nil {
			if name != "on-failure" || hasCount {
				return u, fault.New(fault.Invalid, "maximumRetryCount applies only to the on-failure restart policy")
			}
			if *sp.MaxRetryCount < 0 {
				return u, fault.New(fault.Invalid, "maximumRetryCount must not be negative")
			}
			rp += ":" + strconv.Itoa(*sp.MaxRetryCount)
		}
		u.RestartPolicy = rp
	}
	return u, nil
}

// UpdateResult is the outcome of an update: the engine's warnings and the
// container's resource settings after it.
type UpdateResult struct {
	Warnings   []string             `json:"warnings"`
	HostConfig engine.HostResources `json:"hostConfig"`
}

// Update changes container id's resources and restart policy in place
// (running or stopped) and returns the settings that now hold.
func (s *Service) Update(ctx context.Context, env store.Environment, id string, sp UpdateSpec) (UpdateResult, error) {
	u, err := sp.resourceUpdate()
	if err != nil {
		return UpdateResult{}, err
	}
	t, err := s.open(ctx, env, id, "update container")
	if err != nil {
		return UpdateResult{}, err
	}
	warnings, err := t.c.UpdateContainer(ctx, t.id, u)
	if err != nil {
		if errors.Is(err, engine.ErrInvalid) && !strings.Contains(err.Error(), "Error response") {
			return UpdateResult{}, fault.Wrap(fault.Invalid, strings.TrimPrefix(err.Error(), engine.ErrInvalid.Error()+": "), err)
		}
		return UpdateResult{}, opFault("update container", err)
	}
	hc, err := t.c.ContainerResources(ctx, t.id)
	if err != nil {
		return UpdateResult{}, opFault("update container", err)
	}
	return UpdateResult{Warnings: warnings, HostConfig: hc}, nil
}
