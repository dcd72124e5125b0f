#!/usr/bin/env bash
# Benchmark (rerunnable, not a test): makes big traces with ../shared/tools/make-big-trace into a temp dir and
# prints MB/s of JSON text, events/s and peak memory for: the native CLI (`profile-model summary --json`) beside
# python3 json.load of the same file; and the built page in headless Chromium (setInputFiles -> summary ready)
# beside JSON.parse of the same text in the same page (gzip through DecompressionStream).
# The CLI and the page load each file BENCH_RUNS times (default 3); the best and the median run are printed, since a
# shared 2-core machine is noisy. The one-core row pins the CLI to one CPU (taskset), as the target is stated.
# Usage: scripts/bench.sh [MB ...]   (default: 200 1000; BENCH_BROWSER=0 skips the browser part)
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/bench-prelude.sh"
SIZES=("$@"); [ ${#SIZES[@]} -gt 0 ] || SIZES=(200 1000)
WORK="$(mktemp -d "${TMPDIR:-/tmp}/pm-bench-XXXX")"
trap 'rm -rf "$WORK"' EXIT

rows=()
for mb in "${SIZES[@]}"; do
  for ext in json json.gz; do
    f="$WORK/big$mb.$ext"
    echo "[bench] making $f" >&2
    python3 "$MAKER" "$SRC" --mb "$mb" -o "$f" >&2
    runs=(); pinned=()
    for _ in $(seq "${BENCH_RUNS:-3}"); do
      runs+=("$(python3 scripts/measure.py "$CLI" summary --json "$f")")
      if command -v taskset >/dev/null; then
        pinned+=("$(python3 scripts/measure.py taskset -c 0 "$CLI" summary --json "$f")")
      fi
    done
    events="$("$CLI" summary --json "$f" | python3 -c 'import json,sys; print(json.load(sys.stdin)["events"])')"
    if [ "$ext" = json ]; then
      text_bytes=$(stat -c %s "$f")
      pyload="import json,sys; json.load(open(sys.argv[1],'rb'))"
    else
      text_bytes=$(gzip -dc "$f" | wc -c)
      pyload="import gzip,json,sys; json.load(gzip.open(sys.argv[1],'rb'))"
    fi
    py="$(python3 scripts/measure.py python3 -c "$pyload" "$f")"
    rows+=("$(python3 - "$f" "$text_bytes" "$events" "$py" "$(printf '%s\n' "${runs[@]}")" "$(printf '%s\n' "${pinned[@]}")" <<'PY'
import json, os, sys
f, text, events, py = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), json.loads(sys.argv[4])
runs = [json.loads(l) for l in sys.argv[5].splitlines() if l.strip()]
pinned = [json.loads(l) for l in sys.argv[6].splitlines() if l.strip()]
name = os.path.basename(f)
def row(who, m):
    print(f"{name:16} {who:32} {text/1e6/m['wall_s']:9.1f} {events/m['wall_s']/1e6:9.2f} {m['peak_rss_mb']:9.0f} {m['wall_s']:8.2f}")
def best_median(who, ms):
    if not ms:
        return
    ms = sorted(ms, key=lambda m: m["wall_s"])
    row(f"{who}, best of {len(ms)}", ms[0])
    row(f"{who}, median", ms[len(ms) // 2])
best_median("native CLI", runs)
best_median("native CLI one core", pinned)
row("python3 json.load", py)
PY
)")
    if [ "${BENCH_BROWSER:-1}" = 1 ]; then
      rows+=("$(node scripts/bench-browser.mjs "$f" "$text_bytes" "$events")")
    fi
    rm -f "$f"
  done
done
printf '\n%-16s %-32s %9s %9s %9s %8s\n' file "what" "MB/s" "Mev/s" "peakMB" "s"
printf '%s\n' "${rows[@]}"
echo "(MB/s = MB of JSON text after gunzip per second; peakMB = peak RSS of the process; page worker: its WebAssembly"
echo " memory after the load; JSON.parse: JS heap used)"
