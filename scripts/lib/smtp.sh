# shellcheck shell=bash
#
# smtp.sh: a real SMTP server on loopback (aiosmtpd, Debian's python3-aiosmtpd) that
# stores every message it receives in a Maildir, for the notification tests. Sourced
# by scripts/*.sh after scripts/lib/engine.sh (it uses log, die, apt_install, running and
# wait_listening).
#
# Provides:
#   ensure_smtp     install python3-aiosmtpd and start our server unless it already runs
#   smtp_test_env   print the BERTH_TEST_SMTP_* lines for .test-env
#   stop_smtp       stop the server these scripts started
#
# The server listens on $BERTH_SMTP_ADDR (127.0.0.1:2525), accepts any sender and
# recipient without authentication, and writes each message as one file under
# $BERTH_SMTP_DIR/new (a Maildir). Tests run in parallel and share it: each finds its
# own messages by a unique recipient or subject. A server is stopped only when its
# pid file and command line say it is ours.

BERTH_SMTP_ADDR=${BERTH_SMTP_ADDR:-127.0.0.1:2525}
BERTH_SMTP_DIR=${BERTH_SMTP_DIR:-/tmp/berth-smtp/maildir}
BERTH_SMTP_PID=${BERTH_SMTP_PID:-/tmp/berth-smtp/aiosmtpd.pid}
BERTH_SMTP_LOG=${BERTH_SMTP_LOG:-/tmp/berth-smtp/aiosmtpd.log}

# our_smtp_pid: print the pid of the aiosmtpd we started, if it is still running.
our_smtp_pid() {
	local pid
	[[ -f $BERTH_SMTP_PID ]] || return 1
	pid=$(<"$BERTH_SMTP_PID")
	[[ $pid =~ ^[0-9]+$ ]] || return 1
	running "$pid" || return 1
	tr '\0' '\n' <"/proc/$pid/cmdline" 2>/dev/null | grep -qxF "$BERTH_SMTP_DIR" || return 1
	printf '%s\n' "$pid"
}

ensure_smtp() {
	apt_install python3-aiosmtpd
	mkdir -p "$BERTH_SMTP_DIR"/{new,cur,tmp}
	if our_smtp_pid >/dev/null; then
		return 0
	fi
	log "starting aiosmtpd on $BERTH_SMTP_ADDR (Maildir $BERTH_SMTP_DIR)"
	# Debian's interpreter, which has the package (not one a version manager put first).
	setsid /usr/bin/python3 -m aiosmtpd -n -l "$BERTH_SMTP_ADDR" \
		-c aiosmtpd.handlers.Mailbox "$BERTH_SMTP_DIR" >>"$BERTH_SMTP_LOG" 2>&1 </dev/null &
	printf '%s\n' "$!" >"$BERTH_SMTP_PID"
	wait_listening "$BERTH_SMTP_ADDR" "$!" aiosmtpd "$BERTH_SMTP_LOG"
}

smtp_test_env() {
	cat <<ENV
BERTH_TEST_SMTP_ADDR=${BERTH_SMTP_ADDR}
BERTH_TEST_SMTP_DIR=${BERTH_SMTP_DIR}
ENV
}

stop_smtp() {
	local pid
	if pid=$(our_smtp_pid); then
		kill "$pid"
	fi
	rm -f "$BERTH_SMTP_PID"
}
