package templates

import (
	"encoding/json"
	"strings"

	"github.com/berth-dev/berth/shared/fault"
)

// typeNames are the names clients give template types instead of numbers
// (the reference's "container" and "stack").
var typeNames = map[string]int{"container": TypeContainer, "swarm": TypeSwarm, "stack": TypeCompose, "compose": TypeCompose}

// Decode reads a template a client sends (POST /api/templates/compose):
// Portainer's format as a source publishes it, Berth's catalogue entry as
// GET /api/templates answers it (restartPolicy, administratorOnly), or the
// reference's {id, type: "container"|"stack", title, image, repository}.
// The type may be a number or one of those names; a missing title takes
// the name, the image or the id.
func Decode(raw []byte) (Template, error) {
	var m map[string]json.RawMessage
	if err := json.Unmarshal(raw, &m); err != nil || m == nil {
		return Template{}, fault.Invalidf("Template must be an object")
	}
	var typ string
	if json.Unmarshal(m["type"], &typ) == nil {
		if n, ok := typeNames[strings.ToLower(strings.TrimSpace(typ))]; ok {
			m["type"], _ = json.Marshal(n)
		}
	}
	for camel, snake := range map[string]string{"restartPolicy": "restart_policy", "administratorOnly": "administrator_only"} {
		if _, ok := m[snake]; !ok && m[camel] != nil {
			m[snake] = m[camel]
		}
	}
	var w wireTemplate
	b, _ := json.Marshal(m)
	if err := json.Unmarshal(b, &w); err != nil {
		return Template{}, fault.Invalidf("Invalid template: %s", err)
	}
	var id string
	_ = json.Unmarshal(m["id"], &id)
	if strings.TrimSpace(w.Title) == "" {
		w.Title = firstNonEmpty(w.Name, w.Image, id)
	}
	if w.Type == 0 {
		switch {
		case strings.TrimSpace(w.Compose) != "" || w.Repository != nil:
			w.Type = TypeCompose
		default:
			w.Type = TypeContainer
		}
	}
	t, ok := w.template()
	if !ok {
		if w.Type == TypeContainer {
			return Template{}, fault.Invalidf("Invalid template: a container template needs an image")
		}
		return Template{}, fault.Invalidf("Invalid template: type must be container (1), swarm (2) or stack (3)")
	}
	t.ID = id
	return t, nil
}

func firstNonEmpty(s ...string) string {
	for _, v := range s {
		if strings.TrimSpace(v) != "" {
			return v
		}
	}
	return ""
}
