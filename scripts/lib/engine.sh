# shellcheck shell=bash
#
# engine.sh: helpers sourced by scripts/*.sh to install Debian packages and to
# make sure a local Docker engine answers on /var/run/docker.sock.
#
# Provides:
#   log MSG...            print a progress line on stderr
#   die MSG...            print an error on stderr and exit 1
#   apt_install PKG...    install the packages that are missing (apt-get update at most once per run)
#   ensure_engine         start dockerd (installing docker.io if needed) unless the engine already answers
#   engine_started_by_us  true when the running dockerd is one these scripts started
#   restart_engine        restart the dockerd these scripts started
#
# Our dockerd's pid is kept in $BERTH_DOCKERD_MARKER so that a daemon someone
# else started is never restarted.

BERTH_DOCKER_SOCKET=${BERTH_DOCKER_SOCKET:-/var/run/docker.sock}
BERTH_DOCKERD_LOG=${BERTH_DOCKERD_LOG:-/tmp/berth-dockerd.log}
BERTH_DOCKERD_MARKER=${BERTH_DOCKERD_MARKER:-/tmp/berth-dockerd.started}
BERTH_APT_UPDATED=${BERTH_APT_UPDATED:-0}

log() { printf '==> %s\n' "$*" >&2; }
die() { printf 'error: %s\n' "$*" >&2; exit 1; }

# pkg_installed PKG: true when dpkg reports PKG as installed (not just known or removed).
pkg_installed() {
	[[ $(dpkg-query -W -f='${db:Status-Status}' "$1" 2>/dev/null) == installed ]]
}

