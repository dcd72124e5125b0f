#!/usr/bin/env python3
"""Runs a command, prints one JSON line: wall seconds and the child's peak RSS (MB). Used by bench.sh."""
import json, resource, subprocess, sys, time
t = time.perf_counter()
rc = subprocess.run(sys.argv[1:], stdout=subprocess.DEVNULL).returncode
wall = time.perf_counter() - t
rss_mb = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
print(json.dumps({"rc": rc, "wall_s": wall, "peak_rss_mb": rss_mb}))
sys.exit(rc)
