#!/usr/bin/env python3
"""Compares commands on a noisy machine: runs them in turn N times (A B A B ...) and prints the min and
median wall time and CPU time (user+sys, children) of each. Usage: scripts/ab.py N 'cmd A' 'cmd B' ..."""
import resource, statistics, subprocess, sys, time
n = int(sys.argv[1]); cmds = sys.argv[2:]
res = {c: ([], []) for c in cmds}
for i in range(n):
    for c in cmds:
        r0 = resource.getrusage(resource.RUSAGE_CHILDREN)
        t = time.perf_counter()
        subprocess.run(c, shell=True, stdout=subprocess.DEVNULL, check=True)
        w = time.perf_counter() - t
        r1 = resource.getrusage(resource.RUSAGE_CHILDREN)
        cpu = (r1.ru_utime - r0.ru_utime) + (r1.ru_stime - r0.ru_stime)
        res[c][0].append(w); res[c][1].append(cpu)
for c in cmds:
    w, cpu = res[c]
    print(f"wall min {min(w):.3f} med {statistics.median(w):.3f} | cpu min {min(cpu):.3f} med {statistics.median(cpu):.3f} | {c}")
