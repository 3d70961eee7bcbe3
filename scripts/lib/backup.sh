# shellcheck shell=bash
#
# backup.sh: restic and the repositories the backup tests write to, on loopback.
# Sourced by scripts/test-env.sh after scripts/lib/engine.sh (it uses log, die,
# apt_install, running and wait_listening).
#
# Provides:
#   ensure_backup     install restic, openssh-server and rclone (Debian's packages), build
#                     versitygw once, start our sshd (SFTP), rclone REST server and versitygw
#                     (S3) unless they already run
#   backup_test_env   print the BERTH_TEST_RESTIC, BERTH_TEST_SFTP_*, BERTH_TEST_REST_* and
#                     BERTH_TEST_S3_* lines
#   stop_backup       stop the servers these scripts started
#
# SFTP: an sshd of our own on $BERTH_SFTP_ADDR (127.0.0.1:2222), with its own config and
# host key in $BERTH_BACKUP_DIR/sftp, the user berthsftp (created without a password: key
# only), whose authorized key is $BERTH_BACKUP_DIR/sftp/id_ed25519.pub. Tests make their
# repositories under /home/berthsftp with unique names and remove them.
#
# REST: `rclone serve restic` on $BERTH_REST_ADDR (127.0.0.1:8008) over
# $BERTH_BACKUP_DIR/rest, with basic authentication (htpasswd, apr1) for berth /
# berth-rest-pw. Each repository is a path under it (rest:http://…/NAME/).
#
# S3: versitygw (github.com/versity/versitygw, Apache-2.0) $BERTH_S3_VERSION, built once from
# the Go module proxy and cached outside the repository keyed by its version and Go's
# (like scripts/staticcheck.sh), on $BERTH_S3_ADDR (127.0.0.1:7070) with a posix backend in
# $BERTH_BACKUP_DIR/s3/objects and one root access key. Its metadata go to sidecar files in
# $BERTH_BACKUP_DIR/s3/meta, not to extended attributes, which a /tmp on tmpfs or overlayfs
# may not take (versitygw refuses to start then). Repositories are prefixes of the bucket
# $BERTH_S3_BUCKET, which restic creates on the first init.
#
# Full disk: a 4 MiB tmpfs on $BERTH_BACKUP_DIR/full, where a test's local repository fills up.
#
# A server is stopped only when its pid file and command line say it is ours.

BERTH_BACKUP_DIR=${BERTH_BACKUP_DIR:-/tmp/berth-backup}
BERTH_SFTP_ADDR=${BERTH_SFTP_ADDR:-127.0.0.1:2222}
BERTH_SFTP_USER=${BERTH_SFTP_USER:-berthsftp}
BERTH_REST_ADDR=${BERTH_REST_ADDR:-127.0.0.1:8008}
BERTH_REST_USER=${BERTH_REST_USER:-berth}
BERTH_REST_PASS=${BERTH_REST_PASS:-berth-rest-pw}
BERTH_S3_VERSION=${BERTH_S3_VERSION:-v1.8.0}
BERTH_S3_ADDR=${BERTH_S3_ADDR:-127.0.0.1:7070}
BERTH_S3_ACCESS_KEY=${BERTH_S3_ACCESS_KEY:-berthtest}
BERTH_S3_SECRET_KEY=${BERTH_S3_SECRET_KEY:-berth-s3-secret-key}
BERTH_S3_BUCKET=${BERTH_S3_BUCKET:-berth-test}

# our_pid PIDFILE WORD: print the pid in PIDFILE if it runs and its command line holds WORD
# (sshd rewrites its command line into one string: "sshd: /usr/sbin/sshd -f CONFIG … [listener]").
our_pid() {
	local pid
	[[ -f $1 ]] || return 1
	pid=$(<"$1")
	[[ $pid =~ ^[0-9]+$ ]] || return 1
	running "$pid" || return 1
	tr '\0' '\n' <"/proc/$pid/cmdline" 2>/dev/null | grep -qF -- "$2" || return 1
	printf '%s\n' "$pid"
}