apt_install() {
	local pkg missing=()
	for pkg in "$@"; do
		pkg_installed "$pkg" || missing+=("$pkg")
	done
	((${#missing[@]} > 0)) || return 0

	if [[ $BERTH_APT_UPDATED != 1 ]]; then
		log "apt-get update"
		apt-get -o DPkg::Lock::Timeout=120 update -qq
		BERTH_APT_UPDATED=1
	fi
	log "apt-get install ${missing[*]}"
	DEBIAN_FRONTEND=noninteractive apt-get -o DPkg::Lock::Timeout=120 install -y -qq "${missing[@]}" >/dev/null
}

# engine_ok: true when the engine answers _ping with OK.
engine_ok() {
	[[ $(curl -s --max-time 3 --unix-socket "$BERTH_DOCKER_SOCKET" http://localhost/_ping 2>/dev/null) == OK ]]
}

# wait_engine SECONDS [PID]: wait until _ping answers OK and `docker info` works;
# give up early when the dockerd PID has exited.
wait_engine() {
	local deadline=$((SECONDS + $1)) pid=${2:-}
	until engine_ok; do
		((SECONDS < deadline)) || return 1
		[[ -z $pid ]] || running "$pid" || return 1
		sleep 0.25
	done
	until docker info >/dev/null 2>&1; do
		((SECONDS < deadline)) || return 1
		sleep 0.25
	done
}

# our_dockerd_pid: print the pid of the dockerd we started, if it is still running.
our_dockerd_pid() {
	local pid
	[[ -f $BERTH_DOCKERD_MARKER ]] || return 1
	pid=$(<"$BERTH_DOCKERD_MARKER")
	[[ $pid =~ ^[0-9]+$ ]] || return 1
	[[ $(cat "/proc/$pid/comm" 2>/dev/null) == dockerd ]] || return 1
	printf '%s\n' "$pid"
}

engine_started_by_us() { our_dockerd_pid >/dev/null; }

# port_busy HOST:PORT: true when something accepts TCP connections there.
port_busy() {
	# shellcheck disable=SC2016 # expanded by the inner bash
	timeout 3 bash -c 'exec 3<>"/dev/tcp/${1%:*}/${1##*:}"' _ "$1" 2>/dev/null
}

# our_daemon_pid PIDFILE ADDR CHECK [FINGERPRINT]: print the pid of a daemon these
# scripts started: the one in PIDFILE, else (pid file lost) the listener on ADDR's port
# when CHECK (a function given a pid) says it is ours; then PIDFILE is rewritten and
# FINGERPRINT removed, since the daemon's configuration is unknown (it gets restarted).
our_daemon_pid() {
	local pidfile=$1 addr=$2 check=$3 fingerprint=${4:-} pid=
	[[ -f $pidfile ]] && pid=$(<"$pidfile")
	if ! "$check" "$pid"; then
		command -v ss >/dev/null || return 1
		pid=$(ss -Hltnp "sport = :${addr##*:}" 2>/dev/null | grep -o 'pid=[0-9]*' | head -n 1 | cut -d= -f2)
		"$check" "$pid" || return 1
		echo "$pid" >"$pidfile"
		[[ -z $fingerprint ]] || rm -f "$fingerprint"
	fi
	printf '%s\n' "$pid"
}

# wait_listening ADDR PID WHAT LOG: wait until ADDR (host:port) accepts connections, 30 s
# at most, while PID (the process just started, e.g. $! of `setsid server &`) runs. Only
# whether PID runs is checked here, not its command line: until the child has exec'd the
# server, /proc/PID/cmdline is still this script's, and a loaded machine can be that slow.
# If the server does not come up, the end of LOG (where it says why) is printed.
wait_listening() {
	local host=${1%:*} port=${1##*:} pid=$2 i
	for i in $(seq 300); do
		if (exec 3<>"/dev/tcp/$host/$port") 2>/dev/null; then
			return 0
		fi
		running "$pid" || break
		sleep 0.1
	done
	if [[ -f $4 ]]; then
		printf '%s\n' "--- the last lines of $4:" >&2
		tail -n 20 "$4" >&2
	fi
	if running "$pid"; then
		die "$3 (pid $pid) does not listen on $1 after 30 s (see $4)"
	fi
	die "$3 exited before listening on $1 (see $4)"
}

# running PID: true while PID exists and is not a zombie.
running() {
	local state
	[[ -r /proc/$1/stat ]] || return 1
	state=$(awk '{print $3}' "/proc/$1/stat" 2>/dev/null) || return 1
	[[ -n $state && $state != Z ]]
}

start_dockerd() {
	local pid
	log "starting dockerd (log: $BERTH_DOCKERD_LOG)"
	# setsid: a new session, so Ctrl-C in the terminal running `make run` or
	# `make test` does not reach the daemon.
	setsid nohup dockerd >"$BERTH_DOCKERD_LOG" 2>&1 </dev/null &
	pid=$!
	echo "$pid" >"$BERTH_DOCKERD_MARKER"
	if ! wait_engine 60 "$pid"; then
		tail -n 30 "$BERTH_DOCKERD_LOG" >&2 || true
		die "dockerd did not come up (see $BERTH_DOCKERD_LOG)"
	fi
	# setsid execs dockerd in place (it forks only when it leads a process group,
	# which a background job of a script does not); check rather than assume.
	if [[ $(cat "/proc/$pid/comm" 2>/dev/null) != dockerd ]]; then
		rm -f "$BERTH_DOCKERD_MARKER"
		die "the engine answers, but not from the dockerd started as pid $pid (see $BERTH_DOCKERD_LOG)"
	fi
	log "dockerd is up (pid $pid)"
}

ensure_engine() {
	command -v curl >/dev/null || apt_install curl
	if engine_ok; then
		# A marker left by a daemon that has since gone is stale.
		engine_started_by_us || rm -f "$BERTH_DOCKERD_MARKER"
		return 0
	fi
	if ! command -v dockerd >/dev/null || ! command -v docker >/dev/null; then
		apt_install docker.io
	fi
	start_dockerd
}

restart_engine() {
	local pid deadline
	pid=$(our_dockerd_pid) || die "refusing to restart a dockerd these scripts did not start"
	log "restarting dockerd (pid $pid)"
	kill -TERM "$pid" 2>/dev/null || true
	deadline=$((SECONDS + 60))
	while running "$pid"; do
		if ((SECONDS >= deadline)); then
			log "dockerd did not stop within 60 s; killing it"
			kill -KILL "$pid" 2>/dev/null || true
			sleep 1
			break
		fi
		sleep 0.25
	done
	rm -f "$BERTH_DOCKERD_MARKER"
	start_dockerd
}
