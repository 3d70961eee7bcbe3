#!/usr/bin/env bash
#
# staticcheck.sh: make sure staticcheck is built and print the path of the binary.
#
# The binary is cached outside the repository, keyed by staticcheck's version
# and the Go version that built it, so it is built once per machine.
set -euo pipefail

version=v0.8.2
go_version=$(go env GOVERSION)
cache_dir=${HOME}/.cache/berth/bin
bin=${cache_dir}/staticcheck-${version}-${go_version}

# built_ok BINARY: true when BINARY runs, is staticcheck $version and was built by $go_version.
built_ok() {
	[[ -x $1 ]] &&
		"$1" -version 2>/dev/null | grep -qF "(${version#v})" &&
		[[ $(go version "$1" 2>/dev/null) == "$1: ${go_version}" ]]
}

if ! built_ok "$bin"; then
	mkdir -p "$cache_dir"
	tmp=$(mktemp -d "${cache_dir}/.staticcheck.XXXXXX")
	trap 'rm -rf "$tmp"' EXIT
	if built_ok /tmp/sc/staticcheck; then
		# A build left by an earlier experiment on this machine.
		cp /tmp/sc/staticcheck "$tmp/staticcheck"
	else
		echo "==> building staticcheck ${version} with ${go_version} (once)" >&2
		(cd "$tmp" && GOBIN=$tmp GOFLAGS= CGO_ENABLED=0 go install "honnef.co/go/tools/cmd/staticcheck@${version}") >&2
	fi
	mv -f "$tmp/staticcheck" "$bin"
fi

printf '%s\n' "$bin"
