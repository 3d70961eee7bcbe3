// Package ops provides the agent's side of the agent protocol's operations:
// it reads an operation's inputs, runs it on the local Docker engine and
// sends its outputs. Both modes use it: the standard server for each
// AgentService.Operate call, the edge client for each Serve stream it opens.
package ops

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"sync"
	"time"

	"github.com/berth-dev/berth/agent/internal/hostmetrics"
	"github.com/berth-dev/berth/shared/agentpb"
	"github.com/berth-dev/berth/shared/engine"
)

// Stream is one operation's stream, seen from the agent.
type Stream interface {
	Recv() (*agentpb.OperationInput, error)
	Send(*agentpb.OperationOutput) error
}

// Capabilities are what this agent can do.
var Capabilities = []string{"engine", "pull", "push", "exec", "compose", "metrics"}

// Runner runs operations on the local engine.
type Runner struct {
	engines   *engine.Manager
	local     engine.Endpoint
	agent     engine.AgentInfo
	stacksDir string // working directories of compose projects (never written to)
	log       *slog.Logger
	dial      func(ctx context.Context) (net.Conn, error)
}

// Config configures a Runner.
type Config struct {
	Socket    string // the local engine's socket
	StacksDir string // compose projects' working directories: StacksDir/<project>
	Agent     engine.AgentInfo
	Log       *slog.Logger
}

// New returns a Runner for the engine at cfg.Socket.
func New(cfg Config) *Runner {
	d := &net.Dialer{Timeout: engine.PingTimeout}
	return &Runner{
		engines:   engine.NewManager(cfg.Log),
		local:     engine.Endpoint{ID: 1, ConnectionType: engine.Socket, SocketPath: cfg.Socket},
		agent:     cfg.Agent,
		stacksDir: cfg.StacksDir,
		log:       cfg.Log,
		dial:      func(ctx context.Context) (net.Conn, error) { return d.DialContext(ctx, "unix", cfg.Socket) },
	}
}

// Close releases the engine connection.
func (r *Runner) Close() { r.engines.Close() }

// Info returns the agent's and its engine's facts.
func (r *Runner) Info(ctx context.Context) (engine.AgentInfo, engine.Info, error) {
	c, err := r.engines.Client(ctx, r.local)
	if err != nil {
		return r.agent, engine.Info{}, err
	}
	info, err := c.Info(ctx)
	return r.agent, info, err
}

// Serve runs the operation st carries until it ends. Failures are reported
// on the stream as an error output; the returned error is the stream's own.
func (r *Runner) Serve(ctx context.Context, st Stream) error {
	first, err := st.Recv()
	if err != nil {
		return err
	}
	s := &sender{st: st}
	switch in := first.GetInput().(type) {
	case *agentpb.OperationInput_EngineDial:
		return r.pipe(ctx, st, s)
	case *agentpb.OperationInput_ExecStart:
		return r.exec(ctx, st, s, in.ExecStart)
	case *agentpb.OperationInput_Info:
		return s.finish(r.info(ctx, s))
	case *agentpb.OperationInput_Pull:
		return s.finish(r.transfer(ctx, s, in.Pull.GetReference(), in.Pull.GetCredentials(), false))
	case *agentpb.OperationInput_Push:
		return s.finish(r.transfer(ctx, s, in.Push.GetReference(), in.Push.GetCredentials(), true))
	case *agentpb.OperationInput_Compose:
		return s.finish(r.compose(ctx, s, in.Compose))
	case *agentpb.OperationInput_Metrics:
		return s.finish(r.metrics(ctx, s, in.Metrics))
	}
	return s.finish(fmt.Errorf("%w: unknown operation %T", engine.ErrUnsupported, first.GetInput()))
}

// sender serializes sends on one stream (Send is not safe for concurrent use).
type sender struct {
	mu sync.Mutex
	st Stream
}

func (s *sender) send(out *agentpb.OperationOutput) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.st.Send(out)
}

// finish ends a finite operation with done, or with err as an error output.
func (s *sender) finish(err error) error {
	if err != nil {
		return s.send(&agentpb.OperationOutput{Output: &agentpb.OperationOutput_Error{Error: engine.OperationError(err)}})
	}
	return s.send(&agentpb.OperationOutput{Output: &agentpb.OperationOutput_Done{Done: &agentpb.Done{}}})
}

func (r *Runner) client(ctx context.Context) (*engine.Client, error) {
	return r.engines.Client(ctx, r.local)
}

func (r *Runner) info(ctx context.Context, s *sender) error {
	a, i, err := r.Info(ctx)
	if err != nil {
		return err
	}
	return s.send(&agentpb.OperationOutput{Output: &agentpb.OperationOutput_Info{Info: engine.InfoResponse(a, i)}})
}

