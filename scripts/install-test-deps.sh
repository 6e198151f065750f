#!/usr/bin/env bash
# Installs what `make test` uses beyond Node, when missing: Debian's systemd package, whose
# systemd-analyze verifies scripts/proxy.service and whose systemd-notify scripts/reload-proxy
# runs. Idempotent: with both present it touches nothing, not even the package lists. Where it
# cannot install (no apt-get, neither root nor passwordless sudo) it says so, and the tests that
# need them are skipped.
set -euo pipefail

if command -v systemd-analyze >/dev/null 2>&1 && command -v systemd-notify >/dev/null 2>&1; then
  exit 0
fi
if ! command -v apt-get >/dev/null 2>&1 || { [[ "$(id -u)" -ne 0 ]] && ! sudo -n true 2>/dev/null; }; then
  echo "install-test-deps: systemd-analyze or systemd-notify is missing, and installing Debian's systemd" \
    "package needs apt-get and root (or passwordless sudo); the tests that use them are skipped" >&2
  exit 0
fi
bash "$(dirname "${BASH_SOURCE[0]}")/apt-install.sh" systemd
