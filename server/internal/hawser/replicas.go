package hawser

import (
	"bufio"
	"bytes"
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httputil"
	"sync"
	"time"

	"github.com/berth-dev/berth/server/internal/store"
	"github.com/berth-dev/berth/shared/engine"
)

// Replicas (docs/scale.md): a Hawser agent's WebSocket reaches one replica,
// which leases the environment as for a berth-agent. The other replicas
// reach the agent through the holder: their transport dials an HTTP/1.1
// connection over the relay (one relay stream per request), which the
// holder serves into its own transport; a terminal session is one such
// connection, upgraded.

// Replicas is how a hub that is one replica of several leases its agents'
// connections and reaches the agents connected to the others
// (agents.Service provides it).
type Replicas interface {
	// HoldHawser claims l's environment for an agent connecting here; end
	// ends the connection when the lease moves, valid re-checks its token.
	HoldHawser(ctx context.Context, l store.AgentLease, end func(error), valid func(context.Context) (bool, error)) (release func(), err error)
	// DropHawser removes envID's lease whichever replica holds it.
	DropHawser(ctx context.Context, envID int64)
	// HawserElsewhere is envID's lease when another live replica holds it.
	HawserElsewhere(envID int64) (store.AgentLease, bool)
	// DialHawser opens an HTTP connection to envID's agent through its holder.
	DialHawser(ctx context.Context, envID int64) (net.Conn, error)
	// HawserHeld asks the replicas holding envIDs' agents what they know
	// of them (each holder once, within a short deadline): the agents of
	// holders that did not answer are left out.
	HawserHeld(ctx context.Context, envIDs []int64) map[int64]Held
}

// UseReplicas makes h lease its agents' connections and reach the agents
// connected to the other replicas through r. Call it before the first agent
// connects.
func (h *Hub) UseReplicas(r Replicas) { h.replicas = r }

// Holds reports whether envID's agent is connected to this hub.
func (h *Hub) Holds(envID int64) bool { return h.get(envID) != nil }

// relayExecPath is the request that opens a terminal session through the
// holder (never sent to the agent).
const relayExecPath = "/_berth/hawser/exec"

// relayMetricsPath asks the holder for the host metrics the agent pushed
// last (never sent to the agent).
const relayMetricsPath = "/_berth/hawser/metrics"

// relayResizePath asks the holder to send exec_resize to the agent (never
// sent to the agent as a request).
const relayResizePath = "/_berth/hawser/resize"

// relayResize is the body of a relayResizePath request.
type relayResize struct {
	ExecID     string `json:"execId"`
	Cols, Rows int
}

// relayErrorHeader carries the kind of error the holder's transport
// returned, so that the relaying replica returns the same kind.
const relayErrorHeader = "X-Berth-Hawser-Error"

// relayed returns envID's transport through the replica holding its agent:
// one relay stream per request (the lease may move between two).
func (h *Hub) relayed(envID int64) http.RoundTripper {
	h.mu.Lock()
	defer h.mu.Unlock()
	if rt := h.relayRT[envID]; rt != nil {
		return rt
	}
	rt := relayTransport{&http.Transport{DisableKeepAlives: true, DisableCompression: true,
		DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
			return h.replicas.DialHawser(ctx, envID)
		}}}
	h.relayRT[envID] = rt
	return rt
}

// relayTransport turns the holder's error answers back into errors.
type relayTransport struct{ t *http.Transport }

