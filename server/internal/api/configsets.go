package api

import (
	"encoding/json"
	"errors"
	"maps"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/berth-dev/berth/server/internal/store"
	"github.com/berth-dev/berth/server/internal/templates"
	"github.com/berth-dev/berth/shared/fault"
)

// configSetJSON is a config set as clients see it, secrets masked: the
// reference's shape (labels [{key, value}], volumes [{hostPath,
// containerPath, mode}]); variables also carry isSecret, ports hostIp.
type configSetJSON struct {
	ID            int64                `json:"id"`
	Name          string               `json:"name"`
	Description   string               `json:"description"`
	EnvVars       []store.ConfigVar    `json:"envVars"`
	Labels        []store.ConfigLabel  `json:"labels"`
	Ports         []store.ConfigPort   `json:"ports"`
	Volumes       []store.ConfigVolume `json:"volumes"`
	NetworkMode   string               `json:"networkMode"`
	RestartPolicy string               `json:"restartPolicy"`
	CreatedAt     time.Time            `json:"createdAt"`
	UpdatedAt     time.Time            `json:"updatedAt"`
}

func toConfigSetJSON(c store.ConfigSet) configSetJSON {
	c = templates.Masked(c)
	return configSetJSON{ID: c.ID, Name: c.Name, Description: c.Description, EnvVars: nonNil(c.EnvVars),
		Labels: nonNil(c.Labels), Ports: nonNil(c.Ports), Volumes: nonNil(c.Volumes), NetworkMode: c.NetworkMode,
		RestartPolicy: c.RestartPolicy, CreatedAt: c.CreatedAt, UpdatedAt: c.UpdatedAt}
}

// nonNil returns l, or an empty list for nil (answered as [], never null).
func nonNil[T any](l []T) []T {
	if l == nil {
		return []T{}
	}
	return l
}

// configSetRequest is the body of POST and PUT /api/config-sets. A field
// left out keeps its value on PUT (and its default on POST: network mode
// bridge, restart policy no, empty lists).
type configSetRequest struct {
	Name          *string            `json:"name"`
	Description   *string            `json:"description"`
	EnvVars       *[]store.ConfigVar `json:"envVars"`
	Labels        *configLabels      `json:"labels"`
	Ports         *[]configPortInput `json:"ports"`
	Volumes       *configVolumes     `json:"volumes"`
	NetworkMode   *string            `json:"networkMode"`
	RestartPolicy *string            `json:"restartPolicy"`
}

// configPortInput is a port of a config set; the port numbers may be
// strings or numbers.
type configPortInput struct {
	ContainerPort flexString `json:"containerPort"`
	HostPort      flexString `json:"hostPort"`
	HostIP        string     `json:"hostIp"`
	Protocol      string     `json:"protocol"`
}

// configLabels are the reference's [{key, value}], or Berth's earlier
// {"key": "value"} (sorted by key).
type configLabels []store.ConfigLabel

func (l *configLabels) UnmarshalJSON(b []byte) error {
	s := strings.TrimSpace(string(b))
	if s == "null" {
		*l = configLabels{}
		return nil
	}
	if strings.HasPrefix(s, "{") {
		var m map[string]string
		if err := json.Unmarshal(b, &m); err != nil {
			return fault.New(fault.Invalid, "labels must be a list of {key, value}")
		}
		out := configLabels{}
		for _, k := range slices.Sorted(maps.Keys(m)) {
			out = append(out, store.ConfigLabel{Key: k, Value: m[k]})
		}
		*l = out
		return nil
	}
	var list []store.ConfigLabel
	if err := json.Unmarshal(b, &list); err != nil {
		return fault.New(fault.Invalid, "labels must be a list of {key, value}")
	}
	*l = configLabels(nonNil(list))
	return nil
}

// configVolumes are the reference's [{hostPath, containerPath, mode}];
// an item may also be Berth's earlier "source:/target[:mode]".
type configVolumes []store.ConfigVolume

func (v *configVolumes) UnmarshalJSON(b []byte) error {
	const msg = "volumes must be a list of {hostPath, containerPath, mode}"
	if strings.TrimSpace(string(b)) == "null" {
		*v = configVolumes{}
		return nil
	}
	var items []json.RawMessage
	if err := json.Unmarshal(b, &items); err != nil {
		return fault.New(fault.Invalid, msg)
	}
	out := configVolumes{}
	for _, raw := range items {
		var text string
		if err := json.Unmarshal(raw, &text); err == nil {
			if src, dst, ok := strings.Cut(text, ":"); !ok || src == "" || !strings.HasPrefix(dst, "/") {
				return fault.Invalidf("Invalid volume %q: use source:/container/path[:ro]", text)
			}
			out = append(out, store.ParseConfigVolume(text))
			continue
		}
		var one store.ConfigVolume
		if err := json.Unmarshal(raw, &one); err != nil {
			return fault.New(fault.Invalid, msg)
		}
		out = append(out, one)
	}
	*v = out
	return nil
}

