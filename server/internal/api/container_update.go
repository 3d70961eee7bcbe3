package api

import (
	"encoding/json"
	"net/http"
	"strings"

	"github.com/gin-gonic/gin"

	"github.com/berth-dev/berth/server/internal/autoupdate"
	"github.com/berth-dev/berth/server/internal/files"
	"github.com/berth-dev/berth/shared/engine"
	"github.com/berth-dev/berth/shared/fault"
)

// updateContainerRequest is the body of POST …/update and …/update-runtime:
// the resources in camelCase (and the engine's PascalCase), and the restart
// policy as a string ("on-failure:3") or an object ({name, maximumRetryCount}).
type updateContainerRequest struct {
	Memory            *int64        `json:"memory"`
	MemorySwap        *int64        `json:"memorySwap"`
	MemoryReservation *int64        `json:"memoryReservation"`
	CPUShares         *int64        `json:"cpuShares"`
	NanoCPUs          *int64        `json:"nanoCpus"`
	CPUs              *float64      `json:"cpus"`
	CPUQuota          *int64        `json:"cpuQuota"`
	CPUPeriod         *int64        `json:"cpuPeriod"`
	CpusetCpus        *string       `json:"cpusetCpus"`
	PidsLimit         *int64        `json:"pidsLimit"`
	RestartPolicy     restartPolicy `json:"restartPolicy"`
	MaxRetryCount     *int          `json:"maximumRetryCount"`
	RestartMaxRetries *int          `json:"restartMaxRetries"` // the reference's name

	// The rest of the engine's update document (the reference's
	// update-runtime passes it through): Berth does not change these, so a
	// value other than the engine's "unchanged" is refused.
	CpusetMems           *string           `json:"CpusetMems"`
	CPURealtimePeriod    *int64            `json:"CpuRealtimePeriod"`
	CPURealtimeRuntime   *int64            `json:"CpuRealtimeRuntime"`
	MemorySwappiness     *int64            `json:"MemorySwappiness"`
	KernelMemory         *int64            `json:"KernelMemory"`
	BlkioWeight          *int64            `json:"BlkioWeight"`
	BlkioWeightDevice    []json.RawMessage `json:"BlkioWeightDevice"`
	BlkioDeviceReadBps   []json.RawMessage `json:"BlkioDeviceReadBps"`
	BlkioDeviceWriteBps  []json.RawMessage `json:"BlkioDeviceWriteBps"`
	BlkioDeviceReadIOps  []json.RawMessage `json:"BlkioDeviceReadIOps"`
	BlkioDeviceWriteIOps []json.RawMessage `json:"BlkioDeviceWriteIOps"`
}

// unsupported names the first field of the engine's update document that
// asks for a change Berth does not make ("" when none does). Zero, an
// empty string and an empty list are what the reference's clients send
// for "unchanged".
func (req updateContainerRequest) unsupported() string {
	ints := []struct {
		name string
		v    *int64
	}{{"CpuRealtimePeriod", req.CPURealtimePeriod}, {"CpuRealtimeRuntime", req.CPURealtimeRuntime},
		{"KernelMemory", req.KernelMemory}, {"BlkioWeight", req.BlkioWeight}}
	for _, f := range ints {
		if f.v != nil && *f.v != 0 {
			return f.name
		}
	}
	if req.MemorySwappiness != nil && *req.MemorySwappiness != -1 && *req.MemorySwappiness != 0 {
		return "MemorySwappiness"
	}
	if req.CpusetMems != nil && *req.CpusetMems != "" {
		return "CpusetMems"
	}
	lists := []struct {
		name string
		v    []json.RawMessage
	}{{"BlkioWeightDevice", req.BlkioWeightDevice}, {"BlkioDeviceReadBps", req.BlkioDeviceReadBps},
		{"BlkioDeviceWriteBps", req.BlkioDeviceWriteBps}, {"BlkioDeviceReadIOps", req.BlkioDeviceReadIOps},
		{"BlkioDeviceWriteIOps", req.BlkioDeviceWriteIOps}}
	for _, f := range lists {
		if len(f.v) > 0 {
			return f.name
		}
	}
	return ""
}

