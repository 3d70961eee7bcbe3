package engine

import (
	"context"
	"errors"
	"fmt"
	"io"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/berth-dev/berth/shared/agentpb"
)

// Agents opens operation streams to the Berth agents of agent environments
// (agent-standard: Berth dials the agent; agent-edge: the agent dialled
// Berth). Berth's agents package provides it; Manager.UseAgents installs it.
type Agents interface {
	// Operate opens one operation stream to env's agent. The stream lives
	// until ctx ends or it is closed. An edge agent that is not connected
	// is an error wrapping ErrAgentAbsent.
	Operate(ctx context.Context, env Endpoint) (AgentStream, error)
}

// AgentStream is one operation's stream: Berth sends inputs (the first names
// the operation) and receives the agent's outputs.
type AgentStream interface {
	Send(*agentpb.OperationInput) error
	// Recv returns the next output; io.EOF when the agent ended the stream.
	Recv() (*agentpb.OperationOutput, error)
	// Close ends the operation; a pending Recv returns.
	Close()
}

// ErrAgentAbsent is the failure of an edge environment whose agent is not
// connected; its text is the spec's message.
//
//lint:ignore ST1005 the spec's message, as clients see it
var ErrAgentAbsent = errors.New("Edge agent not connected")

// ErrAgentLost is an operation whose agent connection broke before it ended.
var ErrAgentLost = errors.New("agent connection lost")

// agentLink is how a Client of an agent environment reaches its agent.
type agentLink struct {
	agents Agents
	env    Endpoint
}

// operate opens an operation stream and sends its first input.
func (a *agentLink) operate(ctx context.Context, first *agentpb.OperationInput) (AgentStream, error) {
	st, err := a.agents.Operate(ctx, a.env)
	if err != nil {
		return nil, agentOpenError(a.env.ID, err)
	}
	if err := sendFirst(st, first); err != nil {
		st.Close()
		return nil, err
	}
	return st, nil
}

// sendFirst sends an operation's first input. When the agent ended the call
// before it went out (a refused token, say), gRPC's Send reports only
// io.EOF and the call's status comes with Recv: the error tells that status.
func sendFirst(st AgentStream, first *agentpb.OperationInput) error {
	err := st.Send(first)
	if errors.Is(err, io.EOF) {
		for {
			_, rerr := st.Recv()
			if rerr == nil {
				continue
			}
			if !errors.Is(rerr, io.EOF) {
				err = rerr
			}
			break
		}
	}
	if err != nil {
		return lostError(err)
	}
	return nil
}

// agentOpenError is the error of an operation that could not be opened: the
// environment is offline (its cause says why).
func agentOpenError(envID int64, err error) error {
	var oe *OfflineError
	if errors.As(err, &oe) {
		return err
	}
	return &OfflineError{EnvID: envID, Cause: err}
}

// lostError is an operation stream that broke.
func lostError(err error) error {
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return err
	}
	if errors.Is(err, ErrAgentAbsent) {
		return &Error{Kind: ErrOffline, Msg: ErrAgentAbsent.Error(), err: err}
	}
	if st, ok := status.FromError(err); ok {
		switch st.Code() {
		case codes.Unauthenticated:
			return &Error{Kind: ErrUnauthorized, Msg: "The agent refused Berth's token: " + st.Message(), err: err}
		case codes.PermissionDenied:
			return &Error{Kind: ErrUnauthorized, Msg: "The agent refused the call: " + st.Message(), err: err}
		}
	}
	return &Error{Kind: ErrOffline, Msg: "Agent connection lost during the operation", err: fmt.Errorf("%w: %w", ErrAgentLost, err)}
}

// recvUntilDone reads outputs until done or error, calling fn for every
// other output. A stream that ends without either is a lost connection.
func recvUntilDone(ctx context.Context, st AgentStream, fn func(*agentpb.OperationOutput) error) error {
	for {
		out, err := st.Recv()
		if err != nil {
			if ctx.Err() != nil {
				return ctx.Err()
			}
			if errors.Is(err, io.EOF) {
				err = io.ErrUnexpectedEOF
			}
			return lostError(err)
		}
		switch o := out.Output.(type) {
		case *agentpb.OperationOutput_Done:
			return nil
		case *agentpb.OperationOutput_Error:
			return agentError(o.Error)
		default:
			if fn != nil {
				if err := fn(out); err != nil {
					return err
				}
			}
		}
	}
}

// agentError translates an agent's OperationError into this package's kinds.
func agentError(e *agentpb.OperationError) error {
	if e.GetKind() == agentpb.ErrorKind_ERROR_KIND_TRANSFER {
		return &TransferError{Message: e.GetMessage(), Code: int(e.GetTransferCode())}
	}
	var kind error
	switch e.GetKind() {
	case agentpb.ErrorKind_ERROR_KIND_NOT_FOUND:
		kind = ErrNotFound
	case agentpb.ErrorKind_ERROR_KIND_CONFLICT:
		kind = ErrConflict
	case agentpb.ErrorKind_ERROR_KIND_INVALID:
		kind = ErrInvalid
	case agentpb.ErrorKind_ERROR_KIND_UNAUTHORIZED:
		kind = ErrUnauthorized
	case agentpb.ErrorKind_ERROR_KIND_UNAVAILABLE:
		kind = ErrOffline
	case agentpb.ErrorKind_ERROR_KIND_UNSUPPORTED:
		kind = ErrUnsupported
	}
	return &Error{Kind: kind, Msg: e.GetMessage(), err: errors.New(e.GetMessage())}
}

