package stacks

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"

	"github.com/compose-spec/compose-go/v2/dotenv"

	"github.com/berth-dev/berth/server/internal/store"
	"github.com/berth-dev/berth/shared/atomicfile"
	"github.com/berth-dev/berth/shared/fault"
)

// File names of a stack directory.
const (
	ComposeFileName = "compose.yaml"
	EnvFile         = ".env"
)

// namePattern is compose's own rule for project names: a stack is a compose
// project, so its name must be one (and so it can never hold a path).
var namePattern = regexp.MustCompile(`^[a-z0-9][a-z0-9_-]*$`)

// maxNameLen keeps a stack name within what engines accept in container names.
const maxNameLen = 63

var (
	errNameRequired    = fault.New(fault.Invalid, "Stack name is required")
	errComposeRequired = fault.New(fault.Invalid, "Compose file content is required")
)

// CheckName validates a stack name (already URL-decoded).
func CheckName(name string) error {
	switch {
	case name == "":
		return errNameRequired
	case len(name) > maxNameLen || !namePattern.MatchString(name):
		return fault.Invalidf("Invalid stack name %q: use lowercase letters, digits, '-' and '_', starting with a letter or digit", name)
	}
	return nil
}

// errNoComposeFile is the 404 of a stack whose compose file is missing.
func errNoComposeFile(name string, err error) error {
	return fault.Wrap(fault.NotFound, fmt.Sprintf("Compose file of stack '%s' not found", name), err)
}

// stackDir is the default directory of a stack, absolute.
func (s *Service) stackDir(envID int64, name string) string {
	return absPath(filepath.Join(s.dataDir, "stacks", fmt.Sprint(envID), name))
}

// composePath is where the stack's compose file lives. A git stack's path
// is relative to its clone.
func (s *Service) composePath(st store.Stack) string {
	if st.SourceType == store.SourceGit {
		return filepath.Join(s.CloneDir(st.ID), filepath.FromSlash(st.ComposePath))
	}
	if st.ComposePath != "" {
		return st.ComposePath
	}
	return filepath.Join(s.stackDir(st.EnvironmentID, st.Name), ComposeFileName)
}

// envPath is where the stack's env file (non-secret variables) lives.
func (s *Service) envPath(st store.Stack) string {
	if st.EnvPath != "" {
		return st.EnvPath
	}
	if st.ComposePath != "" && st.SourceType != store.SourceGit {
		return filepath.Join(filepath.Dir(st.ComposePath), EnvFile)
	}
	return filepath.Join(s.stackDir(st.EnvironmentID, st.Name), EnvFile)
}

// writeFile writes a stack file atomically: a crash leaves the old or the
// new content, never a mix.
func writeFile(path string, data []byte) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o750); err != nil {
		return fmt.Errorf("stacks: create directory: %w", err)
	}
	if err := atomicfile.Write(path, data, 0o640); err != nil {
		return fmt.Errorf("stacks: write %s: %w", filepath.Base(path), err)
	}
	return nil
}

// readOptional reads a file that may not exist (nil, nil then).
func readOptional(path string) ([]byte, error) {
	b, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	return b, err
}

// Variable is a stack variable as clients send and read it.
type Variable struct {
	Key      string `json:"key"`
	Value    string `json:"value"`
	IsSecret bool   `json:"isSecret"`
}

// Mask replaces secret values in answers (COMPAT: exactly "***"); a secret
// sent back with this value keeps its stored value.
const Mask = "***"

// legacyMask is the mask answers carried before Mask (a client holding an
// answer from before the change sends it back); it keeps the stored value
// too, so that such a client does not overwrite a secret with it.
const legacyMask = "********"

// isMask reports whether a secret's value sent by a client is a mask, that
// is "keep the stored value".
func isMask(v string) bool { return v == Mask || v == legacyMask }

// keyPattern is the rule for variable names (COMPAT), the names compose can
// interpolate.
var keyPattern = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)

