"""dpas.aggregate, dpas.select and dpas.attack, with the standard library's unittest. The expected
values come from numpy computed here in float64 (another tool), from hand calculations, and from
Python's statistics.NormalDist; the tests that need numpy are skipped where it is not installed
(the default python3 of a pyenv), and there the functions must say that numpy is missing.

Environment: PYTHONPATH names the python/ folder, DPAS_LIBRARY the built libdpas.so."""
import doctest
import math
import os
import statistics
import tracemalloc
import unittest

import dpas
import dpas.kernels

try:
    import numpy as np
except ImportError:
    np = None

needs_numpy = unittest.skipIf(np is None, "numpy is not installed for this python3")


class WithoutNumpy(unittest.TestCase):
    @unittest.skipIf(np is not None, "numpy is installed")
    def test_clear_import_error(self):
        with self.assertRaisesRegex(ImportError, "dpas.aggregate needs numpy .*python3-numpy"):
            dpas.aggregate("median", b"\0" * 16, f=0)

    def test_exported(self):
        for name in ("aggregate", "select", "attack"):
            self.assertIn(name, dpas.__all__)
            self.assertTrue(callable(getattr(dpas, name)))


@needs_numpy
class Aggregate(unittest.TestCase):
    def grads(self, n=9, d=1003, seed=1):
        rng = np.random.default_rng(seed)
        return (rng.standard_normal(d) + 0.1 * rng.standard_normal((n, d))).astype(np.float32)

    def test_against_numpy(self):
        g = self.grads()
        x = g.astype(np.float64)
        # the median in float64, rounded once: what the kernels compute
        self.assertTrue(np.array_equal(dpas.aggregate("median", g, f=4),
                                       np.median(x, axis=0).astype(np.float32)))
        s = np.sort(x, axis=0)
        self.assertTrue(np.array_equal(dpas.aggregate("trimmed_mean", g, f=2),
                                       (s[2:-2].sum(axis=0) / 5).astype(np.float32)))
        self.assertTrue(np.array_equal(dpas.aggregate("mean", g), (x.sum(axis=0) / 9).astype(np.float32)))
        out = dpas.aggregate("median", g, f=4)
        self.assertEqual(out.dtype, np.float32)
        self.assertEqual(out.shape, (1003,))

    def test_meamed_tie_rule(self):
        g = np.array([[1], [1], [2], [2], [3]], dtype=np.float32)
        self.assertEqual(dpas.aggregate("meamed", g, f=2)[0], np.float32(5 / 3))

    def test_nonfinite_row_is_byzantine(self):
        g = np.array([[1, 0], [2, 0], [3, 0], [np.nan, 0], [1e6, 0]], dtype=np.float32)
        self.assertEqual(dpas.aggregate("median", g, f=2).tolist(), [2.5, 0.0])
        g[1, 1] = np.inf
        g[2, 0] = -np.inf
        with self.assertRaisesRegex(ValueError, "3 gradients have a NaN or Inf coordinate"):
            dpas.aggregate("median", g, f=2)

    def test_threads_and_instruction_sets(self):
        g = self.grads(n=12, d=40000)
        for rule, f in (("median", 5), ("trimmed_mean", 3), ("krum", 4), ("geometric_median", 5)):
            one = dpas.aggregate(rule, g, f)
            self.assertTrue(np.array_equal(one, dpas.aggregate(rule, g, f, threads=2)), rule)
        ref = dpas.aggregate("median", g, 5, isa="generic")
        self.assertTrue(np.array_equal(ref, dpas.aggregate("median", g, 5)))

    def test_no_copy(self):
        # a read-only array is read where it lies; so is a bytearray seen through memoryview
        g = self.grads(n=16, d=65536)
        g.setflags(write=False)
        tracemalloc.start()
        out = dpas.aggregate("median", g, f=7)
        peak = tracemalloc.get_traced_memory()[1]
        tracemalloc.stop()
        self.assertLess(peak, g.nbytes // 4)  # the result (d floats) and small change, no copy
        raw = bytearray(g.tobytes())
        view = memoryview(raw).cast("B").cast("f", (16, 65536))
        self.assertTrue(np.array_equal(dpas.aggregate("median", view, f=7), out))

    def test_refusals(self):
        g = self.grads()
        with self.assertRaisesRegex(TypeError, "must be float32, got format 'd'"):
            dpas.aggregate("median", g.astype(np.float64), f=1)
        with self.assertRaisesRegex(TypeError, "must be C-contiguous"):
            dpas.aggregate("median", g[:, ::2], f=1)
        with self.assertRaisesRegex(TypeError, "must be C-contiguous"):
            dpas.aggregate("median", np.asfortranarray(g), f=1)
        with self.assertRaisesRegex(TypeError, "must be 2-D"):
            dpas.aggregate("median", g[0], f=0)
        with self.assertRaisesRegex(TypeError, "2-D float32 buffer .*got list"):
            dpas.aggregate("median", [[1.0, 2.0]], f=0)
        with self.assertRaisesRegex(TypeError, "unexpected keyword argument 'gamma'"):
            dpas.aggregate("median", g, f=1, gamma=2)
        with self.assertRaisesRegex(ValueError, r"krum \(blanchard\) needs n >= 2f \+ 3"):
            dpas.aggregate("krum", g, f=4)
        with self.assertRaisesRegex(ValueError, "unknown rule"):
            dpas.aggregate("medain", g, f=1)
        with self.assertRaisesRegex(ValueError, "isa must be one of"):
            dpas.aggregate("median", g, f=1, isa="sse")
        # nothing wraps or is cut on its way to C (ctypes would: 2**64 + 1 becomes 1)
        with self.assertRaisesRegex(dpas.RangeError, "f is out of range"):
            dpas.aggregate("median", g, f=2**64 + 1)
        with self.assertRaisesRegex(dpas.RangeError, "threads is out of range: must fit a C int"):
            dpas.aggregate("median", g, f=1, threads=2**32 + 2)
        with self.assertRaisesRegex(dpas.InvalidValue, "rule must not contain a NUL"):
            dpas.aggregate("median\x00krum", g, f=1)
        with self.assertRaisesRegex(TypeError, "nnm must be True or False"):
            dpas.aggregate("median", g, f=1, nnm=1)
        with self.assertRaisesRegex(TypeError, "tau must be a number"):
            dpas.aggregate("centered_clipping", g, f=1, tau="1")
        with self.assertRaises(dpas.ArgumentTypeError):  # a TypeError, and a dpas.InvalidValue
            dpas.aggregate("median", g.astype(np.float64), f=1)

    def test_options(self):
        g = self.grads(n=11)
        x = g.astype(np.float64)
        # ByzFL's Krum convention scores with n - f - 1 neighbours and allows 2f < n
        self.assertEqual(dpas.aggregate("krum", g, 5, convention="byzfl").shape, (1003,))
        sel = dpas.select("multi_krum", g, 3, m=2)
        self.assertEqual(len(sel), 2)
        want = (x[sorted(sel)].sum(axis=0) / 2).astype(np.float32)
        self.assertTrue(np.array_equal(dpas.aggregate("multi_krum", g, 3, m=2), want))
        self.assertEqual(dpas.aggregate("median", g, 3, nnm=True).shape, (1003,))
        self.assertEqual(dpas.aggregate("geometric_median", g, 3, iterations=3, tolerance=1e-9,
                                        smoothing=1e-6).shape, (1003,))

    def test_docstring(self):
        self.assertEqual(doctest.testmod(dpas.kernels, verbose=False).failed, 0)

    def test_docs_page(self):
        # docs/kernels.md's Python examples, as doctests: the page shows real output
        page = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "docs",
                            "kernels.md")
        r = doctest.testfile(page, module_relative=False, optionflags=doctest.ELLIPSIS,
                             verbose=False)
        self.assertGreater(r.attempted, 5)
        self.assertEqual(r.failed, 0)


