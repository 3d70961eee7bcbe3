# shellcheck shell=bash
#
# registry.sh: a real image registry (Debian's docker-registry, i.e. Docker
# Distribution 2.8) on loopback with htpasswd authentication, for Berth's pull and
# push tests and the pull benchmark. Sourced by scripts/test-env.sh after
# scripts/lib/engine.sh (it uses log, die, apt_install and running) and after
# ensure_engine and the test image berth-test/busybox:1.
#
# Provides:
#   ensure_registry     install docker-registry and apache2-utils, write our config and
#                       htpasswd file, start our registry unless it already runs with
#                       them, check the engine can log in, push and pull (after a
#                       start), and make sure the benchmark image is in the registry
#   registry_test_env   print the BERTH_TEST_REGISTRY* and BERTH_TEST_BENCH_IMAGE lines for .test-env
#   stop_registry       stop the registry these scripts started
#
# Our instance is not the system service (which the package installs but, with no
# init system or with policy-rc.d, does not start; its config listens on :5000 too):
# config, htpasswd file, storage and pid file live in $BERTH_REGISTRY_DIR, the log
# in $BERTH_REGISTRY_LOG, and it listens on http://$BERTH_REGISTRY_ADDR only. A
# registry is stopped or restarted only when its command line says it is ours
# ("docker-registry serve $BERTH_REGISTRY_DIR/config.yml").
#
# Plain HTTP works because the engine treats 127.0.0.0/8 as insecure registries by
# default (`docker info`: "Insecure Registries: 127.0.0.0/8"); the address must stay
# on loopback. Credentials: berth / berth-registry-pw (realm "berth"); anonymous
# requests get 401. Deleting is enabled: DELETE /v2/<name>/manifests/<digest>, with
# the digest from a HEAD of the tag (header Docker-Content-Digest; send Accept:
# application/vnd.docker.distribution.manifest.v2+json, or the registry answers
# with a converted schema 1 manifest and its digest). Tests push to repositories
# with unique names; deleted manifests leave their blobs until the next start of
# the registry, which runs `docker-registry garbage-collect --delete-untagged`.
#
# What the engine (20.10, API 1.41) answers, verified against this registry:
#   docker login, wrong password:   "login attempt to http://127.0.0.1:5000/v2/ failed with status: 401 Unauthorized"
#                                   (POST /auth: HTTP 500 with that message)
#   pull or push, wrong password:   "unauthorized: authentication required"
#                                   (POST /images/create: HTTP 500; POST /images/{name}/push: HTTP 200
#                                   and the error in the JSON stream's last line, errorDetail.message)
#   pull, no credentials at all:    Head "http://127.0.0.1:5000/v2/<name>/manifests/<tag>": no basic auth credentials
#   push, no X-Registry-Auth header: HTTP 400 "Bad parameters and missing X-Registry-Auth: EOF"
#   pull of a missing tag or repo:  "manifest for 127.0.0.1:5000/<name>:<tag> not found: manifest unknown:
#                                   manifest unknown" (POST /images/create: HTTP 404)
#   nothing listening (:5001):      Get "http://127.0.0.1:5001/v2/": dial tcp 127.0.0.1:5001: connect: connection refused
#
# The benchmark image, $BERTH_REGISTRY_ADDR/berth-test/bench-50mb:1: berth-test/busybox:1
# plus a layer with one 50 MiB file of random (incompressible) bytes, /blob. It is
# built once (docker build with the legacy builder, offline; docker import as a
# fallback), pushed, and then removed from the engine, so that pulling it really
# transfers the 50 MiB layer (the busybox layer below it is usually there already).
# It stays in the registry; it is rebuilt and pushed again only when its tag is gone.

BERTH_REGISTRY_DIR=${BERTH_REGISTRY_DIR:-/tmp/berth-registry}
BERTH_REGISTRY_LOG=${BERTH_REGISTRY_LOG:-/tmp/berth-registry.log}
BERTH_REGISTRY_ADDR=${BERTH_REGISTRY_ADDR:-127.0.0.1:5000}
# 1: run the engine check (login, push, pull, errors) even when the registry was already up.
BERTH_REGISTRY_CHECK=${BERTH_REGISTRY_CHECK:-0}

