# Berth: `make run` starts Berth on :3000 against the local Docker engine,
# `make test` sets up what the tests need and runs every test.

APP        := berth
BIN        := bin/$(APP)
AGENT_BIN  := bin/berth-agent
# The browser tests' binary: bin/berth linked to also trust the license keys of
# BERTH_LICENSE_KEYS (server/cmd/berth/licensekeys.go), so that they can sign a
# license and drive the enterprise screens. Never shipped.
E2E_BIN    := bin/berth-e2e
ARGS       ?=
TEST_FLAGS ?= -count=1 -timeout 25m

# Stamped into the binary and the image; "dev" outside a git checkout.
VERSION    ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo dev)
IMAGE      ?= berth/server:dev
AGENT_IMAGE ?= berth/agent:dev

# SQLite (mattn/go-sqlite3) is cgo, yet bin/berth stays one static binary that
# runs FROM scratch: the external linker links glibc statically; netgo and
# osusergo keep out glibc's name-service lookups (getaddrinfo, getpwnam), which
# cannot work from a static binary, and SQLite's extension loading (dlopen) is
# compiled out.
GO_TAGS    := netgo osusergo sqlite_omit_load_extension
GO_LDFLAGS := -s -w -linkmode external -extldflags "-static" \
	-X github.com/berth-dev/berth/shared/version.Version=$(VERSION)

# Every package of the go.work workspace (run from the root).
PKGS := ./server/... ./shared/... ./agent/...

# berth-helper, the program of the image Berth's helper containers run
# (volume browse, export and clone; removals from stopped containers), is
# embedded in bin/berth from server/internal/helperimage/bin: one static
# binary per architecture an engine may have. Without it (a plain go build)
# Berth refuses helpers. No VCS stamp: the same source gives the same
# binary, so the image keeps its id from one commit to the next.
HELPER_DIR  := server/internal/helperimage/bin
HELPER_BINS := $(HELPER_DIR)/berth-helper-linux-amd64 $(HELPER_DIR)/berth-helper-linux-arm64 $(HELPER_DIR)/berth-helper-linux-arm
HELPER_SRC  := $(shell find server/internal/helperbin server/cmd/berth-helper -name '*.go' ! -name '*_test.go' 2>/dev/null)

# The web console (web/) is built by Vite and embedded in the binary from
# server/internal/webui/dist (go:embed cannot reach ../web). It is rebuilt when
# a source file of web/ is newer than the copy; node_modules is reinstalled
# (npm ci) when the lockfile is newer than it.
WEB_DIST := server/internal/webui/dist
WEB_SRC  := $(shell find web/src web/public web/index.html web/docs.html web/package.json web/package-lock.json \
	web/vite.config.ts web/svelte.config.js web/tsconfig.json -type f 2>/dev/null)

# Exports the variables written by scripts/test-env.sh into the shell of one recipe line.
WITH_TEST_ENV := set -a && . ./.test-env && set +a &&

# Targets run one after the other, in the order they are listed, even under -j.
.NOTPARALLEL:

.PHONY: all build helper api-types agent web web-test e2e check-static images run run-env test test-env lint proto proto-check bench clean

all: build

build: web agent helper
	CGO_ENABLED=1 go build -trimpath -tags '$(GO_TAGS)' -ldflags '$(GO_LDFLAGS)' -o $(BIN) ./server/cmd/berth

helper: $(HELPER_BINS)

# The console's typed API client: the OpenAPI document of the route table
# (web/src/lib/openapi.json) and the types generated from it
# (web/src/lib/api-schema.d.ts). Run after changing a route or an answer type;
# TestConsoleAPISnapshotIsCurrent and the console's own test check both.
api-types:
	BERTH_UPDATE_CONSOLE_API=1 go test ./server/internal/api -run '^TestConsoleAPISnapshotIsCurrent$$' -count=1
	cd web && npm run gen:api

# The arm build is ARMv6, which ARMv7 runs too.
$(HELPER_DIR)/berth-helper-linux-%: $(HELPER_SRC)
	CGO_ENABLED=0 GOOS=linux GOARCH=$* GOARM=6 go build -trimpath -buildvcs=false -ldflags '-s -w' \
		-o $@ ./server/cmd/berth-helper

