# SPDX-License-Identifier: Apache-2.0
"""dpas.byzfl against ByzFL's documented behaviour: the examples of its docstrings
(byzfl/aggregators/aggregators.py, preaggregators.py, attacks/attacks.py, LPD-EPFL/byzfl, read
for the values they show, not run), hand calculations, and the differences docs/byzfl.md states.
numpy (and torch, where it is there) as for test_kernels.py.

Environment: PYTHONPATH names the python/ folder, DPAS_LIBRARY the built libdpas.so."""
import doctest
import math
import os
import unittest

try:
    import numpy as np
except ImportError:
    np = None
try:
    import torch
except ImportError:
    torch = None

import dpas

needs_numpy = unittest.skipIf(np is None, "numpy is not installed for this python3")
needs_torch = unittest.skipIf(np is None or torch is None, "torch is not installed for this python3")


def rows():
    """The vectors of ByzFL's examples."""
    return np.array([[1., 2., 3.], [4., 5., 6.], [7., 8., 9.]])


@needs_numpy
class Documented(unittest.TestCase):
    """Every docstring example of ByzFL's classes on the vectors (1, 2, 3), (4, 5, 6),
    (7, 8, 9), as numpy float64, as a list of rows, as float32, and as tensors."""

    def cases(self):
        from dpas import byzfl as b
        return [
            (b.Average(), [4, 5, 6]), (b.Median(), [4, 5, 6]), (b.TrMean(1), [4, 5, 6]),
            (b.GeometricMedian(), [3.78788764, 4.78788764, 5.78788764]),
            (b.Krum(1), [1, 2, 3]), (b.MultiKrum(1), [2.5, 3.5, 4.5]),
            (b.CenteredClipping(), [4, 5, 6]), (b.MDA(1), [2.5, 3.5, 4.5]),
            (b.MoNNA(1, 1), [2.5, 3.5, 4.5]), (b.Meamed(1), [2.5, 3.5, 4.5]),
            (b.CAF(1), [4, 5, 6]), (b.SMEA(1), [2.5, 3.5, 4.5]),
            (b.SignFlipping(), [-4, -5, -6]), (b.InnerProductManipulation(2.0), [-8, -10, -12]),
            (b.ALittleIsEnough(1.5), [8.5, 9.5, 10.5]), (b.Mimic(0), [1, 2, 3]),
            (b.Optimal_InnerProductManipulation(b.TrMean(f=1), [b.NNM(f=1), b.Clipping()], f=1),
             [-2.74877907, -3.43597384, -4.1231686]),
            (b.Optimal_ALittleIsEnough(b.TrMean(f=1), [b.NNM(f=1), b.Clipping()], f=1),
             [12.91985116, 13.91985116, 14.91985116]),
        ]

    def check(self, got, want, tol, what):
        got = [float(v) for v in got]
        for g, w in zip(got, want):
            self.assertLessEqual(abs(g - w), tol * max(1.0, abs(w)), f"{what}: {got} != {want}")

    def test_numpy_and_lists(self):
        x = rows()
        for obj, want in self.cases():
            name = type(obj).__name__
            out = obj(x)
            self.assertEqual(out.dtype, np.float64, name)
            self.check(out, want, 5e-9, name)
            self.check(obj([r for r in x]), want, 5e-9, name + " (a list)")
            self.check(obj(x.astype(np.float32)), want, 5e-7, name + " (float32)")

    def test_preaggregators(self):
        from dpas import byzfl as b
        x = rows()
        self.assertEqual(b.NNM(1)(x).tolist(), [[2.5, 3.5, 4.5], [2.5, 3.5, 4.5], [5.5, 6.5, 7.5]])
        want = [[0.53452248, 1.06904497, 1.60356745], [0.91168461, 1.13960576, 1.36752692],
                [1.00514142, 1.14873305, 1.29232469]]
        for got, w in zip(b.Clipping(2.0)(x), want):
            self.check(got, w, 5e-9, "Clipping")
        want = [[1, 2, 3], [4, 5, 6], [4.41004009, 5.04004582, 5.67005155]]
        for got, w in zip(b.ARC(1)(x), want):
            self.check(got, w, 5e-9, "ARC")
        # Bucketing(2): two buckets, the mean of two vectors and the third one
        out = b.Bucketing(2, seed=3)(x)
        self.assertEqual(out.shape, (2, 3))
        lone = out[1].tolist()
        self.assertIn(lone, x.tolist())
        self.assertEqual(out[0].tolist(), ((x.sum(axis=0) - lone) / 2).tolist())
        self.assertTrue(np.array_equal(out, b.Bucketing(2, seed=3)(x)))
        np.random.seed(5)
        first = b.Bucketing(2)(x)
        np.random.seed(5)
        self.assertTrue(np.array_equal(first, b.Bucketing(2)(x)))  # numpy's seed, as in ByzFL

    @needs_torch
    def test_tensors(self):
        x = torch.tensor(rows().tolist())
        for obj, want in self.cases():
            out = obj(x)
            self.assertIsInstance(out, torch.Tensor, type(obj).__name__)
            self.check(out.tolist(), want, 5e-7, type(obj).__name__ + " (tensor)")
            out = obj(list(x.unbind(0)))
            self.assertIsInstance(out, torch.Tensor, type(obj).__name__)


