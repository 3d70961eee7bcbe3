// Package legal holds the texts Berth carries about itself: its license
// (text/LICENSE.txt, the repository's LICENSE, when the build has one) and
// its privacy statement (text/PRIVACY.txt).
package legal

import (
	"embed"
	"errors"
	"io/fs"
)

//go:embed text
var texts embed.FS

// ErrMissing reports a text this build does not carry.
var ErrMissing = errors.New("text not in this build")

// The texts.
const (
	License = "LICENSE.txt"
	Privacy = "PRIVACY.txt"
)

// Text returns the text named name (License or Privacy).
func Text(name string) (string, error) {
	b, err := texts.ReadFile("text/" + name)
	if errors.Is(err, fs.ErrNotExist) {
		return "", ErrMissing
	}
	if err != nil {
		return "", err
	}
	return string(b), nil
}
