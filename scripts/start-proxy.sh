#!/usr/bin/env bash
# Example start script for scripts/hot-restarter: the wrapper runs it with no arguments and
# RESTART_EPOCH in the environment, once at start and again on each SIGHUP. It must `exec` the
# proxy, so that the process the wrapper watches and signals is the proxy itself.
#
# Edit the variables below. Every epoch of one proxy must use the same BASE_ID and SOCKET_PATH;
# two proxies on one machine need different BASE_IDs.
set -euo pipefail

repo_dir="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"

CONFIG="$repo_dir/configs/default.yaml"
BASE_ID=0
SOCKET_PATH="@proxy_domain_socket"
CONCURRENCY=2
# Connections drain over DRAIN_TIME_S; the old epoch is told to exit after PARENT_SHUTDOWN_TIME_S,
# which should be the longer of the two.
DRAIN_TIME_S=60
DRAIN_STRATEGY=gradual
PARENT_SHUTDOWN_TIME_S=90
LOG_LEVEL=info

exec "$repo_dir/bin/proxy" \
  -c "$CONFIG" \
  --restart-epoch "${RESTART_EPOCH:?run by scripts/hot-restarter, which sets RESTART_EPOCH}" \
  --base-id "$BASE_ID" \
  --socket-path "$SOCKET_PATH" \
  --concurrency "$CONCURRENCY" \
  --drain-time-s "$DRAIN_TIME_S" \
  --drain-strategy "$DRAIN_STRATEGY" \
  --parent-shutdown-time-s "$PARENT_SHUTDOWN_TIME_S" \
  --log-level "$LOG_LEVEL"
