#!/usr/bin/env bash
# Builds the Rust addon in native/ and leaves it at native/proxy-native.node.
# Needs npm and cargo (scripts/ensure-rust.sh installs cargo when missing or too old); runs
# offline (the crate has no dependencies). Safe to re-run: cargo rebuilds only what changed.
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
napi="$root/node_modules/.bin/napi"

if [[ ! -x "$napi" ]]; then
  # A fresh clone: @napi-rs/cli comes from the project's own lockfile.
  (cd "$root" && npm ci --no-audit --no-fund)
fi

bash "$root/scripts/ensure-rust.sh"

# napi reads native/package.json, whose napi.name makes the output proxy-native.node.
cd "$root/native"
CARGO_NET_OFFLINE=true "$napi" build --release

test -f "$root/native/proxy-native.node"
