#!/usr/bin/env bash
# Makes sure cargo and rustc are at least native/Cargo.toml's rust-version (the addon uses
# edition 2024 and c"" literals). When they are missing or older, installs Debian's cargo-web
# and rustc-web: a current Rust that Debian 12 keeps for building its browsers (its plain
# `cargo` package is 0.66, Rust 1.63). `apt-get update` runs first only when apt does not know
# the package yet.
#
# Usage: scripts/ensure-rust.sh [--dry-run]   (--dry-run prints the apt-get commands instead)
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
dry_run=false
[[ "${1:-}" == "--dry-run" ]] && dry_run=true

required="$(sed -n 's/^rust-version *= *"\(.*\)"/\1/p' "$root/native/Cargo.toml")"
[[ -n "$required" ]] || { echo "ensure-rust: no rust-version in native/Cargo.toml" >&2; exit 1; }

# "cargo 1.85.0 (...)" -> 1.85.0; nothing when the tool is absent or does not run.
version_of() { command -v "$1" >/dev/null 2>&1 && "$1" --version 2>/dev/null | awk 'NR == 1 { print $2 }'; }
at_least() { [[ -n "$1" && "$(printf '%s\n%s\n' "$required" "$1" | sort -V | head -n 1)" == "$required" ]]; }

cargo_version="$(version_of cargo || true)"
rustc_version="$(version_of rustc || true)"
if at_least "$cargo_version" && at_least "$rustc_version"; then exit 0; fi

found="cargo ${cargo_version:-absent}, rustc ${rustc_version:-absent}"
echo "ensure-rust: native/ needs Rust $required or later; found $found"
if ! command -v apt-get >/dev/null 2>&1 || [[ "$(id -u)" != 0 ]]; then
  cat >&2 <<EOF
ensure-rust: cannot install it here (needs root and apt-get). Install Rust $required or later, e.g.
  Debian 12, as root:  apt-get update && apt-get install cargo-web
  elsewhere:           rustup (https://rustup.rs), then put ~/.cargo/bin on PATH
EOF
  exit 1
fi

run() {
  echo "+ $*"
  if ! $dry_run; then "$@"; fi
}
export DEBIAN_FRONTEND=noninteractive
# One `apt-get update`, only when apt does not know the package or its lists are stale.
updated=false
if ! apt-cache show cargo-web >/dev/null 2>&1; then run apt-get update; updated=true; fi
if ! run apt-get install -y --no-install-recommends cargo-web; then
  $updated && exit 1
  run apt-get update
  run apt-get install -y --no-install-recommends cargo-web
fi
if $dry_run; then exit 0; fi

hash -r
cargo_version="$(version_of cargo || true)"
if ! at_least "$cargo_version"; then
  echo "ensure-rust: installed cargo-web, but cargo on PATH is ${cargo_version:-absent} ($(command -v cargo || echo 'not found')); put /usr/bin before it" >&2
  exit 1
fi
echo "ensure-rust: using cargo $cargo_version"
