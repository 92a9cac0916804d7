# SPDX-License-Identifier: Apache-2.0
"""PyTorch anchor for bench_kernels (Debian's python3-torch, one thread): the same shapes, in GB/s
of gradient data read. Two families per rule:
  torch_*  the plain PyTorch call a user would write (torch.mean, torch.median, ...);
  byzfl_*  the algorithm as ByzFL's aggregators compute it in torch, written here from its
           description (not its code): the median by torch.quantile(q = 0.5); the trimmed mean by
           a full torch.sort; meamed by the distances to that median, argsort and a gather; Krum
           by squared torch.cdist, a row sort and the mean of the n - f - 1 nearest.
A rule PyTorch refuses at this size (torch.quantile limits its input to 2^24 elements) prints
"error" and its message. Usage: python3 anchor_torch.py [LOG2_D] [REPEATS]"""
import sys
import time

import numpy as np
import torch


def byzfl_median(X):
    return torch.quantile(X, 0.5, dim=0)


def byzfl_trimmed_mean(X, f):
    n = X.shape[0]
    return torch.sort(X, dim=0).values[f:n - f].mean(dim=0)


def byzfl_meamed(X, f):
    n, d = X.shape
    med = torch.quantile(X, 0.5, dim=0)
    order = torch.argsort(torch.abs(X - med), dim=0)[:n - f]
    return torch.gather(X, 0, order).mean(dim=0)


def byzfl_krum(X, f):
    n = X.shape[0]
    D = torch.cdist(X, X) ** 2
    scores = torch.sort(D, dim=1).values[:, 1:n - f].mean(dim=1)
    return X[int(torch.argmin(scores))]


def main():
    lg = int(sys.argv[1]) if len(sys.argv) > 1 else 22
    reps = int(sys.argv[2]) if len(sys.argv) > 2 else 3
    torch.set_num_threads(1)
    d = 1 << lg
    rng = np.random.default_rng(1)
    for n in (8, 16, 32):
        X = torch.from_numpy(rng.random((n, d), dtype=np.float32))
        f_trim, f_krum = n // 4, (n - 3) // 2
        rules = {
            "torch_mean": lambda: X.mean(dim=0),
            "torch_median": lambda: torch.median(X, dim=0).values,
            "byzfl_median": lambda: byzfl_median(X),
            "byzfl_trimmed_mean": lambda: byzfl_trimmed_mean(X, f_trim),
            "byzfl_meamed": lambda: byzfl_meamed(X, f_trim),
            "byzfl_krum": lambda: byzfl_krum(X, f_krum),
        }
        for name, fn in rules.items():
            best = 1e30
            try:
                for _ in range(reps):
                    t0 = time.perf_counter()
                    fn()
                    best = min(best, time.perf_counter() - t0)
            except RuntimeError as e:
                print(f"rule {name:<18} n {n:2d}  error {str(e).splitlines()[0]}")
                continue
            print(f"rule {name:<18} n {n:2d}  seconds {best:.4f}  GBps {n * d * 4 / best / 1e9:.3f}",
                  flush=True)


if __name__ == "__main__":
    main()
