#!/usr/bin/env bash
#
# build-dex.sh: make sure Dex (the OpenID Connect provider of the OIDC sign-in
# tests) is built and print the path of the binary.
#
# The version is the one scripts/oidc/go.mod requires; go.mod and go.sum pin Dex
# and every dependency. The binary is cached outside the repository, keyed by
# Dex's version and the Go version that built it, so it is built once per machine
# (about 3 minutes on 2 cores with empty module and build caches).
#
# `go install github.com/dexidp/dex/cmd/dex@VERSION` cannot work: Dex's go.mod
# replaces its nested module github.com/dexidp/dex/api/v2 with ./api/v2, which a
# module zip never contains. So the build runs in a copy of this wrapper module
# (whose go.mod has a `tool` line for cmd/dex), with Dex's source copied from the
# module cache and patched:
#   The module proxy serves api/v2 only up to v2.4.0, older than what Dex's gRPC
#   admin API (server/apiserver) needs at this version. The tests never enable
#   that API (no `grpc:` section), so cmd/dex registers api.UnimplementedDexServer
#   instead and server/apiserver is not compiled at all.
set -euo pipefail

module_dir=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
version=$(awk '$1 == "github.com/dexidp/dex" { print $2; exit }' "$module_dir/go.mod")
[[ -n $version ]] || { echo "error: no github.com/dexidp/dex requirement in $module_dir/go.mod" >&2; exit 1; }
go_version=$(go env GOVERSION)
cache_dir=${HOME}/.cache/berth/bin
bin=${cache_dir}/dex-${version}-${go_version}

# built_ok BINARY: true when BINARY runs, is Dex $version and was built by $go_version.
built_ok() {
	[[ -x $1 ]] &&
		"$1" version 2>/dev/null | grep -qxF "Dex Version: ${version}" &&
		[[ $(go version "$1" 2>/dev/null) == "$1: ${go_version}" ]]
}

# patch_dex SRC: drop the gRPC admin API from cmd/dex (see above); fail loudly
# when the source no longer looks as expected.
patch_dex() {
	local serve=$1/cmd/dex/serve.go
	sed -i \
		-e 's|apiserver\.NewAPI(serverConfig\.Storage, logger, version, serv\.Connectors(), serv\.Discovery(), serv\.Backchannel())|api.UnimplementedDexServer{}|' \
		-e '\|^[[:space:]]*"github.com/dexidp/dex/server/apiserver"$|d' \
		"$serve"
	if grep -q apiserver "$serve" || ! grep -qF 'api.RegisterDexServer(grpcSrv, api.UnimplementedDexServer{})' "$serve"; then
		echo "error: cannot patch $serve of Dex ${version}; update scripts/oidc/build-dex.sh" >&2
		exit 1
	fi
}

if ! built_ok "$bin"; then
	mkdir -p "$cache_dir"
	tmp=$(mktemp -d "${cache_dir}/.dex.XXXXXX")
	trap 'chmod -R u+w "$tmp" 2>/dev/null; rm -rf "$tmp"' EXIT
	echo "==> building Dex ${version} with ${go_version} (once, about 3 minutes)" >&2
	start=$SECONDS
	cp "$module_dir/go.mod" "$module_dir/go.sum" "$tmp/"
	(
		cd "$tmp"
		export GOFLAGS=-mod=readonly GOWORK=off GOTOOLCHAIN=local CGO_ENABLED=0
		go mod download github.com/dexidp/dex
		src=$(go list -m -f '{{.Dir}}' github.com/dexidp/dex)
		cp -R "$src" dex
		chmod -R u+w dex
		patch_dex dex
		go mod edit -replace github.com/dexidp/dex=./dex
		# Memory storage only, so no cgo (Dex's SQLite storage would need it).
		go build -trimpath -ldflags "-s -w -X main.version=${version}" -o dex-bin github.com/dexidp/dex/cmd/dex
	) >&2
	built_ok "$tmp/dex-bin" || { echo "error: the Dex just built does not report version ${version}" >&2; exit 1; }
	mv -f "$tmp/dex-bin" "$bin"
	echo "==> built Dex in $((SECONDS - start)) s: $bin" >&2
fi

printf '%s\n' "$bin"