// apply writes the fields r carries over c.
func (r configSetRequest) apply(c *store.ConfigSet) {
	set := func(dst *string, v *string) {
		if v != nil {
			*dst = *v
		}
	}
	set(&c.Name, r.Name)
	set(&c.Description, r.Description)
	set(&c.NetworkMode, r.NetworkMode)
	set(&c.RestartPolicy, r.RestartPolicy)
	c.Description = strings.TrimSpace(c.Description)
	if r.EnvVars != nil {
		c.EnvVars = nonNil(*r.EnvVars)
	}
	if r.Labels != nil {
		c.Labels = []store.ConfigLabel(*r.Labels)
	}
	if r.Ports != nil {
		c.Ports = make([]store.ConfigPort, 0, len(*r.Ports))
		for _, p := range *r.Ports {
			c.Ports = append(c.Ports, store.ConfigPort{ContainerPort: strings.TrimSpace(string(p.ContainerPort)),
				HostPort: strings.TrimSpace(string(p.HostPort)), HostIP: strings.TrimSpace(p.HostIP), Protocol: strings.ToLower(strings.TrimSpace(p.Protocol))})
		}
	}
	if r.Volumes != nil {
		c.Volumes = []store.ConfigVolume(*r.Volumes)
	}
}

func (s *Server) listConfigSets(c *gin.Context) error {
	list, err := s.tpl.sets.List(c.Request.Context())
	if err != nil {
		return err
	}
	return writeJSON(c, http.StatusOK, convert(list, toConfigSetJSON))
}

func (s *Server) getConfigSet(c *gin.Context) error {
	id, err := pathID(c, "Config set")
	if err != nil {
		return err
	}
	set, err := s.tpl.sets.Get(c.Request.Context(), id)
	if err != nil {
		return err
	}
	return writeJSON(c, http.StatusOK, toConfigSetJSON(set))
}

// saveConfigSet creates (POST) or updates (PUT /{id}) a config set. PUT
// changes only the fields the body carries.
func (s *Server) saveConfigSet(c *gin.Context) error {
	id, status, err := saveTarget(c, "Config set")
	if err != nil {
		return err
	}
	var req configSetRequest
	if err := bindJSON(c, &req); err != nil {
		// A refusal of the labels' or volumes' decoder says what is wrong.
		var top, inner *fault.Error
		if errors.As(err, &top) && errors.As(top.Cause, &inner) {
			return inner
		}
		return err
	}
	ctx := c.Request.Context()
	var set store.ConfigSet
	save := s.tpl.sets.Create
	if status == http.StatusOK {
		if set, err = s.tpl.sets.Get(ctx, id); err != nil {
			return err
		}
		save = s.tpl.sets.Update
	}
	req.apply(&set)
	if err := save(ctx, &set); err != nil {
		return err
	}
	noteAudit(c, strconv.FormatInt(set.ID, 10), set.Name)
	return writeJSON(c, status, toConfigSetJSON(set))
}

func (s *Server) deleteConfigSet(c *gin.Context) error {
	id, err := pathID(c, "Config set")
	if err != nil {
		return err
	}
	ctx := c.Request.Context()
	set, err := s.tpl.sets.Get(ctx, id)
	if err != nil {
		return err
	}
	if err := s.tpl.sets.Delete(ctx, id); err != nil {
		return err
	}
	noteAudit(c, strconv.FormatInt(id, 10), set.Name)
	return writeJSON(c, http.StatusOK, success)
}

// labelJSON is a label as the reference answers it (label, the
// environments carrying it, their count, its colour or null), with
// Berth's id: null for a label environments carry that was never defined.
type labelJSON struct {
	Label        string                `json:"label"`
	Environments []labelEnvironmentRef `json:"environments"`
	Count        int                   `json:"count"`
	Color        *string               `json:"color"`
	ID           *int64                `json:"id"`
}

type labelEnvironmentRef struct {
	EnvID   int64  `json:"envId"`
	EnvName string `json:"envName"`
}