BERTH_REGISTRY_USER=berth
BERTH_REGISTRY_PASSWORD=berth-registry-pw
BERTH_REGISTRY_REALM=berth
BERTH_REGISTRY_BENCH_REPO=berth-test/bench-50mb
BERTH_REGISTRY_BENCH_TAG=1
BERTH_REGISTRY_BENCH_BYTES=52428800

berth_registry_templates=$(cd "$(dirname "${BASH_SOURCE[0]}")/../registry" && pwd)

# Set to 1 by registry_htpasswd and registry_config when they (re)write a file the
# registry reads at start.
berth_registry_changed=0

registry_conf() { printf '%s\n' "$BERTH_REGISTRY_DIR/config.yml"; }
registry_url() { printf 'http://%s\n' "$BERTH_REGISTRY_ADDR"; }
registry_bench_image() { printf '%s/%s:%s\n' "$BERTH_REGISTRY_ADDR" "$BERTH_REGISTRY_BENCH_REPO" "$BERTH_REGISTRY_BENCH_TAG"; }

# registry_status PATH [curl args...]: print the HTTP status of GET $(registry_url)PATH
# (000 when nothing answers).
registry_status() {
	local path=$1
	shift
	curl -s -o /dev/null -w '%{http_code}' --max-time 5 "$@" "$(registry_url)$path" 2>/dev/null || true
}

