package engine

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/moby/moby/client"
)

// Event is one occurrence reported by the engine.
type Event struct {
	Type   string // container, image, volume, network, …
	Action string // start, die, …, without any ": detail" suffix
	ID     string
	Name   string
	Time   int64 // Unix seconds
	// TimeNano is when the engine saw it, Unix nanoseconds: with the
	// environment, actor and action, it names one occurrence (what several
	// servers following the same engine agree on).
	TimeNano int64
}

// Events calls fn for every engine event until ctx ends (nil), the engine
// stream fails, or fn fails.
func (c *Client) Events(ctx context.Context, fn func(Event) error) error {
	return c.EventsSince(ctx, 0, fn)
}

// EventsSince is Events from since (Unix nanoseconds; 0: from now): the
// engine first replays the events it still holds from that instant on (it
// keeps the last few hundred), so that a follower reconnecting after its
// stream broke misses nothing that happened meanwhile.
func (c *Client) EventsSince(ctx context.Context, since int64, fn func(Event) error) error {
	return c.EventsOpened(ctx, since, nil, fn)
}

// EventsOpened is EventsSince that calls opened (when not nil) once the
// engine answered the request, before the first event: from then on the
// stream is the engine's (it subscribes the stream right after answering).
// A request that failed at once usually does not call opened; when it does,
// the failure is what the call returns next.
func (c *Client) EventsOpened(ctx context.Context, since int64, opened func(), fn func(Event) error) error {
	opts := client.EventsListOptions{}
	if since > 0 {
		opts.Since = fmt.Sprintf("%d.%09d", since/int64(time.Second), since%int64(time.Second))
	}
	res := c.cli.Events(ctx, opts)
	if opened != nil {
		// Events returns once the engine answered, or failed to (the
		// failure then reaches res.Err at once).
		select {
		case err := <-res.Err:
			if ctx.Err() != nil {
				return nil
			}
			return c.fail(err)
		default:
			opened()
		}
	}
	for {
		select {
		case <-ctx.Done():
			return nil
		case err := <-res.Err:
			if ctx.Err() != nil {
				return nil
			}
			return c.fail(err)
		case m := <-res.Messages:
			action, _, _ := strings.Cut(string(m.Action), ":")
			ev := Event{Type: string(m.Type), Action: strings.TrimSpace(action), ID: m.Actor.ID, Time: m.Time,
				TimeNano: m.TimeNano}
			ev.Name = m.Actor.Attributes["name"]
			if err := fn(ev); err != nil {
				return err
			}
		}
	}
}
