package helperbin

import (
	"os/exec"
	"slices"
	"strings"
	"testing"
)

// TestHelperLinksOnlyTheStandardLibrary: berth-helper runs next to
// people's data in every helper container; it is this package and the
// standard library, nothing else.
func TestHelperLinksOnlyTheStandardLibrary(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", "-f", "{{if not .Standard}}{{.ImportPath}}{{end}}",
		"github.com/berth-dev/berth/server/cmd/berth-helper").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	got := strings.Fields(string(out))
	slices.Sort(got)
	want := []string{"github.com/berth-dev/berth/server/cmd/berth-helper", "github.com/berth-dev/berth/server/internal/helperbin"}
	if !slices.Equal(got, want) {
		t.Errorf("berth-helper links %v, want only %v and the standard library", got, want)
	}
}
