package hawser

import "encoding/json"

// The frames of the Hawser edge protocol, version 1.0 (JSON text messages;
// field names as the agent sends and reads them).

// protocolVersion is the protocol this hub speaks.
const protocolVersion = "1.0"

// frame is what every message has: its type, and the ids that route it.
type frame struct {
	Type      string `json:"type"`
	RequestID string `json:"requestId,omitempty"`
	ExecID    string `json:"execId,omitempty"`
}

type helloFrame struct {
	Type          string   `json:"type"`
	Version       string   `json:"version"`
	Protocol      string   `json:"protocol"`
	AgentID       string   `json:"agentId"`
	AgentName     string   `json:"agentName"`
	Token         string   `json:"token"`
	DockerVersion string   `json:"dockerVersion"`
	Hostname      string   `json:"hostname"`
	Capabilities  []string `json:"capabilities"`
}

type welcomeFrame struct {
	Type          string `json:"type"`
	ServerID      string `json:"serverId"`
	Version       string `json:"version"`
	EnvironmentID int64  `json:"environmentId"`
}

// errorFrame: the hub's refusal carries message; an agent's failure of a
// request or exec carries error (and the id it concerns).
type errorFrame struct {
	Type      string `json:"type"`
	RequestID string `json:"requestId,omitempty"`
	Message   string `json:"message,omitempty"`
	Error     string `json:"error,omitempty"`
	Code      string `json:"code,omitempty"`
}

type requestFrame struct {
	Type      string            `json:"type"`
	RequestID string            `json:"requestId"`
	Method    string            `json:"method"`
	Path      string            `json:"path"`
	Headers   map[string]string `json:"headers"`
	Body      json.RawMessage   `json:"body,omitempty"`
	IsBinary  bool              `json:"isBinary,omitempty"`
	Streaming bool              `json:"streaming"`
}

type responseFrame struct {
	Type       string            `json:"type"`
	RequestID  string            `json:"requestId"`
	StatusCode int               `json:"statusCode"`
	Headers    map[string]string `json:"headers"`
	Body       string            `json:"body"`
	IsBinary   bool              `json:"isBinary"`
}

type streamFrame struct {
	Type      string `json:"type"`
	RequestID string `json:"requestId"`
	Data      []byte `json:"data"` // base64 in JSON
	Stream    string `json:"stream,omitempty"`
}

type streamEndFrame struct {
	Type      string `json:"type"`
	RequestID string `json:"requestId"`
	Reason    string `json:"reason,omitempty"`
}

type pingFrame struct {
	Type      string `json:"type"`
	Timestamp int64  `json:"timestamp"`
}

type metricsFrame struct {
	Type      string `json:"type"`
	Timestamp int64  `json:"timestamp"`
	Metrics   struct {
		CPUUsage       float64 `json:"cpuUsage"`
		CPUCores       int     `json:"cpuCores"`
		MemoryTotal    uint64  `json:"memoryTotal"`
		MemoryUsed     uint64  `json:"memoryUsed"`
		MemoryFree     uint64  `json:"memoryFree"`
		DiskTotal      uint64  `json:"diskTotal"`
		DiskUsed       uint64  `json:"diskUsed"`
		DiskFree       uint64  `json:"diskFree"`
		NetworkRxBytes uint64  `json:"networkRxBytes"`
		NetworkTxBytes uint64  `json:"networkTxBytes"`
		Uptime         uint64  `json:"uptime"`
	} `json:"metrics"`
}

type execStartFrame struct {
	Type        string `json:"type"`
	ExecID      string `json:"execId"`
	ContainerID string `json:"containerId"`
	Cmd         string `json:"cmd"`
	User        string `json:"user"`
	Cols        int    `json:"cols"`
	Rows        int    `json:"rows"`
}

type execDataFrame struct {
	Type   string `json:"type"`
	ExecID string `json:"execId"`
	Data   string `json:"data"` // base64
}

type execResizeFrame struct {
	Type   string `json:"type"`
	ExecID string `json:"execId"`
	Cols   int    `json:"cols"`
	Rows   int    `json:"rows"`
}

type execEndFrame struct {
	Type   string `json:"type"`
	ExecID string `json:"execId"`
	Reason string `json:"reason,omitempty"`
}
