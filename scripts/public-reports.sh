#!/usr/bin/env bash
# Writes the CLI's diagnosis of every public trace of one split (docs/public-traces.md): for each trace
# (a file, or a folder of rank files) OUTDIR/NAME.md (`report`) and OUTDIR/NAME.json (`report --json`), and one
# line on stdout: name, main finding id, bottleneck, holds. The traces are read from
# $PROFILE_MODEL_PUBLIC_TRACES_ROOT/SPLIT (default /work/public-traces/SPLIT); they are never committed.
#
#   scripts/public-reports.sh dev /tmp/dev-reports
#   scripts/public-reports.sh heldout /tmp/heldout-reports   # only once the rules are frozen (issue #30)
#
# PROFILE_MODEL_BIN=path uses that binary instead of building target/checked/profile-model.
set -euo pipefail

if [ $# -ne 2 ]; then
    echo "usage: $0 SPLIT OUTDIR   (SPLIT: dev or heldout, a folder under \$PROFILE_MODEL_PUBLIC_TRACES_ROOT)" >&2
    exit 2
fi
split=$1
out=$2
root=${PROFILE_MODEL_PUBLIC_TRACES_ROOT:-/work/public-traces}
traces=$root/$split
if [ ! -d "$traces" ]; then
    echo "$0: no folder $traces (expected the '$split' split of the public traces; set PROFILE_MODEL_PUBLIC_TRACES_ROOT)" >&2
    exit 1
fi

cd "$(dirname "$0")/.."
if [ -n "${PROFILE_MODEL_BIN:-}" ]; then
    bin=$PROFILE_MODEL_BIN
else
    cargo build --profile checked --bin profile-model >&2
    bin=$PWD/target/checked/profile-model
fi
mkdir -p "$out"

# One line from a report --json: main finding id, bottleneck kind, holds (comma-separated).
summary_line() {
    python3 -c '
import json, sys
r = json.load(open(sys.argv[1]))
b = r.get("bottleneck") or {}
holds = ",".join(r.get("context", {}).get("holds", []))
print("\t".join([r.get("main_finding_id") or "none", b.get("kind", "undetermined"), holds or "-"]))
' "$1"
}

count=0
failed=0
printf 'trace\tmain_finding\tbottleneck\tholds\n'
for trace in "$traces"/*; do
    name=$(basename "$trace")
    case "$name" in .*|READY|MANIFEST.md) continue ;; esac
    stem=${name%.gz}
    stem=${stem%.json}
    count=$((count + 1))
    if "$bin" report "$trace" >"$out/$stem.md" 2>"$out/$stem.err" \
        && "$bin" report --json "$trace" >"$out/$stem.json" 2>>"$out/$stem.err"; then
        printf '%s\t%s\n' "$name" "$(summary_line "$out/$stem.json")"
        [ -s "$out/$stem.err" ] || rm -f "$out/$stem.err"
    else
        failed=$((failed + 1))
        # What the user is told, in the report's place (a reader of OUTDIR sees the refusal, not an empty file).
        { echo "profile-model refused this file:"; echo; sed 's/^/    /' "$out/$stem.err"; } >"$out/$stem.md"
        printf '%s\tERROR\t-\t%s\n' "$name" "$(head -c 200 "$out/$stem.err" | tr '\n' ' ')"
    fi
done
echo "$count traces of $traces, $failed failed; reports in $out" >&2
[ "$failed" -eq 0 ]