func (r relayTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	res, err := r.t.RoundTrip(req)
	if err != nil {
		return nil, err
	}
	kind := res.Header.Get(relayErrorHeader)
	if kind == "" {
		return res, nil
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(io.LimitReader(res.Body, 64<<10))
	return nil, relayError(kind, string(b))
}

// The kinds of relayed errors.
var relayKinds = map[string]error{"absent": engine.ErrAgentAbsent, "lost": engine.ErrAgentLost,
	"unsupported": engine.ErrUnsupported, "invalid": engine.ErrInvalid, "timeout": context.DeadlineExceeded,
	"canceled": context.Canceled}

func relayError(kind, msg string) error {
	if sentinel, ok := relayKinds[kind]; ok {
		return fmt.Errorf("hawser (through the replica holding the agent): %s: %w", msg, sentinel)
	}
	return fmt.Errorf("hawser (through the replica holding the agent): %s", msg)
}

func relayKind(err error) string {
	for _, k := range []string{"absent", "lost", "unsupported", "invalid", "timeout", "canceled"} {
		if errors.Is(err, relayKinds[k]) {
			return k
		}
	}
	return "error"
}

// ServeRelayed serves conn, an HTTP/1.1 connection another replica relayed,
// into envID's agent connected here: each request goes to the agent as if
// this replica received it (streams included); the exec request opens a
// terminal session over the connection. ctx ends with the relay stream.
func (h *Hub) ServeRelayed(ctx context.Context, envID int64, conn net.Conn) error {
	defer conn.Close()
	br := bufio.NewReader(conn)
	bw := bufio.NewWriter(conn)
	for {
		req, err := http.ReadRequest(br)
		if err != nil {
			if errors.Is(err, io.EOF) {
				return nil
			}
			return err
		}
		switch req.URL.Path {
		case relayExecPath:
			return h.serveRelayedExec(ctx, envID, req, br, bw)
		case relayMetricsPath:
			if err := h.serveRelayedMetrics(envID, bw); err != nil {
				return err
			}
		case relayResizePath:
			if err := h.serveRelayedResize(ctx, envID, req, bw); err != nil {
				return err
			}
		default:
			if err := h.serveRelayedRequest(ctx, envID, req, bw); err != nil {
				return err
			}
		}
		if req.Close {
			return nil
		}
	}
}

func (h *Hub) serveRelayedRequest(ctx context.Context, envID int64, req *http.Request, bw *bufio.Writer) error {
	out := req.Clone(ctx)
	out.RequestURI = ""
	out.URL.Scheme, out.URL.Host = "http", "hawser-edge"
	res, err := tunnel{hub: h, envID: envID, local: true}.RoundTrip(out)
	_, _ = io.Copy(io.Discard, req.Body)
	if err != nil {
		return writeRelayError(bw, err)
	}
	defer res.Body.Close()
	fmt.Fprintf(bw, "HTTP/1.1 %d %s\r\n", res.StatusCode, http.StatusText(res.StatusCode))
	res.Header.Del("Content-Length")
	res.Header.Del("Transfer-Encoding")
	if err := res.Header.Write(bw); err != nil {
		return err
	}
	if res.ContentLength >= 0 {
		fmt.Fprintf(bw, "Content-Length: %d\r\n\r\n", res.ContentLength)
		if _, err := io.Copy(bw, res.Body); err != nil {
			return err
		}
		return bw.Flush()
	}
	// A stream: each piece the agent sends goes on at once, chunked.
	bw.WriteString("Transfer-Encoding: chunked\r\n\r\n")
	if err := bw.Flush(); err != nil {
		return err
	}
	cw := httputil.NewChunkedWriter(bw)
	buf := make([]byte, 32<<10)
	for {
		n, rerr := res.Body.Read(buf)
		if n > 0 {
			if _, err := cw.Write(buf[:n]); err != nil {
				return err
			}
			if err := bw.Flush(); err != nil {
				return err
			}
		}
		if rerr != nil {
			if !errors.Is(rerr, io.EOF) {
				return rerr // the connection ends without the last chunk: the reader sees it cut
			}
			break
		}
	}
	if err := cw.Close(); err != nil {
		return err
	}
	bw.WriteString("\r\n")
	return bw.Flush()
}

// serveRelayedMetrics answers the host metrics envID's agent pushed here
// last (404: none yet).
func (h *Hub) serveRelayedMetrics(envID int64, bw *bufio.Writer) error {
	m, ok := h.pushedMetrics(envID)
	if !ok {
		bw.WriteString("HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\n\r\n")
		return bw.Flush()
	}
	b, err := json.Marshal(m)
	if err != nil {
		return err
	}
	fmt.Fprintf(bw, "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n%s", len(b), b)
	return bw.Flush()
}

// serveRelayedResize sends another replica's exec_resize to envID's agent.
func (h *Hub) serveRelayedResize(ctx context.Context, envID int64, req *http.Request, bw *bufio.Writer) error {
	var r relayResize
	if err := json.NewDecoder(io.LimitReader(req.Body, 64<<10)).Decode(&r); err != nil {
		return writeRelayError(bw, fmt.Errorf("%w: bad resize request: %v", engine.ErrInvalid, err))
	}
	if err := h.resizeLocal(ctx, envID, r.ExecID, r.Cols, r.Rows); err != nil {
		return writeRelayError(bw, err)
	}
	bw.WriteString("HTTP/1.1 204 No Content\r\n\r\n")
	return bw.Flush()
}

// resizeRelayed sends exec_resize to envID's agent through the replica
// holding it.
func (h *Hub) resizeRelayed(ctx context.Context, envID int64, execID string, cols, rows int) error {
	body, err := json.Marshal(relayResize{ExecID: execID, Cols: cols, Rows: rows})
	if err != nil {
		return err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, "http://hawser-edge"+relayResizePath, bytes.NewReader(body))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/json")
	res, err := h.relayed(envID).RoundTrip(req)
	if err != nil {
		return err
	}
	res.Body.Close()
	if res.StatusCode != http.StatusNoContent {
		return fmt.Errorf("hawser: the replica holding the agent answered the resize with %s", res.Status)
	}
	return nil
}

// relayedMetrics asks the replica holding envID's agent for the host
// metrics the agent pushed it last.
func (h *Hub) relayedMetrics(envID int64) (engine.HostMetrics, bool) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, "http://hawser-edge"+relayMetricsPath, nil)
	if err != nil {
		return engine.HostMetrics{}, false
	}
	res, err := h.relayed(envID).RoundTrip(req)
	if err != nil {
		return engine.HostMetrics{}, false
	}
	defer res.Body.Close()
	var m engine.HostMetrics
	if res.StatusCode != http.StatusOK || json.NewDecoder(io.LimitReader(res.Body, 64<<10)).Decode(&m) != nil {
		return engine.HostMetrics{}, false
	}
	return m, true
}

