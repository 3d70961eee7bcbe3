package engine

import (
	"context"
	"errors"
	"io"
	"net"
	"os"
	"sync"
	"time"

	"github.com/berth-dev/berth/shared/agentpb"
)

// pipeChunk is the largest engine_data message written: well under gRPC's
// default message limit, large enough that a list or a log burst takes few.
const pipeChunk = 32 << 10

// dialAgentEngine opens a raw byte pipe to the agent's Engine API socket:
// the moby client's HTTP transport uses it as its connection, so that every
// Engine API call (lists, inspect, lifecycle, logs, events, hijacked
// attaches) works through an agent unchanged. ctx bounds the dial only; the
// pipe lives until closed.
func (a *agentLink) dialEngine(ctx context.Context) (net.Conn, error) {
	sctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	st, err := a.agents.Operate(sctx, a.env)
	if err != nil {
		cancel()
		return nil, agentOpenError(a.env.ID, err)
	}
	closed := make(chan struct{})
	p := &pipeConn{st: st, cancel: cancel, closed: closed, outputReader: newOutputReader(closed)}
	if err := sendFirst(st, &agentpb.OperationInput{Input: &agentpb.OperationInput_EngineDial{EngineDial: &agentpb.EngineDial{}}}); err != nil {
		p.Close()
		return nil, err
	}
	// The agent answers ready once it holds the socket connection, or an error.
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
			ready <- errors.New("engine: unexpected first message on an engine pipe")
		}
	}()
	select {
	case err := <-ready:
		if err != nil {
			p.Close()
			return nil, err
		}
	case <-ctx.Done():
		p.Close()
		return nil, ctx.Err()
	}
	go p.pump()
	return p, nil
}

// pipeConn is a net.Conn over an engine pipe operation.
type pipeConn struct {
	st     AgentStream
	cancel context.CancelFunc

	sendMu sync.Mutex // Send is not safe for concurrent use
	outputReader

	closeOnce sync.Once
	closed    chan struct{}
}

// pump moves received engine_data into the reader until the stream ends.
func (p *pipeConn) pump() {
	p.outputReader.pump(p.st, func(out *agentpb.OperationOutput) ([]byte, error) {
		switch o := out.Output.(type) {
		case *agentpb.OperationOutput_EngineData:
			return o.EngineData, nil
		case *agentpb.OperationOutput_Done:
			return nil, io.EOF
		case *agentpb.OperationOutput_Error:
			return nil, agentError(o.Error)
		}
		return nil, nil
	})
}

// outputReader turns the byte outputs of an operation (engine_data,
// exec_output) into an io.Reader with a read deadline.
type outputReader struct {
	data     chan []byte   // received bytes, in order
	readDone chan struct{} // closed when the stream ended; readErr says how
	readErr  error
	pending  []byte        // rest of the chunk being read
	stop     chan struct{} // closed by the owner's Close
	rdl      *deadline
}

func newOutputReader(stop chan struct{}) outputReader {
	return outputReader{data: make(chan []byte, 16), readDone: make(chan struct{}), stop: stop, rdl: newDeadline()}
}

// pump reads outputs until the stream ends: pick returns the bytes of an
// output (nil for outputs to skip), or the error that ends the reader
// (io.EOF for a clean end).
func (r *outputReader) pump(st AgentStream, pick func(*agentpb.OperationOutput) ([]byte, error)) {
	defer close(r.readDone)
	for {
		out, err := st.Recv()
		if err != nil {
			if errors.Is(err, io.EOF) {
				err = io.ErrUnexpectedEOF
			}
			r.readErr = lostError(err)
			return
		}
		b, err := pick(out)
		if err != nil {
			r.readErr = err
			return
		}
		if len(b) == 0 {
			continue
		}
		select {
		case r.data <- b:
		case <-r.stop:
			r.readErr = net.ErrClosed
			return
		}
	}
}

func (r *outputReader) Read(b []byte) (int, error) {
	if len(r.pending) == 0 {
		select {
		case chunk := <-r.data:
			r.pending = chunk
		default:
			select {
			case chunk := <-r.data:
				r.pending = chunk
			case <-r.readDone:
				// Drain what arrived before the end.
				select {
				case chunk := <-r.data:
					r.pending = chunk
				default:
					return 0, r.readErr
				}
			case <-r.stop:
				return 0, net.ErrClosed
			case <-r.rdl.wait():
				return 0, os.ErrDeadlineExceeded
			}
		}
	}
	n := copy(b, r.pending)
	r.pending = r.pending[n:]
	return n, nil
}

func (p *pipeConn) Write(b []byte) (int, error) {
	p.sendMu.Lock()
	defer p.sendMu.Unlock()
	select {
	case <-p.closed:
		return 0, net.ErrClosed
	default:
	}
	written := 0
	for len(b) > 0 {
		n := min(len(b), pipeChunk)
		chunk := make([]byte, n)
		copy(chunk, b[:n])
		if err := p.st.Send(&agentpb.OperationInput{Input: &agentpb.OperationInput_EngineData{EngineData: chunk}}); err != nil {
			return written, lostError(err)
		}
		written += n
		b = b[n:]
	}
	return written, nil
}

// CloseWrite half-closes the pipe: the agent half-closes its socket
// connection (hijacked attaches use it to end stdin).
func (p *pipeConn) CloseWrite() error {
	p.sendMu.Lock()
	defer p.sendMu.Unlock()
	return p.st.Send(&agentpb.OperationInput{Input: &agentpb.OperationInput_CloseInput{CloseInput: &agentpb.CloseInput{}}})
}

func (p *pipeConn) Close() error {
	p.closeOnce.Do(func() {
		close(p.closed)
		p.st.Close()
		p.cancel()
	})
	return nil
}

func (p *pipeConn) LocalAddr() net.Addr  { return agentAddr{} }
func (p *pipeConn) RemoteAddr() net.Addr { return agentAddr{} }

func (p *pipeConn) SetDeadline(t time.Time) error { return p.SetReadDeadline(t) }

func (p *pipeConn) SetReadDeadline(t time.Time) error {
	p.rdl.set(t)
	return nil
}

// SetWriteDeadline is accepted and ignored: writes wait for the stream's
// flow control, and the operation's context bounds them.
func (p *pipeConn) SetWriteDeadline(time.Time) error { return nil }

// agentAddr is the address of both ends of an engine pipe.
type agentAddr struct{}

func (agentAddr) Network() string { return "berth-agent" }
func (agentAddr) String() string  { return "berth-agent" }

// deadline is a settable read deadline: wait returns a channel closed once
// the deadline passes.
type deadline struct {
	mu    sync.Mutex
	timer *time.Timer
	gen   *deadlineGen
}

// deadlineGen is one deadline setting's channel, closed at most once.
type deadlineGen struct {
	ch   chan struct{}
	once sync.Once
}

func (g *deadlineGen) fire() { g.once.Do(func() { close(g.ch) }) }

func newDeadline() *deadline { return &deadline{gen: &deadlineGen{ch: make(chan struct{})}} }

func (d *deadline) set(t time.Time) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.timer != nil {
		d.timer.Stop()
		d.timer = nil
	}
	// A timer of the old setting may still fire: give the new one its own channel.
	d.gen = &deadlineGen{ch: make(chan struct{})}
	if t.IsZero() {
		return
	}
	g := d.gen
	if dur := time.Until(t); dur > 0 {
		d.timer = time.AfterFunc(dur, g.fire)
	} else {
		g.fire()
	}
}

func (d *deadline) wait() <-chan struct{} {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.gen.ch
}