// restartPolicy is a restart policy sent as a string or as an object.
type restartPolicy struct {
	Name          string
	MaxRetryCount *int
}

func (r *restartPolicy) UnmarshalJSON(b []byte) error {
	s := strings.TrimSpace(string(b))
	if s == "null" {
		return nil
	}
	if strings.HasPrefix(s, `"`) {
		return json.Unmarshal(b, &r.Name)
	}
	var o struct {
		Name              string `json:"name"`
		MaximumRetryCount *int   `json:"maximumRetryCount"`
	}
	if err := json.Unmarshal(b, &o); err != nil {
		return fault.Invalidf("restartPolicy must be a string such as \"unless-stopped\" or an object {name, maximumRetryCount}")
	}
	if o.Name == "" {
		var pascal struct {
			Name              string `json:"Name"`
			MaximumRetryCount *int   `json:"MaximumRetryCount"`
		}
		_ = json.Unmarshal(b, &pascal)
		o.Name, o.MaximumRetryCount = pascal.Name, pascal.MaximumRetryCount
	}
	r.Name, r.MaxRetryCount = o.Name, o.MaximumRetryCount
	return nil
}

func (req updateContainerRequest) spec() files.UpdateSpec {
	sp := files.UpdateSpec{Memory: req.Memory, MemorySwap: req.MemorySwap, MemoryReservation: req.MemoryReservation,
		CPUShares: req.CPUShares, NanoCPUs: req.NanoCPUs, CPUs: req.CPUs, CPUQuota: req.CPUQuota, CPUPeriod: req.CPUPeriod,
		CpusetCpus: req.CpusetCpus, PidsLimit: req.PidsLimit, RestartPolicy: req.RestartPolicy.Name,
		MaxRetryCount: req.RestartPolicy.MaxRetryCount}
	if sp.MaxRetryCount == nil {
		sp.MaxRetryCount = req.MaxRetryCount
	}
	return sp
}

// updateContainer serves POST …/update and …/update-runtime: both change
// the resources and restart policy in place and answer with the settings
// that now hold ({success, warnings, hostConfig}).
func (h *fileHandlers) updateContainer(c *gin.Context) error {
	var req updateContainerRequest
	if err := bindJSON(c, &req); err != nil {
		return err
	}
	if f := req.unsupported(); f != "" {
		return fault.Invalidf("%s cannot be changed by Berth: memory, swap, reservation, CPU shares, quota, period, cpus, cpuset CPUs, PIDs limit and the restart policy can", f)
	}
	res, err := h.svc.Update(c.Request.Context(), envOf(c), c.Param("id"), req.spec())
	if err != nil {
		return err
	}
	return writeJSON(c, http.StatusOK, map[string]any{"success": true, "warnings": res.Warnings, "hostConfig": res.HostConfig})
}

// updateContainerInput is the body of POST /api/containers/{id}/update: the
// container's settings to change (the reference's create options, merged
// over the container's whole configuration) and the reference's control
// flags.
type updateContainerInput struct {
	containerSettingsInput
	StartAfterUpdate bool `json:"startAfterUpdate"`
	RepullImage      bool `json:"repullImage"`

	keys map[string]bool // the fields sent
	raw  []byte
}

