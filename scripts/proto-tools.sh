#!/usr/bin/env bash
#
# proto-tools.sh: make sure buf, protoc-gen-go and protoc-gen-go-grpc are built
# and print the directory that holds them (for PATH).
#
# The binaries are built from the Go module proxy and cached outside the
# repository, in a directory keyed by their versions and the Go version that
# built them, so they are built once per machine (buf takes a few minutes).
set -euo pipefail

buf_version=v1.75.0
protoc_gen_go_version=v1.36.12     # google.golang.org/protobuf, as the modules require it
protoc_gen_go_grpc_version=v1.6.2  # google.golang.org/grpc/cmd/protoc-gen-go-grpc
go_version=$(go env GOVERSION)
dir=${HOME}/.cache/berth/bin/proto-buf-${buf_version}-go-${protoc_gen_go_version}-grpc-${protoc_gen_go_grpc_version}-${go_version}

# built_ok NAME: true when $dir/NAME runs and was built by $go_version.
built_ok() {
	[[ -x $dir/$1 ]] && [[ $(go version "$dir/$1" 2>/dev/null) == "$dir/$1: ${go_version}" ]]
}

if ! built_ok buf || ! built_ok protoc-gen-go || ! built_ok protoc-gen-go-grpc; then
	mkdir -p "$(dirname "$dir")"
	tmp=$(mktemp -d "$(dirname "$dir")/.proto-tools.XXXXXX")
	trap 'rm -rf "$tmp"' EXIT
	echo "==> building buf ${buf_version}, protoc-gen-go ${protoc_gen_go_version}, protoc-gen-go-grpc ${protoc_gen_go_grpc_version} with ${go_version} (once)" >&2
	(
		cd "$tmp"
		export GOBIN=$tmp GOFLAGS= CGO_ENABLED=0 GOWORK=off
		go install "github.com/bufbuild/buf/cmd/buf@${buf_version}"
		go install "google.golang.org/protobuf/cmd/protoc-gen-go@${protoc_gen_go_version}"
		go install "google.golang.org/grpc/cmd/protoc-gen-go-grpc@${protoc_gen_go_grpc_version}"
	) >&2
	rm -rf "$dir"
	mkdir -p "$dir"
	mv -f "$tmp/buf" "$tmp/protoc-gen-go" "$tmp/protoc-gen-go-grpc" "$dir/"
fi

printf '%s\n' "$dir"
