package api

import (
	"context"
	"net/http"
	"path"
	"strconv"
	"strings"
	"sync"

	"github.com/gin-gonic/gin"

	"github.com/berth-dev/berth/server/internal/containers"
	"github.com/berth-dev/berth/shared/engine"
	"github.com/berth-dev/berth/shared/fault"
)

func (s *Server) listContainers(c *gin.Context) error {
	env := envOf(c)
	all, err := queryBool(c, "all", true) // the reference's default: stopped ones too
	if err != nil {
		return err
	}
	list, err := s.containers.List(c.Request.Context(), env, all)
	if err != nil {
		return err
	}
	// What writeJSON would write, byte for byte, in a fraction of its time
	// (engine.AppendContainersJSON): a list is the most frequent answer.
	buf := listBuffers.Get().(*[]byte)
	b := append(engine.AppendContainersJSON((*buf)[:0], list), '\n')
	c.Header("Content-Type", "application/json")
	c.Header("Content-Length", strconv.Itoa(len(b)))
	c.Status(http.StatusOK)
	_, err = c.Writer.Write(b)
	if cap(b) <= maxPooledList {
		*buf = b[:0]
		listBuffers.Put(buf)
	}
	return err
}

// listBuffers recycles the buffers lists are written into; one larger than
// maxPooledList (a list of thousands of containers) is left to the GC.
var listBuffers = sync.Pool{New: func() any { return new([]byte) }}

const maxPooledList = 4 << 20

// createContainerRequest is the body of POST /api/containers: the
// container's settings and whether to start it.
type createContainerRequest struct {
	containerSettingsInput
	StartAfterCreate bool `json:"startAfterCreate"`
}

type portBinding struct {
	HostIP   string     `json:"HostIp"`
	HostPort flexString `json:"HostPort"`
}

func (s *Server) createContainer(c *gin.Context) error {
	env := envOf(c)
	var req createContainerRequest
	if err := bindJSON(c, &req); err != nil {
		return err
	}
	set, err := req.settings()
	if err != nil {
		return err
	}
	sp := containers.CreateSpec{Name: req.Name, Image: req.Image, StartAfterCreate: req.StartAfterCreate, Options: set}
	needs, err := sp.Check()
	if err != nil {
		return err
	}
	if err := s.policy().Check(c.Request.Context(), env, workloadOf(needs)); err != nil {
		return err
	}
	id, err := s.containers.Create(c.Request.Context(), env, sp)
	if err != nil {
		return err
	}
	return writeJSON(c, http.StatusOK, map[string]any{"success": true, "id": id})
}

func (s *Server) inspectContainer(c *gin.Context) error {
	env := envOf(c)
	raw, err := s.containers.Inspect(c.Request.Context(), env, c.Param("id"))
	if err != nil {
		return err
	}
	c.Header("Content-Type", "application/json")
	_, err = c.Writer.Write(raw)
	return err
}

// containerAction serves POST /api/containers/{id}/{start|stop|restart|pause|unpause}.
func (s *Server) containerAction(c *gin.Context) error {
	env := envOf(c)
	action := containers.Action(path.Base(c.Request.URL.Path))
	if err := s.containers.Do(c.Request.Context(), env, c.Param("id"), action); err != nil {
		return err
	}
	return writeJSON(c, http.StatusOK, success)
}

func (s *Server) removeContainer(c *gin.Context) error {
	env := envOf(c)
	force, err := queryBool(c, "force", false)
	if err != nil {
		return err
	}
	if err := s.containers.Remove(c.Request.Context(), env, c.Param("id"), force); err != nil {
		return err
	}
	s.schedulesChanged(c) // its auto-update went with it
	return writeJSON(c, http.StatusOK, success)
}

// killContainer serves POST /api/containers/{id}/kill ({signal}, optional).
func (s *Server) killContainer(c *gin.Context) error {
	env := envOf(c)
	var req killInput
	if err := bindJSON(c, &req); err != nil {
		return err
	}
	if err := s.containers.Kill(c.Request.Context(), env, c.Param("id"), req.Signal); err != nil {
		return err
	}
	return writeJSON(c, http.StatusOK, success)
}

