# SPDX-License-Identifier: Apache-2.0
"""NumPy anchor for bench_kernels: the same rules on the same shapes, in GB/s of gradient data read.
np.median(X, axis=0); a sorted trimmed mean; Krum through the Gram matrix; a plain mean.
With --dpas, the same calls through dpas.aggregate on the same numpy arrays (the binding reads
them where they lie: its figures should be the C benchmark's).
Usage: python3 anchor_numpy.py [LOG2_D] [REPEATS] [--dpas]"""
import sys
import time

import numpy as np


def krum(X, f):
    n = X.shape[0]
    G = X @ X.T
    sq = np.diag(G)
    D = sq[:, None] + sq[None, :] - 2 * G
    np.fill_diagonal(D, np.inf)
    k = n - f - 2
    scores = np.sort(D, axis=1)[:, :k].sum(axis=1)
    return X[int(np.argmin(scores))]


def main():
    args = [a for a in sys.argv[1:] if not a.startswith("--")]
    via_dpas = "--dpas" in sys.argv
    lg = int(args[0]) if args else 22
    reps = int(args[1]) if len(args) > 1 else 3
    if via_dpas:
        import dpas
    d = 1 << lg
    rng = np.random.default_rng(1)
    for n in (8, 16, 32):
        X = rng.random((n, d), dtype=np.float32)
        f_trim, f_krum = n // 4, (n - 3) // 2
        if via_dpas:
            rules = {
                "mean": lambda: dpas.aggregate("mean", X),
                "median": lambda: dpas.aggregate("median", X, 0),
                "trimmed_mean": lambda: dpas.aggregate("trimmed_mean", X, f_trim),
                "krum": lambda: dpas.aggregate("krum", X, f_krum),
            }
        else:
            rules = {
                "mean": lambda: X.mean(axis=0),
                "median": lambda: np.median(X, axis=0),
                "trimmed_mean": lambda: np.sort(X, axis=0)[f_trim:n - f_trim].mean(axis=0),
                "krum": lambda: krum(X, f_krum),
            }
        for name, fn in rules.items():
            best = 1e30
            for _ in range(reps):
                t0 = time.perf_counter()
                fn()
                best = min(best, time.perf_counter() - t0)
            print(f"rule {name:<13} n {n:2d}  seconds {best:.4f}  GBps {n * d * 4 / best / 1e9:.3f}",
                  flush=True)


if __name__ == "__main__":
    main()
