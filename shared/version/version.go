// Package version holds the version of the Berth binaries, set at build time
// with -ldflags "-X github.com/berth-dev/berth/shared/version.Version=…".
package version

// Version is the release this binary was built from ("dev" for local builds).
var Version = "dev"
