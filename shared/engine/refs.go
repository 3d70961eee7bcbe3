package engine

import (
	"errors"
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/distribution/reference"
)

// The engine's routes put object ids and names in the URL path, and the SDK
// cleans that path (path.Join), so "../images/x" given as a volume name
// becomes /images/x: another route, another permission. Every id, name or
// reference a Client method takes is checked for its object kind here,
// before anything is sent, and a refusal is ErrInvalid naming what is wrong.

// invalidRef is the refusal of an id, name or reference of kind ("volume
// name", "image reference").
func invalidRef(kind, s, why string) error {
	msg := fmt.Sprintf("Invalid %s %q", kind, shorten(s))
	if why != "" {
		msg += ": " + why
	}
	return &Error{Kind: ErrInvalid, Msg: msg, err: errors.New(msg)}
}

// shorten keeps a refused value short enough to quote in a message.
func shorten(s string) string {
	const limit = 80
	if len(s) <= limit {
		return s
	}
	cut := limit
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + "…"
}

// checkContainer checks a container id (full or a prefix) or name, and
// returns it as the engine's path takes it. The engine lists names with a
// leading "/" ("/web"); that form is accepted and the slash dropped.
func checkContainer(id string) (string, error) {
	name := strings.TrimPrefix(id, "/")
	if !ValidName(name) {
		return "", invalidRef("container id or name", id, "")
	}
	return name, nil
}

// checkVolume checks a volume name.
func checkVolume(name string) error {
	if !ValidName(name) {
		return invalidRef("volume name", name, "")
	}
	return nil
}

// checkNetwork checks a network id (full or a prefix) or name.
func checkNetwork(id string) error {
	if !ValidName(id) {
		return invalidRef("network id or name", id, "")
	}
	return nil
}

// CheckExecID checks an exec id: the 64 hex digits the engine made it of.
func CheckExecID(id string) error {
	if len(id) != 64 || strings.Trim(id, "0123456789abcdef") != "" {
		return invalidRef("exec id", id, "")
	}
	return nil
}

// CheckImage checks an image as an engine route names it: an id
// ("sha256:<hex>", or hex digits) or a reference by the distribution
// grammar (name, optional tag, optional digest). The grammar has no "."
// or ".." path components and no empty ones, so an accepted value stays
// under /images/.
func CheckImage(ref string) error {
	if _, err := reference.ParseAnyReference(ref); err != nil {
		return invalidRef("image reference", ref, err.Error())
	}
	return nil
}

// CheckImageName checks a reference that names a repository (what a pull,
// a push or a new tag takes): a name with an optional tag or digest, not an
// image id.
func CheckImageName(ref string) error {
	if _, err := reference.ParseNormalizedNamed(ref); err != nil {
		return invalidRef("image reference", ref, err.Error())
	}
	return nil
}

// CheckProjectName checks a compose project name: what compose accepts
// ([a-z0-9][a-z0-9_-]*), which is also a directory name under a stacks
// directory.
func CheckProjectName(name string) error {
	for i := 0; i < len(name); i++ {
		c := name[i]
		ok := c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || i > 0 && (c == '_' || c == '-')
		if !ok {
			return invalidRef("project name", name, "")
		}
	}
	if name == "" {
		return invalidRef("project name", name, "")
	}
	return nil
}