// OperationError turns an error of this package into the agent protocol's
// OperationError (the agent's side of agentError).
func OperationError(err error) *agentpb.OperationError {
	var te *TransferError
	if errors.As(err, &te) {
		return &agentpb.OperationError{Kind: agentpb.ErrorKind_ERROR_KIND_TRANSFER, Message: te.Message, TransferCode: int32(te.Code)}
	}
	kind := agentpb.ErrorKind_ERROR_KIND_UNSPECIFIED
	switch {
	case errors.Is(err, ErrNotFound):
		kind = agentpb.ErrorKind_ERROR_KIND_NOT_FOUND
	case errors.Is(err, ErrConflict):
		kind = agentpb.ErrorKind_ERROR_KIND_CONFLICT
	case errors.Is(err, ErrInvalid):
		kind = agentpb.ErrorKind_ERROR_KIND_INVALID
	case errors.Is(err, ErrUnauthorized):
		kind = agentpb.ErrorKind_ERROR_KIND_UNAUTHORIZED
	case errors.Is(err, ErrOffline):
		kind = agentpb.ErrorKind_ERROR_KIND_UNAVAILABLE
	case errors.Is(err, ErrUnsupported):
		kind = agentpb.ErrorKind_ERROR_KIND_UNSUPPORTED
	}
	msg := err.Error()
	var ee *Error
	if errors.As(err, &ee) {
		msg = ee.Msg
	}
	return &agentpb.OperationError{Kind: kind, Message: msg}
}

// AgentInfo is what an agent tells about itself.
type AgentInfo struct {
	ID           string   `json:"id"`
	Name         string   `json:"name"`
	Version      string   `json:"version"`
	Capabilities []string `json:"capabilities"`
}

// AgentInfo asks an agent environment's agent for its facts (ErrUnsupported
// for other environments).
func (c *Client) AgentInfo(ctx context.Context) (AgentInfo, Info, error) {
	if c.hawser != nil {
		return c.hawserAgentInfo(ctx)
	}
	if c.agent == nil {
		return AgentInfo{}, Info{}, unsupported("agent info on a " + c.conn.env.ConnectionType + " environment")
	}
	ctx, cancel := context.WithTimeout(ctx, callTimeout)
	defer cancel()
	st, err := c.agent.operate(ctx, &agentpb.OperationInput{Input: &agentpb.OperationInput_Info{Info: &agentpb.InfoRequest{}}})
	if err != nil {
		return AgentInfo{}, Info{}, c.fail(err)
	}
	defer st.Close()
	var r *agentpb.InfoResponse
	err = recvUntilDone(ctx, st, func(o *agentpb.OperationOutput) error {
		r = o.GetInfo()
		return nil
	})
	if err != nil {
		return AgentInfo{}, Info{}, c.fail(err)
	}
	if r == nil {
		return AgentInfo{}, Info{}, fmt.Errorf("engine: the agent sent no info")
	}
	caps := r.GetCapabilities()
	if caps == nil {
		caps = []string{}
	}
	return AgentInfo{ID: r.GetAgentId(), Name: r.GetAgentName(), Version: r.GetAgentVersion(), Capabilities: caps},
		Info{ServerVersion: r.GetServerVersion(), APIVersion: r.GetApiVersion(), Containers: int(r.GetContainers()),
			Running: int(r.GetContainersRunning()), Paused: int(r.GetContainersPaused()), Stopped: int(r.GetContainersStopped()),
			Images: int(r.GetImages()), Name: r.GetName(), OS: r.GetOperatingSystem(), Arch: r.GetArchitecture(),
			CPUs: int(r.GetCpus()), MemTotal: r.GetMemTotal(), CgroupVersion: r.GetCgroupVersion()}, nil
}

// InfoResponse is the agent protocol's form of an engine's facts (the
// agent's side of AgentInfo).
func InfoResponse(a AgentInfo, i Info) *agentpb.InfoResponse {
	return &agentpb.InfoResponse{AgentId: a.ID, AgentName: a.Name, AgentVersion: a.Version, Capabilities: a.Capabilities,
		ServerVersion: i.ServerVersion, ApiVersion: i.APIVersion, Containers: int64(i.Containers),
		ContainersRunning: int64(i.Running), ContainersPaused: int64(i.Paused), ContainersStopped: int64(i.Stopped),
		Images: int64(i.Images), Name: i.Name, OperatingSystem: i.OS, Architecture: i.Arch, Cpus: int64(i.CPUs),
		MemTotal: i.MemTotal, CgroupVersion: i.CgroupVersion}
}
