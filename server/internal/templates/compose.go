package templates

import (
	"encoding/json"
	"fmt"
	"regexp"
	"slices"
	"strings"

	"github.com/berth-dev/berth/server/internal/stacks"
	"github.com/berth-dev/berth/shared/fault"
)

// Rendered is a template made ready for the stacks service: a compose file
// and the stack's variables.
type Rendered struct {
	Compose string
	EnvVars []stacks.Variable
}

// secretName matches variable names whose values are kept as stack secrets
// (stored sealed, injected at run time, never written to the env file).
var secretName = regexp.MustCompile(`(?i)(PASSWORD|PASSWD|SECRET|TOKEN|_KEY$|^KEY$|APIKEY)`)

// serviceName is the rule of compose service names.
var serviceName = regexp.MustCompile(`^[a-z0-9][a-z0-9_.-]*$`)

// restartPolicies are those the format allows.
var restartPolicies = []string{"always", "no", "on-failure", "unless-stopped"}

// Render turns t into a compose file and the stack's variables. values are
// the variables the user gave; a template variable not given takes its
// default (or its select's default option); a select only accepts one of its
// options. secretKeys names variables to keep as secrets besides those whose
// names say they are (PASSWORD, SECRET, TOKEN, …).
func Render(t Template, values map[string]string, secretKeys []string) (Rendered, error) {
	switch t.Type {
	case TypeSwarm:
		return Rendered{}, errSwarm
	case TypeCompose:
		if strings.TrimSpace(t.Compose) == "" {
			if t.Repository != nil {
				return Rendered{}, fault.Invalidf("repository templates are not supported yet")
			}
			return Rendered{}, fault.Invalidf("Template '%s' has no compose file", t.Title)
		}
	}
	vars, err := variables(t, values, secretKeys)
	if err != nil {
		return Rendered{}, err
	}
	if t.Type == TypeCompose {
		return Rendered{Compose: t.Compose, EnvVars: vars}, nil
	}
	compose, err := containerCompose(t, vars)
	if err != nil {
		return Rendered{}, err
	}
	return Rendered{Compose: compose, EnvVars: vars}, nil
}

// errSwarm refuses swarm stack templates: Berth deploys compose projects
// on an engine, not swarm stacks (docker stack deploy), whether the engine
// is a swarm manager or not.
var errSwarm = fault.Invalidf("Swarm stack templates (type 2) are not supported: Berth deploys compose stacks, " +
	"not swarm services; use a compose stack template (type 3)")

// RepositoryStack is a stack template whose compose file is in a git
// repository: the stack file at the repository's default branch, with the
// stack's variables.
type RepositoryStack struct {
	URL       string
	StackFile string // relative to the repository; "" when the template names none
	EnvVars   []stacks.Variable
}

// FromRepository reports whether t is a stack template whose compose file
// is in a git repository (Portainer's repository {url, stackfile}; an
// inline compose file wins over it).
func (t Template) FromRepository() bool {
	return t.Type != TypeContainer && t.Repository != nil && strings.TrimSpace(t.Compose) == ""
}

// RenderRepository resolves a repository template (see FromRepository):
// its repository, stack file and the stack's variables, as Render resolves
// them. Swarm stack templates are refused as Render refuses them.
func RenderRepository(t Template, values map[string]string, secretKeys []string) (RepositoryStack, error) {
	if t.Type == TypeSwarm {
		return RepositoryStack{}, errSwarm
	}
	if !t.FromRepository() {
		return RepositoryStack{}, fault.Invalidf("Template '%s' has no repository", t.Title)
	}
	u := strings.TrimSpace(t.Repository.URL)
	if u == "" {
		return RepositoryStack{}, fault.Invalidf("Template '%s' names no repository URL", t.Title)
	}
	vars, err := variables(t, values, secretKeys)
	if err != nil {
		return RepositoryStack{}, err
	}
	return RepositoryStack{URL: u, StackFile: strings.TrimSpace(t.Repository.StackFile), EnvVars: vars}, nil
}

// variables resolves the values of t's variables, then of the extra ones
// given, in a stable order.
func variables(t Template, values map[string]string, secretKeys []string) ([]stacks.Variable, error) {
	vars := []stacks.Variable{}
	seen := map[string]bool{}
	for _, f := range t.Env {
		if seen[f.Name] {
			continue
		}
		seen[f.Name] = true
		v, given := values[f.Name]
		if !given || f.Preset {
			v = f.value()
		}
		if len(f.Select) > 0 && !slices.ContainsFunc(f.Select, func(o Option) bool { return o.Value == v }) {
			return nil, fault.Invalidf("Invalid value for %s: choose one of the template's options", f.Name)
		}
		vars = append(vars, stacks.Variable{Key: f.Name, Value: v})
	}
	extra := make([]string, 0, len(values))
	for k := range values {
		if !seen[k] {
			extra = append(extra, k)
		}
	}
	slices.Sort(extra)
	for _, k := range extra {
		vars = append(vars, stacks.Variable{Key: k, Value: values[k]})
	}
	for i, v := range vars {
		vars[i].IsSecret = secretName.MatchString(v.Key) || slices.Contains(secretKeys, v.Key)
	}
	return vars, nil
}

