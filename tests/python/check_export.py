"""The CLI's export read by the tools people use: pyarrow, pandas, DuckDB and polars.

For a few shared traces (one file each, and a folder of two ranks), runs
`profile-model export` to Parquet, Arrow IPC and CSV and `profile-model summary --json`, then reads every
file with every library and checks, against values computed here from the trace JSON itself (Python's
gzip + json, not the CLI) and against the CLI's summary:
  - the row count (= the trace's event count = the summary's `events`),
  - the count and summed `dur` of `cat == "kernel"` rows (= the summary's `kernels`, `kernel_time_us`),
  - the set of distinct names,
  - the standard columns first, in the seed's order.

usage: python check_export.py PROFILE_MODEL_CLI TRACES_DIR
Exits non-zero with a message at the first difference.
"""

import gzip
import json
import math
import os
import shutil
import subprocess
import sys
import tempfile

import duckdb
import pandas as pd
import polars as pl
import pyarrow as pa
import pyarrow.csv as pacsv
import pyarrow.ipc as ipc
import pyarrow.parquet as pq

STANDARD = ["name", "cat", "ph", "ts", "dur", "pid", "tid", "id"]
TRACES = [
    "hta__nccl_data.json.gz",
    "hta__ns_resolution__rank-0.Apr_03_18_51_38.1102.pt.trace.json.gz",
    "hta__amd_mi250_minitoy_train.json.gz",
]
RANKS = ["hta__sampled_rank-0.json.gz", "hta__sampled_rank-1.json.gz"]


def fail(message):
    print(f"check_export: FAILED: {message}", file=sys.stderr)
    sys.exit(1)


def check(cond, message):
    if not cond:
        fail(message)


def trace_events(path):
    opener = gzip.open if path.endswith(".gz") else open
    with opener(path, "rb") as f:
        doc = json.load(f)
    return doc if isinstance(doc, list) else doc["traceEvents"]


def expected_of(paths):
    """Rows, kernel rows, kernel µs and distinct names, straight from the JSON."""
    events = [e for p in paths for e in trace_events(p)]
    kernels = [e for e in events if e.get("cat") == "kernel"]
    return {
        "rows": len(events),
        "kernels": len(kernels),
        "kernel_us": sum(float(e["dur"]) for e in kernels),
        "names": {e["name"] for e in events if e.get("name")},
    }


def cli_summary(cli, path):
    out = subprocess.run([cli, "summary", "--json", path], check=True, capture_output=True, text=True).stdout
    doc = json.loads(out)
    ranks = doc["ranks"] if "ranks" in doc else [doc]
    return {
        "rows": sum(r["events"] for r in ranks),
        "kernels": sum(r["kernels"] for r in ranks),
        "kernel_us": sum(r["kernel_time_us"] for r in ranks),
    }


def close(a, b, what):
    check(math.isclose(a, b, rel_tol=1e-9, abs_tol=1e-6), f"{what}: {a} != {b}")


def compare(label, got, want, several_ranks):
    """got: rows, kernels, kernel_us, names, columns as one reader saw them."""
    check(got["rows"] == want["rows"], f"{label}: {got['rows']} rows, the trace has {want['rows']}")
    check(got["kernels"] == want["kernels"], f"{label}: {got['kernels']} kernel rows, want {want['kernels']}")
    close(got["kernel_us"], want["kernel_us"], f"{label}: kernel dur sum")
    check(got["names"] == want["names"],
          f"{label}: names differ: {sorted(got['names'] ^ want['names'])[:5]}")
    first = STANDARD + (["rank"] if several_ranks else [])
    check(list(got["columns"][: len(first)]) == first, f"{label}: columns start {got['columns'][:10]}")
    check(all(c.startswith("args_") for c in got["columns"][len(first):]), f"{label}: other columns are args_*")


def from_pandas(df):
    kernels = df[df["cat"] == "kernel"]
    return {"rows": len(df), "kernels": len(kernels), "kernel_us": float(kernels["dur"].sum()),
            "names": set(df["name"].dropna()), "columns": list(df.columns)}


def from_polars(df):
    kernels = df.filter(pl.col("cat") == "kernel")
    return {"rows": df.height, "kernels": kernels.height, "kernel_us": float(kernels["dur"].sum() or 0.0),
            "names": set(df["name"].drop_nulls().to_list()), "columns": df.columns}


def from_arrow(table):
    return from_polars(pl.from_arrow(table)) | {"rows": table.num_rows}