@needs_numpy
class Select(unittest.TestCase):
    def test_krum_skips_the_outliers(self):
        rng = np.random.default_rng(3)
        g = (1 + 0.01 * rng.standard_normal((9, 100))).astype(np.float32)
        g[2] = 1e30
        g[5] = -1e19
        for rule in ("krum", "multi_krum", "brute"):
            sel = dpas.select(rule, g, f=2)
            self.assertTrue(sel and not {2, 5} & set(sel), (rule, sel))
        self.assertEqual(len(dpas.select("bulyan", g, f=1)), 7)  # n - 2f

    def test_not_a_selecting_rule(self):
        with self.assertRaisesRegex(ValueError, "median selects no gradients"):
            dpas.select("median", np.zeros((5, 3), np.float32), f=1)


@needs_numpy
class Attack(unittest.TestCase):
    honest = None

    def setUp(self):
        self.honest = np.array([[1, 2], [3, 4]], dtype=np.float32)

    def test_by_hand(self):
        self.assertEqual(dpas.attack("sign_flip", self.honest, 2).tolist(), [[-2, -3], [-2, -3]])
        self.assertEqual(dpas.attack("ipm", self.honest, 1, epsilon=0.5).tolist(), [[-1, -1.5]])
        z = statistics.NormalDist().inv_cdf(2 / 3)  # n = 3, f = 1: s = 1, (n - s) / n = 2/3
        want = [np.float32(2 + z * math.sqrt(2)), np.float32(3 + z * math.sqrt(2))]
        self.assertEqual(dpas.attack("alie", self.honest, 1)[0].tolist(), want)
        self.assertEqual(dpas.attack("alie", self.honest, 1, z=-1)[0].tolist(),
                         [np.float32(2 - math.sqrt(2)), np.float32(3 - math.sqrt(2))])
        self.assertTrue(np.isnan(dpas.attack("nan", self.honest[:0], 3)).all())
        self.assertEqual(dpas.attack("inf", self.honest, 1, sign=-1).tolist(), [[-math.inf, -math.inf]])
        self.assertEqual(dpas.attack("large_value", self.honest, 2).shape, (2, 2))
        self.assertEqual(dpas.attack("sign_flip", self.honest, 0).shape, (0, 2))

    def test_against_the_rules(self):
        rng = np.random.default_rng(5)
        honest = (1 + 0.1 * rng.standard_normal((7, 500))).astype(np.float32)
        for name in ("alie", "ipm", "sign_flip", "large_value", "nan", "inf"):
            g = np.concatenate([honest, dpas.attack(name, honest, 3)])
            out = dpas.aggregate("median", g, f=3)
            self.assertTrue(np.isfinite(out).all(), name)
            self.assertTrue(((out >= honest.min(axis=0)) & (out <= honest.max(axis=0))).all(), name)

    def test_refusals(self):
        with self.assertRaisesRegex(TypeError, "unexpected parameter 'epsilon'; its parameter is 'z'"):
            dpas.attack("alie", self.honest, 1, epsilon=2)
        with self.assertRaisesRegex(TypeError, "it takes none"):
            dpas.attack("nan", self.honest, 1, value=2)
        with self.assertRaisesRegex(ValueError, "unknown attack"):
            dpas.attack("gauss", self.honest, 1)
        with self.assertRaisesRegex(ValueError, "alie needs at least 2 honest gradients"):
            dpas.attack("alie", self.honest[:1], 1)


if __name__ == "__main__":
    unittest.main()
