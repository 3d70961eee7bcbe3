package hawser

import (
	"context"
	"encoding/json"
	"errors"
	"sync"
	"sync/atomic"
	"time"

	"github.com/coder/websocket"

	"github.com/berth-dev/berth/shared/engine"
)

// agentConn is one connected agent.
type agentConn struct {
	hub         *Hub
	ws          *websocket.Conn
	envID       int64
	hello       helloFrame
	remote      string
	connectedAt time.Time
	lastSeen    atomic.Int64 // Unix nanoseconds
	ctx         context.Context
	cancel      context.CancelCauseFunc

	writeMu sync.Mutex

	mu      sync.Mutex
	pending map[string]chan json.RawMessage // request id → its frames
	execs   map[string]*session
}

// write sends one frame.
func (c *agentConn) write(ctx context.Context, v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	c.writeMu.Lock()
	defer c.writeMu.Unlock()
	wctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	return c.ws.Write(wctx, websocket.MessageText, b)
}

// close ends the connection: pending requests and sessions fail.
func (c *agentConn) close(cause error) {
	c.cancel(cause)
	_ = c.ws.Close(websocket.StatusNormalClosure, truncate(cause.Error(), 120))
}

func truncate(s string, n int) string {
	if len(s) > n {
		return s[:n]
	}
	return s
}

// keepAlive pings every few seconds and closes a connection silent for too long.
func (c *agentConn) keepAlive() {
	t := time.NewTicker(c.hub.ping)
	defer t.Stop()
	for {
		select {
		case <-c.ctx.Done():
			return
		case now := <-t.C:
			if now.Sub(time.Unix(0, c.lastSeen.Load())) > c.hub.silence {
				c.close(errors.New("the agent was silent for too long"))
				return
			}
			if err := c.write(c.ctx, pingFrame{Type: "ping", Timestamp: now.UnixMilli()}); err != nil {
				c.close(err)
				return
			}
		}
	}
}

// readLoop reads frames until the connection ends.
func (c *agentConn) readLoop() error {
	for {
		_, data, err := c.ws.Read(c.ctx)
		if err != nil {
			if cause := context.Cause(c.ctx); cause != nil {
				return cause
			}
			return err
		}
		c.lastSeen.Store(c.hub.now().UnixNano())
		var f frame
		if json.Unmarshal(data, &f) != nil {
			continue
		}
		switch f.Type {
		case "ping":
			_ = c.write(c.ctx, pingFrame{Type: "pong", Timestamp: c.hub.now().UnixMilli()})
		case "pong", "hello":
		case "response", "stream", "stream_end":
			c.route(f.RequestID, data)
		case "error":
			if f.RequestID != "" {
				c.route(f.RequestID, data)
				if s := c.execOf(f.RequestID); s != nil {
					s.fail(data)
				}
			}
		case "metrics":
			c.metrics(data)
		case "container_event":
			c.hub.mu.Lock()
			c.hub.events[c.envID]++
			c.hub.mu.Unlock()
		case "exec_ready", "exec_output", "exec_end":
			if s := c.execOf(f.ExecID); s != nil {
				s.frame(f.Type, data)
			}
		}
	}
}

// route hands a frame to the request it answers.
func (c *agentConn) route(id string, data []byte) {
	c.mu.Lock()
	ch := c.pending[id]
	c.mu.Unlock()
	if ch == nil {
		return
	}
	select {
	case ch <- data:
	case <-c.ctx.Done():
	}
}

// metrics records a pushed host sample: the CPU usage divided by the core
// count, as the reference does.
func (c *agentConn) metrics(data []byte) {
	var m metricsFrame
	if json.Unmarshal(data, &m) != nil {
		return
	}
	cpu := m.Metrics.CPUUsage
	if m.Metrics.CPUCores > 0 {
		cpu /= float64(m.Metrics.CPUCores)
	}
	ts := m.Timestamp
	if ts < 1e12 { // seconds
		ts *= 1000
	}
	c.hub.mu.Lock()
	defer c.hub.mu.Unlock()
	c.hub.metrics[c.envID] = engine.HostMetrics{CPUPercent: cpu, CPUs: int64(m.Metrics.CPUCores),
		MemoryTotal: m.Metrics.MemoryTotal, MemoryUsed: m.Metrics.MemoryUsed, DiskTotal: m.Metrics.DiskTotal,
		DiskUsed: m.Metrics.DiskUsed, Timestamp: ts}
}
