#!/usr/bin/env bash
# The headless browser of the site's test (tests/test_site_browser.py): Debian's chromium,
# installed here where it is missing (as root, through apt-get), else a clear error.
set -euo pipefail
if command -v chromium >/dev/null 2>&1; then
    exit 0
fi
if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
    echo "cwrs setup: installing Debian's chromium for the site's browser test"
    apt-get install -y -q chromium >/dev/null || { apt-get update -q >/dev/null && apt-get install -y -q chromium >/dev/null; }
    exit 0
fi
echo "cwrs setup: the site's browser test needs chromium; install Debian's package 'chromium'" >&2
exit 1
