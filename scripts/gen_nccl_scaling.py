#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Writes synthetic nccl-tests output of one cluster at a given scale, whose times follow the
structure of NCCL's own tuning model (src/graph/tuning.cc in NVIDIA/nccl) with known parameters,
for the tests of dpas calibrate's nccl model. The numbers are synthetic, not a measurement.

For each protocol p (LL, LL128, Simple) and algorithm (ring; tree for all_reduce) NCCL predicts
  time = latency + bytes / bandwidth and runs the fastest:
  ring latency = base[p] + hop[p] x (intra steps x r_ring[p] + inter steps)
      all_reduce: 2(n-1) steps, 2(nodes-1) of them between nodes; all_gather n-1 and nodes-1
  tree latency = base[p] + hop[p] x 2 ((g-1) x r_tree[p] + floor(log2 nodes))   (all_reduce)
  bandwidth    = B x share[p] (x 0.92 for the tree), B = INTRA on one node, else INTER x g
  ring moves nccl-tests' bus factor x bytes (2(n-1)/n all_reduce, (n-1)/n all_gather), the tree 2 x
r_ring, r_tree: NCCL's NVLink hop latency over its network one (hwLat, tuning.cc).

With a fourth argument GAMMA, the bandwidth across nodes also falls with the node count as
(nodes / 2)^-GAMMA (0 when not given).

Usage: gen_nccl_scaling.py all_reduce|all_gather NODES GPUS_PER_NODE [GAMMA]"""
import math
import sys

BASE = (6e-6, 15e-6, 9e-6)       # seconds
HOP = (3e-6, 5e-6, 16e-6)        # seconds, one hop between nodes
SHARE = (0.3, 0.8, 1.0)          # of the bus bandwidth
INTER = 20e9                     # bytes/s per rank across nodes (x ranks per node)
INTRA = 150e9                    # bytes/s inside one node
R_RING = (0.6 / 2.7, 1.9 / 4.0, 3.4 / 14.0)
R_TREE = (0.6 / 5.0, 1.25 / 8.5, 4.0 / 14.0)


def time(coll, nodes, g, size, gamma=0.0):
    n = nodes * g
    ar = coll == "all_reduce"
    steps = 2 * (n - 1) if ar else n - 1
    inter = (2 if ar else 1) * (nodes - 1) if nodes > 1 else 0
    factor = 2 * (n - 1) / n if ar else (n - 1) / n
    bw = INTRA if nodes == 1 else INTER * g * (nodes / 2) ** -gamma
    best = math.inf
    for p in range(3):
        b = bw * SHARE[p]
        ring = BASE[p] + HOP[p] * ((steps - inter) * R_RING[p] + inter) + factor * size / b
        best = min(best, ring)
        if ar:
            depth = math.floor(math.log2(nodes)) if nodes >= 2 else 0
            tree = BASE[p] + HOP[p] * 2 * ((g - 1) * R_TREE[p] + depth) + 2 * size / (b * 0.92)
            best = min(best, tree)
    return best


def main():
    coll, nodes, g = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
    gamma = float(sys.argv[4]) if len(sys.argv) > 4 else 0.0
    n = nodes * g
    factor = 2 * (n - 1) / n if coll == "all_reduce" else (n - 1) / n
    print(f"# Collective test starting: {coll}_perf")
    print("# nThread 1 nGpus 1 minBytes 8 maxBytes 1073741824 step: 2(factor) warmup iters: 5 "
          "iters: 20 agg iters: 1 validation: 1 graph: 0")
    print("#\n# Using devices")
    for r in range(n):
        print(f"#  Rank {r:4d} Group  0 Pid {1000 + r:6d} on node{r // g:04d} device {r % g:2d} "
              "[0x00] synthetic GPU")
    print("#")
    print("#       size         count      type   redop    root     time   algbw   busbw #wrong"
          "     time   algbw   busbw #wrong")
    print("#        (B)    (elements)                               (us)  (GB/s)  (GB/s)       "
          "     (us)  (GB/s)  (GB/s)       ")
    redop = "sum" if coll == "all_reduce" else "none"
    size = 4 * n if coll == "all_gather" else 8
    while size <= 1 << 30:
        us = time(coll, nodes, g, size, gamma) * 1e6
        algbw = size / (us * 1e-6) / 1e9
        busbw = algbw * factor
        print(f"{size:12d}  {size // 4:12d}     float  {redop:>6}      -1  {us:9.2f}  {algbw:6.2f}  "
              f"{busbw:6.2f}      0  {us:9.2f}  {algbw:6.2f}  {busbw:6.2f}      0")
        size *= 2
    print("# Out of bounds values : 0 OK")
    print("#")


if __name__ == "__main__":
    main()
