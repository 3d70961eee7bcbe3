# shellcheck shell=bash
#
# oidc.sh: helpers sourced by scripts/test-env.sh to run Dex, a real OpenID
# Connect provider, on loopback for Berth's OIDC sign-in tests.
# Source scripts/lib/engine.sh first (log, die, apt_install, running).
#
# Provides:
#   ensure_oidc   build Dex if needed (scripts/oidc/build-dex.sh), render its
#                 configuration, start it unless ours already runs with that
#                 configuration, and wait until its discovery document answers
#   oidc_test_env print the BERTH_TEST_OIDC_* lines for .test-env
#
# Dex keeps everything in memory; its state directory holds the rendered
# configuration, the pid of the Dex we started and the fingerprint of the
# configuration it runs with. A Dex someone else started is never stopped.
#
# Signing in (authorization code + PKCE; Dex sets no cookies in this flow):
#   GET  {issuer}/auth?response_type=code&client_id=…&redirect_uri=…&scope=openid profile email groups
#        &state=…&nonce=…&code_challenge=…&code_challenge_method=S256
#        → 302 /dex/auth/local?<same query>  → 302 /dex/auth/local/login?back=&state=<request id>
#   GET  that page: <form method="post" action="/dex/auth/local/login?back=&state=<request id>">,
#        fields `login` (the EMAIL address, e.g. alice@berth.test; the username does not work)
#        and `password`
#   POST it → 303 /dex/auth?hmac=…&req=<request id> → 303 redirect_uri?code=…&state=…
#        (bad credentials: 401 with the form again, "Invalid Email Address and password.")
#   POST {issuer}/token (client_secret_basic or client_secret_post) grant_type=authorization_code,
#        code, redirect_uri, code_verifier → {access_token, token_type, expires_in, id_token}
# ID token claims: iss sub aud exp iat jti nonce auth_time at_hash c_hash, plus email and
# email_verified (scope email), name and preferred_username (scope profile) and groups
# (scope groups): alice is in berth-admins and ops, bob in ops. `sub` is stable across
# restarts (fixed user ids); signing keys are not (memory storage).
# An unregistered redirect_uri never leaves Dex: /auth → 302 /dex/auth/local?… → 400, an
# HTML page "Bad Request" / "Unregistered redirect_uri.".

BERTH_OIDC_ISSUER=http://127.0.0.1:5556/dex
BERTH_OIDC_HTTP_ADDR=127.0.0.1:5556
BERTH_OIDC_CLIENT_ID=berth-test
BERTH_OIDC_CLIENT_SECRET=berth-test-secret
BERTH_OIDC_REDIRECT_PORT=39123
BERTH_OIDC_ALICE_PASSWORD=alice-password-1
BERTH_OIDC_BOB_PASSWORD=bob-password-1
BERTH_DEX_STATE=${BERTH_DEX_STATE:-/tmp/berth-dex}
BERTH_DEX_LOG=${BERTH_DEX_LOG:-/tmp/berth-dex.log}

BERTH_OIDC_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")/../oidc" && pwd)

# oidc_render HASH_ALICE HASH_BOB: print the Dex configuration.
oidc_render() {
	sed -e "s|@ISSUER@|${BERTH_OIDC_ISSUER}|g" \
		-e "s|@HTTP_ADDR@|${BERTH_OIDC_HTTP_ADDR}|g" \
		-e "s|@CLIENT_ID@|${BERTH_OIDC_CLIENT_ID}|g" \
		-e "s|@CLIENT_SECRET@|${BERTH_OIDC_CLIENT_SECRET}|g" \
		-e "s|@REDIRECT_PORT@|${BERTH_OIDC_REDIRECT_PORT}|g" \
		-e "s|@ALICE_HASH@|$1|g" \
		-e "s|@BOB_HASH@|$2|g" \
		"$BERTH_OIDC_DIR/dex.yaml.tmpl"
}

# oidc_fingerprint BINARY: a digest of everything the running Dex depends on. bcrypt
# salts differ on every run, so the passwords stand in for their hashes here.
oidc_fingerprint() {
	{
		printf '%s\n' "$1"
		oidc_render "sha256:$(printf %s "$BERTH_OIDC_ALICE_PASSWORD" | sha256sum)" \
			"sha256:$(printf %s "$BERTH_OIDC_BOB_PASSWORD" | sha256sum)"
	} | sha256sum | cut -d' ' -f1
}

# oidc_bcrypt PASSWORD: print a bcrypt hash (cost 10) of PASSWORD.
oidc_bcrypt() {
	command -v htpasswd >/dev/null || apt_install apache2-utils
	htpasswd -bnBC 10 "" "$1" | tr -d ':\n'
}

# is_our_dex PID: true when PID runs and is a Dex these scripts started
# (argv is "<cache>/dex-<version>-<go> serve <state>/config.yaml").
is_our_dex() {
	local cmdline
	[[ $1 =~ ^[0-9]+$ ]] && running "$1" || return 1
	cmdline=$(tr '\0' ' ' <"/proc/$1/cmdline" 2>/dev/null) || return 1
	[[ $cmdline == */dex-*" serve $BERTH_DEX_STATE/config.yaml " ]]
}

# our_dex_pid: print the pid of the Dex we started, if it is still running.
our_dex_pid() {
	our_daemon_pid "$BERTH_DEX_STATE/dex.pid" "$BERTH_OIDC_HTTP_ADDR" is_our_dex "$BERTH_DEX_STATE/dex.fingerprint"
}

