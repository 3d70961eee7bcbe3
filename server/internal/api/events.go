package api

import (
	"github.com/gin-gonic/gin"

	"github.com/berth-dev/berth/server/internal/events"
)

// streamEvents relays the engine events of an environment as SSE, each named
// like container-start with data {id, name}. While the engine cannot be
// reached an `error` event tells why; the relay reconnects by itself.
func (s *Server) streamEvents(c *gin.Context) error {
	env := envOf(c)
	es := startEvents(c)
	defer es.Close()
	if err := es.Send("connected", map[string]int64{"env": env.ID}); err != nil {
		return err
	}
	return s.events.Follow(c.Request.Context(), env,
		func(ev events.Event) error {
			return es.Send(ev.Name, eventData{ID: ev.ID, Name: ev.Object, Time: ev.Time})
		},
		func(cause error) error {
			return es.Send("error", map[string]string{"error": "Environment is offline"})
		})
}

// eventData is the data of an engine event on /api/events: the spec's
// {id, name}, and the engine's time of the event (Unix seconds).
type eventData struct {
	ID   string `json:"id"`
	Name string `json:"name"`
	Time int64  `json:"time,omitempty"`
}
