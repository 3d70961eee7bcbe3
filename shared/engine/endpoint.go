package engine

import "time"

// Endpoint is how Berth reaches the engine of one environment: the
// connection fields of the environment, without anything Berth's store adds.
type Endpoint struct {
	ID             int64
	ConnectionType string // Socket, Direct, AgentStandard or AgentEdge
	Host           string
	Port           int
	Protocol       string // http | https
	SocketPath     string
	TLSCA          string
	TLSCert        string
	TLSKey         string
	TLSSkipVerify  bool
	AgentToken     string
	// UpdatedAt stamps the settings: a cached client built from an older
	// stamp is rebuilt.
	UpdatedAt time.Time
}
