#!/usr/bin/env bash
#
# test-env.sh: install and start everything the tests need, then write .test-env.
#
# Idempotent and quick when everything is already there. What it sets up:
#   - a Docker engine on /var/run/docker.sock (dockerd from Debian's docker.io)
#   - a second, separate dockerd (own socket, data-root, exec-root, pidfile, bridge): the
#     remote host of the agent tests (scripts/lib/engine2.sh)
#   - the test image berth-test/busybox:1 (and :latest), imported from busybox-static, no registry
#   - PostgreSQL (Debian's packaged cluster) on 127.0.0.1 with a role berth/berth that may create databases
#   - OpenLDAP's slapd on ldap://127.0.0.1:3890 and ldaps://127.0.0.1:6360, seeded (scripts/lib/ldap.sh)
#   - Dex, an OpenID Connect provider, on http://127.0.0.1:5556/dex with users alice and bob (scripts/lib/oidc.sh)
#   - an image registry on http://127.0.0.1:5000 (user berth) holding the 50 MiB bench image (scripts/lib/registry.sh)
#   - git, whose git-http-backend serves the git-stack tests' repositories from temporary directories
#   - staticcheck, cached outside the repository
#   - Trivy and Grype with tiny offline vulnerability databases and two Debian-like test images (scripts/lib/scanners.sh)
#   - Chromium (Debian's package) for the web console's browser tests in web/e2e (scripts/lib/browser.sh)
#   - aiosmtpd on 127.0.0.1:2525, writing what it receives to a Maildir (scripts/lib/smtp.sh)
#   - restic, an sshd for SFTP repositories on 127.0.0.1:2222 and a restic REST server on
#     127.0.0.1:8008 (rclone serve restic) for the backup tests (scripts/lib/backup.sh)
# .test-env at the repository root holds KEY=VALUE lines for `make test` and `make bench`.
set -euo pipefail

cd "$(dirname "${BASH_SOURCE[0]}")/.."
# shellcheck source=scripts/lib/engine.sh
. scripts/lib/engine.sh
# shellcheck source=scripts/lib/engine2.sh
. scripts/lib/engine2.sh
# shellcheck source=scripts/lib/ldap.sh
. scripts/lib/ldap.sh
# shellcheck source=scripts/lib/oidc.sh
. scripts/lib/oidc.sh
# shellcheck source=scripts/lib/registry.sh
. scripts/lib/registry.sh
# shellcheck source=scripts/lib/scanners.sh
. scripts/lib/scanners.sh
# shellcheck source=scripts/lib/browser.sh
. scripts/lib/browser.sh
# shellcheck source=scripts/lib/smtp.sh
. scripts/lib/smtp.sh
# shellcheck source=scripts/lib/backup.sh
. scripts/lib/backup.sh

test_image=berth-test/busybox:1

# Temporary files and folders, removed on exit.
cleanup=()
trap 'rm -rf "${cleanup[@]}"' EXIT

# --- Docker engine ------------------------------------------------------------

ensure_engine

# --- test image ---------------------------------------------------------------

build_test_image() {
	local root applet
	apt_install busybox-static
	root=$(mktemp -d)
	cleanup+=("$root")
	chmod 0755 "$root" # the image's / (mktemp makes it 0700)
	mkdir -p "$root/bin" "$root/etc" "$root/root" "$root/tmp"
	chmod 1777 "$root/tmp"
	cp /bin/busybox "$root/bin/"
	for applet in sh echo cat sleep ls top ps true false env id hostname head tail wc grep sed printf yes dd; do
		ln -s busybox "$root/bin/$applet"
	done
	printf '%s\n' 'root:x:0:0:root:/root:/bin/sh' 'nobody:x:65534:65534:nobody:/nonexistent:/bin/false' >"$root/etc/passwd"
	printf '%s\n' 'root:x:0:' 'nobody:x:65534:' >"$root/etc/group"
	tar -C "$root" --numeric-owner --owner=0 --group=0 -c . |
		docker import -c 'CMD ["/bin/sh"]' -c 'ENV PATH=/bin' - "$test_image-import" >/dev/null
	# Stop signal SIGKILL: a test container's PID 1 (sleep, sh) ignores SIGTERM, so every stop, restart
	# and recreate waited out the engine's 10 s grace period. docker import and commit refuse a
	# STOPSIGNAL change; a commit takes it from the container's own configuration.
	local cid
	cid=$(docker create --stop-signal SIGKILL "$test_image-import")
	docker commit "$cid" "$test_image" >/dev/null
	docker rm "$cid" >/dev/null
	docker rmi "$test_image-import" >/dev/null
}

# Built when missing or made by an older recipe (without the stop signal).
if [[ $(docker image inspect -f '{{.Config.StopSignal}}' "$test_image" 2>/dev/null) != SIGKILL ]]; then
	log "building $test_image"
	build_test_image
fi
if [[ $(docker image inspect -f '{{.Id}}' berth-test/busybox:latest 2>/dev/null) != \
	"$(docker image inspect -f '{{.Id}}' "$test_image")" ]]; then
	docker tag "$test_image" berth-test/busybox:latest