ensure_sftp() {
	local dir=$BERTH_BACKUP_DIR/sftp home=/home/$BERTH_SFTP_USER
	mkdir -p "$dir" /run/sshd
	if ! id "$BERTH_SFTP_USER" >/dev/null 2>&1; then
		log "creating user $BERTH_SFTP_USER (SFTP tests, key only)"
		useradd -m -d "$home" -s /bin/sh "$BERTH_SFTP_USER"
	fi
	# No password at all ("*"): useradd's "!" marks the account locked, which sshd
	# without PAM refuses even for keys.
	[[ $(getent shadow "$BERTH_SFTP_USER" | cut -d: -f2) == '*' ]] || usermod -p '*' "$BERTH_SFTP_USER"
	[[ -f $dir/host_ed25519 ]] || ssh-keygen -q -t ed25519 -N '' -f "$dir/host_ed25519"
	[[ -f $dir/id_ed25519 ]] || ssh-keygen -q -t ed25519 -N '' -C berth-test -f "$dir/id_ed25519"
	cp "$dir/id_ed25519.pub" "$dir/authorized_keys"
	chmod 0644 "$dir/authorized_keys"
	printf '[%s]:%s %s\n' "${BERTH_SFTP_ADDR%:*}" "${BERTH_SFTP_ADDR##*:}" "$(cut -d' ' -f1-2 "$dir/host_ed25519.pub")" >"$dir/known_hosts"
	cat >"$dir/sshd_config" <<CONF
ListenAddress $BERTH_SFTP_ADDR
HostKey $dir/host_ed25519
PidFile $dir/sshd.pid
AuthorizedKeysFile $dir/authorized_keys
StrictModes no
PasswordAuthentication no
KbdInteractiveAuthentication no
PermitRootLogin no
AllowUsers $BERTH_SFTP_USER
UsePAM no
Subsystem sftp internal-sftp
CONF
	if our_pid "$dir/sshd.pid" "$dir/sshd_config" >/dev/null; then
		return 0
	fi
	log "starting sshd on $BERTH_SFTP_ADDR (SFTP, user $BERTH_SFTP_USER)"
	# -D: sshd stays in the foreground, so $! is its pid from the start (a daemonizing sshd
	# writes its pid file only some time after its parent returns).
	setsid /usr/sbin/sshd -D -f "$dir/sshd_config" -E "$dir/sshd.log" </dev/null >/dev/null 2>&1 &
	printf '%s\n' "$!" >"$dir/sshd.pid"
	wait_listening "$BERTH_SFTP_ADDR" "$!" sshd "$dir/sshd.log"
}

ensure_rest() {
	local dir=$BERTH_BACKUP_DIR/rest
	mkdir -p "$dir/repos"
	if [[ ! -f $dir/htpasswd ]] || ! grep -q "^$BERTH_REST_USER:" "$dir/htpasswd"; then
		printf '%s:%s\n' "$BERTH_REST_USER" "$(openssl passwd -apr1 "$BERTH_REST_PASS")" >"$dir/htpasswd"
	fi
	if our_pid "$dir/rclone.pid" "$dir/repos" >/dev/null; then
		return 0
	fi
	log "starting rclone serve restic on $BERTH_REST_ADDR"
	setsid rclone serve restic --addr "$BERTH_REST_ADDR" --htpasswd "$dir/htpasswd" "$dir/repos" \
		>>"$dir/rclone.log" 2>&1 </dev/null &
	printf '%s\n' "$!" >"$dir/rclone.pid"
	wait_listening "$BERTH_REST_ADDR" "$!" "rclone serve restic" "$dir/rclone.log"
}

# versitygw_bin: build versitygw once (cached by its version and Go's) and print its path.
versitygw_bin() {
	local go_version cache_dir bin tmp
	go_version=$(go env GOVERSION)
	cache_dir=${HOME}/.cache/berth/bin
	bin=${cache_dir}/versitygw-${BERTH_S3_VERSION}-${go_version}
	if [[ ! -x $bin ]]; then
		mkdir -p "$cache_dir"
		tmp=$(mktemp -d "${cache_dir}/.versitygw.XXXXXX")
		log "building versitygw ${BERTH_S3_VERSION} with ${go_version} (once)"
		if ! (cd "$tmp" && GOBIN=$tmp GOFLAGS= CGO_ENABLED=0 \
			go install "github.com/versity/versitygw/cmd/versitygw@${BERTH_S3_VERSION}") >&2; then
			rm -rf "$tmp"
			die "building versitygw ${BERTH_S3_VERSION} failed"
		fi
		mv -f "$tmp/versitygw" "$bin"
		rm -rf "$tmp"
	fi
	printf '%s\n' "$bin"
}

