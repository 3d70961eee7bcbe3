package api

import (
	"errors"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/berth-dev/berth/server/internal/events"
	"github.com/berth-dev/berth/shared/engine"
)

// readyWait bounds how long /api/events waits for the environment's engine
// stream to open (or fail) before it says connected anyway.
const readyWait = 5 * time.Second

// streamEvents relays the engine events of an environment as SSE, each named
// like container-start with data {id, name}. Every client of an environment
// shares one engine stream (events.Hub). `connected` comes first, once that
// stream is open (or known not to be); while the engine cannot be reached an
// `error` event tells why and the hub reconnects by itself. A client that
// does not read its events as fast as they come is told so (`error`) and its
// stream ends: it reconnects and reads the lists again.
func (s *Server) streamEvents(c *gin.Context) error {
	env := envOf(c)
	ctx := c.Request.Context()
	sub := s.events.Subscribe(env, events.ClientBuffer)
	defer sub.Close()
	es := startEvents(c)
	defer es.Close()
	wait := time.NewTimer(readyWait)
	select {
	case <-sub.Ready():
	case <-wait.C:
	case <-ctx.Done():
	}
	wait.Stop()
	if err := es.Send("connected", map[string]int64{"env": env.ID}); err != nil {
		return err
	}
	for {
		select {
		case <-ctx.Done():
			return nil
		case n, ok := <-sub.C:
			switch {
			case !ok:
				if errors.Is(sub.Err(), events.ErrLagged) {
					return es.Send("error", map[string]string{"error": "Events came faster than this client read them; reconnect"})
				}
				return nil
			case n.Offline != nil:
				msg := "Environment is offline"
				if errors.Is(n.Offline, engine.ErrBusy) {
					msg = "Environment is busy"
				}
				if err := es.Send("error", map[string]string{"error": msg}); err != nil {
					return err
				}
			default:
				ev := n.Event
				if err := es.Send(ev.Name, eventData{ID: ev.ID, Name: ev.Object, Time: ev.Time}); err != nil {
					return err
				}
			}
		}
	}
}

// Events returns the hub every follower of engine events goes through.
func (s *Server) Events() *events.Hub { return s.events }

// eventData is the data of an engine event on /api/events: the spec's
// {id, name}, and the engine's time of the event (Unix seconds).
type eventData struct {
	ID   string `json:"id"`
	Name string `json:"name"`
	Time int64  `json:"time,omitempty"`
}
