package engine

import (
	"context"
	"errors"
	"fmt"
	"io"
	"sync"

	"github.com/berth-dev/berth/shared/agentpb"
)

// The typed agent operations, as an agent environment's Client runs them:
// pull, push, exec, compose and metrics each open their own operation
// stream; everything else goes through the raw Engine API pipe.

// agentCredentials is the protocol's form of registry credentials.
func agentCredentials(cr *Credentials) *agentpb.Credentials {
	if cr == nil {
		return nil
	}
	return &agentpb.Credentials{Username: cr.Username, Password: cr.Password, ServerAddress: cr.ServerAddress}
}

// agentTransfer runs a pull or push on the agent, calling fn per progress line.
func (c *Client) agentTransfer(ctx context.Context, first *agentpb.OperationInput, fn func(Progress)) error {
	defer c.m.wrote(c.envID) // see OnWrite
	st, err := c.agent.operate(ctx, first)
	if err != nil {
		return c.fail(err)
	}
	defer st.Close()
	err = recvUntilDone(ctx, st, func(o *agentpb.OperationOutput) error {
		if p := o.GetProgress(); p != nil {
			fn(Progress{ID: p.GetId(), Status: p.GetStatus(), Current: p.GetCurrent(), Total: p.GetTotal()})
		}
		return nil
	})
	return c.fail(err)
}

// agentExec is an exec attached through the agent's exec operation.
type agentExec struct {
	st     AgentStream
	cancel context.CancelFunc
	conn   *conn
	execID string

	sendMu sync.Mutex
	outputReader

	closeOnce sync.Once
	closed    chan struct{}
}

func (c *Client) startAgentExec(ctx context.Context, execID string, tty bool) (*ExecStream, error) {
	sctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	st, err := c.agent.operate(sctx, &agentpb.OperationInput{Input: &agentpb.OperationInput_ExecStart{
		ExecStart: &agentpb.ExecStart{ExecId: execID, Tty: tty}}})
	if err != nil {
		cancel()
		return nil, c.fail(err)
	}
	closed := make(chan struct{})
	e := &agentExec{st: st, cancel: cancel, conn: c.conn, execID: execID, closed: closed, outputReader: newOutputReader(closed)}
	// The agent answers ready once attached, or an error.
	ready := make(chan error, 1)
	go func() {
		out, err := st.Recv()
		switch {
		case err != nil:
			ready <- lostError(err)
		case out.GetReady() != nil:
			ready <- nil
		case out.GetError() != nil:
			ready <- agentError(out.GetError())
		default:
			ready <- errors.New("engine: unexpected first message of an exec")
		}
	}()
	tctx, tcancel := context.WithTimeout(ctx, callTimeout)
	defer tcancel()
	select {
	case err := <-ready:
		if err != nil {
			e.Close()
			return nil, c.fail(err)
		}
	case <-tctx.Done():
		e.Close()
		return nil, tctx.Err()
	}
	go e.outputReader.pump(st, func(out *agentpb.OperationOutput) ([]byte, error) {
		switch o := out.Output.(type) {
		case *agentpb.OperationOutput_ExecOutput:
			return o.ExecOutput, nil
		case *agentpb.OperationOutput_ExecExit, *agentpb.OperationOutput_Done:
			return nil, io.EOF
		case *agentpb.OperationOutput_Error:
			return nil, agentError(o.Error)
		}
		return nil, nil
	})
	c.conn.trackExec(execID, e)
	return &ExecStream{rw: e}, nil
}

func (e *agentExec) send(in *agentpb.OperationInput) error {
	e.sendMu.Lock()
	defer e.sendMu.Unlock()
	select {
	case <-e.closed:
		return io.ErrClosedPipe
	default:
	}
	if err := e.st.Send(in); err != nil {
		return lostError(err)
	}
	return nil
}

