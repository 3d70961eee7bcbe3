package api

import (
	"fmt"
	"log/slog"
	"net/http"
	"runtime/debug"
	"time"

	"github.com/gin-gonic/gin"
)

// logRequests is the gin middleware that logs one line per request and
// recovers from panics, answering 500 when nothing was written yet.
func (s *Server) logRequests(c *gin.Context) {
	start := time.Now()
	r := c.Request
	defer func() {
		if v := recover(); v != nil {
			if v == http.ErrAbortHandler {
				panic(v)
			}
			s.log.Error("panic", "method", r.Method, "path", r.URL.Path, "panic", fmt.Sprint(v), "stack", string(debug.Stack()))
			c.Abort()
			if !c.Writer.Written() {
				writeJSON(c, http.StatusInternalServerError, errorBody{Error: "Internal server error"})
			}
		}
		status := c.Writer.Status()
		level := slog.LevelInfo
		if status >= 500 {
			level = slog.LevelWarn
		}
		s.log.Log(r.Context(), level, "http", "method", r.Method, "path", r.URL.Path,
			"status", status, "duration", time.Since(start).Round(time.Microsecond), "remote", r.RemoteAddr,
			"client", s.clientIP(r))
		s.sys.observeRequest(c, status, time.Since(start))
	}()
	c.Next()
}
