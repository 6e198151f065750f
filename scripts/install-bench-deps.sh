#!/usr/bin/env bash
# Installs what `make bench` drives and Node cannot provide: nginx with its stream module (the
# reference proxy for the HTTP and TCP rows) and wrk (the load generator). Idempotent: when
# everything is present it touches nothing, not even the package lists.
set -euo pipefail

nginx_has_stream() {
  command -v nginx >/dev/null 2>&1 || return 1
  local build
  build="$(nginx -V 2>&1)"
  # A static stream module needs nothing more; a dynamic one must be on disk for load_module.
  if grep -q -- '--with-stream ' <<<"$build "; then
    return 0
  fi
  local modules_path
  modules_path="$(grep -o -- '--modules-path=[^ ]*' <<<"$build" | cut -d= -f2)"
  [[ -n "$modules_path" && -f "$modules_path/ngx_stream_module.so" ]]
}

missing=()
command -v nginx >/dev/null 2>&1 || missing+=(nginx)
nginx_has_stream || missing+=(libnginx-mod-stream)
command -v wrk >/dev/null 2>&1 || missing+=(wrk)

if [[ ${#missing[@]} -eq 0 ]]; then
  exit 0
fi

if ! command -v apt-get >/dev/null 2>&1; then
  echo "install-bench-deps: missing ${missing[*]} and apt-get is not available; install them by hand" >&2
  exit 1
fi

sudo=()
if [[ "$(id -u)" -ne 0 ]]; then
  sudo=(sudo)
fi

# Debian starts a packaged daemon on install unless policy-rc.d forbids it; the benchmark starts
# its own nginx instances and must not leave a system nginx listening on port 80.
policy=/usr/sbin/policy-rc.d
if [[ ! -e "$policy" ]]; then
  printf '#!/bin/sh\nexit 101\n' | "${sudo[@]}" tee "$policy" >/dev/null
  "${sudo[@]}" chmod 755 "$policy"
  trap '"${sudo[@]}" rm -f "$policy"' EXIT
fi

echo "install-bench-deps: installing ${missing[*]}"
"${sudo[@]}" apt-get update -qq
"${sudo[@]}" env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