// writeRelayError answers a request the holder's transport failed.
func writeRelayError(bw *bufio.Writer, err error) error {
	msg := err.Error()
	fmt.Fprintf(bw, "HTTP/1.1 502 Bad Gateway\r\n%s: %s\r\nContent-Type: text/plain\r\nContent-Length: %d\r\n\r\n%s",
		relayErrorHeader, relayKind(err), len(msg), msg)
	return bw.Flush()
}

// Frames a relaying replica sends on a terminal session's connection, after
// the upgrade: one type byte, a big-endian uint32 length, the payload.
const (
	execInput  = 'i'
	execResize = 'r' // payload: cols, rows as uint32
	execClose  = 'c'
)

// serveRelayedExec opens a terminal session on envID's agent for another
// replica: its output goes back raw, its input comes as frames.
func (h *Hub) serveRelayedExec(ctx context.Context, envID int64, req *http.Request, br *bufio.Reader, bw *bufio.Writer) error {
	var x engine.HawserExec
	if err := json.NewDecoder(io.LimitReader(req.Body, 1<<20)).Decode(&x); err != nil {
		return writeRelayError(bw, fmt.Errorf("%w: bad exec request: %v", engine.ErrInvalid, err))
	}
	s, err := h.execLocal(ctx, envID, x)
	if err != nil {
		var ee *engine.Error
		if errors.As(err, &ee) {
			// The agent's refusal, as the engine shows it.
			msg := ee.Msg
			fmt.Fprintf(bw, "HTTP/1.1 500 Internal Server Error\r\n%s: agent\r\nContent-Length: %d\r\n\r\n%s", relayErrorHeader, len(msg), msg)
			return bw.Flush()
		}
		return writeRelayError(bw, err)
	}
	defer s.Close()
	bw.WriteString("HTTP/1.1 101 Switching Protocols\r\nConnection: Upgrade\r\nUpgrade: berth-hawser-exec\r\n\r\n")
	if err := bw.Flush(); err != nil {
		return err
	}
	go func() {
		defer s.Close()
		for {
			typ, payload, err := readExecFrame(br)
			if err != nil {
				return
			}
			switch typ {
			case execInput:
				if _, err := s.Write(payload); err != nil {
					return
				}
			case execResize:
				if len(payload) == 8 {
					_ = s.Resize(int(binary.BigEndian.Uint32(payload)), int(binary.BigEndian.Uint32(payload[4:])))
				}
			case execClose:
				return
			}
		}
	}()
	buf := make([]byte, 32<<10)
	for {
		n, err := s.Read(buf)
		if n > 0 {
			if _, werr := bw.Write(buf[:n]); werr != nil {
				return werr
			}
			if werr := bw.Flush(); werr != nil {
				return werr
			}
		}
		if err != nil {
			return nil
		}
	}
}

func readExecFrame(r *bufio.Reader) (byte, []byte, error) {
	var head [5]byte
	if _, err := io.ReadFull(r, head[:]); err != nil {
		return 0, nil, err
	}
	n := binary.BigEndian.Uint32(head[1:])
	if n > maxFrame {
		return 0, nil, errors.New("exec frame too large")
	}
	payload := make([]byte, n)
	if _, err := io.ReadFull(r, payload); err != nil {
		return 0, nil, err
	}
	return head[0], payload, nil
}

