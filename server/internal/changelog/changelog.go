// Package changelog provides Berth's release notes: the repository's
// CHANGELOG.md (a copy kept beside this package, which a test holds equal
// to the root's), embedded into the binary and read as entries.
package changelog

import (
	_ "embed"
	"fmt"
	"regexp"
	"strings"
)

//go:embed CHANGELOG.md
var text string

// Entry is one release (or the unreleased work) of the changelog.
type Entry struct {
	Version string   `json:"version"`
	Date    string   `json:"date"` // YYYY-MM-DD, "" when the heading names none
	Changes []string `json:"changes"`
}

// heading is a release heading: "## [1.2.0] - 2026-01-31", "## 1.2.0",
// "## [Unreleased]".
var heading = regexp.MustCompile(`^##\s+\[?([^\]\s]+)\]?(?:\s+-\s+(\d{4}-\d{2}-\d{2}))?\s*$`)

// Entries returns the embedded changelog's entries, newest first.
func Entries() ([]Entry, error) { return Parse(text) }

// Parse reads a Keep-a-Changelog style document: each "## version - date"
// heading starts an entry; its "- " bullets (with their continuation
// lines) are its changes; "### Section" headings prefix the bullets under
// them ("Fixed: …"). It fails on a bullet before any release heading.
func Parse(doc string) ([]Entry, error) {
	entries := []Entry{}
	var section string
	for n, line := range strings.Split(doc, "\n") {
		trimmed := strings.TrimSpace(line)
		switch {
		case strings.HasPrefix(trimmed, "## "):
			m := heading.FindStringSubmatch(trimmed)
			if m == nil {
				return nil, fmt.Errorf("changelog: line %d: malformed release heading %q", n+1, trimmed)
			}
			entries = append(entries, Entry{Version: m[1], Date: m[2], Changes: []string{}})
			section = ""
		case strings.HasPrefix(trimmed, "### "):
			section = strings.TrimSpace(strings.TrimPrefix(trimmed, "### "))
		case strings.HasPrefix(trimmed, "- ") || strings.HasPrefix(trimmed, "* "):
			if len(entries) == 0 {
				return nil, fmt.Errorf("changelog: line %d: a change before any release heading", n+1)
			}
			change := strings.TrimSpace(trimmed[2:])
			if section != "" {
				change = section + ": " + change
			}
			e := &entries[len(entries)-1]
			e.Changes = append(e.Changes, change)
		case trimmed != "" && len(entries) > 0 && len(entries[len(entries)-1].Changes) > 0 && strings.HasPrefix(line, "  "):
			// A continuation line of the last bullet.
			e := &entries[len(entries)-1]
			e.Changes[len(e.Changes)-1] += " " + trimmed
		}
	}
	return entries, nil
}
