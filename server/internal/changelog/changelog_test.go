package changelog

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestEmbeddedCopyEqualsTheRepositoryChangelog(t *testing.T) {
	root, err := os.ReadFile(filepath.Join("..", "..", "..", "CHANGELOG.md"))
	if err != nil {
		t.Fatal(err)
	}
	if string(root) != text {
		t.Fatal("server/internal/changelog/CHANGELOG.md differs from the repository's CHANGELOG.md: copy the root file over it")
	}
}

func TestEmbeddedChangelogHasAnUnreleasedEntry(t *testing.T) {
	entries, err := Entries()
	if err != nil {
		t.Fatal(err)
	}
	if len(entries) == 0 || entries[0].Version != "Unreleased" || len(entries[0].Changes) < 5 {
		t.Fatalf("entries = %+v", entries)
	}
}

func TestParseReadsVersionsDatesSectionsAndContinuations(t *testing.T) {
	doc := "# Changelog\n\nIntro text.\n\n## [Unreleased]\n- one\n  more of one\n\n## [1.2.0] - 2026-01-31\n### Fixed\n- two\n* three\n### Added\n- four\n\n## 1.0.0 - 2025-12-01\n"
	got, err := Parse(doc)
	if err != nil {
		t.Fatal(err)
	}
	want := []Entry{
		{Version: "Unreleased", Changes: []string{"one more of one"}},
		{Version: "1.2.0", Date: "2026-01-31", Changes: []string{"Fixed: two", "Fixed: three", "Added: four"}},
		{Version: "1.0.0", Date: "2025-12-01", Changes: []string{}},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}

func TestParseRefusesMalformedDocuments(t *testing.T) {
	for _, doc := range []string{"- a change before any heading\n", "## [1.0.0] - yesterday\n"} {
		if _, err := Parse(doc); err == nil {
			t.Errorf("Parse(%q) succeeded", doc)
		}
	}
}

func FuzzParse(f *testing.F) {
	f.Add(text)
	f.Add("## [1.0.0] - 2025-01-01\n- a\n  b\n")
	f.Fuzz(func(t *testing.T, doc string) {
		entries, err := Parse(doc)
		if err != nil {
			return
		}
		for _, e := range entries {
			if e.Version == "" || e.Changes == nil {
				t.Fatalf("entry %+v", e)
			}
		}
	})
}