# registry_manifest_digest REPO REF: print the digest of manifest REF (a tag or a
# digest) in REPO; fail when there is none.
registry_manifest_digest() {
	local headers
	headers=$(curl -sS -I --max-time 10 -u "$BERTH_REGISTRY_USER:$BERTH_REGISTRY_PASSWORD" \
		-H 'Accept: application/vnd.docker.distribution.manifest.v2+json' \
		-H 'Accept: application/vnd.docker.distribution.manifest.list.v2+json' \
		-H 'Accept: application/vnd.oci.image.manifest.v1+json' \
		-H 'Accept: application/vnd.oci.image.index.v1+json' \
		"$(registry_url)/v2/$1/manifests/$2" 2>/dev/null) || return 1
	[[ $(head -n 1 <<<"$headers") == HTTP/*' 200'* ]] || return 1
	tr -d '\r' <<<"$headers" | sed -n 's/^[Dd]ocker-[Cc]ontent-[Dd]igest: *\(sha256:[0-9a-f]\{64\}\)$/\1/p' | grep .
}

# registry_delete_manifest REPO REF: delete the manifest REF (tag or digest) of REPO
# and with it every tag pointing at it.
registry_delete_manifest() {
	local digest code
	digest=$(registry_manifest_digest "$1" "$2") || die "no manifest $1:$2 in the registry to delete"
	code=$(registry_status "/v2/$1/manifests/$digest" -X DELETE -u "$BERTH_REGISTRY_USER:$BERTH_REGISTRY_PASSWORD")
	[[ $code == 202 ]] || die "DELETE /v2/$1/manifests/$digest answered HTTP $code, not 202 (see $BERTH_REGISTRY_LOG)"
}

# is_our_registry PID: true when PID runs and is a registry these scripts started.
is_our_registry() {
	local cmdline
	[[ $1 =~ ^[0-9]+$ ]] && running "$1" || return 1
	[[ $(cat "/proc/$1/comm" 2>/dev/null) == docker-registr* ]] || return 1 # comm is cut at 15 characters
	cmdline=$(tr '\0' ' ' <"/proc/$1/cmdline" 2>/dev/null) || return 1
	[[ $cmdline == *docker-registry" serve $(registry_conf) " ]]
}

# our_registry_pid: print the pid of the registry we started, if it is still running.
our_registry_pid() {
	our_daemon_pid "$BERTH_REGISTRY_DIR/registry.pid" "$BERTH_REGISTRY_ADDR" is_our_registry "$BERTH_REGISTRY_DIR/registry.fingerprint"
}

# registry_port_busy: true when something accepts connections on our address.
registry_port_busy() { port_busy "$BERTH_REGISTRY_ADDR"; }

# registry_htpasswd: write the htpasswd file unless the one there accepts our
# password (bcrypt salts differ on every run, so it is checked, not compared).
registry_htpasswd() {
	local file=$BERTH_REGISTRY_DIR/htpasswd tmp
	if [[ -s $file && $(wc -l <"$file") == 1 ]] &&
		htpasswd -vb "$file" "$BERTH_REGISTRY_USER" "$BERTH_REGISTRY_PASSWORD" >/dev/null 2>&1; then
		return 0
	fi
	tmp=$(mktemp "$file.XXXXXX")
	htpasswd -Bbn "$BERTH_REGISTRY_USER" "$BERTH_REGISTRY_PASSWORD" | sed '/^$/d' >"$tmp"
	chmod 0600 "$tmp"
	mv -f "$tmp" "$file"
	berth_registry_changed=1
}

# registry_config: write config.yml from scripts/registry/config.yml.in unless the one
# there says the same.
registry_config() {
	local conf tmp
	conf=$(registry_conf)
	tmp=$(mktemp "$conf.XXXXXX")
	sed -e "s|@STATE@|$BERTH_REGISTRY_DIR|g" -e "s|@ADDR@|$BERTH_REGISTRY_ADDR|g" \
		-e "s|@REALM@|$BERTH_REGISTRY_REALM|g" "$berth_registry_templates/config.yml.in" >"$tmp"
	chmod 0600 "$tmp"
	if [[ -f $conf ]] && cmp -s "$tmp" "$conf"; then
		rm -f "$tmp"
		return 0
	fi
	mv -f "$tmp" "$conf"
	berth_registry_changed=1
}

# registry_fingerprint: a digest of everything the running registry depends on.
registry_fingerprint() {
	{
		stat -c '%s %Y' "$(command -v docker-registry)"
		cat "$(registry_conf)" "$BERTH_REGISTRY_DIR/htpasswd"
	} | sha256sum | cut -d' ' -f1
}

stop_registry() {
	local pid deadline
	pid=$(our_registry_pid) || return 0
	log "stopping the registry (pid $pid)"
	kill -TERM "$pid" 2>/dev/null || true
	deadline=$((SECONDS + 15))
	while running "$pid"; do
		if ((SECONDS >= deadline)); then
			log "the registry did not stop within 15 s; killing it"
			kill -KILL "$pid" 2>/dev/null || true
			sleep 0.5
			break
		fi
		sleep 0.1
	done
	rm -f "$BERTH_REGISTRY_DIR/registry.pid" "$BERTH_REGISTRY_DIR/registry.fingerprint"
}

start_registry() {
	local pid deadline out
	if registry_port_busy; then
		die "$BERTH_REGISTRY_ADDR is in use by a process these scripts did not start (see: ss -ltnp 'sport = :${BERTH_REGISTRY_ADDR##*:}';
the system service of the docker-registry package listens on :5000 too: /etc/init.d/docker-registry stop).
Stop it, or set BERTH_REGISTRY_ADDR to another 127.0.0.1:PORT, then run again."
	fi
	# Blobs that manifests deleted by earlier test runs left behind (only while no
	# registry runs on this storage).
	if [[ -d $BERTH_REGISTRY_DIR/data/docker ]]; then
		out=$(docker-registry garbage-collect --delete-untagged "$(registry_conf)" 2>&1) ||
			log "docker-registry garbage-collect failed (ignored): $(tail -n 3 <<<"$out")"
	fi
	log "starting the registry on $(registry_url) (log: $BERTH_REGISTRY_LOG)"
	# setsid: a new session, so Ctrl-C in the terminal running `make test` does not reach it.
	setsid nohup docker-registry serve "$(registry_conf)" >"$BERTH_REGISTRY_LOG" 2>&1 </dev/null &
	pid=$!
	echo "$pid" >"$BERTH_REGISTRY_DIR/registry.pid"
	deadline=$((SECONDS + 30))
	until [[ $(registry_status /v2/) == 401 ]]; do
		if ! running "$pid" || ((SECONDS >= deadline)); then
			tail -n 20 "$BERTH_REGISTRY_LOG" >&2 || true
			kill -TERM "$pid" 2>/dev/null || true
			rm -f "$BERTH_REGISTRY_DIR/registry.pid"
			die "the registry did not come up on $(registry_url) within 30 s (see $BERTH_REGISTRY_LOG)"
		fi
		sleep 0.1
	done
	# setsid execs the registry in place; check rather than assume.
	[[ $(our_registry_pid) == "$pid" ]] ||
		die "the registry answers, but not from the one started as pid $pid (see $BERTH_REGISTRY_LOG)"
	registry_fingerprint >"$BERTH_REGISTRY_DIR/registry.fingerprint"
	log "the registry is up (pid $pid)"
}

# registry_docker DOCKER_CONFIG ARGS...: run the docker CLI with that client config.
registry_docker() {
	local config=$1
	shift
	DOCKER_CONFIG=$config docker "$@"
}

# registry_engine_check: log in, push, pull and the two expected failures, through
# the engine, with a throw-away client config (root's ~/.docker is not touched);
# then delete what was pushed. Its own repository, berth-test/env-check: tests may
# push berth-test/busybox:1 at the same time.
registry_engine_check() {
	local config=$BERTH_REGISTRY_DIR/docker-config image out
	image=$BERTH_REGISTRY_ADDR/berth-test/env-check:1
	rm -rf "$config"
	mkdir -m 0700 "$config"

	out=$(registry_docker "$config" login "$BERTH_REGISTRY_ADDR" -u "$BERTH_REGISTRY_USER" --password-stdin \
		<<<"wrong-$BERTH_REGISTRY_PASSWORD" 2>&1) &&
		die "docker login to $BERTH_REGISTRY_ADDR succeeds with a wrong password"
	[[ $out == *"401 Unauthorized"* ]] ||
		die "docker login to $BERTH_REGISTRY_ADDR with a wrong password fails, but not with 401: $out"
	out=$(registry_docker "$config" login "$BERTH_REGISTRY_ADDR" -u "$BERTH_REGISTRY_USER" --password-stdin \
		<<<"$BERTH_REGISTRY_PASSWORD" 2>&1) ||
		die "docker login to $BERTH_REGISTRY_ADDR fails (is 127.0.0.0/8 no longer an insecure registry of the engine?): $out"

	docker tag berth-test/busybox:1 "$image"
	out=$(registry_docker "$config" push "$image" 2>&1) || die "docker push $image fails: $out"
	docker rmi "$image" >/dev/null
	out=$(registry_docker "$config" pull "$image" 2>&1) || die "docker pull $image fails: $out"
	docker rmi "$image" >/dev/null
	out=$(registry_docker "$config" pull "$BERTH_REGISTRY_ADDR/berth-test/env-check:no-such-tag" 2>&1) &&
		die "docker pull of a missing tag from $BERTH_REGISTRY_ADDR succeeds"
	[[ $out == *"manifest unknown"* ]] || die "docker pull of a missing tag fails, but not with \"manifest unknown\": $out"

	registry_delete_manifest berth-test/env-check 1
	registry_status /v2/berth-test/env-check/manifests/1 -u "$BERTH_REGISTRY_USER:$BERTH_REGISTRY_PASSWORD" |
		grep -qx 404 || die "berth-test/env-check:1 is still in the registry after deleting its manifest"
	rm -rf "$config"
}

# registry_build_bench: build berth-test/bench-50mb:1 in the engine, without a registry.
registry_build_bench() {
	local dir=$BERTH_REGISTRY_DIR/bench-build local_image=$BERTH_REGISTRY_BENCH_REPO:$BERTH_REGISTRY_BENCH_TAG out
	rm -rf "$dir"
	mkdir -p "$dir/root"
	head -c "$BERTH_REGISTRY_BENCH_BYTES" /dev/urandom >"$dir/blob"
	printf '%s\n' 'FROM berth-test/busybox:1' 'COPY blob /blob' >"$dir/Dockerfile"
	# Two layers (busybox's and the blob's). The legacy builder uses the local base
	# image and needs no registry.
	if ! out=$(DOCKER_BUILDKIT=0 docker build -q -t "$local_image" "$dir" 2>&1); then
		log "docker build of $local_image failed (${out##*$'\n'}); importing it as one layer instead"
		# One layer: busybox's files and the blob.
		docker save berth-test/busybox:1 | tar -xO --wildcards '*/layer.tar' | tar -C "$dir/root" -x
		cp "$dir/blob" "$dir/root/blob"
		tar -C "$dir/root" --numeric-owner --owner=0 --group=0 -c . |
			docker import -c 'CMD ["/bin/sh"]' -c 'ENV PATH=/bin' - "$local_image" >/dev/null
	fi
	rm -rf "$dir"
}

# registry_push_bench: build the benchmark image, push it, and remove it from the engine.
registry_push_bench() {
	local config=$BERTH_REGISTRY_DIR/docker-config local_image=$BERTH_REGISTRY_BENCH_REPO:$BERTH_REGISTRY_BENCH_TAG image out
	image=$(registry_bench_image)
	log "building $local_image (50 MiB of random bytes) and pushing it to $image"
	registry_build_bench
	rm -rf "$config"
	mkdir -m 0700 "$config"
	out=$(registry_docker "$config" login "$BERTH_REGISTRY_ADDR" -u "$BERTH_REGISTRY_USER" --password-stdin \
		<<<"$BERTH_REGISTRY_PASSWORD" 2>&1) || die "docker login to $BERTH_REGISTRY_ADDR fails: $out"
	docker tag "$local_image" "$image"
	out=$(registry_docker "$config" push "$image" 2>&1) || die "docker push $image fails: $out"
	rm -rf "$config"
	# Gone from the engine, so that a pull transfers the 50 MiB layer.
	docker rmi "$image" "$local_image" >/dev/null
	registry_manifest_digest "$BERTH_REGISTRY_BENCH_REPO" "$BERTH_REGISTRY_BENCH_TAG" >/dev/null ||
		die "$image is not in the registry after pushing it"
}

ensure_registry() {
	local pid started=0 code
	if ! command -v docker-registry >/dev/null || ! command -v htpasswd >/dev/null; then
		apt_install docker-registry apache2-utils
	fi
	command -v curl >/dev/null || apt_install curl
	[[ ${BERTH_REGISTRY_ADDR%:*} == 127.* ]] ||
		die "BERTH_REGISTRY_ADDR=$BERTH_REGISTRY_ADDR: the registry must listen on 127.0.0.0/8 (plain HTTP is allowed only there)"
	mkdir -p "$BERTH_REGISTRY_DIR/data"
	chmod 0700 "$BERTH_REGISTRY_DIR"
	: >>"$BERTH_REGISTRY_LOG"

	berth_registry_changed=0
	registry_htpasswd
	registry_config
	if pid=$(our_registry_pid); then
		if ((berth_registry_changed)) ||
			[[ $(cat "$BERTH_REGISTRY_DIR/registry.fingerprint" 2>/dev/null) != "$(registry_fingerprint)" ]] ||
			[[ $(registry_status /v2/) != 401 ]]; then
			log "the registry (pid $pid) runs an older configuration or does not answer; restarting it"
			stop_registry
			start_registry
			started=1
		fi
	else
		# A pid file left by a registry that has since gone is stale.
		rm -f "$BERTH_REGISTRY_DIR/registry.pid" "$BERTH_REGISTRY_DIR/registry.fingerprint"
		start_registry
		started=1
	fi

	code=$(registry_status /v2/ -u "$BERTH_REGISTRY_USER:$BERTH_REGISTRY_PASSWORD")
	[[ $code == 200 ]] || die "the registry on $(registry_url) answers HTTP $code, not 200, to our credentials (see $BERTH_REGISTRY_LOG)"

	if ((started)) || [[ $BERTH_REGISTRY_CHECK == 1 || ! -f $BERTH_REGISTRY_DIR/engine-check.ok ]]; then
		log "checking docker login, push and pull against $BERTH_REGISTRY_ADDR"
		rm -f "$BERTH_REGISTRY_DIR/engine-check.ok"
		registry_engine_check
		: >"$BERTH_REGISTRY_DIR/engine-check.ok"
	fi

	if ! registry_manifest_digest "$BERTH_REGISTRY_BENCH_REPO" "$BERTH_REGISTRY_BENCH_TAG" >/dev/null; then
		registry_push_bench
	fi
}

registry_test_env() {
	cat <<ENV
BERTH_TEST_REGISTRY=${BERTH_REGISTRY_ADDR}
BERTH_TEST_REGISTRY_USER=${BERTH_REGISTRY_USER}
BERTH_TEST_REGISTRY_PASSWORD=${BERTH_REGISTRY_PASSWORD}
BERTH_TEST_BENCH_IMAGE=$(registry_bench_image)
ENV
}
