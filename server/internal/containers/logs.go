package containers

import (
	"context"
	"strconv"
	"strings"

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

// Logs returns the last lines of a container's output as one text.
func (s *Service) Logs(ctx context.Context, env store.Environment, id, tail string, timestamps bool) (string, error) {
	tail, err := parseTail(tail)
	if err != nil {
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
	err = c.Logs(ctx, st.ID, st.Tty, engine.LogOptions{Tail: tail, Timestamps: timestamps}, func(l engine.LogLine) error {
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
// they come, until ctx ends or the container stops. ready is called once the
// container is known to exist, before any line.
func (s *Service) FollowLogs(ctx context.Context, env store.Environment, id, tail string, timestamps bool, ready func() error, emit func(engine.LogLine) error) error {
	tail, err := parseTail(tail)
	if err != nil {
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
	if err := c.Logs(ctx, st.ID, st.Tty, engine.LogOptions{Tail: tail, Follow: true, Timestamps: timestamps}, emit); err != nil {
		return opFault("stream container logs", err)
	}
	return nil
}
