"""An independent check of `profile-model roofline --json` on a real trace, over the raw JSON.

For each GPU kernel, the launching runtime call (same `correlation`) and the innermost `cpu_op` on the
same thread that encloses that call give its operator. For the GEMM operators (`aten::mm`,
`aten::addmm`, `aten::bmm`) and the plain element-wise `aten::add` / `aten::mul` (no `out=`), the
FLOPs and bytes are computed here from `Input Dims` / `Input type`, summed per (operator, shapes)
with the time of the kernels they launched, and judged against the A100 SXM4 80GB's datasheet roof
(312 bf16/fp16, 156 TF32, 19.5 fp32 TFLOP/s; 2039 GB/s). The CLI's operator rows must agree to 1e-6
(relative) on FLOPs, bytes, kernel time, TFLOP/s and % of roof.

usage: python check_roofline.py PROFILE_MODEL_CLI TRACE
Prints the compared rows; exits non-zero at the first difference.
"""

import bisect
import gzip
import json
import subprocess
import sys
from collections import defaultdict

ELEM = {"float": 4, "double": 8, "c10::Half": 2, "c10::BFloat16": 2, "int": 4, "long": 8}
PEAK = {"float": 19.5, "tf32": 156.0, "c10::BFloat16": 312.0, "c10::Half": 312.0, "double": 19.5}
MEMORY_GBPS = 2039.0
TENSOR_CORE_MARKS = ["tensorop", "s1688", "s16816", "h16816", "xmma", "hmma", "tf32", "gmma"]


def load(path):
    opener = gzip.open if path.endswith(".gz") else open
    with opener(path, "rt") as f:
        doc = json.load(f)
    return doc["traceEvents"] if isinstance(doc, dict) else doc


def prod(xs):
    p = 1
    for x in xs:
        p *= x
    return p


def model(name, dims, types):
    """(flops, bytes, dtype) or None."""
    if name in ("aten::mm", "aten::addmm", "aten::bmm"):
        a, b = (1, 2) if name == "aten::addmm" else (0, 1)
        x, w = dims[a], dims[b]
        batch = x[0] if name == "aten::bmm" else 1
        m, k = x[-2], x[-1]
        n = w[-1]
        e = ELEM[types[a]]
        moved = (prod(x) + prod(w) + batch * m * n) * e
        if name == "aten::addmm":
            moved += prod(dims[0]) * ELEM[types[0]]
        return 2.0 * batch * m * k * n, float(moved), types[a]
    if name in ("aten::add", "aten::mul"):
        tensors = [(d, t) for d, t in zip(dims, types) if t in ELEM]
        limit = 3 if name == "aten::add" else 2
        if len([i for i, t in enumerate(types) if t in ELEM and i >= limit]) > 0:
            return None  # out= variant: left to the Rust tests
        shape = []
        for d, _ in tensors:
            n = max(len(shape), len(d))
            s = [1] * (n - len(shape)) + shape
            t = [1] * (n - len(d)) + d
            shape = [max(p, q) for p, q in zip(s, t)]
        numel = prod(shape) if tensors else 0
        moved = sum(prod(d) * ELEM[t] for d, t in tensors) + numel * ELEM[tensors[0][1]]
        return float(numel), float(moved), tensors[0][1]
    return None


