#!/usr/bin/env bash
#
# run-env.sh: make sure a local Docker engine answers before `make run` starts Berth.
set -euo pipefail

cd "$(dirname "${BASH_SOURCE[0]}")/.."
# shellcheck source=scripts/lib/engine.sh
. scripts/lib/engine.sh

ensure_engine
