package api

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/gin-gonic/gin"
)

// A request whose client left before the answer was ready is not a server
// failure: no ERROR line, status 499 in the request log. The same failure
// with the client still there is logged as an error and answered 500.
func TestAbandonedRequestIsNotLoggedAsFailure(t *testing.T) {
	for _, tc := range []struct {
		name      string
		cancel    bool
		wantCode  int
		wantError bool
	}{
		{"client gone", true, statusClientClosed, false},
		{"client waiting", false, 500, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var logs bytes.Buffer
			s := &Server{log: slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug}))}
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			if tc.cancel {
				cancel()
			}
			rec := httptest.NewRecorder()
			c, _ := gin.CreateTestContext(rec)
			c.Request = httptest.NewRequest("GET", "/api/containers/stats/stream?env=1", nil).WithContext(ctx)
			cause := errors.New("database is gone")
			if tc.cancel {
				cause = context.Canceled
			}
			s.writeError(c, fmt.Errorf("store: get environment 1: %w", cause))
			if rec.Code != tc.wantCode {
				t.Errorf("status = %d, want %d", rec.Code, tc.wantCode)
			}
			if got := strings.Contains(logs.String(), "level=ERROR"); got != tc.wantError {
				t.Errorf("logged an ERROR = %v, want %v; log:\n%s", got, tc.wantError, logs.String())
			}
		})
	}
}
