package api

import (
	"net/http"
	"path"
	"strings"

	"github.com/berth-dev/berth/server/internal/containers"
	"github.com/berth-dev/berth/shared/engine"
	"github.com/berth-dev/berth/shared/fault"
)

func (s *Server) listContainers(w http.ResponseWriter, r *http.Request) error {
	env := envOf(r)
	all, err := queryBool(r, "all", false)
	if err != nil {
		return err
	}
	list, err := s.containers.List(r.Context(), env, all)
	if err != nil {
		return err
	}
	return writeJSON(w, http.StatusOK, list)
}

// createContainerRequest accepts the spec's fields and the de-facto ones.
type createContainerRequest struct {
	Name             string                   `json:"name"`
	Image            string                   `json:"image"`
	StartAfterCreate bool                     `json:"startAfterCreate"`
	PortBindings     map[string][]portBinding `json:"portBindings"`
	Ports            []struct {
		ContainerPort flexString `json:"containerPort"`
		HostPort      flexString `json:"hostPort"`
		HostIP        string     `json:"hostIp"`
		Protocol      string     `json:"protocol"`
	} `json:"ports"`
	Command       flexCommand       `json:"command"`
	Env           []string          `json:"env"`
	Labels        map[string]string `json:"labels"`
	NetworkMode   string            `json:"networkMode"`
	RestartPolicy string            `json:"restartPolicy"`
	Privileged    bool              `json:"privileged"`
	Tty           bool              `json:"tty"`
	Memory        int64             `json:"memory"`
	NanoCPUs      int64             `json:"nanoCpus"`
	CapAdd        []string          `json:"capAdd"`
	Volumes       []string          `json:"volumes"`
}

type portBinding struct {
	HostIP   string     `json:"HostIp"`
	HostPort flexString `json:"HostPort"`
}

func (req createContainerRequest) spec() containers.CreateSpec {
	sp := containers.CreateSpec{
		Name: req.Name, Image: req.Image, StartAfterCreate: req.StartAfterCreate, Command: req.Command,
		Env: req.Env, Labels: req.Labels, NetworkMode: req.NetworkMode, RestartPolicy: req.RestartPolicy,
		Privileged: req.Privileged, Tty: req.Tty, Memory: req.Memory, NanoCPUs: req.NanoCPUs, CapAdd: req.CapAdd,
		Volumes: req.Volumes,
	}
	if len(req.PortBindings) > 0 {
		sp.PortBindings = map[string][]engine.HostPort{}
		for k, binds := range req.PortBindings {
			for _, b := range binds {
				sp.PortBindings[k] = append(sp.PortBindings[k], engine.HostPort{HostIP: b.HostIP, HostPort: string(b.HostPort)})
			}
		}
	}
	for _, p := range req.Ports {
		sp.Ports = append(sp.Ports, containers.PortSpec{ContainerPort: string(p.ContainerPort),
			HostPort: string(p.HostPort), HostIP: p.HostIP, Protocol: p.Protocol})
	}
	return sp
}

func (s *Server) createContainer(w http.ResponseWriter, r *http.Request) error {
	env := envOf(r)
	var req createContainerRequest
	if err := decode(w, r, &req); err != nil {
		return err
	}
	id, err := s.containers.Create(r.Context(), env, req.spec())
	if err != nil {
		return err
	}
	return writeJSON(w, http.StatusOK, map[string]any{"success": true, "id": id})
}

func (s *Server) inspectContainer(w http.ResponseWriter, r *http.Request) error {
	env := envOf(r)
	raw, err := s.containers.Inspect(r.Context(), env, r.PathValue("id"))
	if err != nil {
		return err
	}
	w.Header().Set("Content-Type", "application/json")
	_, err = w.Write(raw)
	return err
}

// containerAction serves POST /api/containers/{id}/{start|stop|restart|pause|unpause}.
func (s *Server) containerAction(w http.ResponseWriter, r *http.Request) error {
	env := envOf(r)
	action := containers.Action(path.Base(r.URL.Path))
	if err := s.containers.Do(r.Context(), env, r.PathValue("id"), action); err != nil {
		return err
	}
	return writeJSON(w, http.StatusOK, success)
}

func (s *Server) removeContainer(w http.ResponseWriter, r *http.Request) error {
	env := envOf(r)
	force, err := queryBool(r, "force", false)
	if err != nil {
		return err
	}
	if err := s.containers.Remove(r.Context(), env, r.PathValue("id"), force); err != nil {
		return err
	}
	return writeJSON(w, http.StatusOK, success)
}