# The remote agent: pure Go (no cgo), so a plain static binary.
agent:
	CGO_ENABLED=0 go build -trimpath -ldflags '-s -w -X github.com/berth-dev/berth/shared/version.Version=$(VERSION)' \
		-o $(AGENT_BIN) ./agent/cmd/berth-agent

web: $(WEB_DIST)/index.html

web/node_modules/.package-lock.json: web/package-lock.json
	cd web && npm ci --no-audit --no-fund

# Fails when the initial JS exceeds its budget (web/scripts/bundle-size.mjs).
# JS, CSS and SVG get a gzip twin (.gz), served to clients that accept gzip.
$(WEB_DIST)/index.html: web/node_modules/.package-lock.json $(WEB_SRC)
	cd web && npm run build && npm run size
	find $(WEB_DIST) -mindepth 1 ! -name .gitkeep -delete
	cp -R web/dist/. $(WEB_DIST)/
	rm -rf $(WEB_DIST)/.vite
	find $(WEB_DIST) -type f \( -name '*.js' -o -name '*.css' -o -name '*.svg' \) -exec gzip -9 -n -k {} +

# The console's unit tests (Vitest, jsdom).
web-test: web/node_modules/.package-lock.json
	cd web && npm test

# The console's browser tests (web/e2e): bin/berth against the local engine,
# driven through the Chromium that scripts/test-env.sh installs.
web/e2e/node_modules/.package-lock.json: web/e2e/package-lock.json
	cd web/e2e && npm ci --no-audit --no-fund

e2e: build test-env web/e2e/node_modules/.package-lock.json
	CGO_ENABLED=1 go build -trimpath -tags '$(GO_TAGS)' \
		-ldflags '$(GO_LDFLAGS) -X main.licenseKeysEnv=BERTH_LICENSE_KEYS' -o $(E2E_BIN) ./server/cmd/berth
	$(WITH_TEST_ENV) export BERTH_BIN=$(CURDIR)/$(E2E_BIN) && cd web/e2e && npm test

# Fails unless bin/berth needs no shared library at run time (the image has none).
check-static: build
	@out=$$(file $(BIN)); case "$$out" in *"statically linked"*) ;; \
		*) echo "$$out"; echo "check-static: $(BIN) is not statically linked"; exit 1;; esac
	@out=$$(ldd $(BIN) 2>&1); case "$$out" in *"not a dynamic executable"*) ;; \
		*) echo "$$out"; echo "check-static: ldd lists libraries for $(BIN)"; exit 1;; esac
	@echo "check-static: $(BIN) is statically linked"

# The server image, FROM scratch (no base image is pulled): bin/berth plus the
# CA bundle, time zone data and an empty /data staged in bin/image/ by
# scripts/image-rootfs.sh. The build context is the repository root, cut down
# to bin/berth and bin/image/ by .dockerignore.
images: check-static
	@scripts/image-rootfs.sh bin/image
	docker build -f Dockerfile.server --build-arg VERSION=$(VERSION) \
		--build-arg REVISION=$$(git rev-parse HEAD 2>/dev/null || echo unknown) -t $(IMAGE) .
	@docker image inspect -f '$(IMAGE): {{.Size}} bytes' $(IMAGE)
	docker build -f Dockerfile.agent --build-arg VERSION=$(VERSION) \
		--build-arg REVISION=$$(git rev-parse HEAD 2>/dev/null || echo unknown) \
		-t $(AGENT_IMAGE) -t berth/agent:$(VERSION) .
	@docker image inspect -f '$(AGENT_IMAGE): {{.Size}} bytes' $(AGENT_IMAGE)
	@# Earlier builds' images go: other versions' agent tags, and the server
	@# and agent images no tag names any more.
	@docker images berth/agent --format '{{.Tag}}' | grep -vx -e dev -e '$(VERSION)' | sed 's|^|berth/agent:|' | \
		xargs -r docker rmi >/dev/null 2>&1 || true
	@for t in "Berth server" "Berth agent"; do \
		docker image prune -f --filter "label=org.opencontainers.image.title=$$t" >/dev/null; done

