package stacks

import (
	"bytes"
	"context"
	"os"
	"regexp"
	"sort"
	"strconv"
	"strings"

	"github.com/compose-spec/compose-go/v2/dotenv"
	"github.com/compose-spec/compose-go/v2/loader"
	"github.com/compose-spec/compose-go/v2/template"
	"github.com/compose-spec/compose-go/v2/types"

	"github.com/berth-dev/berth/server/internal/store"
)

// ParseEnvFile reads an env file's variables in file order, as stacks read
// their own (no interpolation from Berth's environment); a syntax error is
// a 400.
func ParseEnvFile(content []byte) ([]Variable, error) { return parseEnv(content) }

// ReferencedVariable is a variable a compose file interpolates.
type ReferencedVariable struct {
	Name         string `json:"name"`
	DefaultValue string `json:"defaultValue,omitempty"`
	// Required is true when the compose file gives no default (${VAR},
	// ${VAR:?message}): it must be set for the stack to come up as meant.
	Required bool `json:"required"`
}

// ReferencedVariables lists the variables compose would interpolate in a
// compose file (sorted by name). The file is parsed as YAML without
// interpolation; a file that does not parse is a 400.
func ReferencedVariables(ctx context.Context, compose []byte) ([]ReferencedVariable, error) {
	model, err := loader.LoadModelWithContext(ctx, types.ConfigDetails{
		WorkingDir:  os.TempDir(),
		ConfigFiles: []types.ConfigFile{{Filename: "compose.yaml", Content: compose}},
		Environment: types.Mapping{},
	}, func(o *loader.Options) {
		o.SetProjectName("preview", true)
		o.SkipInterpolation, o.SkipValidation, o.SkipNormalization = true, true, true
		o.SkipResolveEnvironment, o.SkipInclude, o.SkipExtends, o.SkipConsistencyCheck = true, true, true, true
		o.SkipDefaultValues = true
	})
	if err != nil {
		return nil, invalidCompose(err)
	}
	vars := template.ExtractVariables(model, template.DefaultPattern)
	out := make([]ReferencedVariable, 0, len(vars))
	for _, v := range vars {
		out = append(out, ReferencedVariable{Name: v.Name, DefaultValue: v.DefaultValue, Required: v.Required || v.DefaultValue == ""})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out, nil
}

// EnvIssue is a problem of an env file at a line (0: not tied to a line,
// for variables sent as a list).
type EnvIssue struct {
	Line    int    `json:"line"`
	Key     string `json:"key,omitempty"`
	Message string `json:"message"`
}

// Duplicate is a key set more than once.
type Duplicate struct {
	Key   string `json:"key"`
	Lines []int  `json:"lines"` // 0 for an entry of the variables list
}

// EnvReport is the validation of a stack's variables against its compose
// file. Values are never echoed.
type EnvReport struct {
	Valid      bool                 `json:"valid"`
	Errors     []EnvIssue           `json:"errors"`   // syntax errors: the env file would be refused
	Warnings   []EnvIssue           `json:"warnings"` // names that are not portable variable names
	Duplicates []Duplicate          `json:"duplicates"`
	Missing    []string             `json:"missing"` // referenced without default and set nowhere
	Unused     []string             `json:"unused"`  // set but never referenced by the compose file
	Defined    []string             `json:"defined"` // the keys set (env file, list, stored secrets)
	Referenced []ReferencedVariable `json:"referenced"`
	// Required and Optional are the reference's: the referenced names
	// without and with a default in the compose file.
	Required []string `json:"required"`
	Optional []string `json:"optional"`
}

// EnvInput is what ValidateEnv checks: env file text (nil: the stack's
// file on disk) and variables as the editor holds them, against compose
// file text (nil or "": the stack's compose file on disk).
type EnvInput struct {
	Content   *string
	Variables []Variable
	Compose   *string
}

// ValidateEnv validates variables for stack name: the env file text's
// syntax (with line numbers), keys set twice, and the variables its compose
// file (or the compose text sent) references that are set nowhere (env file, variables, stored
// secrets, or a git stack's env file from its repository). It changes
// nothing.
func (s *Service) ValidateEnv(ctx context.Context, env store.Environment, name string, in EnvInput) (EnvReport, error) {
	st, err := s.get(ctx, env, name)
	if err != nil {
		return EnvReport{}, err
	}
	src, err := s.source(ctx, st)
	if err != nil {
		return EnvReport{}, err
	}
	var compose []byte
	if in.Compose != nil && *in.Compose != "" {
		compose = []byte(*in.Compose)
	} else if compose, err = os.ReadFile(src.composePath); err != nil {
		return EnvReport{}, errNoComposeFile(name, err)
	}
	content := in.Content
	if content == nil && in.Variables == nil {
		b, err := readOptional(s.envPath(st))
		if err != nil {
			return EnvReport{}, err
		}
		text := string(b)
		content = &text
	}
	defined := map[string]bool{}
	for _, sec := range src.secrets {
		defined[sec.Key] = true
	}
	for _, f := range src.envFiles {
		if f == s.envPath(st) {
			continue // replaced by the content under validation
		}
		if b, err := os.ReadFile(f); err == nil {
			if vars, err := parseEnv(b); err == nil {
				for _, v := range vars {
					defined[v.Key] = true
				}
			}
		}
	}
	text := ""
	if content != nil {
		text = *content
	}
	return CheckEnv(ctx, []byte(text), in.Variables, compose, defined)
}

// lineError finds the line number in dotenv's error messages ("line 3: …").
var lineError = regexp.MustCompile(`^line (\d+): (.*)$`)

// CheckEnv validates env file text and a list of variables against a
// compose file; also counts as set the keys of alsoDefined (secrets, other
// env files).
func CheckEnv(ctx context.Context, content []byte, list []Variable, compose []byte, alsoDefined map[string]bool) (EnvReport, error) {
	refs, err := ReferencedVariables(ctx, compose)
	if err != nil {
		return EnvReport{}, err
	}
	r := EnvReport{Errors: []EnvIssue{}, Warnings: []EnvIssue{}, Duplicates: []Duplicate{}, Missing: []string{}, Unused: []string{},
		Defined: []string{}, Referenced: refs, Required: []string{}, Optional: []string{}}
	if _, err := dotenv.ParseWithLookup(bytes.NewReader(content), func(string) (string, bool) { return "", false }); err != nil {
		issue := EnvIssue{Message: err.Error()}
		if m := lineError.FindStringSubmatch(err.Error()); m != nil {
			issue.Line, _ = strconv.Atoi(m[1])
			issue.Message = m[2]
		}
		r.Errors = append(r.Errors, issue)
	}
	lines := map[string][]int{}
	var order []string
	note := func(key string, line int) {
		if _, ok := lines[key]; !ok {
			order = append(order, key)
		}
		lines[key] = append(lines[key], line)
		if !keyPattern.MatchString(key) {
			r.Warnings = append(r.Warnings, EnvIssue{Line: line, Key: key,
				Message: "Invalid variable name: use letters, digits and '_', not starting with a digit"})
		}
	}
	for _, kl := range envKeyLines(content) {
		note(kl.key, kl.line)
	}
	for _, v := range list {
		note(v.Key, 0)
	}
	defined := map[string]bool{}
	for _, k := range order {
		defined[k] = true
		if len(lines[k]) > 1 {
			r.Duplicates = append(r.Duplicates, Duplicate{Key: k, Lines: lines[k]})
		}
	}
	for k := range alsoDefined {
		defined[k] = true
	}
	referenced := map[string]bool{}
	for _, ref := range refs {
		if !referenced[ref.Name] {
			if ref.Required {
				r.Required = append(r.Required, ref.Name)
			} else {
				r.Optional = append(r.Optional, ref.Name)
			}
		}
		referenced[ref.Name] = true
		if ref.Required && !defined[ref.Name] {
			r.Missing = append(r.Missing, ref.Name)
		}
	}
	for k := range defined {
		r.Defined = append(r.Defined, k)
		if !referenced[k] && !alsoDefined[k] {
			r.Unused = append(r.Unused, k)
		}
	}
	sort.Strings(r.Defined)
	sort.Strings(r.Unused)
	r.Valid = len(r.Errors) == 0 && len(r.Duplicates) == 0 && len(r.Missing) == 0
	return r, nil
}

type keyLine struct {
	key  string
	line int
}

// envKeyLines returns the keys an env file sets with their line numbers,
// skipping comments and the continuation lines of quoted multi-line values.
func envKeyLines(content []byte) []keyLine {
	var out []keyLine
	open := byte(0) // the quote of a value still open on a previous line
	for i, line := range strings.Split(string(content), "\n") {
		if open != 0 {
			if closesQuote(line, open) {
				open = 0
			}
			continue
		}
		t := strings.TrimSpace(line)
		t = strings.TrimSpace(strings.TrimPrefix(t, "export "))
		if t == "" || t[0] == '#' {
			continue
		}
		j := strings.IndexAny(t, "=:")
		if j <= 0 {
			continue
		}
		out = append(out, keyLine{key: strings.TrimSpace(t[:j]), line: i + 1})
		v := strings.TrimSpace(t[j+1:])
		if v != "" && (v[0] == '"' || v[0] == '\'') && !closesQuote(v[1:], v[0]) {
			open = v[0]
		}
	}
	return out
}

// closesQuote reports whether s holds an unescaped quote q.
func closesQuote(s string, q byte) bool {
	for i := 0; i < len(s); i++ {
		switch {
		case s[i] == '\\' && q == '"':
			i++
		case s[i] == q:
			return true
		}
	}
	return false
}