@needs_numpy
class Behaviour(unittest.TestCase):
    def test_centered_clipping_is_stateful(self):
        from dpas import byzfl as b
        x = rows()
        cc = b.CenteredClipping(L=1, tau=5.0)
        first = cc(x)
        # by hand from 0: rows 2 and 3 are farther than 5 (sqrt 77, sqrt 194)
        want = [(1 + j + 5 * (4 + j) / math.sqrt(77) + 5 * (7 + j) / math.sqrt(194)) / 3
                for j in range(3)]
        for g, w in zip(first, want):
            self.assertAlmostEqual(g, w, places=12)
        second = cc(x)  # from the first result now
        self.assertTrue(np.array_equal(cc.m, second))
        self.assertTrue(np.array_equal(second, b.CenteredClipping(m=first, L=1, tau=5.0)(x)))
        self.assertEqual(b.CenteredClipping(L=0)(x).tolist(), [0, 0, 0])
        self.assertEqual(b.CenteredClipping(tau=0.0)(x).tolist(), [0, 0, 0])

    def test_geometric_median_T0_and_nu(self):
        from dpas import byzfl as b
        self.assertEqual(b.GeometricMedian(T=0)(rows()).tolist(), [0, 0, 0])
        with self.assertRaisesRegex(ValueError, "nu must be > 0"):
            b.GeometricMedian(nu=0.0)

    def test_nonfinite_is_byzantine(self):
        from dpas import byzfl as b
        x = np.vstack([rows(), [[np.inf, 0, 0]]])
        # ByzFL's GeometricMedian leaves out Inf rows; dpas's too, when f allows it
        self.assertTrue(np.isfinite(b.GeometricMedian(f=1)(x)).all())
        with self.assertRaisesRegex(ValueError, "1 gradient has a NaN or Inf coordinate"):
            b.GeometricMedian()(x)
        x[3] = np.nan
        self.assertEqual(b.Median(f=1)(x).tolist(), [4, 5, 6])
        self.assertTrue(np.isnan(b.NNM(1)(x)[3]).all())  # dropped, NaN in its place
        self.assertEqual(b.Median(f=1)(b.NNM(1)(x)).shape, (3,))

    def test_types(self):
        from dpas import byzfl as b
        for bad in (1.0, "1", True, -1):
            with self.assertRaises((TypeError, ValueError)):
                b.TrMean(f=bad)
        with self.assertRaisesRegex(TypeError, "tau must be a number"):
            b.InnerProductManipulation(tau="2")
        with self.assertRaisesRegex(ValueError, "ratio must lie strictly between 0.5 and 1"):
            b.Optimal_ALittleIsEnough(ratio=0.5)
        with self.assertRaisesRegex(TypeError, "agg must be a dpas.byzfl aggregator"):
            b.Optimal_InnerProductManipulation(agg=len)
        with self.assertRaisesRegex(TypeError, "unexpected keyword argument 'gamma'"):
            b.Krum(1, gamma=2)
        with self.assertRaisesRegex(ValueError, "c must be > 0"):
            b.Clipping(0.0)
        with self.assertRaisesRegex(ValueError, r"krum \(byzfl\) needs 2f < n, got n = 3 and f = 2"):
            b.Krum(2)(rows())

    def test_every_class(self):
        from dpas import byzfl as b
        for name in ("Average", "Median", "TrMean", "GeometricMedian", "Krum", "MultiKrum",
                     "CenteredClipping", "MDA", "MoNNA", "Meamed", "CAF", "SMEA", "NNM",
                     "Bucketing", "ARC", "Clipping", "SignFlipping", "InnerProductManipulation",
                     "ALittleIsEnough", "Optimal_InnerProductManipulation",
                     "Optimal_ALittleIsEnough", "Mimic", "Gaussian", "LabelFlipping",
                     "AdaptiveClipping"):
            self.assertIn(name, b.__all__)
            self.assertTrue(getattr(b, name).__doc__)

    def test_half_precision(self):
        from dpas import byzfl as b
        x16 = rows().astype(np.float16)
        for obj, same in ((b.Average(), None), (b.TrMean(f=1), None), (b.Krum(f=1), None),
                          (b.NNM(f=1), None), (b.Clipping(), None),
                          (b.GeometricMedian(), b.GeometricMedian()),
                          (b.CenteredClipping(), b.CenteredClipping())):
            got = obj(x16)  # a stateful class is compared with a fresh one of its own
            want = (same or obj)(x16.astype(np.float32)).astype(np.float16)
            self.assertEqual(got.dtype, np.float16)
            self.assertTrue(np.array_equal(got, want), type(obj).__name__)
        self.assertEqual(b.Median()(list(x16)).tolist(), [4, 5, 6])
        if torch is not None:
            for dt in (torch.float16, torch.bfloat16):
                t = torch.tensor(rows()).to(dt)
                got = b.TrMean(f=1)(t)
                self.assertEqual(got.dtype, dt)
                self.assertEqual(got.tolist(), [4, 5, 6])  # by hand: the middle row
                self.assertEqual(b.Average()(list(t.unbind(0))).dtype, dt)
            mixed = [torch.ones(3, dtype=torch.bfloat16), torch.ones(3, dtype=torch.float16)]
            with self.assertRaisesRegex(TypeError, "vectors must share one dtype"):
                b.Median()(mixed)

    def test_adaptive_clipping(self):
        from dpas import byzfl as b
        x = np.array([[1., 0.], [0., 2.], [3., 0.], [0., 4.]])  # norms 1, 2, 3, 4
        a = b.AdaptiveClipping(initial=2.5)
        out = a(x)
        # by hand: clipped to 2.5; 2 of 4 norms <= 2.5, b = 0.5 = the target: c stays
        self.assertEqual(out.tolist(), [[1, 0], [0, 2], [2.5, 0], [0, 2.5]])
        self.assertEqual(a.c, 2.5)
        a = b.AdaptiveClipping(initial=1.5)
        a(x)  # b = 1/4: c grows by exp(0.2 x 0.25)
        self.assertAlmostEqual(a.c, 1.5 * math.exp(0.05), places=15)
        a = b.AdaptiveClipping(initial=10.0, target_quantile=0.0, learning_rate=1.0)
        self.assertEqual(a(x).tolist(), x.tolist())  # none above 10
        self.assertAlmostEqual(a.c, 10 * math.exp(-1.0), places=14)
        # a learning rate that would overflow math.exp (e^1000) saturates at the largest bound,
        # e^709, call after call; one that would underflow to 0 at the smallest, e^-708
        a = b.AdaptiveClipping(initial=1.0, learning_rate=1000.0, target_quantile=1.0)
        for _ in range(2):
            a(np.full((3, 4), 1e3))
            self.assertEqual(a.c, math.exp(709.0))
        a = b.AdaptiveClipping(initial=1.0, learning_rate=1000.0, target_quantile=0.0)
        a(np.full((3, 4), 1e-3))
        self.assertEqual(a.c, math.exp(-708.0))
        with self.assertRaisesRegex(ValueError, "target_quantile must lie in"):
            b.AdaptiveClipping(target_quantile=1.5)
        if torch is not None:
            t = b.AdaptiveClipping(initial=1.5)
            t(torch.tensor(x))
            self.assertAlmostEqual(t.c, 1.5 * math.exp(0.05), places=15)

    def test_label_flipping(self):
        from dpas import byzfl as b
        # by hand: the mean of the vectors; labels y -> 10 - 1 - y
        self.assertEqual(b.LabelFlipping()(rows()).tolist(), [4, 5, 6])
        self.assertEqual(b.LabelFlipping.flip_labels(np.array([0, 3, 9]), 10).tolist(),
                         [9, 6, 0])
        with self.assertRaisesRegex(ValueError, r"targets must lie in \[0, 10\), got 0 to 10"):
            b.LabelFlipping.flip_labels(np.array([0, 10]), 10)
        with self.assertRaisesRegex(TypeError, "targets must hold integer labels"):
            b.LabelFlipping.flip_labels(np.array([0.5]), 10)
        if torch is not None:
            got = b.LabelFlipping.flip_labels(torch.tensor([1, 2]), 3)
            self.assertEqual(got.tolist(), [1, 0])

    def test_docs(self):
        import dpas.byzfl
        self.assertEqual(doctest.testmod(dpas.byzfl, verbose=False).failed, 0)
        page = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "docs",
                            "byzfl.md")
        r = doctest.testfile(page, module_relative=False, optionflags=doctest.ELLIPSIS,
                             verbose=False)
        self.assertGreater(r.attempted, 5)
        self.assertEqual(r.failed, 0)