// transfer pulls or pushes ref with the credentials sent for this operation
// only, streaming the engine's progress lines.
func (r *Runner) transfer(ctx context.Context, s *sender, ref string, cr *agentpb.Credentials, push bool) error {
	if err := engine.CheckImageName(ref); err != nil {
		return err
	}
	c, err := r.client(ctx)
	if err != nil {
		return err
	}
	var creds *engine.Credentials
	if cr != nil {
		creds = &engine.Credentials{Username: cr.GetUsername(), Password: cr.GetPassword(), ServerAddress: cr.GetServerAddress()}
	}
	var sendErr error
	fn := func(p engine.Progress) {
		if sendErr == nil {
			sendErr = s.send(&agentpb.OperationOutput{Output: &agentpb.OperationOutput_Progress{Progress: &agentpb.TransferProgress{
				Id: p.ID, Status: p.Status, Current: p.Current, Total: p.Total}}})
		}
	}
	// Berth's end of the stream going away cancels ctx, and with it the transfer.
	if push {
		err = c.PushImage(ctx, ref, creds, fn)
	} else {
		err = c.PullImage(ctx, ref, creds, fn)
	}
	if sendErr != nil {
		return sendErr
	}
	return err
}

// metrics samples every running container on this host (bounded fan-out,
// each sample as it arrives) and/or the host itself.
func (r *Runner) metrics(ctx context.Context, s *sender, req *agentpb.MetricsRequest) error {
	if req.GetHost() {
		h, err := hostmetrics.Read(ctx, "/")
		if err != nil {
			return err
		}
		err = s.send(&agentpb.OperationOutput{Output: &agentpb.OperationOutput_HostMetrics{HostMetrics: &agentpb.HostMetrics{
			CpuPercent: h.CPUPercent, Cpus: h.CPUs, MemoryTotal: h.MemoryTotal, MemoryUsed: h.MemoryUsed,
			DiskTotal: h.DiskTotal, DiskUsed: h.DiskUsed, Load1: h.Load1, Load5: h.Load5, Load15: h.Load15,
			TimestampUnixMs: time.Now().UnixMilli()}}})
		if err != nil {
			return err
		}
	}
	if !req.GetContainers() {
		return nil
	}
	c, err := r.client(ctx)
	if err != nil {
		return err
	}
	per := time.Duration(req.GetContainerTimeoutMs()) * time.Millisecond
	if per <= 0 {
		per = 8 * time.Second
	}
	return c.SampleRunning(ctx, per, func(cs engine.ContainerSample) error {
		return s.send(&agentpb.OperationOutput{Output: &agentpb.OperationOutput_ContainerStats{ContainerStats: engine.SampleToProto(cs)}})
	})
}

// pipe relays raw bytes between Berth and the engine's socket: one HTTP
// connection of Berth's Engine API client.
func (r *Runner) pipe(ctx context.Context, st Stream, s *sender) error {
	conn, err := r.dial(ctx)
	if err != nil {
		return s.finish(fmt.Errorf("%w: engine socket: %v", engine.ErrOffline, err))
	}
	defer conn.Close()
	if err := s.send(&agentpb.OperationOutput{Output: &agentpb.OperationOutput_Ready{Ready: &agentpb.Ready{}}}); err != nil {
		return err
	}
	// Berth → engine.
	go func() {
		for {
			in, err := st.Recv()
			if err != nil {
				conn.Close() // Berth left: end the engine connection
				return
			}
			switch x := in.GetInput().(type) {
			case *agentpb.OperationInput_EngineData:
				if _, err := conn.Write(x.EngineData); err != nil {
					return
				}
			case *agentpb.OperationInput_CloseInput:
				if cw, ok := conn.(interface{ CloseWrite() error }); ok {
					_ = cw.CloseWrite()
				}
			}
		}
	}()
	// Engine → Berth, until the engine closes the connection.
	buf := make([]byte, 32<<10)
	for {
		n, err := conn.Read(buf)
		if n > 0 {
			chunk := make([]byte, n)
			copy(chunk, buf[:n])
			if serr := s.send(&agentpb.OperationOutput{Output: &agentpb.OperationOutput_EngineData{EngineData: chunk}}); serr != nil {
				return serr
			}
		}
		if err != nil {
			if errors.Is(err, io.EOF) {
				return s.finish(nil)
			}
			if ctx.Err() != nil || errors.Is(err, net.ErrClosed) {
				return nil
			}
			return s.finish(fmt.Errorf("%w: engine socket: %v", engine.ErrOffline, err))
		}
	}
}