# oidc_ok: true when the discovery document answers with our issuer.
oidc_ok() {
	curl -fsS --max-time 3 "$BERTH_OIDC_ISSUER/.well-known/openid-configuration" 2>/dev/null |
		tr -d ' \n' | grep -qF "\"issuer\":\"${BERTH_OIDC_ISSUER}\""
}

# oidc_port_busy: true when something accepts connections on Dex's address.
oidc_port_busy() { port_busy "$BERTH_OIDC_HTTP_ADDR"; }

stop_dex() {
	local pid=$1 deadline=$((SECONDS + 10))
	log "stopping Dex (pid $pid)"
	kill -TERM "$pid" 2>/dev/null || true
	while running "$pid"; do
		if ((SECONDS >= deadline)); then
			kill -KILL "$pid" 2>/dev/null || true
			sleep 0.5
			break
		fi
		sleep 0.1
	done
	rm -f "$BERTH_DEX_STATE/dex.pid" "$BERTH_DEX_STATE/dex.fingerprint"
}

start_dex() {
	local bin=$1 fingerprint=$2 pid deadline
	if oidc_port_busy; then
		die "${BERTH_OIDC_HTTP_ADDR} is in use by a process these scripts did not start (see: ss -ltnp 'sport = :${BERTH_OIDC_HTTP_ADDR##*:}')
Stop it, then run again."
	fi
	log "starting Dex on ${BERTH_OIDC_ISSUER} (log: $BERTH_DEX_LOG)"
	# setsid: a new session, so Ctrl-C in the terminal running `make test` does not reach Dex.
	setsid nohup "$bin" serve "$BERTH_DEX_STATE/config.yaml" >"$BERTH_DEX_LOG" 2>&1 </dev/null &
	pid=$!
	echo "$pid" >"$BERTH_DEX_STATE/dex.pid"
	deadline=$((SECONDS + 30))
	until oidc_ok; do
		if ! running "$pid" || ((SECONDS >= deadline)); then
			tail -n 30 "$BERTH_DEX_LOG" >&2 || true
			kill -TERM "$pid" 2>/dev/null || true
			rm -f "$BERTH_DEX_STATE/dex.pid"
			die "Dex did not come up on ${BERTH_OIDC_ISSUER} within 30 s (see $BERTH_DEX_LOG)"
		fi
		sleep 0.1
	done
	our_dex_pid >/dev/null || die "Dex answers, but not from the one started as pid $pid (see $BERTH_DEX_LOG)"
	echo "$fingerprint" >"$BERTH_DEX_STATE/dex.fingerprint"
	log "Dex is up (pid $pid)"
}

ensure_oidc() {
	local bin fingerprint pid tmp
	command -v curl >/dev/null || apt_install curl
	bin=$("$BERTH_OIDC_DIR/build-dex.sh")
	mkdir -p "$BERTH_DEX_STATE"
	chmod 0700 "$BERTH_DEX_STATE"

	fingerprint=$(oidc_fingerprint "$bin")
	if [[ ! -f $BERTH_DEX_STATE/config.yaml || $(cat "$BERTH_DEX_STATE/config.fingerprint" 2>/dev/null) != "$fingerprint" ]]; then
		log "writing the Dex configuration ($BERTH_DEX_STATE/config.yaml)"
		tmp=$(mktemp "$BERTH_DEX_STATE/.config.XXXXXX")
		if ! oidc_render "$(oidc_bcrypt "$BERTH_OIDC_ALICE_PASSWORD")" "$(oidc_bcrypt "$BERTH_OIDC_BOB_PASSWORD")" >"$tmp"; then
			rm -f "$tmp"
			die "cannot render the Dex configuration"
		fi
		mv -f "$tmp" "$BERTH_DEX_STATE/config.yaml"
		echo "$fingerprint" >"$BERTH_DEX_STATE/config.fingerprint"
	fi

	if pid=$(our_dex_pid); then
		if [[ $(cat "$BERTH_DEX_STATE/dex.fingerprint" 2>/dev/null) == "$fingerprint" ]] && oidc_ok; then
			return 0
		fi
		log "Dex (pid $pid) runs an older configuration or does not answer; restarting it"
		stop_dex "$pid"
	else
		# A pid file left by a Dex that has since gone is stale.
		rm -f "$BERTH_DEX_STATE/dex.pid" "$BERTH_DEX_STATE/dex.fingerprint"
	fi
	start_dex "$bin" "$fingerprint"
}

oidc_test_env() {
	cat <<ENV
BERTH_TEST_OIDC_ISSUER=${BERTH_OIDC_ISSUER}
BERTH_TEST_OIDC_CLIENT_ID=${BERTH_OIDC_CLIENT_ID}
BERTH_TEST_OIDC_CLIENT_SECRET=${BERTH_OIDC_CLIENT_SECRET}
BERTH_TEST_OIDC_REDIRECT_PORT=${BERTH_OIDC_REDIRECT_PORT}
BERTH_TEST_OIDC_USERS=alice:${BERTH_OIDC_ALICE_PASSWORD},bob:${BERTH_OIDC_BOB_PASSWORD}
BERTH_TEST_OIDC_LOGINS=alice@berth.test:${BERTH_OIDC_ALICE_PASSWORD},bob@berth.test:${BERTH_OIDC_BOB_PASSWORD}
ENV
}
