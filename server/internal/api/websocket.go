package api

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/url"
	"path"
	"strings"
	"unicode/utf8"

	"github.com/coder/websocket"
	"github.com/gin-gonic/gin"

	"github.com/berth-dev/berth/shared/engine"
	"github.com/berth-dev/berth/shared/fault"
)

// checkOrigin refuses a browser request from another site: the Origin
// header, when present, must name the request's own host or match one of the
// configured origin patterns. Clients that send no Origin (scripts) pass.
// WebSocket handlers call it before doing anything with side effects.
func (s *Server) checkOrigin(r *http.Request) error {
	origin := r.Header.Get("Origin")
	if origin == "" {
		return nil
	}
	u, err := url.Parse(origin)
	if err == nil && u.Host != "" {
		if strings.EqualFold(u.Host, r.Host) {
			return nil
		}
		for _, pattern := range s.origins {
			if ok, _ := path.Match(strings.ToLower(pattern), strings.ToLower(u.Host)); ok {
				return nil
			}
		}
	}
	return fault.New(fault.Forbidden, "Origin not allowed")
}

// acceptWebSocket upgrades the request (whose origin checkOrigin has accepted; the
// library checks it again with the same rule).
func (s *Server) acceptWebSocket(c *gin.Context) (*websocket.Conn, error) {
	return websocket.Accept(c.Writer, c.Request, &websocket.AcceptOptions{OriginPatterns: s.origins})
}

// terminal is a bidirectional byte stream to a process (an exec session).
type terminal interface {
	io.ReadWriteCloser
}

// pumpTerminal joins a WebSocket and a terminal: text (or binary) frames from
// the client are written to the terminal; terminal output is sent as text
// frames of valid UTF-8. It returns when either side ends, after closing both.
func pumpTerminal(ctx context.Context, ws *websocket.Conn, term terminal) {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	ws.SetReadLimit(1 << 20)

	outputDone := make(chan struct{})
	go func() {
		defer close(outputDone)
		defer cancel()
		var chunker utf8Chunker
		buf := make([]byte, 32<<10)
		for {
			n, err := term.Read(buf)
			if n > 0 {
				if out := chunker.Next(buf[:n]); len(out) > 0 {
					if werr := ws.Write(ctx, websocket.MessageText, out); werr != nil {
						return
					}
				}
			}
			if err != nil {
				if rest := chunker.Flush(); len(rest) > 0 {
					_ = ws.Write(ctx, websocket.MessageText, rest)
				}
				if errors.Is(err, io.EOF) {
					_ = ws.Close(websocket.StatusNormalClosure, "session ended")
				} else {
					// The terminal broke (an agent that died, say): say so.
					_ = ws.Close(websocket.StatusInternalError, closeReason(engine.Details(err)))
				}
				return
			}
		}
	}()

	for {
		_, data, err := ws.Read(ctx)
		if err != nil {
			break
		}
		if _, err := term.Write(data); err != nil {
			break
		}
	}
	term.Close() // ends the session; the output reader returns
	cancel()
	<-outputDone
	_ = ws.CloseNow()
}

// closeReason fits a message into a close frame's 123 bytes.
func closeReason(msg string) string {
	for len(msg) > 123 {
		_, size := utf8.DecodeLastRuneInString(msg)
		msg = msg[:len(msg)-size]
	}
	return msg
}

// utf8Chunker cuts a byte stream into chunks of valid UTF-8: an incomplete
// multi-byte sequence at the end of a chunk is held back for the next one,
// and invalid bytes become U+FFFD, so that text frames are always valid.
type utf8Chunker struct {
	pending []byte
}

// Next returns the valid text of pending + p, keeping an incomplete tail.
func (c *utf8Chunker) Next(p []byte) []byte {
	data := append(c.pending, p...)
	c.pending = nil
	// Hold back a trailing incomplete sequence (at most 3 bytes).
	cut := len(data)
	for i := len(data) - 1; i >= 0 && i >= len(data)-3; i-- {
		if utf8.RuneStart(data[i]) {
			if !utf8.FullRune(data[i:]) {
				cut = i
			}
			break
		}
	}
	c.pending = append([]byte(nil), data[cut:]...)
	return sanitizeUTF8(data[:cut])
}

// Flush returns whatever is held back, made valid.
func (c *utf8Chunker) Flush() []byte {
	p := c.pending
	c.pending = nil
	return sanitizeUTF8(p)
}

func sanitizeUTF8(p []byte) []byte {
	if utf8.Valid(p) {
		return p
	}
	out := make([]byte, 0, len(p)+8)
	for len(p) > 0 {
		r, size := utf8.DecodeRune(p)
		if r == utf8.RuneError && size <= 1 {
			out = utf8.AppendRune(out, utf8.RuneError)
			p = p[1:]
			continue
		}
		out = append(out, p[:size]...)
		p = p[size:]
	}
	return out
}

// isClientGone reports whether err means the client closed the connection.
func isClientGone(err error) bool {
	return errors.Is(err, context.Canceled) || websocket.CloseStatus(err) != -1
}