// containerCompose is the one-service compose file of a container template.
// Its variables are interpolated from the stack's env file and secrets.
func containerCompose(t Template, vars []stacks.Variable) (string, error) {
	name := strings.ToLower(strings.TrimSpace(t.Name))
	if !serviceName.MatchString(name) {
		name = slug(t.Title)
	}
	if name == "" {
		name = "app"
	}
	restart := t.RestartPolicy
	if restart == "" {
		restart = "always" // the format's default
	}
	if !slices.Contains(restartPolicies, restart) {
		return "", fault.Invalidf("Template restart policy %q is not one of always, no, on-failure, unless-stopped", restart)
	}
	image := t.Image
	if r := strings.TrimSuffix(strings.TrimSpace(t.Registry), "/"); r != "" && !strings.HasPrefix(image, r+"/") {
		image = r + "/" + image
	}
	var b strings.Builder
	b.WriteString("services:\n")
	fmt.Fprintf(&b, "  %s:\n", name)
	fmt.Fprintf(&b, "    image: %s\n", literal(image))
	if strings.TrimSpace(t.Command) != "" {
		fmt.Fprintf(&b, "    command: %s\n", literal(t.Command))
	}
	if t.Hostname != "" {
		fmt.Fprintf(&b, "    hostname: %s\n", literal(t.Hostname))
	}
	fmt.Fprintf(&b, "    restart: %s\n", quote(restart))
	if t.Privileged {
		b.WriteString("    privileged: true\n")
	}
	if t.Interactive {
		b.WriteString("    stdin_open: true\n    tty: true\n")
	}
	if t.Network != "" {
		fmt.Fprintf(&b, "    network_mode: %s\n", literal(t.Network))
	}
	if len(vars) > 0 {
		b.WriteString("    environment:\n")
		for _, v := range vars {
			fmt.Fprintf(&b, "      %s: %s\n", quote(v.Key), quote("${"+v.Key+"}"))
		}
	}
	if len(t.Ports) > 0 {
		b.WriteString("    ports:\n")
		for _, p := range t.Ports {
			if err := checkPort(p); err != nil {
				return "", err
			}
			fmt.Fprintf(&b, "      - %s\n", quote(strings.TrimSpace(p)))
		}
	}
	if len(t.Volumes) > 0 {
		b.WriteString("    volumes:\n")
		for _, v := range t.Volumes {
			spec := v.Container
			if v.Bind != "" {
				spec = v.Bind + ":" + v.Container
			}
			if v.ReadOnly {
				if v.Bind == "" { // an anonymous volume takes a mode only in the long syntax
					fmt.Fprintf(&b, "      - type: volume\n        target: %s\n        read_only: true\n", literal(v.Container))
					continue
				}
				spec += ":ro"
			}
			fmt.Fprintf(&b, "      - %s\n", literal(spec))
		}
	}
	if len(t.Labels) > 0 {
		b.WriteString("    labels:\n")
		for _, l := range t.Labels {
			fmt.Fprintf(&b, "      %s: %s\n", literal(l.Name), literal(l.Value))
		}
	}
	return b.String(), nil
}

// portPattern is a port of the format: [[ip:]hostPort:]containerPort[/proto].
var portPattern = regexp.MustCompile(`^(?:(?:[0-9.]+:)?(?:[0-9]+(?:-[0-9]+)?)?:)?[0-9]+(?:-[0-9]+)?(?:/(?:tcp|udp|sctp))?$`)

func checkPort(p string) error {
	if !portPattern.MatchString(strings.TrimSpace(p)) {
		return fault.Invalidf("Template port %q is not of the form [hostPort:]containerPort[/protocol]", p)
	}
	return nil
}

// quote writes s as a YAML double-quoted scalar (JSON's string syntax is a
// subset of it).
func quote(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

// literal is quote for a value compose must not interpolate: '$' is
// doubled.
func literal(s string) string {
	return quote(strings.ReplaceAll(s, "$", "$$"))
}

// slug is a compose service name made of s.
func slug(s string) string {
	var b strings.Builder
	dash := false
	for _, r := range strings.ToLower(s) {
		switch {
		case r >= 'a' && r <= 'z' || r >= '0' && r <= '9':
			b.WriteRune(r)
			dash = false
		case b.Len() > 0 && !dash:
			b.WriteByte('-')
			dash = true
		}
	}
	return strings.TrimSuffix(b.String(), "-")
}
