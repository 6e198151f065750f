#!/usr/bin/env bash
# Example start script for scripts/hot-restarter: the wrapper runs it with no arguments and
# RESTART_EPOCH in the environment, once at start and again on each SIGHUP. It must `exec` the
# proxy, so that the process the wrapper watches and signals is the proxy itself.
#
# Each setting below comes from the environment when set there (proxy.service reads them from
# /etc/proxy/proxy.env, see scripts/proxy.env), else from its default here, which runs this
# checkout's configs/default.yaml. Every epoch of one proxy must use the same PROXY_BASE_ID and
# PROXY_SOCKET_PATH; two proxies on one machine need different PROXY_BASE_IDs.
#
# Arguments are appended to the proxy's command line (the last of a repeated option wins):
# scripts/reload-proxy appends `--mode validate` to check a configuration with exactly the
# command line of the next epoch.
set -euo pipefail

repo_dir="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"

: "${PROXY_CONFIG:=$repo_dir/configs/default.yaml}"
: "${PROXY_BASE_ID:=0}"
: "${PROXY_SOCKET_PATH:=@proxy_domain_socket}"
: "${PROXY_CONCURRENCY:=2}"
# Connections drain over PROXY_DRAIN_TIME_S; the old epoch is told to exit after
# PROXY_PARENT_SHUTDOWN_TIME_S, which should be the longer of the two.
: "${PROXY_DRAIN_TIME_S:=60}"
: "${PROXY_DRAIN_STRATEGY:=gradual}"
: "${PROXY_PARENT_SHUTDOWN_TIME_S:=90}"
: "${PROXY_LOG_LEVEL:=info}"
# Any other options, split at spaces, e.g. "--log-path /var/log/proxy/proxy.log".
read -r -a extra_options <<<"${PROXY_OPTIONS:-}"

exec "$repo_dir/bin/proxy" \
  -c "$PROXY_CONFIG" \
  --restart-epoch "${RESTART_EPOCH:?run by scripts/hot-restarter, which sets RESTART_EPOCH}" \
  --base-id "$PROXY_BASE_ID" \
  --socket-path "$PROXY_SOCKET_PATH" \
  --concurrency "$PROXY_CONCURRENCY" \
  --drain-time-s "$PROXY_DRAIN_TIME_S" \
  --drain-strategy "$PROXY_DRAIN_STRATEGY" \
  --parent-shutdown-time-s "$PROXY_PARENT_SHUTDOWN_TIME_S" \
  --log-level "$PROXY_LOG_LEVEL" \
  "${extra_options[@]}" \
  "$@"