// decode reads body into u and notes the fields sent.
func (u *updateContainerInput) decode(body []byte) error {
	if len(body) == 0 {
		return nil
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal(body, &m); err != nil {
		return fault.Wrap(fault.Invalid, "Invalid JSON body", err).WithDetails(err.Error())
	}
	if err := json.Unmarshal(body, u); err != nil {
		if f, ok := fault.As(err); ok {
			return f
		}
		return fault.Wrap(fault.Invalid, "Invalid JSON body", err).WithDetails(err.Error())
	}
	u.keys = map[string]bool{}
	for k := range m {
		u.keys[k] = true
	}
	u.raw = body
	return nil
}

// inPlaceFields are the fields the engine changes on a container as it is
// (docker update); control fields change nothing themselves.
var inPlaceFields = map[string]bool{"memory": true, "memorySwap": true, "memoryReservation": true, "cpuShares": true,
	"nanoCpus": true, "cpus": true, "cpuQuota": true, "cpuPeriod": true, "cpusetCpus": true, "pidsLimit": true,
	"restartPolicy": true, "maximumRetryCount": true, "restartMaxRetries": true, "startAfterUpdate": true}

// inPlace reports whether every field sent can be changed in place. A
// memory or CPU limit sent as 0 (removed) cannot: the engine's update takes
// 0 as "unchanged" and refuses -1 ("Minimum memory limit allowed is 6MB",
// "Range of CPUs is from 0.01"); a CPU quota of -1 lifts the limit from the
// cgroup but leaves nanoCpus in the configuration, and a limit set later
// then no longer holds after a restart. Such a change recreates.
func (u updateContainerInput) inPlace() bool {
	for k := range u.keys {
		if !inPlaceFields[k] {
			return false
		}
	}
	for _, v := range []*int64{u.Memory, u.MemoryReservation, u.NanoCPUs} {
		if v != nil && *v == 0 {
			return false
		}
	}
	if u.CPUs != nil && *u.CPUs == 0 {
		return false
	}
	return !u.StartAfterUpdate
}

// containerUpdatedAnswer is the answer of POST …/update: the container's
// id (a new one when it was recreated), and, for a change made in place,
// the engine's warnings and the resource settings that now hold.
type containerUpdatedAnswer struct {
	Success    bool                  `json:"success"`
	ID         string                `json:"id"`
	Recreated  bool                  `json:"recreated"`
	Warnings   []string              `json:"warnings,omitempty"`
	HostConfig *engine.HostResources `json:"hostConfig,omitempty"`
}

// updateContainerSettings serves POST /api/containers/{id}/update. Changes
// of resources and restart policy only are made in place; anything else
// recreates the container with the body merged over its configuration,
// through the auto-update's recreate (the old container comes back if the
// new one fails to be created or to stay up). The environment's security
// settings judge the resulting configuration.
func (s *Server) updateContainerSettings(c *gin.Context) error {
	ctx, env, id := c.Request.Context(), envOf(c), c.Param("id")
	var body json.RawMessage
	if err := bindJSON(c, &body); err != nil {
		return err
	}
	var req updateContainerInput
	if err := req.decode(body); err != nil {
		return err
	}
	if req.inPlace() {
		var rr updateContainerRequest
		if len(req.raw) > 0 {
			if err := json.Unmarshal(req.raw, &rr); err != nil {
				return fault.Wrap(fault.Invalid, "Invalid JSON body", err).WithDetails(err.Error())
			}
		}
		sp := rr.spec()
		if sp.MaxRetryCount == nil {
			sp.MaxRetryCount = rr.RestartMaxRetries
		}
		res, err := files.New(s.engines, s.helperImg).Update(ctx, env, id, sp)
		if err != nil {
			return err
		}
		full, err := s.containers.ID(ctx, env, id)
		if err != nil {
			return err
		}
		return writeJSON(c, http.StatusOK, containerUpdatedAnswer{Success: true, ID: full, Warnings: res.Warnings, HostConfig: &res.HostConfig})
	}
	set, err := req.settings()
	if err != nil {
		return err
	}
	if req.RepullImage {
		img := set.Image
		if img == "" {
			return fault.New(fault.Invalid, "repullImage needs the image to pull")
		}
		if _, res, failed := s.images.Pull(ctx, env, img, false, func(string, any) {}); failed {
			msg, _ := res.(map[string]any)["error"].(string)
			return fault.New(fault.Internal, "Failed to pull image").WithDetails(msg)
		}
	}
	newID, err := s.autoupdate.Reconfigure(ctx, env, id, autoupdate.Reconfiguration{Settings: set, Name: req.Name,
		Start: req.StartAfterUpdate, Allow: func(n engine.HostNeeds) error {
			return s.policy().Check(ctx, env, workloadOf(n))
		}})
	if err != nil {
		return err
	}
	return writeJSON(c, http.StatusOK, containerUpdatedAnswer{Success: true, ID: newID, Recreated: true})
}
