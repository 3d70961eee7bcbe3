# shellcheck shell=bash
#
# engine2.sh: a second, separate Docker engine on this machine — the "remote
# host" of the agent tests (the agents manage it; Berth's local environment is
# the first engine). Sourced by scripts/test-env.sh after scripts/lib/engine.sh
# (log, die, running, wait helpers) and after the test image is built.
#
# Provides:
#   ensure_engine2     start our second dockerd unless it answers, load the test image into it
#   engine2_test_env   print the BERTH_TEST_ENGINE2_* lines for .test-env
#
# Its own socket, data-root, exec-root and pidfile live in $BERTH_ENGINE2_DIR, its
# log in $BERTH_ENGINE2_LOG. TRAP (seen here): a second dockerd started with
# --bridge=none deletes the first engine's docker0; so it gets its own bridge,
# br-berth2 (172.31.250.1/24), and leaves iptables alone (--iptables=false
# --ip-masq=false: its containers reach no outside network, which the tests do not
# need). It stays in the host's network namespace: the test registry listens on
# 127.0.0.1:5000 only, and an engine trusts a plain-HTTP registry on loopback only,
# so an engine in its own namespace could not pull from it.

BERTH_ENGINE2_DIR=${BERTH_ENGINE2_DIR:-/tmp/berth-dockerd2}
BERTH_ENGINE2_LOG=${BERTH_ENGINE2_LOG:-/tmp/berth-dockerd2.log}
BERTH_ENGINE2_BRIDGE=${BERTH_ENGINE2_BRIDGE:-br-berth2}
BERTH_ENGINE2_ADDR=${BERTH_ENGINE2_ADDR:-172.31.250.1/24}

engine2_socket() { printf '%s\n' "$BERTH_ENGINE2_DIR/docker.sock"; }

# engine2_ok: true when the second engine answers _ping with OK.
engine2_ok() {
	[[ $(curl -s --max-time 3 --unix-socket "$(engine2_socket)" http://localhost/_ping 2>/dev/null) == OK ]]
}

# docker2 ARGS...: the docker CLI against the second engine.
docker2() { DOCKER_HOST="unix://$(engine2_socket)" docker "$@"; }

# our_dockerd2_pid: the pid of our second dockerd, if it runs.
our_dockerd2_pid() {
	local pid
	[[ -f $BERTH_ENGINE2_DIR/docker.pid ]] || return 1
	pid=$(<"$BERTH_ENGINE2_DIR/docker.pid")
	[[ $pid =~ ^[0-9]+$ ]] && [[ $(cat "/proc/$pid/comm" 2>/dev/null) == dockerd ]] || return 1
	printf '%s\n' "$pid"
}

start_dockerd2() {
	local pid deadline
	mkdir -p "$BERTH_ENGINE2_DIR/data" "$BERTH_ENGINE2_DIR/exec"
	if ! ip link show "$BERTH_ENGINE2_BRIDGE" >/dev/null 2>&1; then
		ip link add "$BERTH_ENGINE2_BRIDGE" type bridge
		ip addr add "$BERTH_ENGINE2_ADDR" dev "$BERTH_ENGINE2_BRIDGE"
	fi
	ip link set "$BERTH_ENGINE2_BRIDGE" up
	log "starting the second dockerd (socket $(engine2_socket), log $BERTH_ENGINE2_LOG)"
	setsid nohup dockerd --data-root "$BERTH_ENGINE2_DIR/data" --exec-root "$BERTH_ENGINE2_DIR/exec" \
		--pidfile "$BERTH_ENGINE2_DIR/docker.pid" -H "unix://$(engine2_socket)" \
		--bridge="$BERTH_ENGINE2_BRIDGE" --iptables=false --ip-masq=false \
		>"$BERTH_ENGINE2_LOG" 2>&1 </dev/null &
	pid=$!
	deadline=$((SECONDS + 60))
	until engine2_ok; do
		if ((SECONDS >= deadline)) || ! running "$pid"; then
			tail -n 30 "$BERTH_ENGINE2_LOG" >&2 || true
			die "the second dockerd did not come up (see $BERTH_ENGINE2_LOG)"
		fi
		sleep 0.25
	done
	log "second dockerd is up (pid $pid)"
}

stop_dockerd2() {
	local pid deadline
	pid=$(our_dockerd2_pid) || return 0
	kill -TERM "$pid" 2>/dev/null || true
	deadline=$((SECONDS + 60))
	while running "$pid"; do
		((SECONDS < deadline)) || { kill -KILL "$pid" 2>/dev/null || true; sleep 1; break; }
		sleep 0.25
	done
}

ensure_engine2() {
	local image=$1 out
	if ! engine2_ok; then
		[[ -S $(engine2_socket) ]] && ! our_dockerd2_pid >/dev/null && rm -f "$(engine2_socket)"
		start_dockerd2
	fi
	# The same image as the first engine's (by id: the test image is rebuilt when its recipe changes).
	if [[ $(docker2 image inspect -f '{{.Id}}' "$image" 2>/dev/null) != "$(docker image inspect -f '{{.Id}}' "$image")" ]]; then
		log "loading $image into the second engine"
		docker save "$image" | docker2 load >/dev/null
	fi
	if ! out=$(docker2 run --rm --label berth.test=1 "$image" true 2>&1); then
		our_dockerd2_pid >/dev/null || die "the second engine cannot run a container, and it is not ours: ${out}"
		log "the second engine cannot run a container (${out}); restarting it"
		stop_dockerd2
		start_dockerd2
		out=$(docker2 run --rm --label berth.test=1 "$image" true 2>&1) || die "the second engine still cannot run a container: ${out}"
	fi
	# Its start must not have broken the first engine (the --bridge=none trap).
	ip link show docker0 >/dev/null 2>&1 || die "docker0 is gone after starting the second engine"
}

engine2_test_env() {
	printf 'BERTH_TEST_ENGINE2_SOCKET=%s\n' "$(engine2_socket)"
}