// checkKey refuses a variable name that breaks keyPattern, naming it.
func checkKey(key string) error {
	if !keyPattern.MatchString(key) {
		return fault.Invalidf("Invalid variable name %q: use letters, digits and '_', not starting with a digit", key)
	}
	return nil
}

// splitVariables validates vars and splits them into non-secret ones and
// secrets.
func splitVariables(vars []Variable) (plain []Variable, secrets []store.StackSecret, err error) {
	seen := map[string]bool{}
	for _, v := range vars {
		if err := checkKey(v.Key); err != nil {
			return nil, nil, err
		}
		if seen[v.Key] {
			return nil, nil, fault.Invalidf("Variable %q is given twice", v.Key)
		}
		seen[v.Key] = true
		if v.IsSecret {
			secrets = append(secrets, store.StackSecret{Key: v.Key, Value: v.Value})
		} else {
			plain = append(plain, v)
		}
	}
	return plain, secrets, nil
}

// renderEnv writes non-secret variables as an env file, quoting values that
// need it so that compose reads back exactly what was given.
func renderEnv(vars []Variable) []byte {
	var b bytes.Buffer
	for _, v := range vars {
		b.WriteString(v.Key)
		b.WriteByte('=')
		b.WriteString(quoteEnv(v.Value))
		b.WriteByte('\n')
	}
	return b.Bytes()
}

func quoteEnv(v string) string {
	if v == "" || strings.IndexFunc(v, func(r rune) bool {
		return !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("_-./:@,+%", r))
	}) < 0 {
		return v
	}
	// Single quotes are literal in compose's dotenv except for \' ; a value
	// holding a quote, a backslash or a line break goes in double quotes with
	// escapes.
	if !strings.ContainsAny(v, "'\\\n\r") {
		return "'" + v + "'"
	}
	r := strings.NewReplacer(`\`, `\\`, `"`, `\"`, "\n", `\n`, "\r", `\r`, "$", `\$`)
	return `"` + r.Replace(v) + `"`
}

// parseEnv reads an env file's variables in file order (no interpolation
// of values from Berth's own environment).
func parseEnv(content []byte) ([]Variable, error) {
	m, err := dotenv.ParseWithLookup(bytes.NewReader(content), func(string) (string, bool) { return "", false })
	if err != nil {
		return nil, fault.Invalidf("Invalid env file: %v", err)
	}
	order := envKeyOrder(content)
	out := make([]Variable, 0, len(m))
	for _, k := range order {
		if v, ok := m[k]; ok {
			out = append(out, Variable{Key: k, Value: v})
			delete(m, k)
		}
	}
	rest := make([]string, 0, len(m))
	for k := range m {
		rest = append(rest, k)
	}
	sort.Strings(rest)
	for _, k := range rest {
		out = append(out, Variable{Key: k, Value: m[k]})
	}
	return out, nil
}

// envKeyOrder returns the keys of an env file in the order they appear.
func envKeyOrder(content []byte) []string {
	var keys []string
	for _, line := range strings.Split(string(content), "\n") {
		line = strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(line), "export "))
		if line == "" || line[0] == '#' {
			continue
		}
		if i := strings.IndexAny(line, "=:"); i > 0 {
			keys = append(keys, strings.TrimSpace(line[:i]))
		}
	}
	return keys
}

// withoutKeys drops the lines of an env file that set one of keys (so that
// a secret never lands in the file even when the raw text names it).
func withoutKeys(content string, keys map[string]bool) string {
	if len(keys) == 0 {
		return content
	}
	lines := strings.SplitAfter(content, "\n")
	var b strings.Builder
	for _, line := range lines {
		t := strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(line), "export "))
		if i := strings.IndexAny(t, "=:"); i > 0 && t[0] != '#' && keys[strings.TrimSpace(t[:i])] {
			continue
		}
		b.WriteString(line)
	}
	return b.String()
}
