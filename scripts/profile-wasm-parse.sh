#!/usr/bin/env bash
# Profiles the in-browser parse without a browser: builds the loader as a bare WebAssembly module
# (examples/wasm_parse.rs), runs it over FILE in Node (V8, the engine of Chromium) with --cpu-prof, and prints
# MB/s and the functions with the most self time (ANALYZE=1: every analysis too). Usage: scripts/profile-wasm-parse.sh FILE.json [TOP]
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
TARGET="${CARGO_TARGET_DIR:-$ROOT/target}"
cargo build --release --target wasm32-unknown-unknown --example wasm_parse >&2
PROF="$(mktemp -d "${TMPDIR:-/tmp}/pm-wasm-prof-XXXX")"
trap 'rm -rf "$PROF"' EXIT
node --cpu-prof --cpu-prof-dir "$PROF" scripts/profile-wasm-parse.mjs \
  "$TARGET/wasm32-unknown-unknown/release/examples/wasm_parse.wasm" "$1"
python3 - "$PROF" "${2:-20}" <<'PY'
import collections, glob, json, re, sys
prof = json.load(open(glob.glob(sys.argv[1] + '/*.cpuprofile')[0]))
nodes = {n['id']: n for n in prof['nodes']}
self_us = collections.Counter()
for sample, dt in zip(prof['samples'], prof['timeDeltas']):
    self_us[nodes[sample]['callFrame']['functionName'] or '(anonymous)'] += dt
total = sum(self_us.values())
def short(name):  # Rust legacy mangling: _ZN..4name17h<hash>E -> path::name
    parts = re.findall(r'(\d+)', name)
    if not name.startswith('_ZN'):
        return name
    out, rest = [], name[3:]
    while rest and rest[0].isdigit():
        n = int(re.match(r'\d+', rest).group()); d = len(str(n))
        out.append(rest[d:d + n]); rest = rest[d + n:]
    return '::'.join(p for p in out if not re.fullmatch(r'h[0-9a-f]{16}', p))
for name, us in self_us.most_common(int(sys.argv[2])):
    print(f"{us / total * 100:5.1f}% {us / 1000:9.1f} ms  {short(name)[:140]}")
PY