# ---- the optimal attacks against their definition ------------------------------------------
# ByzFL's documented definitions (its docstrings), written here in NumPy, float64: the
# reference the property below measures dpas's optimal vectors with. Not dpas's code and not
# ByzFL's code.

def _ref_average(x):
    return x.mean(axis=0)


def _ref_median(x):
    return np.median(x, axis=0)


def _ref_trmean(f):
    def agg(x):
        s = np.sort(x, axis=0)
        return s[f:len(x) - f].mean(axis=0)
    return agg


def _ref_gm(nu, T):  # smoothed Weiszfeld from z = 0, T steps of weights 1 / max(nu, ||z - x_i||)
    def agg(x):
        z = np.zeros(x.shape[1])
        for _ in range(T):
            w = 1 / np.maximum(nu, np.linalg.norm(x - z, axis=1))
            z = (w[:, None] * x).sum(axis=0) / w.sum()
        return z
    return agg


def _ref_krum(f):  # ByzFL's Krum: the least sum of squared distances to its n - f - 1 nearest
    def agg(x):
        D = ((x[:, None, :] - x[None, :, :]) ** 2).sum(axis=2)
        scores = [np.sort(np.delete(D[i], i))[:len(x) - f - 1].sum() for i in range(len(x))]
        return x[int(np.argmin(scores))]
    return agg


