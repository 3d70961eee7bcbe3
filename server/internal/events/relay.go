// Package events provides the relay of engine events to clients, under the
// names the API uses ("container-start", "container-die", …).
package events

import (
	"context"
	"log/slog"
	"time"

	"github.com/berth-dev/berth/server/internal/store"
	"github.com/berth-dev/berth/shared/engine"
)

// Event is one relayed engine occurrence.
type Event struct {
	Name   string // "<type>-<action>", e.g. container-start
	ID     string
	Object string // the object's name, when the engine gives one
	Time   int64  // when the engine saw it, Unix seconds
	// TimeNano is the same in Unix nanoseconds (0 if the engine gave none).
	TimeNano int64
}

// Relay follows the engine events of environments.
type Relay struct {
	engines *engine.Manager
	log     *slog.Logger
}

// NewRelay returns a Relay.
func NewRelay(engines *engine.Manager, log *slog.Logger) *Relay {
	return &Relay{engines: engines, log: log}
}

// Retry bounds of the reconnection to an engine whose event stream failed.
const (
	retryMin = time.Second
	retryMax = 30 * time.Second
)

// Follow calls emit for each event of env until ctx ends or emit fails. When
// the engine cannot be reached or its stream breaks, offline is called with
// the cause and Follow reconnects with a growing delay, asking the engine
// for the events after the last one it emitted (those of the gap that the
// engine still holds are emitted then).
func (r *Relay) Follow(ctx context.Context, env store.Environment, emit func(Event) error, offline func(error) error) error {
	delay := retryMin
	var last int64 // TimeNano of the last event emitted
	for {
		c, err := r.engines.Client(ctx, env.Endpoint())
		if err == nil {
			start := time.Now()
			var emitErr error
			since := int64(0)
			if last > 0 {
				since = last + 1
			}
			err = c.EventsSince(ctx, since, func(ev engine.Event) error {
				emitErr = emit(Event{Name: ev.Type + "-" + ev.Action, ID: ev.ID, Object: ev.Name, Time: ev.Time, TimeNano: ev.TimeNano})
				if ev.TimeNano > last {
					last = ev.TimeNano
				}
				return emitErr
			})
			switch {
			case emitErr != nil:
				return emitErr
			case err == nil || ctx.Err() != nil:
				return nil
			}
			if time.Since(start) > retryMax {
				delay = retryMin // the stream worked for a while: retry soon
			}
		}
		if ctx.Err() != nil {
			return nil
		}
		if oerr := offline(err); oerr != nil {
			return oerr
		}
		select {
		case <-ctx.Done():
			return nil
		case <-time.After(delay):
		}
		delay = min(delay*2, retryMax)
	}
}
