# shellcheck shell=bash
#
# browser.sh: Chromium for the web console's browser tests (web/e2e), sourced
# by scripts/test-env.sh after scripts/lib/engine.sh.
#
# Provides:
#   ensure_browser     install Debian's chromium (and a font to render text
#                      with) unless present, and check that it starts
#   browser_test_env   print the .test-env lines: BERTH_TEST_CHROMIUM
#
# Playwright drives this system Chromium through playwright-core; its own
# browser download (npx playwright install) is not used.

BERTH_CHROMIUM=

ensure_browser() {
	apt_install chromium fonts-dejavu-core
	BERTH_CHROMIUM=$(command -v chromium) || die "chromium is installed but not on PATH"
	"$BERTH_CHROMIUM" --headless --no-sandbox --disable-gpu --version >/dev/null 2>&1 ||
		die "$BERTH_CHROMIUM does not start: $("$BERTH_CHROMIUM" --headless --no-sandbox --version 2>&1 | tail -n 3)"
}

browser_test_env() {
	printf 'BERTH_TEST_CHROMIUM=%s\n' "$BERTH_CHROMIUM"
}