func (s *Server) renameContainer(c *gin.Context) error {
	env := envOf(c)
	var req nameInput
	if err := bindJSON(c, &req); err != nil {
		return err
	}
	if err := s.containers.Rename(c.Request.Context(), env, c.Param("id"), req.Name); err != nil {
		return err
	}
	return writeJSON(c, http.StatusOK, success)
}

func (s *Server) containerTop(c *gin.Context) error {
	env := envOf(c)
	p, err := s.containers.Top(c.Request.Context(), env, c.Param("id"))
	if err != nil {
		return err
	}
	return writeJSON(c, http.StatusOK, p)
}

func (s *Server) containerStats(c *gin.Context) error {
	env := envOf(c)
	snap, err := s.containers.Stats(c.Request.Context(), env, c.Param("id"))
	if err != nil {
		return err
	}
	return writeJSON(c, http.StatusOK, snap)
}

// allContainerStats answers one pass over the running containers as an array.
//
// With ?debug=<container> (the reference's) it answers that one
// container's sample, raw as the engine reported it and as computed.
func (s *Server) allContainerStats(c *gin.Context) error {
	env := envOf(c)
	if name := c.Query("debug"); name != "" {
		d, err := s.containers.Debug(c.Request.Context(), env, name)
		if err != nil {
			return err
		}
		return writeJSON(c, http.StatusOK, d)
	}
	out := []containers.Stat{}
	err := s.containers.StatsAll(c.Request.Context(), env, func(st containers.Stat) error {
		out = append(out, st)
		return nil
	})
	if err != nil {
		return err
	}
	return writeJSON(c, http.StatusOK, out)
}

// statsIDs reads the ids query of the stats stream: the containers to
// sample (a console samples the rows it shows), comma separated or
// repeated; nil when absent (every running container).
func statsIDs(c *gin.Context) ([]string, error) {
	raw, ok := c.GetQueryArray("ids")
	if !ok {
		return nil, nil
	}
	ids := []string{}
	for _, r := range raw {
		for _, id := range strings.Split(r, ",") {
			id = strings.TrimSpace(id)
			if id == "" {
				continue
			}
			if len(id) < 12 || len(id) > 64 || strings.Trim(id, "0123456789abcdef") != "" {
				return nil, fault.Invalidf("ids: %q is not a container id (12 to 64 hex digits)", id)
			}
			ids = append(ids, id)
		}
	}
	if len(ids) > 500 {
		return nil, fault.New(fault.Invalid, "ids: at most 500 containers at a time")
	}
	return ids, nil
}

// streamContainerStats sends one `stat` event per running container (of
// those ids names, when given), then `done`; a failure of the pass is an
// `error` event.
func (s *Server) streamContainerStats(c *gin.Context) error {
	env := envOf(c)
	ids, err := statsIDs(c)
	if err != nil {
		return err
	}
	es := startEvents(c)
	defer es.Close()
	err = s.containers.StatsOf(c.Request.Context(), env, ids, func(st containers.Stat) error {
		return es.Send("stat", st)
	})
	if err != nil {
		_, body := errorResponse(err)
		_ = es.Send("error", body)
		return err
	}
	return es.Send("done", struct{}{})
}

func (s *Server) containerLogs(c *gin.Context) error {
	env := envOf(c)
	ts, err := queryBool(c, "timestamps", false)
	if err != nil {
		return err
	}
	logs, err := s.containers.Logs(c.Request.Context(), env, c.Param("id"), containers.LogQuery{Tail: c.Query("tail"),
		Timestamps: ts, Since: c.Query("since"), Until: c.Query("until")})
	if err != nil {
		return err
	}
	return writeJSON(c, http.StatusOK, map[string]string{"logs": logs})
}