def _ref_nnm(f):  # each vector the mean of its n - f nearest, itself included
    def pre(x):
        D = ((x[:, None, :] - x[None, :, :]) ** 2).sum(axis=2)
        return np.array([x[np.argsort(D[i], kind="stable")[:len(x) - f]].mean(axis=0)
                         for i in range(len(x))])
    return pre


def _ref_clipping(c):
    def pre(x):
        nrm = np.linalg.norm(x, axis=1)
        return x * np.minimum(1, c / np.where(nrm > 0, nrm, 1))[:, None]
    return pre


def _ref_arc(f):  # the floor(2 f (n - f) / n) largest clipped to the norm of the next largest
    def pre(x):
        n = len(x)
        k = 2 * f * (n - f) // n
        if k == 0:
            return x
        nrm = np.linalg.norm(x, axis=1)
        thr = np.sort(nrm)[n - k - 1]
        return x * np.minimum(1, thr / np.where(nrm > 0, nrm, 1))[:, None]
    return pre


def _ref_damage(agg, pre, honest, byz, f):
    v = np.vstack([honest, np.tile(byz, (f, 1))])
    for p in pre:
        v = p(v)
    return float(np.linalg.norm(agg(v) - honest.mean(axis=0)))


def _ref_optimal(kind, agg, pre, honest, f, evals=20, start=0.0, delta=10.0, ratio=0.8):
    """ByzFL's documented line search: from start, steps delta doubled while the damage grows,
    then steps shrunk by ratio around the best; evals evaluations in all."""
    mu, sd = honest.mean(axis=0), honest.std(axis=0, ddof=1)

    def vec(t):
        return -t * mu if kind == "ipm" else mu + t * sd

    def y(t):
        return _ref_damage(agg, pre, honest, vec(t), f)
    best_x, best_y, left = start, y(start), evals - 1
    while left > 0:
        prop = best_x + delta
        py = y(prop)
        left -= 1
        if py > best_y:
            best_x, best_y, delta = prop, py, delta * 2
        else:
            delta *= ratio
            break
    while left > 0:
        prop = best_x + delta
        py = y(prop)
        left -= 1
        if py > best_y:
            best_x, best_y = prop, py
        delta *= ratio
    return vec(best_x)


