#!/usr/bin/env bash
# Benchmark (rerunnable, not a test): makes big traces with ../shared/tools/make-big-trace into a temp dir and
# prints MB/s of JSON text, events/s and peak memory for: the native CLI (`profile-model summary --json`) beside
# python3 json.load of the same file; and the built page in headless Chromium (setInputFiles -> summary ready)
# beside JSON.parse of the same text in the same page (gzip through DecompressionStream).
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
    summary="$(python3 scripts/measure.py "$CLI" summary --json "$f")"
    events="$("$CLI" summary --json "$f" | python3 -c 'import json,sys; print(json.load(sys.stdin)["events"])')"
    if [ "$ext" = json ]; then
      text_bytes=$(stat -c %s "$f")
      pyload="import json,sys; json.load(open(sys.argv[1],'rb'))"
    else
      text_bytes=$(gzip -dc "$f" | wc -c)
      pyload="import gzip,json,sys; json.load(gzip.open(sys.argv[1],'rb'))"
    fi
    py="$(python3 scripts/measure.py python3 -c "$pyload" "$f")"
    rows+=("$(python3 - "$f" "$text_bytes" "$events" "$summary" "$py" <<'PY'
import json, os, sys
f, text, events, cli, py = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), json.loads(sys.argv[4]), json.loads(sys.argv[5])
name = os.path.basename(f)
for who, m in (("native CLI summary", cli), ("python3 json.load", py)):
    print(f"{name:16} {who:28} {text/1e6/m['wall_s']:9.1f} {events/m['wall_s']/1e6:9.2f} {m['peak_rss_mb']:9.0f} {m['wall_s']:8.2f}")
PY
)")
    if [ "${BENCH_BROWSER:-1}" = 1 ]; then
      rows+=("$(node scripts/bench-browser.mjs "$f" "$text_bytes" "$events")")
    fi
    rm -f "$f"
  done
done
printf '\n%-16s %-28s %9s %9s %9s %8s\n' file "what" "MB/s" "Mev/s" "peakMB" "s"
printf '%s\n' "${rows[@]}"
echo "(MB/s = MB of JSON text after gunzip per second; peakMB = peak RSS of the process, browser: JS heap used)"
