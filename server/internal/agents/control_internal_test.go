package agents

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/berth-dev/berth/shared/agentpb"
)

// heldStream is a control stream whose Send records each message and, while
// hold is open, blocks as a real stream does when the agent reads nothing
// (its flow-control window full): an agent cannot be made to stop reading on
// demand.
type heldStream struct {
	mu   sync.Mutex
	sent []string
	hold chan struct{}
}

func (h *heldStream) Send(m *agentpb.ConnectResponse) error {
	<-h.hold
	h.mu.Lock()
	defer h.mu.Unlock()
	h.sent = append(h.sent, m.GetOpen().GetOperationId())
	return nil
}

func (h *heldStream) got() []string {
	h.mu.Lock()
	defer h.mu.Unlock()
	return append([]string(nil), h.sent...)
}

func open(id string) *agentpb.ConnectResponse {
	return &agentpb.ConnectResponse{Message: &agentpb.ConnectResponse_Open{Open: &agentpb.OpenOperation{OperationId: id}}}
}

// Messages queued before the welcome go after it, in order; an agent that
// leaves more than maxQueued unread loses its connection.
func TestControlStreamQueuesInOrderAndEndsAnAgentThatReadsNothing(t *testing.T) {
	ctx, cancel := context.WithCancelCause(t.Context())
	defer cancel(nil)
	st := &heldStream{hold: make(chan struct{})}
	close(st.hold) // Send returns at once
	c := &edgeConn{stream: st, ctx: ctx, cancel: cancel}
	c.send(open("a"))
	c.send(open("b"))
	time.Sleep(10 * time.Millisecond)
	if got := st.got(); len(got) != 0 {
		t.Fatalf("sent before the welcome: %q", got)
	}
	c.start()
	c.send(open("c"))
	deadline := time.Now().Add(10 * time.Second)
	for len(st.got()) < 3 {
		if time.Now().After(deadline) {
			t.Fatalf("sent %q within 10 s, want a, b, c", st.got())
		}
		time.Sleep(time.Millisecond)
	}
	if got := strings.Join(st.got(), ","); got != "a,b,c" {
		t.Fatalf("sent %s, want a,b,c", got)
	}

	// An agent that reads nothing: one message is stuck in Send, maxQueued
	// wait behind it, and the next ends the connection.
	dctx, dcancel := context.WithCancelCause(t.Context())
	defer dcancel(nil)
	stuck := &heldStream{hold: make(chan struct{})}
	defer close(stuck.hold)
	d := &edgeConn{stream: stuck, ctx: dctx, cancel: dcancel}
	d.start()
	d.send(open("stuck"))
	deadline = time.Now().Add(10 * time.Second)
	for {
		d.outMu.Lock()
		n := len(d.out)
		d.outMu.Unlock()
		if n == 0 {
			break // the sender took it and waits in Send
		}
		if time.Now().After(deadline) {
			t.Fatal("the sender did not take the first message within 10 s")
		}
		time.Sleep(time.Millisecond)
	}
	for i := range maxQueued {
		if !d.send(open("q")) {
			t.Fatalf("message %d of %d refused", i+1, maxQueued)
		}
	}
	if d.send(open("one too many")) {
		t.Fatal("a message beyond the queue was accepted")
	}
	if cause := context.Cause(dctx); cause == nil || !strings.Contains(cause.Error(), "does not read") {
		t.Fatalf("connection's end: %v, want that the agent does not read its control stream", cause)
	}
	if ctx.Err() != nil {
		t.Fatalf("the first connection ended: %v", context.Cause(ctx))
	}
}
