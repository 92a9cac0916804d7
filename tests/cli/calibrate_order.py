# SPDX-License-Identifier: Apache-2.0
"""Files in any order give identical bytes of output (issue 27 item 4, issue 29 class 2).

Three shared H100 logs of one cluster (tests/data/nccl-scaling: 1 node x 8, 10 nodes x 4, 10
nodes x 8), in all six orders: `dpas calibrate` (text and JSON) and `dpas cost --calibration`
(comma list and repeated flag), calibrate with gpus_per_node and chosen tests, and `dpas sweep
--calibration` print the same bytes as in the first order. A consistency test:
dpas against itself in another order. Also the same file given twice (by name or by a copy)
are refused naming it, and two runs of one scale (two files) are read as one curve.

Usage: python3 calibrate_order.py DPAS DATA_DIR"""
import itertools
import os
import subprocess
import sys

DPAS, DATA = sys.argv[1], sys.argv[2]
NAMES = ["xxrjun_h100_1node_x8gpus_five_tests.log", "xxrjun_h100_10nodes_x4gpus_five_tests.log",
         "xxrjun_h100_10nodes_x8gpus_five_tests.log"]
COST = ["cost", "--model", "Llama3_70B", "--nodes", "4", "--accelerators-per-node", "8",
        "--node", "DGX_H100", "--fabric", "InfiniBand_NDR", "--dp", "32", "--grad", "2B",
        "--ckpt", "14B", "--rule", "median,krum", "--schedule", "allreduce,allgather"]


def run(*args):
    p = subprocess.run([DPAS, *args], capture_output=True, cwd=os.path.join(DATA, "nccl-scaling"))
    assert p.returncode == 0, (args, p.returncode, p.stderr.decode(errors="replace"))
    return p.stdout + b"\0" + p.stderr


def main():
    first = {}
    orders = list(itertools.permutations(NAMES))
    assert len(orders) == 6
    for order in orders:
        outs = {
            "calibrate": run("calibrate", *order, "--predict", "1GiB", "--at", "2x8,10x8"),
            "calibrate json": run("calibrate", *order, "-o", "json", "--predict", "64MiB"),
            "cost": run(*COST, "--calibration", ",".join(order)),
            "cost json": run(*COST, "-o", "json", *sum((["--calibration", n] for n in order), [])),
            "calibrate gpus_per_node": run("calibrate", *order, "--gpus-per-node", "4", "-o",
                                           "json", "--predict", "1GiB", "--test", "1,7,12"),
            "sweep": run("sweep", *[{"32": "8,32", "median,krum": "median",
                                      "allreduce,allgather": "allgather"}.get(a, a)
                                     for a in COST[1:]], "--calibration", ",".join(order)),
        }
        for k, v in outs.items():
            if k not in first:
                first[k] = v
            assert v == first[k], (k, order)
    # one file given twice, or a copy of it under another name, is refused naming it (one rule
    # in the library for calibrate and cost); two different runs of one scale are merged
    for args in (["calibrate", NAMES[0], NAMES[0]], [*COST, "--calibration", NAMES[0] + "," + NAMES[0]]):
        p = subprocess.run([DPAS, *args], capture_output=True,
                           cwd=os.path.join(DATA, "nccl-scaling"))
        assert p.returncode == 1 and not p.stdout, (args, p.returncode, p.stdout[:200])
        assert b'calibration: "%s" is given twice' % NAMES[0].encode() in p.stderr, p.stderr
    runs = ["aws_p5_h100_2nodes_16ranks_v2.20.3-1.log", "aws_p5_h100_2nodes_16ranks_v2.22.3-1.log"]
    two = run("calibrate", *runs, "-o", "json")
    assert b"2 runs of this scale merged" in two, two[-2000:]
    assert two == run("calibrate", *reversed(runs), "-o", "json")
    check_links()
    print("ok: 6 orders x 6 outputs identical; a file twice refused; two runs of one scale merged")


def check_links():
    """cost's inter-node link is the alpha-beta line of the AllReduce across nodes of the most
    ranks (then the most nodes), else of the AllReduce of the most ranks: the rule of
    docs/calibration.md, applied here to calibrate's own tests and fits (a consistency test of
    dpas_netmodel_links against the rule, on every subset of the three files)."""
    import json
    for k in range(1, 4):
        for subset in itertools.combinations(NAMES, k):
            cal = json.loads(run("calibrate", *subset, "-o", "json").split(b"\0")[0])
            ar = [t for t in cal["tests"] if t["collective"] == "all_reduce"]
            across = [t for t in ar if t["nodes"] > 1]
            pick = max(across or ar, key=lambda t: (t["ranks"], t["nodes"]))
            (fit,) = [f for f in cal["fits"] if f["test"] == pick["test"] and f["model"] == "alpha_beta"]
            cost = json.loads(run(*COST, "-o", "json", "--calibration", ",".join(subset)).split(b"\0")[0])
            links = cost["links"]
            assert (links["inter_bandwidth"], links["inter_latency"]) == (fit["beta_bytes_per_s"], fit["alpha_s"]), \
                (subset, links, fit, pick)


if __name__ == "__main__":
    main()