ensure_s3() {
	local dir=$BERTH_BACKUP_DIR/s3 bin pid
	bin=$(versitygw_bin)
	mkdir -p "$dir/objects" "$dir/meta"
	if our_pid "$dir/versitygw.pid" "$dir/meta" >/dev/null; then
		return 0
	fi
	# A versitygw of ours from before the sidecar (extended attributes on $dir/data) holds the port.
	if pid=$(our_pid "$dir/versitygw.pid" "$dir/data"); then
		kill "$pid"
		for _ in $(seq 50); do running "$pid" || break; sleep 0.1; done
	fi
	rm -rf "$dir/data"
	log "starting versitygw on $BERTH_S3_ADDR (S3, posix backend $dir/objects, sidecar metadata)"
	# The root key through the environment, not the command line.
	ROOT_ACCESS_KEY_ID=$BERTH_S3_ACCESS_KEY ROOT_SECRET_ACCESS_KEY=$BERTH_S3_SECRET_KEY \
		setsid "$bin" --port "$BERTH_S3_ADDR" posix --sidecar "$dir/meta" "$dir/objects" \
		>>"$dir/versitygw.log" 2>&1 </dev/null &
	printf '%s\n' "$!" >"$dir/versitygw.pid"
	wait_listening "$BERTH_S3_ADDR" "$!" versitygw "$dir/versitygw.log"
}

# ensure_full_dir: a 4 MiB tmpfs for the full-disk tests (a local repository that fills up).
ensure_full_dir() {
	local dir=$BERTH_BACKUP_DIR/full
	mkdir -p "$dir"
	mountpoint -q "$dir" || mount -t tmpfs -o size=4m,mode=0755 berth-backup-full "$dir" ||
		die "cannot mount a tmpfs on $dir (the full-disk backup tests need one)"
}

ensure_backup() {
	apt_install restic openssh-server openssh-client rclone openssl
	ensure_sftp
	ensure_rest
	ensure_s3
	ensure_full_dir
}

backup_test_env() {
	local dir=$BERTH_BACKUP_DIR
	cat <<ENV
BERTH_TEST_RESTIC=$(command -v restic)
BERTH_TEST_SFTP_HOST=${BERTH_SFTP_ADDR%:*}
BERTH_TEST_SFTP_PORT=${BERTH_SFTP_ADDR##*:}
BERTH_TEST_SFTP_USER=${BERTH_SFTP_USER}
BERTH_TEST_SFTP_DIR=/home/${BERTH_SFTP_USER}
BERTH_TEST_SFTP_KEY=${dir}/sftp/id_ed25519
BERTH_TEST_SFTP_KNOWN_HOSTS=${dir}/sftp/known_hosts
BERTH_TEST_REST_URL=http://${BERTH_REST_USER}:${BERTH_REST_PASS}@${BERTH_REST_ADDR}
BERTH_TEST_REST_DIR=${dir}/rest/repos
BERTH_TEST_S3_URL=http://${BERTH_S3_ADDR}
BERTH_TEST_S3_BUCKET=${BERTH_S3_BUCKET}
BERTH_TEST_S3_ACCESS_KEY=${BERTH_S3_ACCESS_KEY}
BERTH_TEST_S3_SECRET_KEY=${BERTH_S3_SECRET_KEY}
BERTH_TEST_S3_DIR=${dir}/s3/objects
BERTH_TEST_S3_META_DIR=${dir}/s3/meta
BERTH_TEST_BACKUP_FULL_DIR=${dir}/full
ENV
}

stop_backup() {
	local pid
	if pid=$(our_pid "$BERTH_BACKUP_DIR/sftp/sshd.pid" "$BERTH_BACKUP_DIR/sftp/sshd_config"); then
		kill "$pid"
	fi
	if pid=$(our_pid "$BERTH_BACKUP_DIR/rest/rclone.pid" "$BERTH_BACKUP_DIR/rest/repos"); then
		kill "$pid"
	fi
	if pid=$(our_pid "$BERTH_BACKUP_DIR/s3/versitygw.pid" "$BERTH_BACKUP_DIR/s3/meta"); then
		kill "$pid"
	fi
}