// execRelayed opens a terminal session on envID's agent through the
// replica holding it.
func (h *Hub) execRelayed(ctx context.Context, envID int64, x engine.HawserExec) (engine.HawserSession, error) {
	conn, err := h.replicas.DialHawser(ctx, envID)
	if err != nil {
		return nil, err
	}
	body, err := json.Marshal(x)
	if err != nil {
		conn.Close()
		return nil, err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, "http://hawser-edge"+relayExecPath, bytes.NewReader(body))
	if err != nil {
		conn.Close()
		return nil, err
	}
	req.Header.Set("Connection", "Upgrade")
	req.Header.Set("Upgrade", "berth-hawser-exec")
	req.Header.Set("Content-Type", "application/json")
	stop := context.AfterFunc(ctx, func() { conn.Close() })
	defer stop()
	if err := req.Write(conn); err != nil {
		conn.Close()
		return nil, relayWriteError(ctx, err)
	}
	br := bufio.NewReader(conn)
	res, err := http.ReadResponse(br, req)
	if err != nil {
		conn.Close()
		return nil, relayWriteError(ctx, err)
	}
	if res.StatusCode != http.StatusSwitchingProtocols {
		b, _ := io.ReadAll(io.LimitReader(res.Body, 64<<10))
		res.Body.Close()
		conn.Close()
		if res.Header.Get(relayErrorHeader) == "agent" {
			return nil, &engine.Error{Msg: string(b)}
		}
		return nil, relayError(res.Header.Get(relayErrorHeader), string(b))
	}
	if !stop() {
		return nil, ctx.Err() // ctx ended as the session opened (conn is closed)
	}
	s := &relayedSession{conn: conn}
	s.init()
	go s.pump(br)
	return s, nil
}

func relayWriteError(ctx context.Context, err error) error {
	if ctx.Err() != nil {
		return ctx.Err()
	}
	return fmt.Errorf("hawser: the relayed terminal session failed to open (%v): %w", err, engine.ErrAgentLost)
}

// relayedSession is a terminal session on an agent connected to another
// replica (engine.HawserSession).
type relayedSession struct {
	conn net.Conn
	wmu  sync.Mutex

	output
	closed sync.Once
}

// pump reads the session's output until the holder ends it.
func (s *relayedSession) pump(r io.Reader) {
	b := make([]byte, 32<<10)
	for {
		n, err := r.Read(b)
		s.write(b[:n])
		if err != nil {
			if errors.Is(err, io.EOF) {
				err = nil
			} else if !errors.Is(err, net.ErrClosed) {
				err = fmt.Errorf("hawser: the relayed terminal session ended: %v: %w", err, engine.ErrAgentLost)
			} else {
				err = nil
			}
			s.finish(err)
			return
		}
	}
}

func (s *relayedSession) frame(typ byte, payload []byte) error {
	s.wmu.Lock()
	defer s.wmu.Unlock()
	b := make([]byte, 5+len(payload))
	b[0] = typ
	binary.BigEndian.PutUint32(b[1:], uint32(len(payload)))
	copy(b[5:], payload)
	_, err := s.conn.Write(b)
	return err
}

func (s *relayedSession) Write(p []byte) (int, error) {
	if s.isEnded() {
		return 0, io.ErrClosedPipe
	}
	if err := s.frame(execInput, p); err != nil {
		return 0, err
	}
	return len(p), nil
}

func (s *relayedSession) Resize(cols, rows int) error {
	if s.isEnded() {
		return errors.New("hawser: the terminal session ended")
	}
	var p [8]byte
	binary.BigEndian.PutUint32(p[:], uint32(max(cols, 0)))
	binary.BigEndian.PutUint32(p[4:], uint32(max(rows, 0)))
	return s.frame(execResize, p[:])
}

func (s *relayedSession) Close() error {
	s.closed.Do(func() {
		if !s.isEnded() {
			_ = s.frame(execClose, nil)
		}
		s.conn.Close()
		s.finish(nil)
	})
	return nil
}

// leaseStatus is the state of an agent another replica holds, from its lease.
func leaseStatus(l store.AgentLease, events int) Status {
	caps := l.Capabilities
	if caps == nil {
		caps = []string{}
	}
	at := l.ConnectedAt.UTC()
	return Status{Connected: true, ConnectedAt: &at, LastHeartbeat: &at, AgentID: l.AgentID, AgentName: l.AgentName,
		AgentVersion: l.AgentVersion, Capabilities: caps, RemoteAddress: l.Remote, ContainerEvents: events}
}

// tokenValid reports whether token still authenticates envID's agent.
func (h *Hub) tokenValid(token string, envID int64) func(context.Context) (bool, error) {
	return func(ctx context.Context) (bool, error) {
		env, _, err := h.authenticate(ctx, token)
		switch {
		case errors.Is(err, errBadToken), errors.Is(err, errNotEdge):
			return false, nil
		case err != nil:
			return false, err
		}
		return env.ID == envID, nil
	}
}
