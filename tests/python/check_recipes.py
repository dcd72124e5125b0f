"""The many-ranks recipes (docs/recipes/duckdb.md, docs/recipes/dask.md) checked against the CLI.

Generates a 16-rank set with `make-big-trace` (rank 5 slowed by 1.3x), exports each rank to Parquet with
`profile-model export` (one process per rank, as on many machines), runs the recipes' own code (the
```sql block of duckdb.md, the ```python block of dask.md, read from the Markdown) over the files, and
checks against the single-process CLI (`profile-model analyze --json` on the folder):
  - per rank, the GPU busy time (sum of device durations) equals the sum of `sum_us` over
    `kernel_breakdown.ranks[R].kernels` (1e-9 relative),
  - the slowest rank equals the CLI's (largest figure, and the first of `stragglers.ranks`),
  - `profile-model merge` of per-rank `analyze --json` outputs gives the folder's stragglers.

usage: python check_recipes.py PROFILE_MODEL_CLI TRACES_DIR
Skips (exit 0, with a note) when TRACES_DIR/../tools/make-big-trace is missing.
"""

import json
import os
import re
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor

import duckdb

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
RANKS = 16
SLOW_RANK = 5
SOURCE = "hta__nccl_data.json.gz"


def fail(message):
    print(f"check_recipes: FAILED: {message}", file=sys.stderr)
    sys.exit(1)


def code_block(recipe, lang):
    with open(os.path.join(ROOT, "docs", "recipes", recipe), encoding="utf-8") as f:
        text = f.read()
    m = re.search(rf"```{lang}\n(.*?)```", text, re.S)
    if not m:
        fail(f"no ```{lang} block in docs/recipes/{recipe}")
    return m.group(1)


def run(*args):
    return subprocess.run(list(args), check=True, capture_output=True, text=True).stdout


def make_ranks(tool, traces, tmp):
    out = os.path.join(tmp, "traces")
    run(sys.executable, tool, os.path.join(traces, SOURCE), "--mb", "3", "--ranks", str(RANKS),
        "--slow-rank", str(SLOW_RANK), "--slow", "1.3", "-o", out + "/")
    return out


def per_rank(cli, traces_dir, tmp):
    """Each rank exported to Parquet and analysed on its own, as independent tasks."""
    parquet = os.path.join(tmp, "ranks")
    outs = os.path.join(tmp, "outs")
    os.makedirs(parquet)
    os.makedirs(outs)

    def task(r):
        trace = os.path.join(traces_dir, f"rank{r}.json.gz")
        run(cli, "export", "--format", "parquet", trace, "-o", os.path.join(parquet, f"rank{r}.parquet"))
        with open(os.path.join(outs, f"rank{r}.json"), "w") as f:
            f.write(run(cli, "analyze", "--json", trace))

    with ThreadPoolExecutor(max_workers=os.cpu_count() or 2) as pool:
        list(pool.map(task, range(RANKS)))
    return parquet, [os.path.join(outs, f"rank{r}.json") for r in range(RANKS)]


def duckdb_recipe(parquet, tmp):
    sql = code_block("duckdb.md", "sql")
    sql = sql.replace("ranks/*.parquet", os.path.join(parquet, "*.parquet"))
    sql = sql.replace("/tmp/duckdb-spill", os.path.join(tmp, "spill"))
    con = duckdb.connect()
    statements = [s for s in sql.split(";\n") if s.strip()]
    for s in statements[:-1]:
        con.execute(s)
    rows = con.execute(statements[-1]).fetchall()
    return {int(r[0]): float(r[1]) for r in rows}, int(rows[0][0])


def dask_recipe(parquet):
    scope = {"__name__": "recipe"}
    exec(code_block("dask.md", "python"), scope)
    busy = scope["gpu_busy_by_rank"](os.path.join(parquet, "*.parquet"))
    return {int(k): float(v) for k, v in busy.items()}, int(busy.index[0])


def cli_figures(folder_json):
    busy = {r["rank"]: sum(k["sum_us"] for k in r["kernels"]) for r in folder_json["kernel_breakdown"]["ranks"]}
    slowest = max(busy, key=lambda r: (busy[r], -r))
    return busy, slowest


def same(name, got, want):
    if set(got) != set(want):
        fail(f"{name}: ranks {sorted(got)} != CLI's {sorted(want)}")
    for r, v in want.items():
        if abs(got[r] - v) > 1e-9 * max(abs(v), 1.0):
            fail(f"{name}: rank {r} busy {got[r]} != CLI's {v}")


def main():
    if len(sys.argv) != 3:
        fail("usage: check_recipes.py PROFILE_MODEL_CLI TRACES_DIR")
    cli, traces = sys.argv[1], sys.argv[2]
    tool = os.path.join(traces, "..", "tools", "make-big-trace")
    if not os.path.isfile(tool):
        print(f"check_recipes: note: {tool} not found, recipes not checked")
        return
    t0 = time.time()
    with tempfile.TemporaryDirectory(prefix="pm-recipes-") as tmp:
        traces_dir = make_ranks(tool, traces, tmp)
        parquet, outs = per_rank(cli, traces_dir, tmp)
        folder = json.loads(run(cli, "analyze", "--json", traces_dir))
        merged = json.loads(run(cli, "merge", "--json", *outs))
        want, slowest = cli_figures(folder)
        if slowest != SLOW_RANK or folder["stragglers"]["ranks"][:1] != [SLOW_RANK]:
            fail(f"the CLI's slowest rank {slowest}, stragglers {folder['stragglers']['ranks']}: expected {SLOW_RANK}")
        if merged["stragglers"] != folder["stragglers"]:
            fail(f"merge's stragglers {merged['stragglers']} != the folder's {folder['stragglers']}")
        for name, (busy, top) in [("duckdb", duckdb_recipe(parquet, tmp)), ("dask", dask_recipe(parquet))]:
            same(name, busy, want)
            if top != slowest:
                fail(f"{name}: slowest rank {top} != CLI's {slowest}")
            print(f"check_recipes: {name}: {len(busy)} ranks, busy time equal to the CLI's, slowest rank {top}")
    print(f"check_recipes: ok ({time.time() - t0:.1f} s)")


if __name__ == "__main__":
    main()
