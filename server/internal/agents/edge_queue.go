package agents

import (
	"errors"

	"github.com/berth-dev/berth/shared/agentpb"
)

// An edge agent's control messages wait in its connection's queue; a
// sender goroutine runs only while some wait.

// send queues a message for the agent; a connection whose queue is full
// (its agent reads nothing) is dead.
func (c *edgeConn) send(m *agentpb.ConnectResponse) bool {
	if c.ctx.Err() != nil {
		return false
	}
	c.outMu.Lock()
	if len(c.out) >= maxQueued {
		c.outMu.Unlock()
		c.cancel(errors.New("the agent does not read its control stream"))
		return false
	}
	c.out = append(c.out, m)
	c.drainLocked()
	c.outMu.Unlock()
	return true
}

// start lets queued messages go (the welcome was sent).
func (c *edgeConn) start() {
	c.outMu.Lock()
	c.started = true
	c.drainLocked()
	c.outMu.Unlock()
}

// drainLocked starts the sender if there is something to send and none
// runs. c.outMu is held.
func (c *edgeConn) drainLocked() {
	if c.started && !c.draining && len(c.out) > 0 {
		c.draining = true
		go c.drain()
	}
}

// drain sends the queued messages, in order, until none is left or the
// connection ends. One runs at a time (a stream's Send is not safe for
// concurrent use).
func (c *edgeConn) drain() {
	for {
		c.outMu.Lock()
		if len(c.out) == 0 || c.ctx.Err() != nil {
			c.out = nil
			c.draining = false
			c.outMu.Unlock()
			return
		}
		m := c.out[0]
		c.out[0] = nil
		c.out = c.out[1:]
		c.outMu.Unlock()
		if err := c.stream.Send(m); err != nil {
			c.cancel(err)
		}
	}
}
