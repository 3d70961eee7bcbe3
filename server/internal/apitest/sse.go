package apitest

import (
	"bufio"
	"io"
	"strings"
)

// Event is one Server-Sent Event as the tests read it: its name ("" for an
// unnamed event) and its data lines joined.
type Event struct {
	ID   string // the id field, if any
	Name string
	Data string
}

// Events reads the event stream r and delivers each event on the returned
// channel (buffered by size), which closes when the stream ends. Comment
// lines (keepalives) are skipped.
func Events(r io.Reader, size int) <-chan Event {
	ch := make(chan Event, size)
	go func() {
		defer close(ch)
		sc := bufio.NewScanner(r)
		sc.Buffer(make([]byte, 1<<20), 1<<20)
		var ev Event
		for sc.Scan() {
			line := sc.Text()
			switch {
			case line == "":
				if ev.Name != "" || ev.Data != "" {
					ch <- ev
				}
				ev = Event{}
			case strings.HasPrefix(line, "event: "):
				ev.Name = strings.TrimPrefix(line, "event: ")
			case strings.HasPrefix(line, "id: "):
				ev.ID = strings.TrimPrefix(line, "id: ")
			case strings.HasPrefix(line, "data: "):
				ev.Data += strings.TrimPrefix(line, "data: ")
			}
		}
	}()
	return ch
}
