# SPDX-License-Identifier: Apache-2.0
"""dpas.byzfl's pre-aggregations and MoNNA side by side with NumPy and with ByzFL itself when it
is importable (PYTHONPATH; ByzFL runs NumPy for numpy inputs), float64, one thread (BLAS too),
n = 16 (f = 4), at d = 1000 (federated learning with small models: the per-call overhead) and
d = 2^LOG2_D (the memory-bound case).

NumPy is given its best vectorised formulation, not ByzFL's code (bench/anchor_byzfl.py has
that): a norm per row as one einsum (one read), the clipped rows scaled in place, NNM's and
MoNNA's means as one matrix product (NNM: the n x n averaging matrix times X; MoNNA: the weight
vector times X) after the distances from the Gram matrix (X X^T, or X x_idx), Bucketing the
faster of two formulations (the rows gathered in the permuted order and averaged by a reshape,
or each bucket summed in place into its output row). The NumPy and ByzFL versions of ARC,
Clipping and Bucketing that write in place get a fresh copy per call, made outside the timing;
dpas writes new rows and leaves the input as it is, or, in the rows 'in place', writes over a
fresh copy as they do (preaggregate(..., inplace=True)). 'Clip+mean' and 'ARC+mean' are the
pre-aggregation followed by the mean: dpas fused (aggregate("mean", pre=[...]): the norms, then
one read that scales and sums, nothing written), NumPy's in-place clipping then X.mean(axis=0),
ByzFL's class then its Average.

The three are timed in turns, call after call (dpas, NumPy, ByzFL, dpas, ...), so that a machine
shared with other work slows them alike; the figure is the best of REPEATS rounds, and the
ratios are of those bests. At d = 2^LOG2_D each time is also given in passes: over the time of
dpas's mean of the same matrix ('mean': it reads the 16 rows side by side) and over one read
of the matrix (NumPy's einsum of the row norms, which reads one row after the other: 'read'),
both timed again in the rounds of each row (the load moves during a run).
At d = 1000 dpas is also called on a batch of B = 32 sets (one B x n x d array, one C call):
the time per set. The load average is printed before and after.

Usage: PYTHONPATH=python DPAS_LIBRARY=build/libdpas.so python3 bench/bench_kernels_byzfl.py
       [LOG2_D] [REPEATS]"""
import os

for _v in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ[_v] = "1"  # NumPy's BLAS on one thread, as dpas

import sys  # noqa: E402
import time  # noqa: E402

import numpy as np  # noqa: E402

import dpas  # noqa: E402
from dpas import byzfl as dpb  # noqa: E402

try:
    import byzfl as real
except ImportError:
    real = None

N, F, BATCH = 16, 4, 32


def sqnorms(X):
    return np.einsum("ij,ij->i", X, X)


def arc(X, f):
    """ARC in place: one read for the norms, the k largest rows scaled."""
    n = len(X)
    nrm = np.sqrt(sqnorms(X))
    k = 2 * f * (n - f) // n
    order = np.argsort(nrm, kind="stable")
    thr = nrm[order[n - k - 1]]
    for i in order[n - k:]:
        if nrm[i] > thr:
            X[i] *= thr / nrm[i]
    return X


def clipping(X, c):
    nrm = np.sqrt(sqnorms(X))
    for i in np.flatnonzero(nrm > c):
        X[i] *= c / nrm[i]
    return X


def bucketing_gather(X, s, rng):
    idx = rng.permutation(len(X))
    full = len(X) // s
    out = X[idx[:full * s]].reshape(full, s, -1).mean(axis=1)
    if full * s != len(X):
        out = np.concatenate([out, X[idx[full * s:]].mean(axis=0)[None, :]])
    return out


