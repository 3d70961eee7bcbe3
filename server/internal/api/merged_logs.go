package api

import (
	"context"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/gin-gonic/gin"
	"golang.org/x/sync/errgroup"

	"github.com/berth-dev/berth/server/internal/containers"
	"github.com/berth-dev/berth/shared/engine"
	"github.com/berth-dev/berth/shared/fault"
)

// maxMergedContainers bounds the containers of one merged log.
const maxMergedContainers = 20

// mergedLine is one line of a merged log.
type mergedLine struct {
	ContainerID string    `json:"containerId"`      // as the query names it
	Stream      string    `json:"stream,omitempty"` // stdout or stderr; unknown for the last lines read first
	Text        string    `json:"text"`
	Timestamp   time.Time `json:"timestamp"`
}

// splitTimestamp cuts the engine's RFC 3339 timestamp off a log line; a
// line without one keeps its text and gets the zero time.
func splitTimestamp(text string) (time.Time, string) {
	ts, rest, ok := strings.Cut(text, " ")
	if !ok {
		ts, rest = text, ""
	}
	t, err := time.Parse(time.RFC3339Nano, ts)
	if err != nil {
		return time.Time{}, text
	}
	return t, rest
}

// mergedLogs streams the logs of several containers of one environment
// (query containers=a,b,… by id or name; tail, default 100 lines each;
// since and until bound the lines by time, as for one container) as
// one SSE stream: "connected" {containers}, then the last lines of every
// container interleaved by timestamp, then new lines as they come, each a
// "log" event {containerId, stream?, text, timestamp}; "end"
// when every container's output ended, "error" {error, details?} if one
// failed.
func (s *Server) mergedLogs(c *gin.Context) error {
	var ids []string
	for _, id := range strings.Split(c.Query("containers"), ",") {
		if id = strings.TrimSpace(id); id != "" && !slices.Contains(ids, id) {
			ids = append(ids, id)
		}
	}
	switch {
	case len(ids) == 0:
		return fault.New(fault.Invalid, "containers must name at least one container")
	case len(ids) > maxMergedContainers:
		return fault.Invalidf("At most %d containers per merged log", maxMergedContainers)
	}
	tail := c.DefaultQuery("tail", "100")
	since, until := c.Query("since"), c.Query("until") // bound every container's lines
	env := envOf(c)
	ctx := c.Request.Context()

	// The last lines of each, read first: a container that does not exist
	// fails the request before the stream starts.
	backlog := make([][]mergedLine, len(ids))
	var g errgroup.Group
	g.SetLimit(4)
	for i, id := range ids {
		g.Go(func() error {
			text, err := s.containers.Logs(ctx, env, id, containers.LogQuery{Tail: tail, Timestamps: true, Since: since, Until: until})
			if err != nil {
				return err
			}
			for _, line := range strings.Split(strings.TrimSuffix(text, "\n"), "\n") {
				if line == "" {
					continue
				}
				t, rest := splitTimestamp(line)
				backlog[i] = append(backlog[i], mergedLine{ContainerID: id, Text: rest, Timestamp: t})
			}
			return nil
		})
	}
	if err := g.Wait(); err != nil {
		return err
	}
	var merged []mergedLine
	last := make([]time.Time, len(ids))
	for i, lines := range backlog {
		merged = append(merged, lines...)
		if len(lines) > 0 {
			last[i] = lines[len(lines)-1].Timestamp
		}
	}
	slices.SortStableFunc(merged, func(a, b mergedLine) int { return a.Timestamp.Compare(b.Timestamp) })

	es := startEvents(c)
	defer es.Close()
	if err := es.Send("connected", map[string]any{"containers": ids}); err != nil {
		return err
	}
	for _, l := range merged {
		if err := es.Send("log", l); err != nil {
			return err
		}
	}
	// Then follow each, starting again from its last lines, so that a line
	// written between the two reads is not lost: lines not newer than the
	// last one sent are the backlog's again and are skipped.
	followTail := tail
	if n, err := strconv.Atoi(tail); err != nil || n > 1000 {
		followTail = "1000"
	}
	fctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var (
		wg       sync.WaitGroup
		errMu    sync.Mutex
		firstErr error
	)
	for i, id := range ids {
		wg.Add(1)
		go func() {
			defer wg.Done()
			q := containers.LogQuery{Tail: followTail, Timestamps: true, Since: since, Until: until}
			err := s.containers.FollowLogs(fctx, env, id, q, func() error { return nil },
				func(l engine.LogLine) error {
					t, rest := splitTimestamp(l.Text)
					if !t.IsZero() && !t.After(last[i]) {
						return nil
					}
					return es.Send("log", mergedLine{ContainerID: id, Stream: l.Stream, Text: rest, Timestamp: t})
				})
			if err != nil && fctx.Err() == nil {
				errMu.Lock()
				if firstErr == nil {
					firstErr = err
				}
				errMu.Unlock()
				cancel()
			}
		}()
	}
	wg.Wait()
	if ctx.Err() != nil {
		return nil
	}
	if firstErr != nil {
		_, body := errorResponse(firstErr)
		_ = es.Send("error", body)
		return firstErr
	}
	return es.Send("end", struct{}{})
}
