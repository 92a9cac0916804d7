# SPDX-License-Identifier: Apache-2.0
"""dpas.byzfl's pre-aggregations and MoNNA side by side with NumPy (the algorithms as ByzFL's
documentation describes them, bench/anchor_byzfl.py) and with ByzFL itself when it is importable
(PYTHONPATH; ByzFL runs NumPy for numpy inputs), float64, one thread, n = 16 (f = 4), at
d = 1000 (federated learning with small models: the per-call overhead) and d = 2^LOG2_D.

The three are timed in turns, call after call (dpas, NumPy, ByzFL, dpas, ...), so that a machine
shared with other work slows them alike; the figure is the best of REPEATS rounds of CALLS calls
each, and the ratios are of those bests (dpas is called once before, outside the timing: its
workspace grows to the size once). ARC, Clipping and Bucketing change their input in place
in ByzFL and in the NumPy anchor: they get a fresh copy per call, made outside the timing; dpas
writes new rows and leaves the input as it is.

Usage: PYTHONPATH=python DPAS_LIBRARY=build/libdpas.so python3 bench/bench_kernels_byzfl.py
       [LOG2_D] [REPEATS]"""
import os
import sys
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import anchor_byzfl as anchor  # noqa: E402

from dpas import byzfl as dpb  # noqa: E402

try:
    import byzfl as real
except ImportError:
    real = None

N, F = 16, 4


def nnm(X, f):
    """NNM as ByzFL documents it: each vector the mean of its n - f nearest (itself included)."""
    sq = (X * X).sum(axis=1)
    D = sq[:, None] + sq[None, :] - 2 * X @ X.T
    k = len(X) - f
    idx = np.argsort(D, axis=1)[:, :k]
    return np.stack([X[i].mean(axis=0) for i in idx])  # a row at a time: no n x k x d copy


def cases(rng, d):
    """(name, dpas call, NumPy call, ByzFL call or None, mutates its input). ByzFL's NNM is left
    out above 2 GB of its n x (n - f) x d copy (vectors[indices]: 6.4 GB at d = 2^22)."""
    big = N * (N - F) * d * 8 > 2 << 30
    out = [
        ("ARC", dpb.ARC(f=F), lambda X: anchor.arc(X, F), real and real.ARC(f=F), True),
        ("Clipping", dpb.Clipping(c=2.0), lambda X: anchor.clipping(X, 2.0),
         real and real.Clipping(c=2.0), True),
        ("Bucketing", dpb.Bucketing(s=2, seed=1), lambda X: anchor.bucketing(X, 2, rng),
         real and real.Bucketing(s=2), True),
        ("NNM", dpb.NNM(f=F), lambda X: nnm(X, F), real and not big and real.NNM(f=F), False),
        ("MoNNA", dpb.MoNNA(f=F), lambda X: anchor.monna(X, F), real and real.MoNNA(f=F),
         False),
        ("Average", dpb.Average(), lambda X: X.mean(axis=0), real and real.Average(), False),
    ]
    return out


def run(d, repeats, calls):
    rng = np.random.default_rng(0)
    X = rng.standard_normal((N, d))
    print(f"n {N} f {F} d {d} float64, best of {repeats} rounds of {calls} calls "
          f"(microseconds per call)")
    print(f"{'':10} {'dpas':>10} {'numpy':>10} {'byzfl':>10} {'numpy/dpas':>11} "
          f"{'byzfl/dpas':>11}")
    for name, mine, ref, theirs, mutates in cases(rng, d):
        fns = [("dpas", mine, False), ("numpy", ref, mutates)]
        if theirs:
            fns.append(("byzfl", theirs, mutates))
        best = {k: float("inf") for k, _, _ in fns}
        copies = [X.copy() for _ in range(calls)]
        mine(X)  # dpas's workspace grows to this size once, outside the timing
        for _ in range(repeats):
            for key, fn, fresh in fns:
                if fresh:
                    for i in range(calls):
                        np.copyto(copies[i], X)
                t0 = time.perf_counter()
                if fresh:
                    for i in range(calls):
                        fn(copies[i])
                else:
                    for i in range(calls):
                        fn(X)
                best[key] = min(best[key], (time.perf_counter() - t0) / calls)
        us = {k: v * 1e6 for k, v in best.items()}
        b, mine_us = us.get("byzfl"), us["dpas"]
        bcol = f"{b:10.1f}" if b else f"{'-':>10}"
        bratio = f"{b / mine_us:10.2f}x" if b else f"{'-':>11}"
        print(f"{name:10} {mine_us:10.1f} {us['numpy']:10.1f} {bcol} "
              f"{us['numpy'] / mine_us:10.2f}x {bratio}")


def main():
    lg = int(sys.argv[1]) if len(sys.argv) > 1 else 22
    repeats = int(sys.argv[2]) if len(sys.argv) > 2 else 5
    where = "imported from " + os.path.dirname(real.__file__) if real else "not importable"
    print(f"byzfl: {where}")
    run(1000, repeats, 200)
    print()
    run(2 ** lg, repeats, 1)


if __name__ == "__main__":
    main()