def from_duckdb(relation_sql, columns_sql):
    con = duckdb.connect()
    rows, kernels, kernel_us = con.execute(
        f"select count(*), count(*) filter (where cat = 'kernel'), "
        f"coalesce(sum(dur) filter (where cat = 'kernel'), 0) from {relation_sql}").fetchone()
    names = {r[0] for r in con.execute(f"select distinct name from {relation_sql} where name is not null").fetchall()}
    columns = [r[0] for r in con.execute(f"describe select * from {columns_sql}").fetchall()]
    return {"rows": rows, "kernels": kernels, "kernel_us": float(kernel_us), "names": names, "columns": columns}


def check_one(cli, path, trace_paths, out_dir, label):
    want = expected_of(trace_paths)
    summary = cli_summary(cli, path)
    check(summary["rows"] == want["rows"], f"{label}: summary says {summary['rows']} events, the JSON has {want['rows']}")
    check(summary["kernels"] == want["kernels"], f"{label}: summary kernels {summary['kernels']} vs {want['kernels']}")
    close(summary["kernel_us"], want["kernel_us"], f"{label}: summary kernel_time_us")
    several = len(trace_paths) > 1
    files = {}
    for fmt in ["parquet", "arrow", "csv"]:
        out = os.path.join(out_dir, f"{label}.{fmt}")
        subprocess.run([cli, "export", "--format", fmt, path, "-o", out], check=True, capture_output=True)
        files[fmt] = out
    with open(files["parquet"], "rb") as f:
        check(f.read(4) == b"PAR1", f"{label}: parquet magic")
    with open(files["arrow"], "rb") as f:
        check(f.read(6) == b"ARROW1", f"{label}: arrow magic")
    csv_opts = {"low_memory": False, "keep_default_na": False, "na_values": [""]}
    readers = {
        "pyarrow parquet": lambda: from_arrow(pq.read_table(files["parquet"])),
        "pyarrow ipc": lambda: from_arrow(ipc.open_file(files["arrow"]).read_all()),
        "pyarrow csv": lambda: from_arrow(pacsv.read_csv(files["csv"])),
        "pandas parquet": lambda: from_pandas(pd.read_parquet(files["parquet"])),
        "pandas feather": lambda: from_pandas(pd.read_feather(files["arrow"])),
        "pandas csv": lambda: from_pandas(pd.read_csv(files["csv"], **csv_opts)),
        "duckdb parquet": lambda: from_duckdb(f"read_parquet('{files['parquet']}')", f"read_parquet('{files['parquet']}')"),
        "duckdb csv": lambda: from_duckdb(f"read_csv('{files['csv']}', header=true, all_varchar=false, sample_size=-1)",
                                          f"read_csv('{files['csv']}', header=true, sample_size=-1)"),
        "polars parquet": lambda: from_polars(pl.read_parquet(files["parquet"])),
        "polars ipc": lambda: from_polars(pl.read_ipc(files["arrow"])),
        "polars csv": lambda: from_polars(pl.read_csv(files["csv"], infer_schema_length=None)),
    }
    for reader, read in readers.items():
        compare(f"{label} via {reader}", read(), want, several)
    # The typed formats agree value for value.
    parquet = pq.read_table(files["parquet"])
    check(parquet.equals(ipc.open_file(files["arrow"]).read_all()), f"{label}: parquet and arrow tables differ")
    print(f"check_export: {label}: {want['rows']} rows, {parquet.num_columns} columns, "
          f"{len(readers)} readers agree with the JSON and the CLI summary")


def main():
    if len(sys.argv) != 3:
        fail("usage: check_export.py PROFILE_MODEL_CLI TRACES_DIR")
    cli, traces = sys.argv[1], sys.argv[2]
    out_dir = tempfile.mkdtemp(prefix="pm-export-check-")
    try:
        for name in TRACES:
            path = os.path.join(traces, name)
            check_one(cli, path, [path], out_dir, name.split(".")[0])
        ranks_dir = os.path.join(out_dir, "ranks")
        os.mkdir(ranks_dir)
        for name in RANKS:
            shutil.copy(os.path.join(traces, name), ranks_dir)
        check_one(cli, ranks_dir, [os.path.join(ranks_dir, n) for n in RANKS], out_dir, "two-ranks")
    finally:
        shutil.rmtree(out_dir, ignore_errors=True)
    print("check_export: ok")


if __name__ == "__main__":
    main()
