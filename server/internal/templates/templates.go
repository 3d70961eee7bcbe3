// Package templates provides app templates: lists in Portainer's app
// template format (version "2" or "3") read from URLs or local files and a
// built-in list, merged into one catalogue and rendered into compose files
// that the stacks service deploys; and the config sets and labels the
// console applies to containers and environments.
package templates

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"

	"github.com/berth-dev/berth/shared/fault"
)

// Template types of the format.
const (
	TypeContainer = 1 // one container
	TypeSwarm     = 2 // a swarm stack
	TypeCompose   = 3 // a compose stack
)

// Template is one app template of the catalogue.
type Template struct {
	ID          string   `json:"id"` // "<sourceId>:<index>", or "builtin:<slug>"
	SourceID    string   `json:"sourceId"`
	SourceName  string   `json:"sourceName"`
	Type        int      `json:"type"`
	Title       string   `json:"title"`
	Description string   `json:"description"`
	Categories  []string `json:"categories"`
	Platform    string   `json:"platform,omitempty"`
	Logo        string   `json:"logo,omitempty"` // as the source lists it (a built-in one's: LogoURL)
	// LogoURL is the path Berth serves the logo at (LogoPath), present
	// only when Berth has it: the console never loads the remote Logo.
	LogoURL string `json:"logoUrl,omitempty"`
	// LogoPending tells that Berth is fetching the logo now (in the
	// background): asked again shortly, the list may have its LogoURL.
	LogoPending       bool        `json:"logoPending,omitempty"`
	Image             string      `json:"image,omitempty"`
	Name              string      `json:"name,omitempty"`
	Registry          string      `json:"registry,omitempty"`
	Command           string      `json:"command,omitempty"`
	Env               []EnvField  `json:"env"`
	Ports             []string    `json:"ports"`
	Volumes           []Volume    `json:"volumes"`
	Labels            []Pair      `json:"labels"`
	RestartPolicy     string      `json:"restartPolicy,omitempty"`
	Network           string      `json:"network,omitempty"`
	Hostname          string      `json:"hostname,omitempty"`
	Privileged        bool        `json:"privileged,omitempty"`
	Interactive       bool        `json:"interactive,omitempty"`
	Repository        *Repository `json:"repository,omitempty"`
	Compose           string      `json:"compose,omitempty"` // Berth's extension: an inline compose file (type 3)
	Note              string      `json:"note,omitempty"`
	AdministratorOnly bool        `json:"administratorOnly"`
}

// EnvField is a variable a template asks for.
type EnvField struct {
	Name        string   `json:"name"`
	Label       string   `json:"label,omitempty"`
	Description string   `json:"description,omitempty"`
	Default     string   `json:"default,omitempty"`
	Preset      bool     `json:"preset,omitempty"`
	Select      []Option `json:"select,omitempty"`
}

// Option is one choice of a select variable.
type Option struct {
	Text    string `json:"text"`
	Value   string `json:"value"`
	Default bool   `json:"default,omitempty"`
}

// Volume is a volume of a container template: an anonymous volume at
// Container, or a bind mount of Bind.
type Volume struct {
	Container string `json:"container"`
	Bind      string `json:"bind,omitempty"`
	ReadOnly  bool   `json:"readonly,omitempty"`
}

// Pair is a label of a container template.
type Pair struct {
	Name  string `json:"name"`
	Value string `json:"value"`
}

// Repository is the git repository of a stack template.
type Repository struct {
	URL       string `json:"url"`
	StackFile string `json:"stackfile"`
}

// value is the variable's initial value: its default, or the default
// option of a select.
func (f EnvField) value() string {
	for _, o := range f.Select {
		if o.Default {
			return o.Value
		}
	}
	return f.Default
}

// file is a template list as published.
type file struct {
	Version   json.RawMessage   `json:"version"`
	Templates []json.RawMessage `json:"templates"`
}

// wireTemplate is one template as published. Numbers and booleans are
// tolerated as strings, as lists in the wild write them.
type wireTemplate struct {
	Type              flexInt      `json:"type"`
	Title             string       `json:"title"`
	Description       string       `json:"description"`
	Categories        []string     `json:"categories"`
	Platform          string       `json:"platform"`
	Logo              string       `json:"logo"`
	Image             string       `json:"image"`
	Name              string       `json:"name"`
	Registry          string       `json:"registry"`
	Command           string       `json:"command"`
	Env               []wireEnv    `json:"env"`
	Ports             []string     `json:"ports"`
	Volumes           []wireVolume `json:"volumes"`
	Labels            []Pair       `json:"labels"`
	RestartPolicy     string       `json:"restart_policy"`
	Network           string       `json:"network"`
	Hostname          string       `json:"hostname"`
	Privileged        flexBool     `json:"privileged"`
	Interactive       flexBool     `json:"interactive"`
	Repository        *Repository  `json:"repository"`
	Compose           string       `json:"compose"`
	Note              string       `json:"note"`
	AdministratorOnly flexBool     `json:"administrator_only"`
	AdminOnlyDashed   flexBool     `json:"administrator-only"`
}