func (e *agentExec) Write(b []byte) (int, error) {
	buf := make([]byte, len(b))
	copy(buf, b)
	if err := e.send(&agentpb.OperationInput{Input: &agentpb.OperationInput_ExecStdin{ExecStdin: buf}}); err != nil {
		return 0, err
	}
	return len(b), nil
}

func (e *agentExec) CloseWrite() error {
	return e.send(&agentpb.OperationInput{Input: &agentpb.OperationInput_CloseInput{CloseInput: &agentpb.CloseInput{}}})
}

func (e *agentExec) resize(rows, cols uint) error {
	return e.send(&agentpb.OperationInput{Input: &agentpb.OperationInput_ExecResize{
		ExecResize: &agentpb.ExecResize{Rows: uint32(rows), Cols: uint32(cols)}}})
}

func (e *agentExec) Close() error {
	e.closeOnce.Do(func() {
		close(e.closed)
		e.st.Close()
		e.cancel()
		e.conn.untrackExec(e.execID, e)
	})
	return nil
}

// trackExec remembers an attached agent exec, so that a resize reaches it
// on its own stream.
func (c *conn) trackExec(id string, e *agentExec) {
	c.execMu.Lock()
	defer c.execMu.Unlock()
	if c.execs == nil {
		c.execs = map[string]*agentExec{}
	}
	c.execs[id] = e
}

func (c *conn) untrackExec(id string, e *agentExec) {
	c.execMu.Lock()
	defer c.execMu.Unlock()
	if c.execs[id] == e {
		delete(c.execs, id)
	}
}

// resizeAgentExec resizes an exec attached through this connection; false
// when none is (the resize then goes through the Engine API pipe).
func (c *conn) resizeAgentExec(id string, rows, cols uint) bool {
	c.execMu.Lock()
	e := c.execs[id]
	c.execMu.Unlock()
	return e != nil && e.resize(rows, cols) == nil
}

// agentCompose runs a compose operation on the agent host, calling progress
// per line.
func (c *Client) agentCompose(ctx context.Context, req *agentpb.ComposeRequest, progress ComposeProgress) error {
	defer c.m.wrote(c.envID) // see OnWrite
	ctx, cancel := context.WithTimeout(ctx, composeTimeout)
	defer cancel()
	st, err := c.agent.operate(ctx, &agentpb.OperationInput{Input: &agentpb.OperationInput_Compose{Compose: req}})
	if err != nil {
		return c.fail(err)
	}
	defer st.Close()
	err = recvUntilDone(ctx, st, func(o *agentpb.OperationOutput) error {
		if ev := o.GetComposeEvent(); ev != nil && progress != nil {
			progress(ev.GetLine())
		}
		return nil
	})
	return c.fail(err)
}

// agentSample runs one metrics pass on the agent: every running container
// sampled there, fn called as each sample arrives.
func (c *Client) agentSample(ctx context.Context, perContainer int64, fn func(ContainerSample) error) error {
	st, err := c.agent.operate(ctx, &agentpb.OperationInput{Input: &agentpb.OperationInput_Metrics{
		Metrics: &agentpb.MetricsRequest{Containers: true, ContainerTimeoutMs: perContainer}}})
	if err != nil {
		return c.fail(err)
	}
	defer st.Close()
	err = recvUntilDone(ctx, st, func(o *agentpb.OperationOutput) error {
		if s := o.GetContainerStats(); s != nil {
			return fn(SampleFromProto(s))
		}
		return nil
	})
	return c.fail(err)
}

// HostMetrics is an agent host's usage.
type HostMetrics struct {
	CPUPercent  float64 `json:"cpuPercent"`
	CPUs        int64   `json:"cpus"`
	MemoryTotal uint64  `json:"memoryTotal"`
	MemoryUsed  uint64  `json:"memoryUsed"`
	DiskTotal   uint64  `json:"diskTotal"`
	DiskUsed    uint64  `json:"diskUsed"`
	Load1       float64 `json:"load1"`
	Load5       float64 `json:"load5"`
	Load15      float64 `json:"load15"`
	Timestamp   int64   `json:"timestamp"` // Unix milliseconds
}

