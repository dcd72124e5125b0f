# Sourced by the benchmark scripts: paths (ROOT, TRACES, MAKER, SRC, CLI), a release CLI build, and the built
# page when the browser part runs (BENCH_BROWSER=1, the default).
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
export PATH="$HOME/.cargo/bin:$ROOT/node_modules/.bin:$PATH"
TRACES="${PROFILE_MODEL_TRACES:-$ROOT/../shared/traces}"
MAKER="${MAKE_BIG_TRACE:-$ROOT/../shared/tools/make-big-trace}"
SRC="$TRACES/hta__negative_queue_length__rank0.json.gz"
TARGET="${CARGO_TARGET_DIR:-$ROOT/target}"
CLI="$TARGET/release/profile-model"

cargo build --release --bin profile-model >&2
if [ "${BENCH_BROWSER:-1}" = 1 ] && [ ! -f dist/index.html ]; then
  bash scripts/setup.sh >&2
  trunk build --release --dist "$ROOT/dist" >&2
fi
