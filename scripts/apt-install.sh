#!/usr/bin/env bash
# Installs Debian packages for `make bench` and `make test`: apt-install.sh <package>...
# As root, or through sudo. Runs `apt-get update` once, then installs without recommends.
set -euo pipefail

if [[ $# -eq 0 ]]; then
  echo "usage: apt-install.sh <package>..." >&2
  exit 2
fi
if ! command -v apt-get >/dev/null 2>&1; then
  echo "apt-install: apt-get is not available; install $* by hand" >&2
  exit 1
fi

sudo=()
if [[ "$(id -u)" -ne 0 ]]; then
  sudo=(sudo)
fi

# Debian starts a packaged daemon on install unless policy-rc.d forbids it; the benchmarks and
# tests start their own instances and must not leave, say, a system nginx listening on port 80.
policy=/usr/sbin/policy-rc.d
if [[ ! -e "$policy" ]]; then
  printf '#!/bin/sh\nexit 101\n' | "${sudo[@]}" tee "$policy" >/dev/null
  "${sudo[@]}" chmod 755 "$policy"
  trap '"${sudo[@]}" rm -f "$policy"' EXIT
fi

echo "apt-install: installing $*"
"${sudo[@]}" apt-get update -qq
"${sudo[@]}" env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "$@" >/dev/null
