# shellcheck shell=bash
#
# scanners.sh: the real vulnerability scanners of Berth's image scan tests, with
# tiny offline databases and two test images. Sourced by scripts/test-env.sh after
# scripts/lib/engine.sh (it uses log, die and apt_install, and needs the engine).
#
# Provides:
#   ensure_scanners      build (or reuse) Trivy and Grype, generate (or reuse) their
#                        databases, build the test images if they are missing
#   scanners_test_env    print the BERTH_TEST_TRIVY* / BERTH_TEST_GRYPE* / BERTH_TEST_SCAN_*
#                        lines for .test-env
#
# Scanners: Trivy and Grype at the versions scripts/scanners/{trivy,grype}/go.mod
# pin, built from the Go module proxy by scripts/scanners/build-scanner.sh and
# cached in ~/.cache/berth/bin (<tool>-<version>-<go version>). Cold, on 2 cores,
# they dominate the setup: Trivy 10 min, then Grype 5 min (one after the other;
# each build uses both cores), then both databases about 45 s. Warm: about 1 s.
#
# Databases: each lists two made-up vulnerabilities of Debian 12 packages, fixed in
# 1.0-2 (the images carry 1.0-1):
#   CVE-2099-0001 in berth-demo, severity High, CVSS 3.1 7.5
#     (CVSS:3.1/AV:N/AC:L/PR:N/UI:N/S:U/C:H/I:N/A:N), description "Berth test
#     vulnerability", reference https://example.invalid/CVE-2099-0001;
#   CVE-2099-0002 in berth-crit, severity Critical, CVSS 3.1 9.8
#     (CVSS:3.1/AV:N/AC:L/PR:N/UI:N/S:U/C:H/I:H/A:H), description "Berth critical
#     test vulnerability", reference https://example.invalid/CVE-2099-0002. They are written
# by the scanners' own database libraries (scripts/scanners/trivydb: trivy-db;
# scripts/scanners/grypedb: grype/db v6) into $BERTH_SCANNER_DB/<tool>-<version>/,
# and regenerated when the generator, the scanner or Go changes (a fingerprint):
#   Trivy: <state>/cache is a Trivy cache dir (<state>/cache/db/{trivy.db,metadata.json}).
#          Scan offline with
#            trivy image --cache-dir <state>/cache --skip-db-update --skip-java-db-update \
#              --offline-scan --skip-version-check --disable-telemetry --scanners vuln \
#              --cache-backend memory -f json IMAGE
#          (Trivy opens trivy.db read-only. --cache-backend memory is optional: without it
#          Trivy also keeps a layer cache in <state>/cache/fanal/; 4 parallel scans that
#          way were measured to work, 0.6 s in all.)
#   Grype: <state>/db is a Grype DB root (GRYPE_DB_CACHE_DIR) into which the generated
#          vulnerability.db was imported (`grype db import`; it lands in <state>/db/6/).
#          Scan offline with
#            GRYPE_DB_CACHE_DIR=<state>/db GRYPE_DB_AUTO_UPDATE=false GRYPE_DB_VALIDATE_AGE=false \
#            GRYPE_CHECK_FOR_APP_UPDATE=false grype -o json IMAGE
# Tests must not change the databases (the fingerprint check does not notice).
#
# Images (docker import, no registry; busybox from busybox-static):
#   berth-test/debian-vuln:1    "Debian 12" (/etc/os-release, /etc/debian_version 12.5) with a
#                               dpkg status listing berth-demo 1.0-1 and berth-clean 2.0-1
#   berth-test/debian-crit:1    the same with berth-crit 1.0-1 instead of berth-demo: one Critical
#   berth-test/debian-clean:1   the same without either: both scanners find nothing
# Trivy recognises Debian only with /etc/debian_version (os-release alone gives
# "Unsupported os" and no findings). Change an image's contents → bump its tag.

BERTH_SCANNER_DB=${BERTH_SCANNER_DB:-${HOME}/.cache/berth/scanner-db}
BERTH_SCAN_IMAGE=berth-test/debian-vuln:1
BERTH_SCAN_CLEAN_IMAGE=berth-test/debian-clean:1
BERTH_SCAN_CRIT_IMAGE=berth-test/debian-crit:1

BERTH_SCANNERS_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")/../scanners" && pwd)

# Set by ensure_scanners.
berth_trivy=
berth_grype=
berth_trivy_cache=
berth_grype_db=

# scanner_version TOOL MODULE: the version scripts/scanners/TOOL/go.mod requires.
scanner_version() {
	awk -v m="$2" '$1 == m { print $2; exit }' "$BERTH_SCANNERS_DIR/$1/go.mod"
}

