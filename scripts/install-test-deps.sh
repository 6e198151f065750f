#!/usr/bin/env bash
# Installs what `make test` uses beyond Node, when missing: Debian's systemd package, whose
# systemd-analyze verifies scripts/proxy.service and whose systemd-notify scripts/reload-proxy
# runs, Debian's prometheus package, whose promtool checks the /stats/prometheus exposition, and
# Debian's chromium, the browser the admin home page test drives (through playwright-core), and
# Debian's nghttp2-client, whose h2load loads the proxy over HTTP/2, Debian's curl, which speaks
# HTTP/2 over TLS to it, and Debian's iptables, whose REDIRECT rules send connections to the
# ORIGINAL_DST test's proxy in a private network namespace.
# Idempotent: with all present it touches nothing, not even the package lists; what is missing
# is installed in one apt-install.sh call (one `apt-get update`). Where it cannot install (no
# apt-get, neither root nor passwordless sudo) it says so, and the tests that need them are
# skipped.
set -euo pipefail

missing=()
if ! command -v systemd-analyze >/dev/null 2>&1 || ! command -v systemd-notify >/dev/null 2>&1; then
  missing+=(systemd)
fi
if ! command -v promtool >/dev/null 2>&1; then
  missing+=(prometheus)
fi
if [[ ! -x /usr/bin/chromium ]]; then
  missing+=(chromium)
fi
if ! command -v h2load >/dev/null 2>&1; then
  missing+=(nghttp2-client)
fi
if ! command -v curl >/dev/null 2>&1; then
  missing+=(curl)
fi
if ! command -v iptables >/dev/null 2>&1; then
  missing+=(iptables)
fi
if [[ ${#missing[@]} -eq 0 ]]; then
  exit 0
fi
if ! command -v apt-get >/dev/null 2>&1 || { [[ "$(id -u)" -ne 0 ]] && ! sudo -n true 2>/dev/null; }; then
  echo "install-test-deps: installing Debian's ${missing[*]} package(s) needs apt-get and root" \
    "(or passwordless sudo); the tests that use them are skipped" >&2
  exit 0
fi
bash "$(dirname "${BASH_SOURCE[0]}")/apt-install.sh" "${missing[@]}"