func (s *Server) renameContainer(w http.ResponseWriter, r *http.Request) error {
	env := envOf(r)
	var req struct {
		Name string `json:"name"`
	}
	if err := decode(w, r, &req); err != nil {
		return err
	}
	if err := s.containers.Rename(r.Context(), env, r.PathValue("id"), req.Name); err != nil {
		return err
	}
	return writeJSON(w, http.StatusOK, success)
}

func (s *Server) containerTop(w http.ResponseWriter, r *http.Request) error {
	env := envOf(r)
	p, err := s.containers.Top(r.Context(), env, r.PathValue("id"))
	if err != nil {
		return err
	}
	return writeJSON(w, http.StatusOK, p)
}

func (s *Server) containerStats(w http.ResponseWriter, r *http.Request) error {
	env := envOf(r)
	snap, err := s.containers.Stats(r.Context(), env, r.PathValue("id"))
	if err != nil {
		return err
	}
	return writeJSON(w, http.StatusOK, snap)
}

// allContainerStats answers one pass over the running containers as an array.
func (s *Server) allContainerStats(w http.ResponseWriter, r *http.Request) error {
	env := envOf(r)
	out := []containers.Stat{}
	err := s.containers.StatsAll(r.Context(), env, func(st containers.Stat) error {
		out = append(out, st)
		return nil
	})
	if err != nil {
		return err
	}
	return writeJSON(w, http.StatusOK, out)
}

// streamContainerStats sends one `stat` event per running container, then
// `done`; a failure of the pass is an `error` event.
func (s *Server) streamContainerStats(w http.ResponseWriter, r *http.Request) error {
	env := envOf(r)
	es := startEvents(w, r)
	defer es.Close()
	err := s.containers.StatsAll(r.Context(), env, func(st containers.Stat) error {
		return es.Send("stat", st)
	})
	if err != nil {
		_, body := errorResponse(err)
		_ = es.Send("error", body)
		return err
	}
	return es.Send("done", struct{}{})
}

func (s *Server) containerLogs(w http.ResponseWriter, r *http.Request) error {
	env := envOf(r)
	ts, err := queryBool(r, "timestamps", false)
	if err != nil {
		return err
	}
	logs, err := s.containers.Logs(r.Context(), env, r.PathValue("id"), r.URL.Query().Get("tail"), ts)
	if err != nil {
		return err
	}
	return writeJSON(w, http.StatusOK, map[string]string{"logs": logs})
}

// streamContainerLogs sends `connected`, then a `log` event per line, then
// `end` when the container's output ends; failures are `error` events.
func (s *Server) streamContainerLogs(w http.ResponseWriter, r *http.Request) error {
	env := envOf(r)
	ts, err := queryBool(r, "timestamps", false)
	if err != nil {
		return err
	}
	id := r.PathValue("id")
	var es *eventStream
	err = s.containers.FollowLogs(r.Context(), env, id, r.URL.Query().Get("tail"), ts,
		func() error {
			es = startEvents(w, r)
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
		if r.Context().Err() == nil {
			_, body := errorResponse(err)
			_ = es.Send("error", body)
		}
		return err
	}
	if r.Context().Err() != nil {
		return nil
	}
	return es.Send("end", struct{}{})
}

func (s *Server) createExec(w http.ResponseWriter, r *http.Request) error {
	env := envOf(r)
	var req struct {
		Shell string `json:"shell"`
		User  string `json:"user"`
	}
	if err := decode(w, r, &req); err != nil {
		return err
	}
	inst, err := s.containers.CreateExec(r.Context(), env, r.PathValue("id"), req.Shell, req.User)
	if err != nil {
		return err
	}
	return writeJSON(w, http.StatusOK, inst)
}

// attachExec joins a WebSocket to a created exec: text frames in are
// terminal input, text frames out are terminal output; closing either side
// ends the session.
func (s *Server) attachExec(w http.ResponseWriter, r *http.Request) error {
	env := envOf(r)
	if err := s.checkOrigin(r); err != nil {
		return err
	}
	execID := r.PathValue("execId")
	stream, err := s.containers.AttachExec(r.Context(), env, execID)
	if err != nil {
		return err
	}
	defer s.containers.EndExec(execID)
	ws, err := s.acceptWebSocket(w, r)
	if err != nil {
		stream.Close()
		return nil // Accept has answered the client
	}
	pumpTerminal(r.Context(), ws, stream)
	return nil
}

func (s *Server) resizeExec(w http.ResponseWriter, r *http.Request) error {
	env := envOf(r)
	q := r.URL.Query()
	if err := s.containers.ResizeExec(r.Context(), env, r.PathValue("execId"), q.Get("h"), q.Get("w")); err != nil {
		return err
	}
	return writeJSON(w, http.StatusOK, success)
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
