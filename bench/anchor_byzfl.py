# SPDX-License-Identifier: Apache-2.0
"""Anchors of issue 24's goals, at n = 16 and d = 2^LOG2_D (22), float32, one thread:

  byzfl (default): the rules and pre-aggregations dpas added, as ByzFL's documentation describes
      its algorithms, written here in NumPy (not ByzFL's code; ByzFL runs NumPy for numpy
      inputs): ARC and Clipping (a norm per vector, the clipped vectors scaled), Bucketing (a
      random permutation, reshaped, averaged), MoNNA (the distances to vector idx, a partial
      sort, the mean of the nearest), CAF (its loop: weighted mean, one power iteration from a
      random vector for the top eigenvector of the weighted covariance, the weights cut), SMEA
      (every subset: its mean, one power iteration, the least). The f are bench_kernels' goals'.
      The pre-aggregations change their input in place as ByzFL's do: each call gets a fresh
      copy, made outside the timing.
  --inputs: dpas.aggregate on the same rows as a numpy array, a list of its rows, a list of
      separately allocated rows, a torch tensor (torch.from_numpy) and a list of tensors: the
      kinds cost the same when nothing is copied.

Prints "rule NAME n 16 f F seconds S" lines, the best of REPEATS.
Usage: python3 anchor_byzfl.py [LOG2_D] [REPEATS] [--inputs]"""
import itertools
import sys
import time

import numpy as np


def arc(X, f):
    n = len(X)
    magnitudes = sorted((np.linalg.norm(X[i]), i) for i in range(n))
    clipped = int((2 * f / n) * (n - f))
    threshold = magnitudes[n - clipped - 1][0]
    for norm, i in magnitudes[n - clipped:]:
        if norm > threshold:
            X[i] = X[i] * (threshold / norm)
    return X


def clipping(X, c):
    for i in range(len(X)):
        norm = np.linalg.norm(X[i])
        if norm > c:
            X[i] = X[i] * (c / norm)
    return X


def bucketing(X, s, rng):
    Y = rng.permutation(X)
    full = len(Y) // s
    out = Y[:full * s].reshape(full, s, -1).mean(axis=1)
    if full * s != len(Y):
        out = np.concatenate([out, Y[full * s:].mean(axis=0)[None, :]])
    return out


def monna(X, f, idx=0):
    dist = np.linalg.norm(X - X[idx], axis=1)
    k = len(X) - f
    nearest = np.argpartition(dist, k - 1)[:k]
    return X[nearest].mean(axis=0)


def top_eigen(diffs, weights, rng):
    """One power iteration from a random unit vector, as ByzFL's documentation describes."""
    v = rng.standard_normal(diffs.shape[1])
    v /= np.linalg.norm(v)
    dots = diffs @ v
    s = (weights[:, None] * diffs * dots[:, None]).sum(axis=0) / weights.sum()
    nxt = s / np.linalg.norm(s)
    return float(nxt @ s), nxt


def caf(X, f, rng):
    n = len(X)
    c = np.ones(n)
    best, best_mu = np.inf, None
    while c.sum() > n - 2 * f:
        mu = (c[:, None] * X).sum(axis=0) / c.sum()
        diffs = X - mu
        lam, v = top_eigen(diffs, c, rng)
        if lam < best:
            best, best_mu = lam, mu
        tau = (diffs @ v) ** 2
        c = c * (1 - tau / tau.max())
    return best_mu


def smea(X, f, rng):
    n = len(X)
    best, best_subset = np.inf, None
    for subset in itertools.combinations(range(n), n - f):
        S = X[list(subset)]
        diffs = S - S.mean(axis=0)
        lam, _ = top_eigen(diffs, np.ones(len(S)), rng)
        if lam < best:
            best, best_subset = lam, subset
    return X[list(best_subset)].mean(axis=0)


def timed(fn, reps, fresh=None):
    best = 1e30
    for _ in range(reps):
        arg = fresh() if fresh else None
        t0 = time.perf_counter()
        fn(arg)
        best = min(best, time.perf_counter() - t0)
    return best


def byzfl(X, reps):
    rng = np.random.default_rng(3)
    cases = [
        ("monna", 4, lambda _: monna(X, 4), None),
        ("caf", 4, lambda _: caf(X, 4, rng), None),
        ("smea", 1, lambda _: smea(X, 1, rng), None),
        ("arc", 4, lambda Y: arc(Y, 4), X.copy),
        ("clipping", 0, lambda Y: clipping(Y, 2.0), X.copy),
        ("bucketing", 0, lambda _: bucketing(X, 2, rng), None),
    ]
    for name, f, fn, fresh in cases:
        t = timed(fn, reps, fresh)
        print(f"rule {name:<18} n {len(X):2d} f {f:2d} seconds {t:.6f}", flush=True)


def inputs(X, reps):
    import dpas
    import torch
    torch.set_num_threads(1)
    n = len(X)
    separate = [np.array(X[i]) for i in range(n)]  # rows that are not views of one array
    kinds = [("array", X), ("list_of_views", list(X)), ("list_of_arrays", separate),
             ("tensor", torch.from_numpy(X)), ("list_of_tensors", list(torch.from_numpy(X)))]
    configs = [(rule, f, name, grads) for rule, f in (("mean", 0), ("median", 0), ("krum", 6))
               for name, grads in kinds]
    for rule, f, _, grads in configs:
        dpas.aggregate(rule, grads, f)  # the workspace is warm
    best = [1e30] * len(configs)
    for _ in range(reps):  # every configuration once per round: they see the same load
        for i, (rule, f, _, grads) in enumerate(configs):
            t0 = time.perf_counter()
            dpas.aggregate(rule, grads, f)
            best[i] = min(best[i], time.perf_counter() - t0)
    for (rule, f, name, _), t in zip(configs, best):
        print(f"rule {rule + ':' + name:<28} n {n:2d} f {f:2d} seconds {t:.6f}", flush=True)


def main():
    args = [a for a in sys.argv[1:] if not a.startswith("--")]
    lg = int(args[0]) if args else 22
    reps = int(args[1]) if len(args) > 1 else 2
    X = np.random.default_rng(1).random((16, 1 << lg), dtype=np.float32)
    if "--inputs" in sys.argv:
        inputs(X, reps)
    else:
        byzfl(X, reps)


if __name__ == "__main__":
    main()
