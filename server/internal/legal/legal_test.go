package legal

import (
	"bytes"
	"errors"
	"os"
	"strings"
	"testing"
)

// The privacy statement is carried and says that nothing is sent home.
func TestPrivacyStatementIsCarried(t *testing.T) {
	s, err := Text(Privacy)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(s, "sends nothing home") {
		t.Errorf("privacy statement does not say Berth sends nothing home:\n%s", s)
	}
}

// The license carried is the repository's LICENSE, byte for byte; a build
// without one says so rather than answering another text.
func TestLicenseIsTheRepositorysLicense(t *testing.T) {
	repo, repoErr := os.ReadFile("../../../LICENSE")
	got, err := Text(License)
	switch {
	case repoErr != nil && errors.Is(err, ErrMissing):
		t.Log("the repository has no LICENSE yet, and the build carries none")
	case repoErr != nil:
		t.Errorf("the build carries a license (%v) the repository does not have", err)
	case err != nil:
		t.Errorf("the repository has a LICENSE but the build carries none (copy it to text/LICENSE.txt): %v", err)
	case !bytes.Equal([]byte(got), repo):
		t.Error("text/LICENSE.txt differs from the repository's LICENSE")
	}
}
