package store

import "github.com/berth-dev/berth/shared/engine"

// Endpoint returns the connection settings of e, as the engine package
// takes them.
func (e Environment) Endpoint() engine.Endpoint {
	return engine.Endpoint{
		ID: e.ID, ConnectionType: e.ConnectionType, Host: e.Host, Port: e.Port, Protocol: e.Protocol,
		SocketPath: e.SocketPath, TLSCA: e.TLSCA, TLSCert: e.TLSCert, TLSKey: e.TLSKey,
		TLSSkipVerify: e.TLSSkipVerify, AgentToken: e.AgentToken, UpdatedAt: e.UpdatedAt,
	}
}
