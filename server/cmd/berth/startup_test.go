package main

import (
	"errors"
	"net"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// TestServeAnswersWhileTheLocalEngineStalls starts Berth on a fresh data
// directory with a local engine that accepts connections and never answers
// (a stopped dockerd): Berth answers /api/health while its question to the
// engine is still pending, instead of after giving up on it.
func TestServeAnswersWhileTheLocalEngineStalls(t *testing.T) {
	sock := filepath.Join(t.TempDir(), "stalled.sock")
	ln, err := net.Listen("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	accepted := make(chan net.Conn, 16)
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				close(accepted)
				return
			}
			accepted <- c
		}
	}()
	t.Cleanup(func() {
		ln.Close()
		for c := range accepted {
			c.Close()
		}
	})
	serveOnce(t, t.TempDir(), func(string) {
		// Healthy: the start-up's engine check has asked (or is about to
		// ask) the engine, and is still waiting for its answer.
		var c net.Conn
		select {
		case c = <-accepted:
		case <-time.After(20 * time.Second):
			t.Fatal("Berth never asked the local engine")
		}
		defer c.Close()
		buf := make([]byte, 4096)
		for {
			_ = c.SetReadDeadline(time.Now().Add(200 * time.Millisecond))
			_, err := c.Read(buf)
			if errors.Is(err, os.ErrDeadlineExceeded) {
				return // the request is read and the connection still open: Berth is still waiting
			}
			if err != nil {
				t.Fatalf("Berth gave up on the engine before it served: %v", err)
			}
		}
	}, "DOCKER_SOCKET", sock)
}
