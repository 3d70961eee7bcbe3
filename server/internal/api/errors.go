package api

import (
	"context"
	"errors"
	"net/http"
	"strconv"

	"github.com/gin-gonic/gin"

	"github.com/berth-dev/berth/server/internal/auth"
	"github.com/berth-dev/berth/server/internal/files"
	"github.com/berth-dev/berth/server/internal/store"
	"github.com/berth-dev/berth/shared/engine"
	"github.com/berth-dev/berth/shared/fault"
)

// errorBody is the error response of every endpoint: {error, details?}.
type errorBody struct {
	Error   string `json:"error"`
	Details string `json:"details,omitempty"`
	Message string `json:"message,omitempty"` // only the 401 of COMPAT.md
}

// statusOf maps each fault kind to its HTTP status.
var statusOf = map[fault.Kind]int{
	fault.Internal:     http.StatusInternalServerError,
	fault.Invalid:      http.StatusBadRequest,
	fault.Unauthorized: http.StatusUnauthorized,
	fault.Forbidden:    http.StatusForbidden,
	fault.NotFound:     http.StatusNotFound,
	fault.Conflict:     http.StatusConflict,
	fault.TooMany:      http.StatusTooManyRequests,
	fault.Unavailable:  http.StatusServiceUnavailable,
}

// statusClientClosed is the status recorded (request log, audit) for a
// request whose client left before its answer: nginx's 499.
const statusClientClosed = 499

// errorResponse is THE mapping from an error to a status and a body. It is
// the only place that decides an error status.
func errorResponse(err error) (int, errorBody) {
	if errors.Is(err, errAuthRequired) {
		return http.StatusUnauthorized, errorBody{Error: "Unauthorized", Message: "Authentication required"}
	}
	if f, ok := fault.As(err); ok {
		if f.Kind == fault.TooMany {
			return http.StatusTooManyRequests, errorBody{Error: f.Message} // details carry the retry hint for the header
		}
		status, known := statusOf[f.Kind]
		if !known {
			status = http.StatusInternalServerError
		}
		if es, ok := engineStatus(err); ok && f.Kind == fault.Internal {
			status = es
		}
		return status, errorBody{Error: f.Message, Details: f.Details}
	}
	if es, ok := engineStatus(err); ok {
		if es == http.StatusGatewayTimeout {
			return es, errorBody{Error: "The operation did not finish in time"}
		}
		return es, errorBody{Error: engine.Details(err)}
	}
	var tooBig *http.MaxBytesError
	var tooLarge *files.TooLargeError
	switch {
	case errors.As(err, &tooLarge): // a file or upload over the file browser's limits
		return http.StatusRequestEntityTooLarge, errorBody{Error: tooLarge.Message}
	case errors.As(err, &tooBig):
		return http.StatusRequestEntityTooLarge, errorBody{Error: "Request body too large"}
	case errors.Is(err, store.ErrNotFound):
		return http.StatusNotFound, errorBody{Error: "Not found"}
	case errors.Is(err, store.ErrConflict):
		return http.StatusConflict, errorBody{Error: "Already exists"}
	}
	return http.StatusInternalServerError, errorBody{Error: "Internal server error"}
}

// engineStatus is the status of a failed engine operation by its cause, for
// the errors domain packages report as failed operations (500): a reference
// or request the engine refuses (400), a conflict with the object's state
// (409: pausing a paused container), an engine that cannot be reached (503)
// or that did not answer in time (504).
func engineStatus(err error) (int, bool) {
	switch {
	case errors.Is(err, engine.ErrOffline), errors.Is(err, engine.ErrAgentAbsent), errors.Is(err, engine.ErrBusy):
		return http.StatusServiceUnavailable, true
	case errors.Is(err, context.DeadlineExceeded):
		return http.StatusGatewayTimeout, true
	case errors.Is(err, engine.ErrInvalid):
		return http.StatusBadRequest, true
	case errors.Is(err, engine.ErrWrongState):
		return http.StatusConflict, true
	}
	return 0, false
}

// writeError answers with err's status and body; server errors are logged
// with their full cause, which the client never sees.
func (s *Server) writeError(c *gin.Context, err error) {
	r := c.Request
	status, body := errorResponse(err)
	if secs, ok := auth.RetryAfter(err); ok {
		c.Header("Retry-After", strconv.Itoa(secs))
	} else if secs, ok := engine.RetryAfter(err); ok {
		c.Header("Retry-After", strconv.Itoa(secs))
	}
	switch {
	case status >= 500 && r.Context().Err() != nil:
		// The client left (or Berth is stopping) before the answer was ready:
		// nobody reads it, and nothing failed on the server's side.
		s.log.Debug("request abandoned", "method", r.Method, "path", r.URL.Path, "err", err)
		status = statusClientClosed
	case status >= 500:
		s.log.Error("request failed", "method", r.Method, "path", r.URL.Path, "status", status, "err", err)
	default:
		s.log.Debug("request rejected", "method", r.Method, "path", r.URL.Path, "status", status, "err", err)
	}
	writeJSON(c, status, body)
}
