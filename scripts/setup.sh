#!/usr/bin/env bash
# Installs what building and testing Profile Model needs, only what is missing or at a wrong version.
# Idempotent; prints each step; exits non-zero on any failure. Source it (". scripts/setup.sh") to keep
# node_modules/.bin on PATH, or run it.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
say() { echo "[setup] $*"; }
die() { echo "[setup] FAILED: $*" >&2; exit 1; }
export PATH="$HOME/.cargo/bin:$ROOT/node_modules/.bin:$PATH"

TRUNK_VERSION=0.21.14
command -v cargo >/dev/null || die "cargo not found (install Rust stable with rustup)"
command -v node >/dev/null || die "node not found (Node 20 is needed)"

# 1. wasm32 target
if rustup target list --installed | grep -qx wasm32-unknown-unknown; then
  say "rust target wasm32-unknown-unknown: present"
else
  say "adding rust target wasm32-unknown-unknown"
  rustup target add wasm32-unknown-unknown || die "rustup target add wasm32-unknown-unknown"
fi

# 2 + 3. trunk and wasm-bindgen-cli, built in the background side by side while the rest installs.
# Both are built without optimisation (`--debug`): they only drive cargo, wasm-bindgen's transform and
# wasm-opt over a few MB, so an optimised build buys nothing here and costs 4x the time (trunk: about
# 160 s instead of 640 s cold on 2 cores; wasm-bindgen-cli: about 110 s instead of 245 s).
BG_LOG="$(mktemp -d)"
bg_pids=()
bg_names=()
in_background() {
  local name="$1"; shift
  say "$name (in the background, log $BG_LOG/$name.log)"
  ("$@") > "$BG_LOG/$name.log" 2>&1 &
  bg_pids+=("$!"); bg_names+=("$name")
}
wait_background() {
  local i
  for i in "${!bg_pids[@]}"; do
    if wait "${bg_pids[$i]}"; then
      say "${bg_names[$i]}: done"
    else
      tail -30 "$BG_LOG/${bg_names[$i]}.log" >&2
      die "${bg_names[$i]} (log above)"
    fi
  done
  bg_pids=(); bg_names=()
}

# trunk (0.22 needs a newer rustc)
have_trunk="$(trunk --version 2>/dev/null | awk '{print $2}' || true)"
if [ "$have_trunk" = "$TRUNK_VERSION" ]; then
  say "trunk $TRUNK_VERSION: present"
else
  say "installing trunk $TRUNK_VERSION (found: ${have_trunk:-none}; about 3 min cold)"
  in_background trunk cargo install trunk --version "$TRUNK_VERSION" --locked --debug --force
fi

# wasm-bindgen-cli at exactly the wasm-bindgen version in Cargo.lock (no --locked: see TOOLCHAIN)
WB_VERSION="$(awk '/^name = "wasm-bindgen"$/{getline; gsub(/version = |"/, ""); print; exit}' "$ROOT/Cargo.lock")"
[ -n "$WB_VERSION" ] || die "no wasm-bindgen package in Cargo.lock"
have_wb="$(wasm-bindgen --version 2>/dev/null | awk '{print $2}' || true)"
if [ "$have_wb" = "$WB_VERSION" ]; then
  say "wasm-bindgen-cli $WB_VERSION: present"
else
  say "installing wasm-bindgen-cli $WB_VERSION (found: ${have_wb:-none}; about 2 min cold)"
  in_background wasm-bindgen-cli cargo install wasm-bindgen-cli --version "$WB_VERSION" --debug --force
fi

# 4. npm packages (binaryen's wasm-opt, playwright-core), pinned by package-lock.json
DUCKDB_DIST="$ROOT/node_modules/@duckdb/duckdb-wasm/dist"
if [ -x "$ROOT/node_modules/.bin/wasm-opt" ] && [ -d "$ROOT/node_modules/playwright-core" ] \
   && [ -f "$DUCKDB_DIST/duckdb-eh.wasm" ] \
   && [ "$ROOT/node_modules/.package-lock.json" -nt "$ROOT/package-lock.json" ]; then
  say "node_modules: up to date"
else
  say "npm ci"
  (cd "$ROOT" && npm ci --no-audit --no-fund) || die "npm ci"
fi
wasm-opt --version | grep -q 'version 132' || die "wasm-opt is not binaryen 132: $(wasm-opt --version)"

# 4b. The SQL tab's engine, served from the page's own origin: the three browser files of the pinned
# @duckdb/duckdb-wasm (its `eh` build: the wasm, its worker, and Apache Arrow JS to read its answers),
# copied to vendor/duckdb/ (gitignored), which Trunk copies to dist/duckdb/ (index.html).
VENDOR="$ROOT/vendor/duckdb"
mkdir -p "$VENDOR"
for pair in "$DUCKDB_DIST/duckdb-eh.wasm:duckdb-eh.wasm" \
            "$DUCKDB_DIST/duckdb-browser-eh.worker.js:duckdb-browser-eh.worker.js" \
            "$ROOT/node_modules/apache-arrow/Arrow.es2015.min.js:arrow.js"; do
  src="${pair%%:*}"; dst="$VENDOR/${pair##*:}"
  [ -f "$src" ] || die "missing $src (npm ci)"
  if [ ! -f "$dst" ] || ! cmp -s "$src" "$dst"; then cp "$src" "$dst"; fi
done
say "vendor/duckdb: $(du -sk "$VENDOR" | cut -f1) KB (DuckDB-WASM $(node -p "require('$ROOT/node_modules/@duckdb/duckdb-wasm/package.json').version"))"

# 5. Debian chromium (+ chromedriver) for the end-to-end tests
if [ -x /usr/bin/chromium ]; then
  say "chromium: present ($(/usr/bin/chromium --version 2>/dev/null || echo '?'))"
else
  say "installing Debian chromium + chromium-driver (apt-get)"
  SUDO=""; [ "$(id -u)" = 0 ] || SUDO="sudo"
  $SUDO apt-get update || die "apt-get update"
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y chromium chromium-driver || die "apt-get install chromium"
fi
# 6. python3 with venv (+ pip), for the export check read by pyarrow/pandas/DuckDB/polars (scripts/test.sh)
if python3 -c 'import venv, ensurepip' 2>/dev/null; then
  say "python3 with venv: present ($(python3 --version 2>&1))"
else
  say "installing Debian python3 + python3-venv (apt-get)"
  SUDO=""; [ "$(id -u)" = 0 ] || SUDO="sudo"
  $SUDO apt-get update || die "apt-get update"
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y python3 python3-venv || die "apt-get install python3-venv"
fi
wait_background
say "done"
