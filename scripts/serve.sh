#!/usr/bin/env bash
# Sets up the tools, then builds the page (release) and serves it on http://127.0.0.1:8080/ with live rebuild.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
bash scripts/setup.sh
export PATH="$HOME/.cargo/bin:$ROOT/node_modules/.bin:$PATH"
PORT="${PORT:-8080}"
echo "[serve] Profile Model at http://127.0.0.1:$PORT/ (Ctrl-C stops)"
exec trunk serve --release --address 127.0.0.1 --port "$PORT"
