package enginetest

import (
	"net"
	"sync"
	"sync/atomic"
	"testing"
)

// Hanging is an engine that accepts TCP connections on loopback and never
// answers, for tests of timeouts and the offline breaker.
type Hanging struct {
	Addr     string        // host:port
	Accepted chan struct{} // receives once per accepted connection (buffered)

	n atomic.Int64
}

// Count is the number of connections accepted so far.
func (h *Hanging) Count() int64 { return h.n.Load() }

// NewHanging starts a Hanging engine, closed with its connections at cleanup.
func NewHanging(t testing.TB) *Hanging {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	h := &Hanging{Addr: ln.Addr().String(), Accepted: make(chan struct{}, 64)}
	var (
		mu    sync.Mutex
		conns []net.Conn
	)
	done := make(chan struct{})
	go func() {
		defer close(done)
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			mu.Lock()
			conns = append(conns, c)
			mu.Unlock()
			h.n.Add(1)
			select {
			case h.Accepted <- struct{}{}:
			default:
			}
		}
	}()
	t.Cleanup(func() {
		ln.Close()
		<-done
		mu.Lock()
		defer mu.Unlock()
		for _, c := range conns {
			c.Close()
		}
	})
	return h
}
