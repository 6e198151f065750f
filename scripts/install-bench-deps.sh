#!/usr/bin/env bash
# Installs what `make bench` drives and Node cannot provide: nginx with its stream module (the
# reference proxy for the HTTP and TCP rows), wrk (the load generator) and h2load (Debian's
# nghttp2-client, the HTTP/2 load generator). Idempotent: when
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
command -v h2load >/dev/null 2>&1 || missing+=(nghttp2-client)

if [[ ${#missing[@]} -eq 0 ]]; then
  exit 0
fi

bash "$(dirname "${BASH_SOURCE[0]}")/apt-install.sh" "${missing[@]}"
