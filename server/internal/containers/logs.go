package containers

import (
	"context"
	"errors"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/berth-dev/berth/server/internal/store"
	"github.com/berth-dev/berth/shared/engine"
	"github.com/berth-dev/berth/shared/fault"
)

// DefaultTail is the number of log lines returned when tail is not given.
const DefaultTail = "100"

// maxLogBytes bounds the text returned by Logs.
const maxLogBytes = 8 << 20

// parseTail accepts a non-negative number or "all".
func parseTail(tail string) (string, error) {
	tail = strings.TrimSpace(tail)
	switch {
	case tail == "":
		return DefaultTail, nil
	case tail == "all":
		return tail, nil
	}
	if n, err := strconv.Atoi(tail); err != nil || n < 0 {
		return "", fault.New(fault.Invalid, "tail must be a non-negative number or 'all'")
	}
	return tail, nil
}

// LogQuery selects a container's log lines.
type LogQuery struct {
	Tail       string // a number of lines or "all" ("": DefaultTail)
	Timestamps bool
	// Since and Until bound the lines by time: a Unix time, an RFC 3339
	// time or a duration back from now ("10m"); "" for no bound.
	Since, Until string
}

// check validates q and fills in its default tail.
func (q *LogQuery) check() error {
	tail, err := parseTail(q.Tail)
	if err != nil {
		return err
	}
	q.Tail = tail
	for _, b := range []struct{ name, v string }{{"since", q.Since}, {"until", q.Until}} {
		if b.v != "" && !logTime(b.v) {
			return fault.Invalidf("%s must be a Unix time, an RFC 3339 time or a duration such as 10m", b.name)
		}
	}
	return nil
}

// logTime reports whether v is a time bound the engine takes.
func logTime(v string) bool {
	_, ok := logInstant(v, time.Now())
	return ok
}

// logInstant is the time v names, as the engine reads it: a Unix time
// (seconds, with a fraction), a duration back from now, or an RFC 3339
// time (UTC when it has no zone).
func logInstant(v string, now time.Time) (time.Time, bool) {
	if f, err := strconv.ParseFloat(v, 64); err == nil {
		sec, frac := math.Modf(f)
		return time.Unix(int64(sec), int64(frac*1e9)), true
	}
	if d, err := time.ParseDuration(v); err == nil && d >= 0 {
		return now.Add(-d), true
	}
	for _, layout := range []string{time.RFC3339Nano, "2006-01-02T15:04:05", "2006-01-02T15:04", time.DateOnly} {
		if t, err := time.Parse(layout, v); err == nil {
			return t, true
		}
	}
	return time.Time{}, false
}

// Logs returns the last lines of a container's output as one text.
func (s *Service) Logs(ctx context.Context, env store.Environment, id string, q LogQuery) (string, error) {
	if err := q.check(); err != nil {
		return "", err
	}
	c, err := s.client(ctx, env, "get container logs")
	if err != nil {
		return "", err
	}
	_, st, err := c.InspectContainer(ctx, id)
	if err != nil {
		return "", opFault("get container logs", err)
	}
	var b strings.Builder
	err = c.Logs(ctx, st.ID, st.Tty, engine.LogOptions{Tail: q.Tail, Timestamps: q.Timestamps, Since: q.Since, Until: q.Until}, func(l engine.LogLine) error {
		if b.Len() < maxLogBytes {
			b.WriteString(l.Text)
			b.WriteByte('\n')
		}
		return nil
	})
	if err != nil {
		return "", opFault("get container logs", err)
	}
	return b.String(), nil
}

// FollowLogs sends the last lines of a container's output, then new lines as
// they come, until ctx ends, the container stops or q.Until passes. ready is
// called once the container is known to exist, before any line.
func (s *Service) FollowLogs(ctx context.Context, env store.Environment, id string, q LogQuery, ready func() error, emit func(engine.LogLine) error) error {
	if err := q.check(); err != nil {
		return err
	}
	c, err := s.client(ctx, env, "stream container logs")
	if err != nil {
		return err
	}
	_, st, err := c.InspectContainer(ctx, id)
	if err != nil {
		return opFault("stream container logs", err)
	}
	if err := ready(); err != nil {
		return err
	}
	o := engine.LogOptions{Tail: q.Tail, Follow: true, Timestamps: q.Timestamps, Since: q.Since}
	fctx := ctx
	if q.Until != "" {
		// The engine does not end a followed log at until (it hangs when
		// until has passed): a bound in the past reads the lines without
		// following; one ahead follows until then.
		until, _ := logInstant(q.Until, time.Now())
		if !until.After(time.Now()) {
			o.Follow, o.Until = false, q.Until
		} else {
			var cancel context.CancelFunc
			fctx, cancel = context.WithDeadline(ctx, until)
			defer cancel()
		}
	}
	err = c.Logs(fctx, st.ID, st.Tty, o, emit)
	if err != nil && ctx.Err() == nil && errors.Is(fctx.Err(), context.DeadlineExceeded) {
		err = nil // until has come
	}
	if err != nil {
		return opFault("stream container logs", err)
	}
	return nil
}