def bucketing_inplace(X, s, rng):
    idx = rng.permutation(len(X))
    nb = -(-len(X) // s)
    out = np.empty((nb, X.shape[1]))
    for b in range(nb):
        rows = idx[b * s:(b + 1) * s]
        np.add(X[rows[0]], X[rows[1]], out=out[b]) if len(rows) > 1 else np.copyto(out[b],
                                                                                   X[rows[0]])
        for r in rows[2:]:
            out[b] += X[r]
        out[b] *= 1.0 / len(rows)
    return out


def distances(X):
    sq = sqnorms(X)
    return sq[:, None] + sq[None, :] - 2 * (X @ X.T)


def nnm(X, f):
    n = len(X)
    D = distances(X)
    np.fill_diagonal(D, -np.inf)  # itself first
    A = np.zeros((n, n))
    nearest = np.argsort(D, axis=1, kind="stable")[:, :n - f]
    np.put_along_axis(A, nearest, 1.0 / (n - f), axis=1)
    return A @ X


def monna(X, f, idx=0):
    sq = sqnorms(X)
    dist = sq - 2 * (X @ X[idx]) + sq[idx]
    dist[idx] = -np.inf
    k = len(X) - f
    w = np.zeros(len(X))
    w[np.argpartition(dist, k - 1)[:k]] = 1.0 / k
    return w @ X


def then_average(pre):
    avg = real.Average()
    return lambda X: avg(pre(X))


def cases(rng, d):
    """(name, dpas object, NumPy call, ByzFL object or None, NumPy and ByzFL mutate their input,
    dpas mutates its input). ByzFL's NNM is left out above 2 GB of its n x (n - f) x d copy
    (vectors[indices]: 6.4 GB at d = 2^22)."""
    big = N * (N - F) * d * 8 > 2 << 30
    seeded = np.random.default_rng(7)
    return [
        ("ARC", dpb.ARC(f=F), lambda X: arc(X, F), real and real.ARC(f=F), True, False),
        ("  in place", dpb.ARC(f=F, inplace=True), lambda X: arc(X, F), real and real.ARC(f=F),
         True, True),
        ("Clipping", dpb.Clipping(c=2.0), lambda X: clipping(X, 2.0),
         real and real.Clipping(c=2.0), True, False),
        ("  in place", dpb.Clipping(c=2.0, inplace=True), lambda X: clipping(X, 2.0),
         real and real.Clipping(c=2.0), True, True),
        ("Bucketing", dpb.Bucketing(s=2, seed=1), None, real and real.Bucketing(s=2), True,
         False),
        ("  in place", dpb.Bucketing(s=2, seed=1, inplace=True), None,
         real and real.Bucketing(s=2), True, True),
        ("Clip+mean", lambda X: dpas.aggregate("mean", X, pre=[("clipping", {"c": 2.0})]),
         lambda X: clipping(X, 2.0).mean(axis=0),
         real and then_average(real.Clipping(c=2.0)), True, False),
        ("ARC+mean", lambda X: dpas.aggregate("mean", X, pre=[("arc", {"f": F})]),
         lambda X: arc(X, F).mean(axis=0), real and then_average(real.ARC(f=F)), True, False),
        ("NNM", dpb.NNM(f=F), lambda X: nnm(X, F), real and not big and real.NNM(f=F), False,
         False),
        ("MoNNA", dpb.MoNNA(f=F), lambda X: monna(X, F), real and real.MoNNA(f=F), False, False),
        ("Average", dpb.Average(), lambda X: X.mean(axis=0), real and real.Average(), False,
         False),
    ], [lambda X: bucketing_gather(X, 2, seeded), lambda X: bucketing_inplace(X, 2, seeded)]


def best_of(fns, inputs, repeats, copies):
    """fns: (key, fn, takes a fresh copy); the best time per set of each, in turns: a call on
    each of the sets of inputs (key 'batch': one call on all of them)."""
    best = {k: float("inf") for k, _, _ in fns}
    for _ in range(repeats):
        for key, fn, fresh in fns:
            if fresh:
                for c, x in zip(copies, inputs):
                    np.copyto(c, x)
            args = copies if fresh else inputs
            t0 = time.perf_counter()
            if key == "batch":
                fn(None)
            else:
                for x in args:
                    fn(x)
            best[key] = min(best[key], (time.perf_counter() - t0) / len(inputs))
    return best


def run(d, repeats):
    rng = np.random.default_rng(0)
    small = d <= 4096
    XB = rng.standard_normal((BATCH if small else 1, N, d))
    inputs = list(XB)
    X = inputs[0]
    table, bucket_numpy = cases(rng, d)
    copies = [x.copy() for x in inputs]
    unit_note = ("passes: over dpas's mean and over one read (einsum of the row norms), both "
                 "timed in the same rounds as the row")
    print(f"n {N} f {F} d {d} float64, best of {repeats} rounds"
          + (f", each a call on each of {BATCH} sets (microseconds per set); 'batch/set': dpas "
             f"called once on the {BATCH} sets (one {BATCH} x {N} x {d} array)" if small else
             f" (milliseconds per call); {unit_note}"))
    scale = 1e6 if small else 1e3
    if small:
        print(f"{'':10} {'dpas':>9} {'batch/set':>9} {'numpy':>9} {'byzfl':>9} "
              f"{'numpy/dpas':>10} {'byzfl/dpas':>10} {'byzfl/batch':>11}")
    else:
        print(f"{'':10} {'dpas':>9} {'numpy':>9} {'byzfl':>9} {'numpy/dpas':>10} "
              f"{'byzfl/dpas':>10} {'dpas':>14} {'numpy':>14} {'byzfl':>14}")
        print(f"{'passes of:':10} {'':>9} {'':>9} {'':>9} {'':>10} {'':>10} {'mean  read':>14} "
              f"{'mean  read':>14} {'mean  read':>14}")
    for name, mine, ref, theirs, mutates, mine_mutates in table:
        mine(X.copy() if mine_mutates else X)  # dpas's workspace grows once, outside the timing
        fns = [("dpas", mine, mine_mutates)]
        if not small:  # the units of the passes, in the same rounds (the load changes)
            fns += [("mean", lambda Y: dpas.aggregate("mean", Y), False), ("read", sqnorms, False)]
        if small and not mine_mutates and not name.endswith("+mean"):
            mine(XB)
            fns.append(("batch", lambda _, mine=mine: mine(XB), False))
        if ref is None:  # Bucketing: NumPy's faster formulation of this run
            fns += [("numpy", bucket_numpy[0], False), ("numpy2", bucket_numpy[1], False)]
        else:
            fns.append(("numpy", ref, mutates))
        if theirs:
            fns.append(("byzfl", theirs, mutates))
        best = best_of(fns, inputs, repeats, copies)
        if "numpy2" in best:
            best["numpy"] = min(best["numpy"], best.pop("numpy2"))
        t = {k: v * scale for k, v in best.items()}
        b = t.get("byzfl")
        bcol = f"{b:9.1f}" if b else f"{'-':>9}"
        bratio = f"{b / t['dpas']:9.2f}x" if b else f"{'-':>10}"
        if small:
            tb = t.get("batch")
            print(f"{name:10} {t['dpas']:9.1f} " + (f"{tb:9.1f}" if tb else f"{'-':>9}") +
                  f" {t['numpy']:9.1f} {bcol} {t['numpy'] / t['dpas']:9.2f}x {bratio} " +
                  (f"{b / tb:10.2f}x" if b and tb else f"{'-':>11}"))
        else:
            def passes(k):
                if k not in best:
                    return f"{'-':>14}"
                return f"{best[k] / best['mean']:6.2f} {best[k] / best['read']:6.2f} "
            print(f"{name:10} {t['dpas']:9.1f} {t['numpy']:9.1f} {bcol} "
                  f"{t['numpy'] / t['dpas']:9.2f}x {bratio} {passes('dpas')} "
                  f"{passes('numpy')} {passes('byzfl')}")


def bandwidth(d, repeats):
    """The machine's memory bandwidth as this process sees it: GB/s of one read of the n x d
    float64 matrix (dpas's mean: the 16 rows side by side; NumPy's einsum of the row norms) and
    of a copy (np.copyto into memory already mapped: bytes read + bytes written), the best of
    REPEATS in turns."""
    X = np.random.default_rng(3).standard_normal((N, d))
    Y = np.empty_like(X)
    Y.fill(0.0)
    size = X.nbytes
    fns = [("mean", lambda: dpas.aggregate("mean", X)), ("read", lambda: sqnorms(X)),
           ("copy", lambda: np.copyto(Y, X))]
    best = {k: float("inf") for k, _ in fns}
    for _ in range(repeats):
        for k, fn in fns:
            t0 = time.perf_counter()
            fn()
            best[k] = min(best[k], time.perf_counter() - t0)
    print(f"memory: one read of the {size / 2**20:.0f} MiB matrix at "
          f"{size / best['mean'] / 1e9:.2f} GB/s (dpas mean), {size / best['read'] / 1e9:.2f} "
          f"GB/s (einsum); np.copyto {2 * size / best['copy'] / 1e9:.2f} GB/s read + written")


def main():
    lg = int(sys.argv[1]) if len(sys.argv) > 1 else 22
    repeats = int(sys.argv[2]) if len(sys.argv) > 2 else 5
    where = "imported from " + os.path.dirname(real.__file__) if real else "not importable"
    print(f"byzfl: {where}; load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} CPUs")
    run(1000, repeats)
    print()
    run(2 ** lg, repeats)
    bandwidth(2 ** lg, repeats)
    print(f"load average after: {os.getloadavg()[0]:.1f}")


if __name__ == "__main__":
    main()
