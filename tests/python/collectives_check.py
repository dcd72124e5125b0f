#!/usr/bin/env python3
"""Independent check of `profile-model collectives` over raw Kineto JSON (no code shared with the crate).

Per rank: every communication kernel (name starts with nccl/rccl), its operation from the
innermost host annotation around its launch (`nccl:all_to_all`, `c10d::allreduce_`), else the
`Collective name` arg, else the kernel name; its step (the ProfilerStep#N its launch falls in).
Instances are matched across ranks by `(Process Group Name, Seq)` when every kernel has them,
otherwise by (stream, operation, step, position). Per instance: last = latest start; per rank
wait = min(last, end) - start, transfer = max(0, end - last).

usage: collectives_check.py RANK_FILE...   (prints per rank: rank, kernels, kernel µs, wait µs,
transfer µs, times arrived last)
"""
import gzip
import json
import re
import sys
from collections import defaultdict

KINDS = [
    ("reducescatter", "reduce_scatter"), ("allreduce", "all_reduce"), ("allgather", "all_gather"),
    ("alltoall", "all_to_all"), ("broadcast", "broadcast"), ("sendrecv", "send_recv"),
    ("send", "send_recv"), ("recv", "send_recv"), ("reduce", "reduce"),
]


def kind_of(text):
    t = re.sub(r"[^a-z0-9]", "", text.lower())
    for mark, kind in KINDS:
        if mark in t:
            return kind
    return None


def load(path):
    opener = gzip.open if path.endswith(".gz") else open
    with opener(path, "rt") as f:
        doc = json.load(f)
    return doc


def rank_ops(doc):
    ev = doc["traceEvents"]
    runtime = {e["args"]["correlation"]: e for e in ev
               if e.get("cat") == "cuda_runtime" and "correlation" in e.get("args", {})}
    host = [e for e in ev if e.get("cat") in ("cpu_op", "user_annotation") and
            (e["name"].startswith(("c10d::", "nccl:", "record_param_comms", "gloo:")))]
    steps = [(e["ts"], e["ts"] + e["dur"], int(e["name"].split("#")[1])) for e in ev
             if e.get("name", "").startswith("ProfilerStep#") and e.get("cat") == "user_annotation"]
    ops = []
    for k in ev:
        if k.get("cat") != "kernel" or not k["name"].lower().startswith(("nccl", "rccl")):
            continue
        a = k.get("args", {})
        launch = runtime.get(a.get("correlation"))
        t = launch["ts"] if launch else k["ts"]
        around = [h for h in host if launch and h["tid"] == launch["tid"] and h["ts"] <= t <= h["ts"] + h["dur"]]
        around.sort(key=lambda h: -h["ts"])  # innermost first
        kind = (kind_of(a["Collective name"]) if "Collective name" in a else None) \
            or next((kind_of(h["name"]) for h in around if kind_of(h["name"])), None) \
            or kind_of(k["name"]) or "other"
        step = next((s[2] for s in reversed(steps) if s[0] <= t < s[1]), None)
        ops.append(dict(start=k["ts"], end=k["ts"] + k["dur"], kind=kind, step=step,
                        stream=a.get("stream"), pg=a.get("Process Group Name"), seq=a.get("Seq")))
    ops.sort(key=lambda o: (o["start"], o["end"]))
    count = defaultdict(int)
    for o in ops:
        key = (o["pg"] or "stream %s" % o["stream"], o["kind"], o["step"])
        o["key"] = key + (count[key],)
        count[key] += 1
    return ops


def main(paths):
    ranks = []
    for p in paths:
        doc = load(p)
        ranks.append((doc.get("distributedInfo", {}).get("rank"), rank_ops(doc)))
    ranks.sort(key=lambda r: r[0])
    use_seq = all(o["seq"] is not None and o["pg"] is not None for _, ops in ranks for o in ops)
    inst = defaultdict(list)
    for rank, ops in ranks:
        for o in ops:
            inst[(o["pg"], o["seq"]) if use_seq else o["key"]].append((rank, o))
    wait = defaultdict(float)
    transfer = defaultdict(float)
    last_count = defaultdict(int)
    for members in inst.values():
        if len(members) < 2:
            continue
        last = max(o["start"] for _, o in members)
        for rank, o in members:
            wait[rank] += min(last, o["end"]) - o["start"]
            transfer[rank] += max(0.0, o["end"] - last)
        if any(o["start"] < last for _, o in members):
            late = max(members, key=lambda m: (m[1]["start"], -m[0]))
            last_count[late[0]] += 1
    print("rank kernels kernel_us wait_us transfer_us arrived_last")
    for rank, ops in ranks:
        kernel = sum(o["end"] - o["start"] for o in ops)
        print(rank, len(ops), round(kernel, 3), round(wait[rank], 3), round(transfer[rank], 3), last_count[rank])


if __name__ == "__main__":
    main(sys.argv[1:])