fi

# --- engine health: can it start a container? -----------------------------------

# Seen on this kind of machine: after other experiments, `docker run` fails with
# "could not find bridge docker0" until dockerd is restarted.
run_check() { docker run --rm --label berth.test=1 "$test_image" true 2>&1; }

if ! out=$(run_check); then
	if engine_started_by_us; then
		log "docker run failed (${out}); restarting the dockerd we started"
		restart_engine
		out=$(run_check) || die "docker run still fails after restarting dockerd: ${out}"
	else
		die "docker run fails on an engine these scripts did not start: ${out}
Restart that dockerd (or stop it and let this script start one), then run again."
	fi
fi

# --- the second engine (the agents' remote host: scripts/lib/engine2.sh) -----------

ensure_engine2 "$test_image"

# --- PostgreSQL -------------------------------------------------------------------

apt_install postgresql

# The packaged cluster "main" (initdb refuses to run as root, so use it).
read -r pg_version pg_port pg_status < <(pg_lsclusters --no-header | awk '$2 == "main" {print $1, $3, $4; exit}') || true
if [[ -z ${pg_version:-} ]]; then
	pg_version=$(ls /usr/lib/postgresql | sort -V | tail -n 1)
	log "creating PostgreSQL cluster ${pg_version}/main"
	pg_createcluster "$pg_version" main >/dev/null
	read -r pg_version pg_port pg_status < <(pg_lsclusters --no-header | awk '$2 == "main" {print $1, $3, $4; exit}')
fi
if [[ $pg_status != online* ]]; then
	log "starting PostgreSQL ${pg_version}/main"
	pg_ctlcluster "$pg_version" main start
fi

deadline=$((SECONDS + 30))
until pg_isready -q -h 127.0.0.1 -p "$pg_port"; do
	((SECONDS < deadline)) || die "PostgreSQL ${pg_version}/main is not ready on 127.0.0.1:${pg_port} after 30 s"
	sleep 0.25
done

# The role the tests log in with; each test creates its own databases.
(cd / && su postgres -c "psql -qX -v ON_ERROR_STOP=1 -p $pg_port -d postgres") <<'SQL'
DO $$
BEGIN
	IF NOT EXISTS (SELECT FROM pg_roles WHERE rolname = 'berth') THEN
		CREATE ROLE berth LOGIN PASSWORD 'berth' CREATEDB;
	END IF;
END
$$;
-- DROP DATABASE ... WITH (FORCE) must be able to end an autovacuum worker
-- attached to a test database (SQLSTATE 42501 otherwise).
GRANT pg_signal_backend TO berth;
SQL

postgres_url="postgres://berth:berth@127.0.0.1:${pg_port}/postgres?sslmode=disable"
PGCONNECT_TIMEOUT=5 psql -qXtA -d "$postgres_url" -c 'SELECT 1' >/dev/null ||
	die "cannot log in to PostgreSQL as berth on 127.0.0.1:${pg_port}"

# --- OpenLDAP (users, groups and passwords: scripts/lib/ldap.sh) -------------------

ensure_ldap

# --- Dex (OpenID Connect provider: scripts/lib/oidc.sh) ----------------------------

ensure_oidc

# --- image registry (pull/push tests, pull benchmark: scripts/lib/registry.sh) ------

ensure_registry

# --- vulnerability scanners (scripts/lib/scanners.sh) ------------------------------

ensure_scanners

# --- Chromium (the console's browser tests: scripts/lib/browser.sh) ------------------

ensure_browser

# --- SMTP server (notification tests: scripts/lib/smtp.sh) ---------------------------

ensure_smtp

# --- restic and backup repositories (scripts/lib/backup.sh) ---------------------------

ensure_backup

# --- git (repositories the git-stack tests serve over HTTP with git-http-backend) ---

apt_install git
git_http_backend=$(git --exec-path)/git-http-backend
[[ -x $git_http_backend ]] || die "git-http-backend not found at $git_http_backend"

# --- staticcheck ------------------------------------------------------------------

staticcheck=$(scripts/staticcheck.sh)

# --- .test-env --------------------------------------------------------------------

tmp=$(mktemp .test-env.XXXXXX)
cleanup+=("$tmp")
cat >"$tmp" <<ENV
BERTH_TEST_POSTGRES_URL=${postgres_url}
BERTH_TEST_IMAGE=${test_image}
STATICCHECK=${staticcheck}
BERTH_TEST_GIT=$(command -v git)
BERTH_TEST_GIT_HTTP_BACKEND=${git_http_backend}
CI=true
ENV
ldap_test_env >>"$tmp"
oidc_test_env >>"$tmp"
registry_test_env >>"$tmp"
scanners_test_env >>"$tmp"
browser_test_env >>"$tmp"
engine2_test_env >>"$tmp"
smtp_test_env >>"$tmp"
backup_test_env >>"$tmp"
chmod 0644 "$tmp"
mv -f "$tmp" .test-env
log "test environment ready (.test-env)"
