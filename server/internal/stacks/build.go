package stacks

import (
	"path/filepath"
	"slices"

	"github.com/compose-spec/compose-go/v2/types"

	"github.com/berth-dev/berth/server/internal/store"
	"github.com/berth-dev/berth/shared/fault"
)

// directEngine reports whether env's engine is reached directly (socket or
// direct), where an image can be built from the stack's directory.
func directEngine(env store.Environment) bool {
	return env.ConnectionType == "" || env.ConnectionType == "socket" || env.ConnectionType == "direct"
}

// checkBuilds refuses (400) a project of which a service builds from
// anything but its own stack's directory (the compose file's): a context
// that is a URL, or a context or Dockerfile that leads outside the
// directory by ".." or a symbolic link, or additional contexts.
func checkBuilds(p *types.Project) error {
	if len(p.ComposeFiles) == 0 {
		return fault.Invalidf("The stack has no compose file to build from")
	}
	dir := filepath.Dir(p.ComposeFiles[0])
	names := make([]string, 0, len(p.Services))
	for name, svc := range p.Services {
		if svc.Build != nil {
			names = append(names, name)
		}
	}
	slices.Sort(names)
	for _, name := range names {
		b := p.Services[name].Build
		if !filepath.IsAbs(b.Context) || !within(dir, b.Context) {
			return fault.Invalidf("Service %s: the build context %s is not in the stack's directory: a stack builds only from its own files", name, b.Context)
		}
		if b.DockerfileInline == "" && b.Dockerfile != "" {
			df := b.Dockerfile
			if !filepath.IsAbs(df) {
				df = filepath.Join(b.Context, df)
			}
			if !within(dir, df) {
				return fault.Invalidf("Service %s: the Dockerfile %s is not in the stack's directory: a stack builds only from its own files", name, b.Dockerfile)
			}
		}
		if len(b.AdditionalContexts) > 0 {
			return fault.Invalidf("Service %s: additional build contexts are not supported", name)
		}
	}
	return nil
}
