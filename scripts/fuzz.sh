#!/usr/bin/env bash
# Runs each cargo-fuzz target (fuzz/fuzz_targets: reader, gzip, analyses) for SECONDS each (default 60),
# coverage-guided, on a seed corpus cut small from the shared traces ($PROFILE_MODEL_TRACES, first 6 KB of
# each). Needs the nightly toolchain; installs cargo-fuzz from crates.io when missing. Prints the
# executions each target ran; a crash fails the run and leaves its input in fuzz/artifacts/.
# A long run: scripts/fuzz.sh 3600. FUZZ_SEED=N fixes libFuzzer's seed and FUZZ_RUNS=N caps the
# executions per target: with both, a run is the same sequence of inputs on every machine (CI uses that).
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
SECS="${1:-60}"
TRACES="${PROFILE_MODEL_TRACES:-$ROOT/../shared/traces}"
export PATH="$HOME/.cargo/bin:$PATH"
if ! cargo +nightly --version >/dev/null 2>&1; then
  echo "[fuzz] SKIPPED: no nightly toolchain (cargo-fuzz needs it); tests/fuzz_smoke.rs runs the same harnesses on stable"
  exit 0
fi
if ! cargo fuzz --version >/dev/null 2>&1; then
  cargo install cargo-fuzz --locked || {
    echo "[fuzz] SKIPPED: cargo-fuzz could not be installed from crates.io; tests/fuzz_smoke.rs still ran the harnesses"
    exit 0
  }
fi
for t in reader gzip analyses; do
  mkdir -p "fuzz/corpus/$t"
  if [ -d "$TRACES" ]; then
    for f in "$TRACES"/*.json "$TRACES"/*.gz; do
      [ -f "$f" ] || continue
      out="fuzz/corpus/$t/seed-$(basename "$f").json"
      [ -f "$out" ] || { (zcat -f "$f" 2>/dev/null || true) | head -c 6144 > "$out"; printf ']}' >> "$out"; }
    done
  fi
done
total=0
for t in reader gzip analyses; do
  log="$(mktemp)"
  # -rss_limit_mb bounds memory; -max_len keeps inputs small enough to run fast.
  extra=()
  [ -n "${FUZZ_SEED:-}" ] && extra+=("-seed=$FUZZ_SEED")
  [ -n "${FUZZ_RUNS:-}" ] && extra+=("-runs=$FUZZ_RUNS")
  if ! cargo +nightly fuzz run "$t" "fuzz/corpus/$t" -- -max_total_time="$SECS" -max_len=65536 \
      -rss_limit_mb=4096 -print_final_stats=1 "${extra[@]}" > "$log" 2>&1; then
    tail -40 "$log"
    echo "[fuzz] FAILED: target $t crashed (input in fuzz/artifacts/$t/)" >&2
    exit 1
  fi
  runs=$(grep -o 'stat::number_of_executed_units: *[0-9]*' "$log" | grep -o '[0-9]*$' || echo 0)
  total=$((total + runs))
  echo "[fuzz] $t: $runs executions (at most ${SECS} s), no crash"
  rm -f "$log"
done
echo "[fuzz] all targets: $total executions, no crash"