def main():
    cli, trace = sys.argv[1], sys.argv[2]
    events = load(trace)
    runtime = {}
    ops_by_thread = defaultdict(list)
    for e in events:
        a = e.get("args") or {}
        if e.get("ph") != "X":
            continue
        if e.get("cat") in ("cuda_runtime", "cuda_driver") and "correlation" in a:
            runtime.setdefault(a["correlation"], e)
        if e.get("cat") == "cpu_op":
            ops_by_thread[(e["pid"], e["tid"])].append(e)
    for ops in ops_by_thread.values():
        ops.sort(key=lambda o: (o["ts"], -o["dur"]))
    starts = {k: [o["ts"] for o in v] for k, v in ops_by_thread.items()}

    def innermost(call):
        key = (call["pid"], call["tid"])
        ops = ops_by_thread.get(key, [])
        i = bisect.bisect_right(starts.get(key, []), call["ts"])
        best = None
        for o in ops[:i]:
            if o["ts"] + o["dur"] >= call["ts"] + call["dur"]:
                best = o  # the latest start that encloses it: the innermost
        return best

    kernels_of = defaultdict(list)  # id(op) -> [(dur, name)]
    op_by_id = {}
    for e in events:
        if e.get("cat") != "kernel" or e.get("ph") != "X":
            continue
        call = runtime.get((e.get("args") or {}).get("correlation"))
        op = innermost(call) if call else None
        if op is None:
            continue
        kernels_of[id(op)].append((e["dur"], e["name"]))
        op_by_id[id(op)] = op

    mine = defaultdict(lambda: [0.0, 0.0, 0.0, None, 0])  # flops, bytes, time_us, dtype, calls
    for oid, ks in kernels_of.items():
        op = op_by_id[oid]
        a = op.get("args") or {}
        if "Input Dims" not in a:
            continue
        w = model(op["name"], a["Input Dims"], a.get("Input type", []))
        if w is None:
            continue
        flops, moved, dtype = w
        main_kernel = max(ks)[1]
        if dtype == "float" and op["name"] != "aten::add" and op["name"] != "aten::mul":
            if any(m in main_kernel.lower() for m in TENSOR_CORE_MARKS):
                dtype = "tf32"
        key = (op["name"], json.dumps(a["Input Dims"], separators=(",", ":")))
        row = mine[key]
        row[0] += flops
        row[1] += moved
        row[2] += sum(d for d, _ in ks)
        row[3] = dtype
        row[4] += 1

    out = subprocess.run([cli, "roofline", "--json", trace], check=True, capture_output=True, text=True)
    rank = json.loads(out.stdout)["ranks"][0]
    theirs = defaultdict(lambda: [0.0, 0.0, 0.0, 0])
    for o in rank["operators"]:
        t = theirs[(o["name"], o["shapes"])]
        t[0] += o["flops"]
        t[1] += o["bytes"]
        t[2] += o["kernel_time_us"]
        t[3] += o["calls"]
        t.append(o)

    def close(a, b):
        return abs(a - b) <= 1e-6 * max(abs(a), abs(b), 1e-12)

    compared = 0
    for key, (flops, moved, time_us, dtype, calls) in sorted(mine.items(), key=lambda kv: -kv[1][2]):
        if key not in theirs:
            sys.exit(f"{key}: not among the CLI's operator rows")
        t = theirs[key]
        for what, x, y in (("flops", flops, t[0]), ("bytes", moved, t[1]), ("kernel time", time_us, t[2])):
            if not close(x, y):
                sys.exit(f"{key}: {what} {y} (CLI) vs {x} (here)")
        if calls != t[3]:
            sys.exit(f"{key}: {t[3]} calls (CLI) vs {calls} (here)")
        secs = time_us / 1e6
        tflops = flops / secs / 1e12
        ai = flops / moved
        roof = min(PEAK[dtype], ai * MEMORY_GBPS / 1e3)
        pct = 100.0 * tflops / roof
        if len(t) == 5:  # one row on the CLI side: compare the judged figures too
            o = t[4]
            if not close(o["tflops"], tflops) or not close(o["pct_of_roof"], pct):
                sys.exit(f"{key}: {o['tflops']} TFLOP/s {o['pct_of_roof']}% (CLI) vs {tflops} {pct}% (here)")
        compared += 1
        if compared <= 12:
            print(f"{key[0]:12} {key[1]:34} {calls:4} calls {time_us:9.1f} us {tflops:9.4f} TFLOP/s "
                  f"{ai:8.3f} FLOP/B roof {roof:7.3f} ({dtype}) {pct:7.2f}% of roof")
    if compared == 0:
        sys.exit("no modelled operator found: nothing compared")
    print(f"ok: {compared} operator rows agree")


if __name__ == "__main__":
    main()
