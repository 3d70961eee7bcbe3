# shellcheck shell=bash
#
# ldap.sh: a real OpenLDAP slapd (Debian's slapd package) on loopback, seeded with
# the users and groups of Berth's LDAP sign-in tests. Sourced by scripts/*.sh after
# scripts/lib/engine.sh (it uses log, die, pkg_installed, apt_install and running).
#
# Provides:
#   ensure_ldap     install slapd and ldap-utils, write our config and TLS files, start
#                   our slapd unless it already runs with them, seed an empty directory
#   ldap_test_env   print the BERTH_TEST_LDAP_* lines for .test-env
#   stop_ldap       stop the slapd these scripts started
#
# Our instance is separate from the system's (the package is installed with
# slapd/no_configuration, so it has none): config, mdb database, pid file and TLS
# files live in $BERTH_SLAPD_DIR, the log in $BERTH_SLAPD_LOG, and it listens only
# on ldap://127.0.0.1:3890 (StartTLS too) and ldaps://127.0.0.1:6360. A slapd is
# stopped or restarted only when its pid file and command line say it is ours.
#
# The directory (scripts/ldap/seed.ldif), base dc=berth,dc=test:
#   cn=admin,dc=berth,dc=test                    admin-password   rootdn: writes anything (tests
#                                                                  add/remove group members with it)
#   cn=reader,dc=berth,dc=test                   reader-password  service account: reads all but passwords
#   uid=alice,ou=people,dc=berth,dc=test         alice-ldap-1     cn "Alice Admin", alice@berth.test
#   uid=bob,ou=people,dc=berth,dc=test           bob-ldap-1       cn "Bob Builder", bob@berth.test
#   uid=ev*)(il,ou=people,dc=berth,dc=test       eve-ldap-1       cn "Eve Il", eve@berth.test
#   cn=berth-admins,ou=groups,dc=berth,dc=test   member alice      (groupOfNames, member = full DN)
#   cn=developers,ou=groups,dc=berth,dc=test     member bob
#   cn=ops,ou=groups,dc=berth,dc=test            members alice, bob
# Anonymous binds may search and read everything but userPassword, which only its
# owner and the rootdn can read. The directory is seeded once and then kept: a test
# that changes entries puts them back. It is wiped and reseeded when seed.ldif
# changes, when the base entry is missing, or when BERTH_LDAP_RESEED=1.

