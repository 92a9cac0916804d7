#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""How far a collective's time is off when it is transferred from the all_reduce of the same log
by bus-bandwidth equivalence (what dpas does when a calibration lacks the collective a schedule
runs, src/lib/network/schedule_time.c): the time of collective c at size M on n ranks is taken as the
all_reduce's measured time at M x f_c(n) / f_ar(n), f the nccl-tests bus factors (busbw/algbw),
interpolated log-log between the all_reduce's measured sizes. Per collective, over the logs given
(nccl-tests five-test logs: all_reduce with the others of one run), at sizes >= 1 MiB, prints the
5th, 50th and 95th percentiles of e = ln(measured / transferred). Usage:
  scripts/transfer_errors.py tests/data/nccl-scaling/xxrjun_h100_*_five_tests.log"""
import math
import re
import sys

FACTOR = {
    "all_reduce": lambda n: 2 * (n - 1) / n,
    "all_gather": lambda n: (n - 1) / n,
    "reduce_scatter": lambda n: (n - 1) / n,
    "alltoall": lambda n: (n - 1) / n,
    "gather": lambda n: (n - 1) / n,
    "scatter": lambda n: (n - 1) / n,
    "broadcast": lambda n: 1.0,
    "reduce": lambda n: 1.0,
    "sendrecv": lambda n: 1.0,
}


def read(path):
    tests, name, ranks = {}, None, set()
    for line in open(path, errors="replace"):
        m = re.match(r"# Collective test starting: (\w+)_perf", line)
        if m:
            name = m.group(1)
            tests[name] = []
            continue
        m = re.match(r"#\s+Rank\s+(\d+)", line)
        if m:
            ranks.add(int(m.group(1)))
            continue
        f = line.split()
        if name and len(f) >= 8 and f[0].isdigit() and int(f[0]) > 0:
            tests[name].append((int(f[0]), float(f[5]) * 1e-6))
    return tests, len(ranks)


def interp(curve, x):
    for (x0, t0), (x1, t1) in zip(curve, curve[1:]):
        if x0 <= x <= x1:
            w = math.log(x / x0) / math.log(x1 / x0)
            return math.exp(math.log(t0) + w * math.log(t1 / t0))
    return None


def quantile(v, q):
    v = sorted(v)
    i = q * (len(v) - 1)
    lo = int(math.floor(i))
    hi = min(lo + 1, len(v) - 1)
    return v[lo] + (v[hi] - v[lo]) * (i - lo)


errs = {}
for path in sys.argv[1:]:
    tests, n = read(path)
    ar = tests.get("all_reduce")
    if not ar or n < 2:
        continue
    for c, pts in tests.items():
        if c == "all_reduce" or c not in FACTOR:
            continue
        for m, t in pts:
            if m < 1 << 20:
                continue
            p = interp(ar, m * FACTOR[c](n) / FACTOR["all_reduce"](n))
            if p:
                errs.setdefault(c, []).append(math.log(t / p))
print("collective      points  q05      q50      q95")
for c, e in sorted(errs.items()):
    print(f"{c:15s} {len(e):6d}  {quantile(e, .05):+.4f}  {quantile(e, .5):+.4f}  {quantile(e, .95):+.4f}")
every = [x for e in errs.values() for x in e]
print(f"{'every':15s} {len(every):6d}  {quantile(every, .05):+.4f}  {quantile(every, .5):+.4f}  {quantile(every, .95):+.4f}")