# PORT (3000), HOST, DATA_DIR (./data), DATABASE_URL, … are read by the binary
# from the environment; flags can be passed with ARGS="-port 8080".
run: build run-env
	exec ./$(BIN) serve $(ARGS)

run-env:
	@scripts/run-env.sh

# The image test (server/cmd/berth/image_test.go) runs the image named here;
# the process-level tests (servertest.Build) run the bin/berth built here.
test: export BERTH_SERVER_IMAGE := $(IMAGE)
test: export BERTH_SERVER_BIN := $(CURDIR)/$(BIN)
test: export BERTH_AGENT_IMAGE := $(AGENT_IMAGE)
test: helper test-env lint check-static images web-test
	$(WITH_TEST_ENV) go test $(TEST_FLAGS) $(PKGS)
	@# Bounded fuzzing of the engine's object references (nothing may climb to another route).
	@# A count, not a duration: Go 1.26's fuzz coordinator can report its own -fuzztime deadline as a
	@# failure when a starved worker misses it (golang/go#75804, fixed in Go 1.27), with no crasher.
	go test -run '^$$' -fuzz '^FuzzEngineObjectPath$$' -fuzztime 12000x ./shared/engine/
	@# The container list's own decoder and encoder against encoding/json (same result, same bytes).
	go test -run '^$$' -fuzz '^FuzzListDecoder$$' -fuzztime 20000x ./shared/engine/
	go test -run '^$$' -fuzz '^FuzzAppendContainersJSON$$' -fuzztime 10000x ./shared/engine/
	@$(MAKE) --no-print-directory e2e

test-env:
	@scripts/test-env.sh

lint: proto-check
	@files=$$(gofmt -l .); \
	if [ -n "$$files" ]; then echo "gofmt: these files need formatting:"; echo "$$files"; exit 1; fi
	go vet $(PKGS)
	@staticcheck=$$(scripts/staticcheck.sh) && echo "staticcheck $(PKGS)" && $$staticcheck $(PKGS)

# The agent protocol: proto/berth/agent/v1/*.proto (buf.yaml, buf.gen.yaml)
# generates the Go code in shared/agentpb, which is committed. buf,
# protoc-gen-go and protoc-gen-go-grpc are built once from the Go module proxy
# and cached outside the repository (scripts/proto-tools.sh).
proto:
	@tools=$$(scripts/proto-tools.sh) && PATH="$$tools:$$PATH" buf generate

# buf lint, a failure when shared/agentpb differs from what the .proto files
# generate (someone changed a .proto without `make proto`, or edited generated
# code), and buf breaking (FILE rules) against the last release tag once one exists.
proto-check:
	@tools=$$(scripts/proto-tools.sh) && export PATH="$$tools:$$PATH" && echo "buf lint" && buf lint && \
	tmp=$$(mktemp -d) && trap 'rm -rf "$$tmp"' EXIT && buf generate -o "$$tmp" && \
	if ! diff -r "$$tmp/shared/agentpb" shared/agentpb >/dev/null; then \
		diff -r "$$tmp/shared/agentpb" shared/agentpb | head -20; \
		echo "proto-check: shared/agentpb is stale: run make proto and commit the result"; exit 1; fi; \
	echo "proto-check: shared/agentpb matches proto/" && \
	if tag=$$(git describe --tags --abbrev=0 2>/dev/null); then \
		echo "buf breaking against $$tag" && buf breaking --against ".git#tag=$$tag"; \
	else echo "buf breaking: no release tag yet, nothing to compare against"; fi

bench: build test-env web/e2e/node_modules/.package-lock.json
	$(WITH_TEST_ENV) go run ./server/bench $(BENCH_ARGS)
	$(WITH_TEST_ENV) export BERTH_BIN=$(CURDIR)/$(BIN) && cd web/e2e && node bench.mjs

clean:
	rm -rf bin/ web/dist
	find $(WEB_DIST) -mindepth 1 ! -name .gitkeep -delete
	find $(HELPER_DIR) -mindepth 1 ! -name .gitkeep -delete