@needs_numpy
class OptimalAttacks(unittest.TestCase):
    """dpas's optimal vector does at least as much damage, ||agg(pre(honest, f copies)) - mu||,
    as the vector of ByzFL's definition on the same inputs (1e-6 of the damage), with the
    attacked aggregator's and each pre-aggregator's own parameters: NNM's and ARC's own f before
    an aggregator without one (Average, Median), GeometricMedian's nu and T (issue 33: 67 of 400
    such cases did less damage, up to 100% less, when the chain ran with the aggregator's f and
    GeometricMedian with dpas's defaults). Aggregators that select (Krum) run without NNM here:
    after NNM the f Byzantine copies and their mixes tie in exact arithmetic, and a rounding of
    the last bit picks a different vector in any two implementations."""

    def cases(self, b, f):
        aggs = [(b.Average(), _ref_average), (b.Median(), _ref_median),
                (b.TrMean(f=f), _ref_trmean(f)),
                (b.GeometricMedian(nu=0.1, T=3), _ref_gm(0.1, 3)),
                (b.GeometricMedian(nu=2.0, T=7), _ref_gm(2.0, 7)),
                (b.GeometricMedian(T=0), _ref_gm(0.1, 0)), (b.Krum(f=f), _ref_krum(f))]
        pres = [([], []), ([b.Clipping()], [_ref_clipping(2.0)]),
                ([b.NNM(f=f)], [_ref_nnm(f)]), ([b.ARC(f=f)], [_ref_arc(f)]),
                ([b.NNM(f=f), b.Clipping(c=1.0)], [_ref_nnm(f), _ref_clipping(1.0)])]
        for (agg, ragg) in aggs:
            for (pre, rpre) in pres:
                if isinstance(agg, b.Krum) and any(isinstance(p, b.NNM) for p in pre):
                    continue
                yield agg, ragg, pre, rpre

    def test_at_least_as_much_damage(self):
        from dpas import byzfl as b
        rng = np.random.default_rng(33)
        checked = 0
        for trial in range(6):
            h, f, d = int(rng.integers(3, 8)), int(rng.integers(1, 3)), int(rng.integers(1, 5))
            scale = 10 ** rng.uniform(-2, 2)
            honest = rng.normal(size=(h, d)) * scale + rng.normal(size=d) * scale
            for agg, ragg, pre, rpre in self.cases(b, f):
                if isinstance(agg, b.Krum) and 2 * f >= h + f:
                    continue
                for cls, kind in ((b.Optimal_InnerProductManipulation, "ipm"),
                                  (b.Optimal_ALittleIsEnough, "alie")):
                    got = cls(agg, pre_agg_list=pre, f=f)(honest)
                    want = _ref_optimal(kind, ragg, rpre, honest, f)
                    yg = _ref_damage(ragg, rpre, honest, got, f)
                    yw = _ref_damage(ragg, rpre, honest, want, f)
                    what = (f"{cls.__name__}({agg!r}, {pre}) h {h} f {f} d {d}: dpas's vector "
                            f"{got} damage {yg}, the definition's {want} damage {yw}")
                    self.assertGreaterEqual(yg, yw - 1e-6 * max(yw, 1e-300), what)
                    checked += 1
        self.assertGreater(checked, 250, checked)

    def test_by_hand(self):
        from dpas import byzfl as b
        x = np.array([[1.], [2.], [3.]])
        # the mean, no pre-aggregation: the damage f |mu| (1 + tau) / (h + f) grows with tau,
        # so every one of the 19 steps after start is taken: tau = 10 (2^19 - 1)
        got = b.Optimal_InnerProductManipulation(b.Average(), pre_agg_list=[], f=1)(x)
        self.assertEqual(got.tolist(), [-2.0 * 10 * (2 ** 19 - 1)])
        # GeometricMedian with T = 0 returns 0 whatever the vectors: the search keeps start.
        got = b.Optimal_ALittleIsEnough(b.GeometricMedian(T=0), pre_agg_list=[], f=1,
                                        start=0.5)(x)
        self.assertEqual(got.tolist(), [2.0 + 0.5])


