#!/usr/bin/env bash
#
# build-scanner.sh TOOL: make sure the vulnerability scanner TOOL (trivy or grype)
# is built and print the path of the binary.
#
# The version is the one scripts/scanners/TOOL/go.mod requires; that wrapper
# module's go.mod and go.sum pin the scanner and every dependency, and its `tool`
# line names the scanner's main package. Its own go.mod keeps it out of the main
# module: `go test ./...`, `go vet ./...` and staticcheck at the repository root
# never see it. The binary is cached outside the repository, keyed by tool,
# version and the Go version that built it, so it is built once per machine
# (measured on 2 cores with empty module and build caches: Trivy 10 minutes, module
# downloads included, then Grype 5 more, reusing much of Trivy's build cache; the
# builds are reproducible, so the same sources give byte-identical binaries).
#
# Why wrapper modules rather than `go install …@VERSION`: the module proxy refuses
# Trivy's version list, so `go install github.com/aquasecurity/trivy/cmd/trivy@v0.74.0`
# fails; Grype's would work, but the wrapper pins its dependencies the same way.
# Both are built as their release builds are (goreleaser): static (CGO_ENABLED=0),
# stripped, with the version stamped in; Trivy needs GOEXPERIMENT=jsonv2 (Grype is
# built without it, as its releases are).
set -euo pipefail

tool=${1:-}
case $tool in
trivy)
	module=github.com/aquasecurity/trivy
	pkg=$module/cmd/trivy
	;;
grype)
	module=github.com/anchore/grype
	pkg=$module/cmd/grype
	;;
*)
	echo "usage: $0 trivy|grype" >&2
	exit 2
	;;
esac

module_dir=$(cd "$(dirname "${BASH_SOURCE[0]}")/$tool" && pwd)
version=$(awk -v m="$module" '$1 == m { print $2; exit }' "$module_dir/go.mod")
[[ -n $version ]] || { echo "error: no $module requirement in $module_dir/go.mod" >&2; exit 1; }
go_version=$(go env GOVERSION)
cache_dir=${HOME}/.cache/berth/bin
bin=${cache_dir}/${tool}-${version}-${go_version}

case $tool in
trivy)
	# `trivy --version` prints "Version: 0.74.0" (goreleaser stamps the tag without its v).
	ldflags="-s -w -X github.com/aquasecurity/trivy/pkg/version/app.ver=${version#v}"
	version_line="Version: ${version#v}"
	goexperiment=jsonv2 # as Trivy's release builds; it does not build without it
	;;
grype)
	# `grype version` prints "Version:            0.120.1".
	ldflags="-s -w -X main.version=${version#v}"
	version_line="Version: ${version#v}"
	goexperiment=
	;;
esac

# built_ok BINARY: true when BINARY runs, reports $version and was built by $go_version
# (`go version BINARY` appends the experiments: "go1.26.8-X:jsonv2").
built_ok() {
	local built
	[[ -x $1 ]] && "$1" version 2>/dev/null | tr -s ' ' | grep -qxF "$version_line" || return 1
	built=$(go version "$1" 2>/dev/null) || return 1
	built=${built#"$1: "}
	[[ ${built%%-X:*} == "$go_version" ]]
}

if ! built_ok "$bin"; then
	mkdir -p "$cache_dir"
	tmp=$(mktemp -d "${cache_dir}/.${tool}.XXXXXX")
	trap 'rm -rf "$tmp"' EXIT
	echo "==> building ${tool} ${version} with ${go_version} (once per machine, 5-10 minutes on 2 cores)" >&2
	start=$SECONDS
	cp "$module_dir/go.mod" "$module_dir/go.sum" "$tmp/"
	(
		cd "$tmp"
		export GOFLAGS=-mod=readonly GOWORK=off GOTOOLCHAIN=local CGO_ENABLED=0 GOEXPERIMENT=$goexperiment
		go build -trimpath -ldflags "$ldflags" -o "${tool}-bin" "$pkg"
	) >&2
	built_ok "$tmp/${tool}-bin" || { echo "error: the ${tool} just built does not report version ${version}" >&2; exit 1; }
	mv -f "$tmp/${tool}-bin" "$bin"
	echo "==> built ${tool} in $((SECONDS - start)) s: $bin" >&2
fi

printf '%s\n' "$bin"