# scanner_fingerprint GENERATOR BINARY: a digest of what a generated database depends on.
scanner_fingerprint() {
	{
		go env GOVERSION
		printf '%s\n' "$2"
		(cd "$BERTH_SCANNERS_DIR/$1" && sha256sum go.mod go.sum ./*.go)
	} | sha256sum | cut -d' ' -f1
}

# build_generator GENERATOR OUT: build scripts/scanners/GENERATOR into the binary OUT.
build_generator() {
	(
		cd "$BERTH_SCANNERS_DIR/$1" || exit
		export GOFLAGS="-mod=readonly -buildvcs=false" GOWORK=off GOTOOLCHAIN=local CGO_ENABLED=0
		go build -trimpath -o "$2" .
	) >&2
}

# ensure_trivy_db: generate Trivy's database into $state/cache/db unless it is current.
ensure_trivy_db() {
	local version state fp tmp
	version=$(scanner_version trivy github.com/aquasecurity/trivy)
	state=$BERTH_SCANNER_DB/trivy-$version
	berth_trivy_cache=$state/cache
	fp=$(scanner_fingerprint trivydb "$berth_trivy")
	if [[ -s $berth_trivy_cache/db/trivy.db && -s $berth_trivy_cache/db/metadata.json &&
		-f $state/fingerprint && $(<"$state/fingerprint") == "$fp" ]]; then
		return 0
	fi
	log "generating Trivy's test vulnerability database ($berth_trivy_cache/db)"
	mkdir -p "$BERTH_SCANNER_DB"
	tmp=$(mktemp -d "$BERTH_SCANNER_DB/.trivy.XXXXXX")
	cleanup+=("$tmp")
	build_generator trivydb "$tmp/trivydb"
	"$tmp/trivydb" -dir "$tmp/cache/db" >"$tmp/generate.log" 2>&1 || {
		cat "$tmp/generate.log" >&2
		die "the Trivy database generator (scripts/scanners/trivydb) failed"
	}
	rm -f "$tmp/trivydb" "$tmp/generate.log"
	printf '%s\n' "$fp" >"$tmp/fingerprint"
	rm -rf "$state"
	mv "$tmp" "$state"
}

# run_grype DB_ROOT ARGS...: run our Grype offline against the database root DB_ROOT.
run_grype() {
	GRYPE_DB_CACHE_DIR=$1 GRYPE_DB_AUTO_UPDATE=false GRYPE_DB_VALIDATE_AGE=false \
		GRYPE_CHECK_FOR_APP_UPDATE=false "$berth_grype" "${@:2}"
}

# grype_db_valid DB_ROOT: true when Grype finds a valid database in DB_ROOT.
grype_db_valid() {
	run_grype "$1" db status 2>/dev/null | grep -q '^Status: *valid'
}

# ensure_grype_db: generate Grype's database and import it into $state/db unless it is current.
ensure_grype_db() {
	local version state fp tmp
	version=$(scanner_version grype github.com/anchore/grype)
	state=$BERTH_SCANNER_DB/grype-$version
	berth_grype_db=$state/db
	fp=$(scanner_fingerprint grypedb "$berth_grype")
	if [[ -f $state/fingerprint && $(<"$state/fingerprint") == "$fp" ]] && grype_db_valid "$berth_grype_db"; then
		return 0
	fi
	log "generating Grype's test vulnerability database ($berth_grype_db)"
	mkdir -p "$BERTH_SCANNER_DB"
	tmp=$(mktemp -d "$BERTH_SCANNER_DB/.grype.XXXXXX")
	cleanup+=("$tmp")
	build_generator grypedb "$tmp/grypedb"
	"$tmp/grypedb" -dir "$tmp/build" >"$tmp/generate.log" 2>&1 || {
		cat "$tmp/generate.log" >&2
		die "the Grype database generator (scripts/scanners/grypedb) failed"
	}
	run_grype "$tmp/db" db import "$tmp/build/vulnerability.db" >"$tmp/import.log" 2>&1 || {
		cat "$tmp/import.log" >&2
		die "grype db import of the generated database failed"
	}
	grype_db_valid "$tmp/db" || die "Grype's test database is not valid after the import: $(run_grype "$tmp/db" db status 2>&1)"
	rm -rf "$tmp/grypedb" "$tmp/build" "$tmp/generate.log" "$tmp/import.log"
	printf '%s\n' "$fp" >"$tmp/fingerprint"
	rm -rf "$state"
	mv "$tmp" "$state"
}

# fixture_package NAME VERSION SUMMARY DETAIL: a dpkg status entry of a test package.
fixture_package() {
	cat <<EOF
Package: $1
Status: install ok installed
Priority: optional
Section: misc
Installed-Size: 1
Maintainer: Berth Tests <tests@berth.invalid>
Architecture: $(dpkg --print-architecture)
Version: $2
Description: $3
 $4
EOF
}

# scan_image_root DIR VULNERABLE_PACKAGE: fill DIR with the root of a Debian-12-like
# image listing berth-clean and, unless it is "", VULNERABLE_PACKAGE 1.0-1.
scan_image_root() {
	local root=$1 vulnerable=$2 applet
	chmod 0755 "$root"
	mkdir -p "$root/bin" "$root/etc" "$root/root" "$root/tmp" "$root/var/lib/dpkg"
	chmod 1777 "$root/tmp"
	cp /bin/busybox "$root/bin/"
	for applet in sh echo cat sleep ls true false env id head tail wc grep sed printf; do
		ln -s busybox "$root/bin/$applet"
	done
	printf '%s\n' 'root:x:0:0:root:/root:/bin/sh' 'nobody:x:65534:65534:nobody:/nonexistent:/bin/false' >"$root/etc/passwd"
	printf '%s\n' 'root:x:0:' 'nobody:x:65534:' >"$root/etc/group"
	cat >"$root/etc/os-release" <<'EOF'
PRETTY_NAME="Debian GNU/Linux 12 (bookworm)"
NAME="Debian GNU/Linux"
VERSION_ID="12"
VERSION="12 (bookworm)"
VERSION_CODENAME=bookworm
ID=debian
HOME_URL="https://www.debian.org/"
SUPPORT_URL="https://www.debian.org/support"
BUG_REPORT_URL="https://bugs.debian.org/"
EOF
	echo 12.5 >"$root/etc/debian_version"
	{
		case $vulnerable in
		berth-demo) fixture_package berth-demo 1.0-1 "Berth test package with a known vulnerability" \
			"A fixture of Berth's image scan tests: CVE-2099-0001 affects this version." && echo ;;
		berth-crit) fixture_package berth-crit 1.0-1 "Berth test package with a known critical vulnerability" \
			"A fixture of Berth's image scan tests: CVE-2099-0002 affects this version." && echo ;;
		esac
		fixture_package berth-clean 2.0-1 "Berth test package without known vulnerabilities" \
			"A fixture of Berth's image scan tests."
	} >"$root/var/lib/dpkg/status"
}

# build_scan_image IMAGE VULNERABLE_PACKAGE: docker import a Debian-12-like image as IMAGE.
build_scan_image() {
	local root
	apt_install busybox-static
	root=$(mktemp -d)
	cleanup+=("$root")
	scan_image_root "$root" "$2"
	tar -C "$root" --numeric-owner --owner=0 --group=0 -c . |
		docker import -c 'CMD ["/bin/sh"]' -c 'ENV PATH=/bin' - "$1" >/dev/null
}

ensure_scanners() {
	local image vulnerable
	# Built one after the other: on 2 cores each build uses both.
	berth_trivy=$("$BERTH_SCANNERS_DIR/build-scanner.sh" trivy) || die "building Trivy failed"
	berth_grype=$("$BERTH_SCANNERS_DIR/build-scanner.sh" grype) || die "building Grype failed"
	ensure_trivy_db
	ensure_grype_db
	for image in "$BERTH_SCAN_IMAGE" "$BERTH_SCAN_CRIT_IMAGE" "$BERTH_SCAN_CLEAN_IMAGE"; do
		docker image inspect "$image" >/dev/null 2>&1 && continue
		log "building $image"
		case $image in
		"$BERTH_SCAN_IMAGE") vulnerable=berth-demo ;;
		"$BERTH_SCAN_CRIT_IMAGE") vulnerable=berth-crit ;;
		*) vulnerable= ;;
		esac
		build_scan_image "$image" "$vulnerable"
	done
}

scanners_test_env() {
	cat <<ENV
BERTH_TEST_TRIVY=${berth_trivy}
BERTH_TEST_GRYPE=${berth_grype}
BERTH_TEST_TRIVY_CACHE=${berth_trivy_cache}
BERTH_TEST_GRYPE_DB=${berth_grype_db}
BERTH_TEST_SCAN_IMAGE=${BERTH_SCAN_IMAGE}
BERTH_TEST_SCAN_CLEAN_IMAGE=${BERTH_SCAN_CLEAN_IMAGE}
BERTH_TEST_SCAN_CRIT_IMAGE=${BERTH_SCAN_CRIT_IMAGE}
ENV
}
