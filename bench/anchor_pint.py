# SPDX-License-Identifier: Apache-2.0
"""The anchor for bench_eval: the same equations evaluated with pint Quantities in Python, as
mlsysim evaluates them (memory_from_params is a product of a count and a Quantity width, then
.to('byte'); the ring factor is 2(n-1)/n). Prints microseconds per scenario.

Usage: python3 anchor_pint.py [SCENARIOS]"""
import sys
import time

import pint

ureg = pint.UnitRegistry()


def ring_factor(n):
    if n < 1:
        raise ValueError(f"n_gpus must be >= 1, got {n}")
    return 0.0 if n == 1 else 2.0 * (n - 1) / n


def evaluate(params, nodes, per_node, dp, grad, ckpt, weight):
    accelerators = nodes * per_node
    out = {
        "accelerators": accelerators,
        "nodes": nodes,
        "accelerators_per_node": per_node,
        "accelerators_per_replica": accelerators / dp,
        "gradient_bytes": (params * grad).to("byte"),
        "checkpoint_bytes": (params * ckpt).to("byte"),
        "weight_bytes": (params * weight).to("byte") if weight is not None else None,
        "allreduce_factor": ring_factor(dp),
        "gather_factor": dp - 1,
    }
    out["gather_traffic_ratio"] = (out["gather_factor"] / out["allreduce_factor"]
                                   if dp > 1 else None)
    return out


def main():
    total = int(sys.argv[1]) if len(sys.argv) > 1 else 20000
    widths = [2 * ureg.byte, 4 * ureg.byte, 0.5 * ureg.byte, 14 * ureg.byte,
              4.127 * ureg.bit, 1 * ureg.byte, 16 * ureg.byte, 0.75 * ureg.byte]
    t0 = time.perf_counter()
    done = 0
    n = 1
    while done < total:
        p = 1000003 * (done % 64 + 1) * 977
        evaluate(p, 128, 8, n, widths[done & 7], widths[(done + 3) & 7],
                 widths[done & 7] if n & 1 else None)
        n = n % 1024 + 1
        done += 1
    dt = time.perf_counter() - t0
    print(f"pint scenarios {done}  seconds {dt:.3f}  us_per_eval {dt / done * 1e6:.1f}")


if __name__ == "__main__":
    main()
