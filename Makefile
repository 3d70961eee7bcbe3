# Berth: `make run` starts Berth on :3000 against the local Docker engine,
# `make test` sets up what the tests need and runs every test.

APP        := berth
BIN        := bin/$(APP)
ARGS       ?=
TEST_FLAGS ?= -count=1 -timeout 25m

# Every package of the go.work workspace (run from the root).
PKGS := ./server/... ./shared/...

# Exports the variables written by scripts/test-env.sh into the shell of one recipe line.
WITH_TEST_ENV := set -a && . ./.test-env && set +a &&

# Targets run one after the other, in the order they are listed, even under -j.
.NOTPARALLEL:

.PHONY: all build run run-env test test-env lint bench clean

all: build

build:
	CGO_ENABLED=0 go build -trimpath -o $(BIN) ./server/cmd/berth

# PORT (3000), HOST, DATA_DIR (./data), DATABASE_URL, … are read by the binary
# from the environment; flags can be passed with ARGS="-port 8080".
run: build run-env
	exec ./$(BIN) serve $(ARGS)

run-env:
	@scripts/run-env.sh

test: test-env lint
	$(WITH_TEST_ENV) go test $(TEST_FLAGS) $(PKGS)

test-env:
	@scripts/test-env.sh

lint:
	@files=$$(gofmt -l .); \
	if [ -n "$$files" ]; then echo "gofmt: these files need formatting:"; echo "$$files"; exit 1; fi
	go vet $(PKGS)
	@staticcheck=$$(scripts/staticcheck.sh) && echo "staticcheck $(PKGS)" && $$staticcheck $(PKGS)

bench: test-env
	$(WITH_TEST_ENV) go run ./server/bench

clean:
	rm -rf bin/