@needs_numpy
class PreparedPath(unittest.TestCase):
    """The classes' short path (a C-contiguous numpy matrix, options built once) against the
    full path (a list of rows, every check in Python first): a consistency test of two paths of
    dpas, bit for bit, errors included."""

    def test_same_results(self):
        from dpas import byzfl as b
        rng = np.random.default_rng(5)
        for dtype in (np.float32, np.float64):
            x = rng.standard_normal((9, 7)).astype(dtype)
            for obj in (b.Average(), b.Median(f=2), b.TrMean(f=2), b.Krum(f=2), b.MoNNA(f=2),
                        b.CAF(f=2), b.GeometricMedian(), b.NNM(f=2), b.ARC(f=2),
                        b.Clipping(c=1.5), b.Bucketing(s=2, seed=3)):
                fast, slow = obj(x), obj(list(x))
                self.assertEqual(fast.dtype, x.dtype)
                self.assertTrue(np.array_equal(fast, slow), type(obj).__name__)
            obj = b.TrMean(f=2)
            obj(x)
            obj.f = 1  # a parameter changed after a call is used
            self.assertTrue(np.array_equal(obj(x), b.TrMean(f=1)(list(x))))

    def test_same_errors(self):
        from dpas import byzfl as b
        x = rows()
        x[1, 0] = np.nan
        for arg in (x, list(x)):
            with self.assertRaisesRegex(ValueError, "1 gradient has a NaN or Inf coordinate"):
                b.Average()(arg)
            with self.assertRaisesRegex(ValueError, "krum"):
                b.Krum(f=2)(arg)
        with self.assertRaises(TypeError):  # not contiguous: the full path's message
            b.Average()(np.ones((4, 3)).T)


if __name__ == "__main__":
    unittest.main()
