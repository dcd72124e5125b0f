#!/usr/bin/env bash
# Benchmark (rerunnable, not a test) of the analyses on a ~1 M-event trace made with ../shared/tools/make-big-trace:
# the time of each analysis natively (`profile-model analyze --timings`, exact and --compat hta) and in headless
# Chromium in the built page's worker (same code, timed with performance.now()).
# Usage: scripts/bench-analyses.sh [MB]   (default 200 MB ≈ 1 M events; BENCH_BROWSER=0 skips the browser part)
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/bench-prelude.sh"
MB="${1:-200}"
WORK="$(mktemp -d "${TMPDIR:-/tmp}/pm-bench-an-XXXX")"
trap 'rm -rf "$WORK"' EXIT
f="$WORK/big$MB.json"
python3 "$MAKER" "$SRC" --mb "$MB" -o "$f" >&2
events="$("$CLI" summary --json "$f" | python3 -c 'import json,sys; print(json.load(sys.stdin)["events"])')"
echo "trace: $(basename "$f"), $(stat -c %s "$f") bytes, $events events"
echo "Native, exact mode:"
"$CLI" analyze --timings "$f" 2>&1 >/dev/null
echo "Native, --compat hta:"
"$CLI" analyze --timings --compat hta "$f" 2>&1 >/dev/null
if [ "${BENCH_BROWSER:-1}" = 1 ]; then
  node scripts/bench-analyses-browser.mjs "$f"
fi
