#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Writes synthetic nccl-tests output (the default table of all_reduce_perf or all_gather_perf)
whose times follow the alpha-beta model exactly, for dpas calibrate's examples and tests:
  all_reduce: time = 2(n-1) alpha + 2(n-1)/n size / beta
  all_gather: time = (n-1) alpha + (n-1)/n size / beta      (size = the total output)
Times are printed as nccl-tests prints them (microseconds, two decimals), so a fit recovers
alpha and beta up to that rounding. The numbers are synthetic, not a measurement.

Usage: gen_nccl_tests.py all_reduce|all_gather RANKS ALPHA_S BETA_BPS [--csv]"""
import sys


def main():
    coll, n, alpha, beta = sys.argv[1], int(sys.argv[2]), float(sys.argv[3]), float(sys.argv[4])
    csv = "--csv" in sys.argv
    steps, factor = (2 * (n - 1), 2 * (n - 1) / n) if coll == "all_reduce" else ((n - 1), (n - 1) / n)
    rows = []
    size = 8 * n
    while size <= 1 << 30:
        t = steps * alpha + factor * size / beta
        rows.append((size, t * 1e6))
        size *= 2
    if csv:
        print("name,gpus,size,count,type,time,algbw,busbw")
        for s, us in rows:
            algbw = s / (us * 1e-6) / 1e9
            print(f"{coll},{n},{s},{s // 4},float,{us:.2f},{algbw:.2f},{algbw * factor:.2f}")
        return
    print(f"# Collective test starting: {coll}_perf")
    print(f"# nThread 1 nGpus 1 minBytes {rows[0][0]} maxBytes {rows[-1][0]} step: 2(factor) "
          "warmup iters: 5 iters: 20 agg iters: 1 validation: 1 graph: 0")
    print("#\n# Using devices")
    for r in range(n):
        print(f"#  Rank {r:2d} Group  0 Pid {1000 + r:6d} on   synthetic device {r % 8:2d} [0x00] "
              "synthetic GPU")
    print("#")
    print("#                                                              out-of-place"
          "                       in-place          ")
    print("#       size         count      type   redop    root     time   algbw   busbw #wrong"
          "     time   algbw   busbw #wrong")
    print("#        (B)    (elements)                               (us)  (GB/s)  (GB/s)       "
          "     (us)  (GB/s)  (GB/s)       ")
    redop = "sum" if coll == "all_reduce" else "none"
    for s, us in rows:
        algbw = s / (us * 1e-6) / 1e9
        busbw = algbw * factor
        print(f"{s:12d}  {s // 4:12d}     float  {redop:>6}      -1  {us:7.2f}  {algbw:6.2f}  "
              f"{busbw:6.2f}      0  {us:7.2f}  {algbw:6.2f}  {busbw:6.2f}      0")
    print("# Out of bounds values : 0 OK")
    print(f"# Avg bus bandwidth    : {busbw:.4f}")
    print("#")
    print(f"# Collective test concluded: {coll}_perf")


if __name__ == "__main__":
    main()
