package api

import (
	"encoding/json"
	"net/http"
	"strings"

	"github.com/gin-gonic/gin"

	"github.com/berth-dev/berth/server/internal/files"
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
	res, err := h.svc.Update(c.Request.Context(), envOf(c), c.Param("id"), req.spec())
	if err != nil {
		return err
	}
	return writeJSON(c, http.StatusOK, map[string]any{"success": true, "warnings": res.Warnings, "hostConfig": res.HostConfig})
}