// labelsAnswer is GET /api/labels: the labels, and the colour of each
// label that has one.
type labelsAnswer struct {
	Labels []labelJSON       `json:"labels"`
	Colors map[string]string `json:"colors"`
}

// createdLabelJSON is the answer of POST /api/labels {name, color}
// (Berth's definition of a label).
type createdLabelJSON struct {
	ID    int64  `json:"id"`
	Name  string `json:"name"`
	Color string `json:"color"`
	Count int    `json:"count"`
}

// labelsChanged is the answer of a bulk label operation.
type labelsChanged struct {
	Success  bool `json:"success"`
	Affected int  `json:"affected"`
}

func toLabelJSON(l templates.LabelUse) labelJSON {
	out := labelJSON{Label: l.Name, Count: l.Count, Environments: make([]labelEnvironmentRef, 0, len(l.Environments))}
	for _, e := range l.Environments {
		out.Environments = append(out.Environments, labelEnvironmentRef{EnvID: e.ID, EnvName: e.Name})
	}
	if l.Color != "" {
		c := l.Color
		out.Color = &c
	}
	if l.ID != 0 {
		id := l.ID
		out.ID = &id
	}
	return out
}

// listLabels answers the labels environments carry and those defined, with
// the environments carrying each.
func (s *Server) listLabels(c *gin.Context) error {
	list, err := templates.Labels(c.Request.Context(), s.store)
	if err != nil {
		return err
	}
	colors := map[string]string{}
	for _, l := range list {
		if l.Color != "" {
			colors[l.Name] = l.Color
		}
	}
	return writeJSON(c, http.StatusOK, labelsAnswer{Labels: convert(list, toLabelJSON), Colors: colors})
}

// labelRequest is the body of POST /api/labels: the reference's bulk
// operation {action, …}, or Berth's definition of a label {name, color}
// (no action).
type labelRequest struct {
	Action         string   `json:"action"`
	Label          *string  `json:"label"`
	OldLabel       *string  `json:"oldLabel"`
	NewLabel       *string  `json:"newLabel"`
	EnvironmentIDs *[]int64 `json:"environmentIds"`
	Color          *string  `json:"color"`
	Name           *string  `json:"name"`
}

// labelActionFields are the fields each action reads (besides action).
var labelActionFields = map[string][]string{
	"add": {"label", "environmentIds"}, "rename": {"oldLabel", "newLabel"}, "delete": {"label"},
	"set-color": {"label", "color"}, "": {"name", "color"},
}

// manageLabels runs a bulk label operation, or defines a label. A field
// the action does not read is refused, not ignored.
func (s *Server) manageLabels(c *gin.Context) error {
	var req labelRequest
	if err := bindJSON(c, &req); err != nil {
		return err
	}
	str := func(p *string) string {
		if p == nil {
			return ""
		}
		return *p
	}
	if allowed, ok := labelActionFields[req.Action]; ok {
		for name, sent := range map[string]bool{"label": req.Label != nil, "oldLabel": req.OldLabel != nil,
			"newLabel": req.NewLabel != nil, "environmentIds": req.EnvironmentIDs != nil, "color": req.Color != nil, "name": req.Name != nil} {
			if sent && !slices.Contains(allowed, name) {
				if req.Action == "" {
					return fault.Invalidf(`%s needs an action: "rename", "delete", "add" or "set-color"`, name)
				}
				return fault.Invalidf("%s is not read by the action %s", name, req.Action)
			}
		}
	}
	ctx := c.Request.Context()
	if req.Action == "" {
		l := store.Label{Name: str(req.Name), Color: str(req.Color)}
		if err := templates.CreateLabel(ctx, s.store, &l); err != nil {
			return err
		}
		noteAudit(c, strconv.FormatInt(l.ID, 10), l.Name)
		return writeJSON(c, http.StatusCreated, createdLabelJSON{ID: l.ID, Name: l.Name, Color: l.Color})
	}
	ch := templates.LabelChange{Action: req.Action, Label: str(req.Label), OldLabel: str(req.OldLabel),
		NewLabel: str(req.NewLabel), Color: str(req.Color)}
	if req.EnvironmentIDs != nil {
		ch.EnvironmentIDs = *req.EnvironmentIDs
	}
	affected, err := templates.ChangeLabels(ctx, s.store, ch)
	if err != nil {
		return err
	}
	name := ch.Label
	if req.Action == "rename" {
		name = ch.OldLabel + " -> " + strings.TrimSpace(ch.NewLabel)
	}
	noteAudit(c, "", name)
	return writeJSON(c, http.StatusOK, labelsChanged{Success: true, Affected: affected})
}
