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
                     "Optimal_ALittleIsEnough", "Mimic", "Gaussian"):
            self.assertIn(name, b.__all__)
            self.assertTrue(getattr(b, name).__doc__)

    def test_docs(self):
        import dpas.byzfl
        self.assertEqual(doctest.testmod(dpas.byzfl, verbose=False).failed, 0)
        page = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "docs",
                            "byzfl.md")
        r = doctest.testfile(page, module_relative=False, optionflags=doctest.ELLIPSIS,
                             verbose=False)
        self.assertGreater(r.attempted, 5)
        self.assertEqual(r.failed, 0)


if __name__ == "__main__":
    unittest.main()