type wireEnv struct {
	Name        string   `json:"name"`
	Label       string   `json:"label"`
	Description string   `json:"description"`
	Default     string   `json:"default"`
	Preset      flexBool `json:"preset"`
	Select      []struct {
		Text    string   `json:"text"`
		Value   string   `json:"value"`
		Default flexBool `json:"default"`
	} `json:"select"`
}

type wireVolume struct {
	Container string   `json:"container"`
	Bind      string   `json:"bind"`
	ReadOnly  flexBool `json:"readonly"`
}

// flexInt reads a number or a string holding one.
type flexInt int

func (f *flexInt) UnmarshalJSON(b []byte) error {
	return unmarshalFlex(b, "a number", strconv.Atoi, func(n int) { *f = flexInt(n) })
}

// flexBool reads a boolean or a string holding one.
type flexBool bool

func (f *flexBool) UnmarshalJSON(b []byte) error {
	return unmarshalFlex(b, "a boolean", strconv.ParseBool, func(v bool) { *f = flexBool(v) })
}

// unmarshalFlex reads b, a JSON value or a string holding one, with parse
// and sets it; empty and null set the zero value.
func unmarshalFlex[T any](b []byte, what string, parse func(string) (T, error), set func(T)) error {
	s := strings.Trim(string(b), `"`)
	if s == "" || s == "null" {
		var zero T
		set(zero)
		return nil
	}
	v, err := parse(s)
	if err != nil {
		return fmt.Errorf("%s is not %s", b, what)
	}
	set(v)
	return nil
}

// Parse reads a template list in Portainer's format, version "2" or "3".
// Entries that are not templates (no title, an unknown type) are skipped;
// skipped counts them. The ids of the result are left empty.
func Parse(data []byte) (list []Template, skipped int, err error) {
	var f file
	dec := json.NewDecoder(bytes.NewReader(data))
	if err := dec.Decode(&f); err != nil {
		return nil, 0, fmt.Errorf("invalid template list JSON: %w", err)
	}
	version := strings.Trim(string(f.Version), `"`)
	if version != "2" && version != "3" {
		if len(f.Version) == 0 {
			return nil, 0, fmt.Errorf("invalid template list: no version (want \"2\" or \"3\")")
		}
		return nil, 0, fmt.Errorf("invalid template list: version %s is not supported (want \"2\" or \"3\")", f.Version)
	}
	if f.Templates == nil {
		return nil, 0, fmt.Errorf("invalid template list: no templates array")
	}
	list = make([]Template, 0, len(f.Templates))
	for _, raw := range f.Templates {
		var w wireTemplate
		if err := json.Unmarshal(raw, &w); err != nil {
			skipped++
			continue
		}
		t, ok := w.template()
		if !ok {
			skipped++
			continue
		}
		list = append(list, t)
	}
	return list, skipped, nil
}

// template converts a published template, or reports it unusable.
func (w wireTemplate) template() (Template, bool) {
	if strings.TrimSpace(w.Title) == "" || w.Type < TypeContainer || w.Type > TypeCompose {
		return Template{}, false
	}
	if w.Type == TypeContainer && strings.TrimSpace(w.Image) == "" {
		return Template{}, false
	}
	t := Template{Type: int(w.Type), Title: w.Title, Description: w.Description, Categories: w.Categories,
		Platform: w.Platform, Logo: w.Logo, Image: strings.TrimSpace(w.Image), Name: w.Name, Registry: w.Registry,
		Command: w.Command, Ports: w.Ports, Labels: w.Labels, RestartPolicy: w.RestartPolicy, Network: w.Network,
		Hostname: w.Hostname, Privileged: bool(w.Privileged), Interactive: bool(w.Interactive), Repository: w.Repository,
		Compose: w.Compose, Note: w.Note, AdministratorOnly: bool(w.AdministratorOnly || w.AdminOnlyDashed),
		Env: []EnvField{}, Volumes: []Volume{}}
	if t.Categories == nil {
		t.Categories = []string{}
	}
	if t.Ports == nil {
		t.Ports = []string{}
	}
	if t.Labels == nil {
		t.Labels = []Pair{}
	}
	for _, e := range w.Env {
		if strings.TrimSpace(e.Name) == "" {
			continue
		}
		f := EnvField{Name: e.Name, Label: e.Label, Description: e.Description, Default: e.Default, Preset: bool(e.Preset)}
		for _, o := range e.Select {
			f.Select = append(f.Select, Option{Text: o.Text, Value: o.Value, Default: bool(o.Default)})
		}
		t.Env = append(t.Env, f)
	}
	for _, v := range w.Volumes {
		if strings.TrimSpace(v.Container) == "" {
			continue
		}
		t.Volumes = append(t.Volumes, Volume{Container: v.Container, Bind: v.Bind, ReadOnly: bool(v.ReadOnly)})
	}
	return t, true
}

// errNotFound is the 404 of an unknown template id.
func errNotFound(id string) error {
	return fault.New(fault.NotFound, fmt.Sprintf("Template '%s' not found", id))
}
