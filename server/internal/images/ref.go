package images

import (
	"strings"
)

// dockerHubHosts are the names of the default public registry.
var dockerHubHosts = map[string]bool{
	"docker.io": true, "index.docker.io": true, "registry-1.docker.io": true, "registry.hub.docker.com": true,
}

// PullReference applies the spec's pull rules to a user's image name:
// a name containing "@" is a digest reference and gets no tag; otherwise the
// text after the last ":" is the tag unless it contains "/" (a registry
// port), and the default tag is "latest".
func PullReference(name string) string {
	name = strings.TrimSpace(name)
	if strings.Contains(name, "@") {
		return name
	}
	if i := strings.LastIndex(name, ":"); i >= 0 && !strings.Contains(name[i+1:], "/") {
		return name
	}
	return name + ":latest"
}

// hostOf returns the registry host of an image reference: its first path
// segment when that contains "." or ":" or is "localhost", else Docker Hub.
func hostOf(ref string) string {
	first, _, found := strings.Cut(ref, "/")
	if found && (strings.ContainsAny(first, ".:") || first == "localhost") {
		return strings.ToLower(first)
	}
	return "docker.io"
}

// stripHost removes a leading host part (a first path segment containing "."
// or ":") from an image name, as the push rules require.
func stripHost(name string) string {
	first, rest, found := strings.Cut(name, "/")
	if found && strings.ContainsAny(first, ".:") {
		return rest
	}
	return name
}

// registryHost returns the host[:port] of a registry URL ("https://r.example/v2/" → "r.example").
func registryHost(url string) string {
	u := strings.TrimSpace(url)
	if i := strings.Index(u, "://"); i >= 0 {
		u = u[i+3:]
	}
	u, _, _ = strings.Cut(u, "/")
	return strings.ToLower(u)
}

// isDockerHub reports whether a registry host names the default public registry.
func isDockerHub(host string) bool { return dockerHubHosts[host] }

// withTag adds ":latest" to a name without a tag or digest.
func withTag(name string) string {
	if strings.Contains(name, "@") {
		return name
	}
	if i := strings.LastIndex(name, ":"); i >= 0 && !strings.Contains(name[i+1:], "/") {
		return name
	}
	return name + ":latest"
}

// PushTarget applies the spec's push rules: source is the image's tag (or
// the requested new tag); its leading host is removed; for the default public
// registry the target carries no host, for any other it is
// "<registry host>/<name>".
func PushTarget(source, registryURL string) string {
	name := withTag(stripHost(strings.TrimSpace(source)))
	host := registryHost(registryURL)
	if host == "" || isDockerHub(host) {
		return name
	}
	return host + "/" + name
}