// HostMetrics asks an agent environment's agent for its host's usage
// (ErrUnsupported for other environments).
func (c *Client) HostMetrics(ctx context.Context) (HostMetrics, error) {
	if c.hawser != nil && c.hawser.edges != nil {
		if h, ok := c.hawser.edges.HostMetrics(c.envID); ok {
			return h, nil
		}
		return HostMetrics{}, unsupported("host metrics before the Hawser agent pushed any")
	}
	if c.agent == nil {
		return HostMetrics{}, unsupported("host metrics on a " + c.conn.env.ConnectionType + " environment")
	}
	ctx, cancel := context.WithTimeout(ctx, callTimeout)
	defer cancel()
	st, err := c.agent.operate(ctx, &agentpb.OperationInput{Input: &agentpb.OperationInput_Metrics{
		Metrics: &agentpb.MetricsRequest{Host: true}}})
	if err != nil {
		return HostMetrics{}, c.fail(err)
	}
	defer st.Close()
	var h *agentpb.HostMetrics
	err = recvUntilDone(ctx, st, func(o *agentpb.OperationOutput) error {
		if m := o.GetHostMetrics(); m != nil {
			h = m
		}
		return nil
	})
	if err != nil {
		return HostMetrics{}, c.fail(err)
	}
	if h == nil {
		return HostMetrics{}, fmt.Errorf("engine: the agent sent no host metrics")
	}
	return HostMetrics{CPUPercent: h.GetCpuPercent(), CPUs: h.GetCpus(), MemoryTotal: h.GetMemoryTotal(),
		MemoryUsed: h.GetMemoryUsed(), DiskTotal: h.GetDiskTotal(), DiskUsed: h.GetDiskUsed(), Load1: h.GetLoad1(),
		Load5: h.GetLoad5(), Load15: h.GetLoad15(), Timestamp: h.GetTimestampUnixMs()}, nil
}

// SampleFromProto is a container sample as the agent protocol carries it.
func SampleFromProto(s *agentpb.ContainerStats) ContainerSample {
	return ContainerSample{ID: s.GetId(), Name: s.GetName(), Stats: Stats{
		CPUTotal: s.GetCpuTotal(), PreCPUTotal: s.GetPreCpuTotal(), SystemCPU: s.GetSystemCpu(),
		PreSystemCPU: s.GetPreSystemCpu(), OnlineCPUs: s.GetOnlineCpus(), PerCPUCount: int(s.GetPerCpuCount()),
		MemoryUsage: s.GetMemoryUsage(), MemoryLimit: s.GetMemoryLimit(), MemoryStats: s.GetMemoryStats(),
		NetworkRxBytes: s.GetNetworkRxBytes(), NetworkTxBytes: s.GetNetworkTxBytes(), BlockRead: s.GetBlockRead(),
		BlockWrite: s.GetBlockWrite()}}
}

// SampleToProto is the agent protocol's form of a container sample.
func SampleToProto(s ContainerSample) *agentpb.ContainerStats {
	st := s.Stats
	return &agentpb.ContainerStats{Id: s.ID, Name: s.Name, CpuTotal: st.CPUTotal, PreCpuTotal: st.PreCPUTotal,
		SystemCpu: st.SystemCPU, PreSystemCpu: st.PreSystemCPU, OnlineCpus: st.OnlineCPUs, PerCpuCount: int32(st.PerCPUCount),
		MemoryUsage: st.MemoryUsage, MemoryLimit: st.MemoryLimit, MemoryStats: st.MemoryStats,
		NetworkRxBytes: st.NetworkRxBytes, NetworkTxBytes: st.NetworkTxBytes, BlockRead: st.BlockRead, BlockWrite: st.BlockWrite}
}