BERTH_SLAPD_DIR=${BERTH_SLAPD_DIR:-/tmp/berth-slapd}
BERTH_SLAPD_LOG=${BERTH_SLAPD_LOG:-/tmp/berth-slapd.log}
BERTH_LDAP_URL=${BERTH_LDAP_URL:-ldap://127.0.0.1:3890}
BERTH_LDAPS_URL=${BERTH_LDAPS_URL:-ldaps://127.0.0.1:6360}
BERTH_LDAP_RESEED=${BERTH_LDAP_RESEED:-0}

BERTH_LDAP_BASE=dc=berth,dc=test
BERTH_LDAP_ADMIN_DN=cn=admin,$BERTH_LDAP_BASE
BERTH_LDAP_ADMIN_PASSWORD=admin-password
BERTH_LDAP_READER_DN=cn=reader,$BERTH_LDAP_BASE
BERTH_LDAP_READER_PASSWORD=reader-password

# Templates: scripts/ldap/ beside this file's folder.
berth_ldap_templates=$(cd "$(dirname "${BASH_SOURCE[0]}")/../ldap" && pwd)

# Set to 1 by ldap_tls and ldap_config when they (re)write a file slapd reads at start.
berth_ldap_changed=0

ldap_ca() { printf '%s\n' "$BERTH_SLAPD_DIR/tls/ca.pem"; }
ldap_conf() { printf '%s\n' "$BERTH_SLAPD_DIR/slapd.conf"; }

# ldap_hostport URL: print host:port of an ldap:// or ldaps:// URL.
ldap_hostport() {
	local hp=${1#*://}
	printf '%s\n' "${hp%%/*}"
}


# our_slapd_pid: print the pid of the slapd we started, if it is still running.
our_slapd_pid() {
	local pid pidfile=$BERTH_SLAPD_DIR/slapd.pid
	[[ -f $pidfile ]] || return 1
	pid=$(<"$pidfile")
	[[ $pid =~ ^[0-9]+$ ]] || return 1
	[[ $(cat "/proc/$pid/comm" 2>/dev/null) == slapd ]] || return 1
	running "$pid" || return 1
	# Its command line names our config (a recycled pid would not).
	tr '\0' '\n' <"/proc/$pid/cmdline" 2>/dev/null | grep -qxF "$(ldap_conf)" || return 1
	printf '%s\n' "$pid"
}

ldap_install() {
	if ! pkg_installed slapd; then
		# Install the binaries only: no system instance to configure, start or avoid.
		echo 'slapd slapd/no_configuration boolean true' | debconf-set-selections
	fi
	apt_install slapd ldap-utils openssl
}

# ldap_tls: make sure a CA and a server certificate for 127.0.0.1 and localhost
# exist, are valid for at least a day more, and were made from scripts/ldap/tls.cnf.
ldap_tls() {
	local tls=$BERTH_SLAPD_DIR/tls cnf=$berth_ldap_templates/tls.cnf stamp tmp f
	stamp=$(sha256sum <"$cnf" | cut -d' ' -f1)
	if [[ -s $tls/ca.pem && -s $tls/server.pem && -s $tls/server.key && -f $tls/tls.cnf.sha256 &&
		$(<"$tls/tls.cnf.sha256") == "$stamp" ]] &&
		openssl x509 -noout -checkend 86400 -in "$tls/ca.pem" >/dev/null 2>&1 &&
		openssl x509 -noout -checkend 86400 -in "$tls/server.pem" >/dev/null 2>&1; then
		return 0
	fi
	log "generating a test CA and slapd's server certificate (127.0.0.1, localhost)"
	tmp=$(mktemp -d "$BERTH_SLAPD_DIR/tls.XXXXXX")
	openssl req -x509 -new -config "$cnf" -extensions ca_ext -subj '/CN=Berth test LDAP CA' \
		-newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -days 3650 \
		-keyout "$tmp/ca.key" -out "$tmp/ca.pem" 2>/dev/null
	openssl req -new -config "$cnf" -subj '/CN=localhost' \
		-newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes \
		-keyout "$tmp/server.key" -out "$tmp/server.csr" 2>/dev/null
	openssl x509 -req -in "$tmp/server.csr" -CA "$tmp/ca.pem" -CAkey "$tmp/ca.key" \
		-set_serial "0x$(openssl rand -hex 16)" -days 3650 \
		-extfile "$cnf" -extensions server_ext -out "$tmp/server.pem" 2>/dev/null
	openssl verify -CAfile "$tmp/ca.pem" "$tmp/server.pem" >/dev/null
	rm -f "$tmp/server.csr"
	for f in ca.key server.key; do chmod 0600 "$tmp/$f"; done
	for f in ca.pem server.pem; do chmod 0644 "$tmp/$f"; done
	chmod 0755 "$tmp"
	printf '%s\n' "$stamp" >"$tmp/tls.cnf.sha256"
	rm -rf "$tls"
	mv "$tmp" "$tls"
	berth_ldap_changed=1
}

# ldap_config: write slapd.conf from scripts/ldap/slapd.conf.in unless the one there
# was made from the same template and settings (its first line says which).
ldap_config() {
	local conf template=$berth_ldap_templates/slapd.conf.in id rootpw tmp
	conf=$(ldap_conf)
	id=$(cat "$template" <(printf '%s\n' "$BERTH_SLAPD_DIR" "$BERTH_LDAP_URL" "$BERTH_LDAPS_URL" \
		"$BERTH_LDAP_ADMIN_PASSWORD") | sha256sum | cut -d' ' -f1)
	if [[ -f $conf && $(head -n 1 "$conf") == "# berth-ldap-config: $id" ]]; then
		return 0
	fi
	rootpw=$(slappasswd -h '{SSHA}' -s "$BERTH_LDAP_ADMIN_PASSWORD")
	tmp=$(mktemp "$conf.XXXXXX")
	{
		printf '# berth-ldap-config: %s\n' "$id"
		printf '# listens on: %s %s\n' "$BERTH_LDAP_URL" "$BERTH_LDAPS_URL"
		sed -e "s|@STATE@|$BERTH_SLAPD_DIR|g" -e "s|@ROOTPW@|$rootpw|g" "$template"
	} >"$tmp"
	chmod 0600 "$tmp"
	slaptest -Q -u -f "$tmp" || die "slaptest rejects the slapd config generated from $template (kept as $tmp)"
	mv -f "$tmp" "$conf"
	berth_ldap_changed=1
}

# ldap_search_base: exit status of a base-scope search of the base entry as the
# rootdn: 0 when it exists, 32 when it does not, anything else when slapd fails.
ldap_search_base() {
	local rc=0
	ldapsearch -x -H "$BERTH_LDAP_URL" -o nettimeout=3 -D "$BERTH_LDAP_ADMIN_DN" -w "$BERTH_LDAP_ADMIN_PASSWORD" \
		-b "$BERTH_LDAP_BASE" -s base -LLL 1.1 >/dev/null 2>&1 || rc=$?
	return "$rc"
}

start_slapd() {
	local hostport pid deadline
	for hostport in "$(ldap_hostport "$BERTH_LDAP_URL")" "$(ldap_hostport "$BERTH_LDAPS_URL")"; do
		if port_busy "$hostport"; then
			die "something that is not the slapd these scripts started listens on $hostport
(our pid file: $BERTH_SLAPD_DIR/slapd.pid); stop it, then run again."
		fi
	done
	rm -f "$BERTH_SLAPD_DIR/slapd.pid"
	log "starting slapd on $BERTH_LDAP_URL and $BERTH_LDAPS_URL (log: $BERTH_SLAPD_LOG)"
	# In the foreground (-d) so that its log (connections, binds, searches and
	# their results) goes to stderr, hence to the log file; setsid: a new session,
	# so Ctrl-C in the terminal running `make test` does not reach it.
	setsid nohup slapd -d stats -f "$(ldap_conf)" -h "$BERTH_LDAP_URL/ $BERTH_LDAPS_URL/" \
		</dev/null >"$BERTH_SLAPD_LOG" 2>&1 &
	pid=$!
	deadline=$((SECONDS + 30))
	# Up when it answers and its pid file names it (setsid execs it in place).
	until [[ $(our_slapd_pid) == "$pid" ]] &&
		ldapsearch -x -H "$BERTH_LDAP_URL" -o nettimeout=2 -b '' -s base -LLL 1.1 >/dev/null 2>&1; do
		if ! running "$pid" || ((SECONDS >= deadline)); then
			tail -n 20 "$BERTH_SLAPD_LOG" >&2 || true
			die "slapd did not come up on $BERTH_LDAP_URL (see $BERTH_SLAPD_LOG)"
		fi
		sleep 0.1
	done
	# LDAPS with our CA, so that a TLS problem shows here rather than in a test.
	LDAPTLS_CACERT=$(ldap_ca) LDAPTLS_REQCERT=demand ldapwhoami -x -H "$BERTH_LDAPS_URL" -o nettimeout=3 >/dev/null 2>&1 ||
		die "slapd answers on $BERTH_LDAP_URL but $BERTH_LDAPS_URL fails with the test CA (see $BERTH_SLAPD_LOG)"
	log "slapd is up (pid $pid)"
}

stop_ldap() {
	local pid deadline
	pid=$(our_slapd_pid) || return 0
	log "stopping slapd (pid $pid)"
	kill -TERM "$pid" 2>/dev/null || true
	deadline=$((SECONDS + 30))
	while running "$pid"; do
		if ((SECONDS >= deadline)); then
			log "slapd did not stop within 30 s; killing it"
			kill -KILL "$pid" 2>/dev/null || true
			sleep 0.5
			break
		fi
		sleep 0.1
	done
	rm -f "$BERTH_SLAPD_DIR/slapd.pid"
}

# ldap_seed: load scripts/ldap/seed.ldif, with each "userPassword: @ssha PASSWORD"
# line replaced by an {SSHA} hash of PASSWORD, as the rootdn.
ldap_seed() {
	local line out
	log "seeding $BERTH_LDAP_BASE from scripts/ldap/seed.ldif"
	while IFS= read -r line || [[ -n $line ]]; do
		if [[ $line =~ ^userPassword:\ @ssha\ (.+)$ ]]; then
			printf 'userPassword: %s\n' "$(slappasswd -h '{SSHA}' -s "${BASH_REMATCH[1]}")"
		else
			printf '%s\n' "$line"
		fi
	done <"$berth_ldap_templates/seed.ldif" >"$BERTH_SLAPD_DIR/seed.ldif"
	chmod 0600 "$BERTH_SLAPD_DIR/seed.ldif"
	out=$(ldapadd -x -H "$BERTH_LDAP_URL" -D "$BERTH_LDAP_ADMIN_DN" -w "$BERTH_LDAP_ADMIN_PASSWORD" \
		-f "$BERTH_SLAPD_DIR/seed.ldif" 2>&1) || die "seeding the test directory failed: $out"
	sha256sum <"$berth_ldap_templates/seed.ldif" | cut -d' ' -f1 >"$BERTH_SLAPD_DIR/seed.sha256"
}

ensure_ldap() {
	local rc=0 empty=0 seeded
	if ! command -v slapd >/dev/null || ! command -v ldapsearch >/dev/null || ! command -v openssl >/dev/null; then
		ldap_install
	fi
	mkdir -p "$BERTH_SLAPD_DIR/data"
	chmod 0755 "$BERTH_SLAPD_DIR" # the CA certificate in it is for every test process to read
	chmod 0700 "$BERTH_SLAPD_DIR/data"
	: >>"$BERTH_SLAPD_LOG"

	berth_ldap_changed=0
	ldap_tls
	ldap_config
	if our_slapd_pid >/dev/null; then
		if ((berth_ldap_changed)); then
			log "slapd config or certificates changed; restarting our slapd"
			stop_ldap
			start_slapd
		fi
	else
		[[ -n $(ls -A "$BERTH_SLAPD_DIR/data") ]] || empty=1
		start_slapd
	fi

	ldap_search_base || rc=$?
	seeded=$(cat "$BERTH_SLAPD_DIR/seed.sha256" 2>/dev/null || true)
	if ((rc == 0)) && [[ $BERTH_LDAP_RESEED != 1 &&
		$seeded == "$(sha256sum <"$berth_ldap_templates/seed.ldif" | cut -d' ' -f1)" ]]; then
		return 0
	fi
	case $rc in
	0) log "scripts/ldap/seed.ldif changed (or BERTH_LDAP_RESEED=1); wiping the test directory" ;;
	32) ;;
	*) die "slapd on $BERTH_LDAP_URL fails a search of $BERTH_LDAP_BASE as the rootdn (ldapsearch exit $rc; see $BERTH_SLAPD_LOG)" ;;
	esac
	# Seed an empty database only, whatever an earlier one left.
	if ((rc != 32 || !empty)); then
		stop_ldap
		rm -rf "$BERTH_SLAPD_DIR/data" "$BERTH_SLAPD_DIR/seed.sha256"
		mkdir -m 0700 "$BERTH_SLAPD_DIR/data"
		start_slapd
	fi
	ldap_seed
}

ldap_test_env() {
	cat <<ENV
BERTH_TEST_LDAP_URL=${BERTH_LDAP_URL}
BERTH_TEST_LDAPS_URL=${BERTH_LDAPS_URL}
BERTH_TEST_LDAP_CA=$(ldap_ca)
BERTH_TEST_LDAP_BASE=${BERTH_LDAP_BASE}
BERTH_TEST_LDAP_BIND_DN=${BERTH_LDAP_READER_DN}
BERTH_TEST_LDAP_BIND_PASSWORD=${BERTH_LDAP_READER_PASSWORD}
BERTH_TEST_LDAP_ADMIN_DN=${BERTH_LDAP_ADMIN_DN}
BERTH_TEST_LDAP_ADMIN_PASSWORD=${BERTH_LDAP_ADMIN_PASSWORD}
ENV
}