// streamContainerLogs sends `connected`, then a `log` event per line, then
// `end` when the container's output ends; failures are `error` events.
func (s *Server) streamContainerLogs(c *gin.Context) error {
	env := envOf(c)
	ts, err := queryBool(c, "timestamps", false)
	if err != nil {
		return err
	}
	id := c.Param("id")
	var es *eventStream
	q := containers.LogQuery{Tail: c.Query("tail"), Timestamps: ts, Since: c.Query("since"), Until: c.Query("until")}
	err = s.containers.FollowLogs(c.Request.Context(), env, id, q,
		func() error {
			es = startEvents(c)
			return es.Send("connected", map[string]string{"containerId": id})
		},
		func(l engine.LogLine) error {
			return es.Send("log", map[string]string{"text": l.Text, "stream": l.Stream})
		})
	if es == nil { // failed before the stream started: a plain error response
		return err
	}
	defer es.Close()
	if err != nil {
		if c.Request.Context().Err() == nil {
			_, body := errorResponse(err)
			_ = es.Send("error", body)
		}
		return err
	}
	if c.Request.Context().Err() != nil {
		return nil
	}
	return es.Send("end", struct{}{})
}

func (s *Server) createExec(c *gin.Context) error {
	env := envOf(c)
	var req execInput
	if err := bindJSON(c, &req); err != nil {
		return err
	}
	inst, err := s.containers.CreateExec(c.Request.Context(), env, c.Param("id"), req.Shell, req.User, s.execCaller(c))
	if err != nil {
		return err
	}
	return writeJSON(c, http.StatusOK, inst)
}

// attachExec joins a WebSocket to a created exec: text frames in are
// terminal input, text frames out are terminal output; closing either side
// ends the session.
func (s *Server) attachExec(c *gin.Context) error {
	env := envOf(c)
	if err := s.checkOrigin(c.Request); err != nil {
		return err
	}
	execID := c.Param("execId")
	stream, err := s.containers.AttachExec(c.Request.Context(), env, execID, s.execCaller(c))
	if err != nil {
		return err
	}
	defer s.containers.EndExec(context.WithoutCancel(c.Request.Context()), execID)
	ws, err := s.acceptWebSocket(c)
	if err != nil {
		stream.Close()
		return nil // Accept has answered the client
	}
	pumpTerminal(c.Request.Context(), ws, stream)
	return nil
}

func (s *Server) resizeExec(c *gin.Context) error {
	env := envOf(c)
	q := c.Request.URL.Query()
	if err := s.containers.ResizeExec(c.Request.Context(), env, c.Param("execId"), q.Get("h"), q.Get("w"), s.execCaller(c)); err != nil {
		return err
	}
	return writeJSON(c, http.StatusOK, success)
}

// execCaller is who asks for a terminal session: the signed-in user, or,
// with authentication off (or no one signed in), anyone, as an admin.
func (s *Server) execCaller(c *gin.Context) containers.ExecCaller {
	ident := identityOf(c)
	if ident == nil {
		return containers.ExecCaller{Admin: true}
	}
	if on, err := s.auth.Enabled(c.Request.Context()); err == nil && !on {
		return containers.ExecCaller{UserID: ident.User.ID, Admin: true}
	}
	return containers.ExecCaller{UserID: ident.User.ID, Admin: ident.Access.Admin}
}

// flexString decodes a JSON string or number as a string ("8080" or 8080).
type flexString string

func (f *flexString) UnmarshalJSON(b []byte) error {
	s := strings.TrimSpace(string(b))
	if s == "null" {
		*f = ""
		return nil
	}
	if strings.HasPrefix(s, `"`) {
		var v string
		if err := jsonUnmarshal(b, &v); err != nil {
			return err
		}
		*f = flexString(v)
		return nil
	}
	for _, c := range s {
		if c < '0' || c > '9' {
			return fault.Invalidf("expected a string or a non-negative integer, got %s", s)
		}
	}
	*f = flexString(s)
	return nil
}

// flexCommand decodes a command given as an array or as one string (split
// on white space).
type flexCommand []string

func (f *flexCommand) UnmarshalJSON(b []byte) error {
	var list []string
	if err := jsonUnmarshal(b, &list); err == nil {
		*f = list
		return nil
	}
	var s string
	if err := jsonUnmarshal(b, &s); err != nil {
		return fault.New(fault.Invalid, "command must be an array of strings or a string")
	}
	*f = strings.Fields(s)
	return nil
}
