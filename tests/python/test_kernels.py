# SPDX-License-Identifier: Apache-2.0
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

    def test_float16(self):
        """float16: computed in float32 (one copy, any layout), returned in float16; a
        consistency test against the float32 call on the same values, rounded once."""
        g = self.grads(n=9, d=37).astype(np.float16)
        for rule, kw in (("median", {"f": 1}), ("trimmed_mean", {"f": 2}), ("krum", {"f": 2}),
                         ("geometric_median", {"f": 2})):
            got = dpas.aggregate(rule, g, **kw)
            self.assertEqual(got.dtype, np.float16)
            want = dpas.aggregate(rule, g.astype(np.float32), **kw).astype(np.float16)
            self.assertTrue(np.array_equal(got, want), rule)
        self.assertTrue(np.array_equal(dpas.aggregate("median", g.T.copy().T, f=1),
                                       dpas.aggregate("median", g, f=1)))  # any layout
        batch = np.stack([g, g[::-1]])
        self.assertEqual(dpas.aggregate("median", batch, f=1).shape, (2, 37))
        self.assertEqual(dpas.aggregate("median", batch, f=1).dtype, np.float16)
        self.assertEqual(dpas.preaggregate("nnm", g, 2).dtype, np.float16)
        with self.assertRaisesRegex(TypeError, r"grads must share one dtype, got 2: float16 "
                                    r"\(grads\[0\] first\), float32"):
            dpas.aggregate("median", [g[0], g[1].astype(np.float32)])

    def test_refusals(self):
        g = self.grads()
        with self.assertRaisesRegex(TypeError, "must be float32 or float64, got int64"):
            dpas.aggregate("median", g.astype(np.int64), f=1)
        with self.assertRaisesRegex(TypeError, "the rows of grads are not contiguous"):
            dpas.aggregate("median", g[:, ::2], f=1)
        with self.assertRaisesRegex(TypeError, "the rows of grads are not contiguous"):
            dpas.aggregate("median", np.asfortranarray(g), f=1)
        with self.assertRaisesRegex(TypeError, "must be 2-D"):
            dpas.aggregate("median", g[0], f=0)
        with self.assertRaisesRegex(TypeError, r"grads\[0\] is a list: .*numpy arrays or torch"):
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
        with self.assertRaisesRegex(dpas.RangeError, "threads is out of range: must be <= 256"):
            dpas.aggregate("median", g, f=1, threads=2**32 + 2)
        with self.assertRaisesRegex(dpas.InvalidValue, "rule must not contain a NUL"):
            dpas.aggregate("median\x00krum", g, f=1)
        with self.assertRaisesRegex(TypeError, "nnm must be True or False"):
            dpas.aggregate("median", g, f=1, nnm=1)
        with self.assertRaisesRegex(TypeError, "tau must be a number"):
            dpas.aggregate("centered_clipping", g, f=1, tau="1")

    def test_integers_are_integers(self):
        # issue 21: no int() coercion of floats, strings or bools
        g = self.grads()
        for bad in (2.0, "2", True, 2.5, None):
            with self.assertRaisesRegex(TypeError, "f must be an int"):
                dpas.aggregate("median", g, f=bad)
        with self.assertRaisesRegex(TypeError, "threads must be an int, got float"):
            dpas.aggregate("median", g, f=1, threads=2.0)
        with self.assertRaisesRegex(TypeError, "m must be an int, got bool"):
            dpas.aggregate("multi_krum", g, f=1, m=True)
        with self.assertRaisesRegex(TypeError, "iterations must be an int, got str"):
            dpas.aggregate("geometric_median", g, f=1, iterations="3")
        self.assertEqual(dpas.aggregate("median", g, f=np.int64(2)).shape, (1003,))

    def test_options_the_rule_does_not_take(self):
        g = self.grads()
        for rule, key, value in (("krum", "m", 2), ("median", "tau", 1.0),
                                 ("centered_clipping", "tolerance", 1e-3),
                                 ("mean", "iterations", 3), ("krum", "start", g[0]),
                                 ("median", "m", 0)):
            with self.assertRaisesRegex(TypeError, f"{rule} does not take the option {key}"):
                dpas.aggregate(rule, g, f=1, **{key: value})

    def test_pre(self):
        g = self.grads()
        x = dpas.aggregate("median", g, 2, nnm=True)
        self.assertTrue(np.array_equal(x, dpas.aggregate("median", g, 2, pre=["nnm"])))
        with self.assertRaisesRegex(ValueError, "pre names nnm twice"):
            dpas.aggregate("median", g, 2, pre=["nnm", "nnm"])
        with self.assertRaisesRegex(ValueError, "median, which is not a pre-aggregation"):
            dpas.aggregate("median", g, 2, pre=["median"])
        with self.assertRaisesRegex(TypeError, "pre must be a list"):
            dpas.aggregate("median", g, 2, pre="nnm")
        with self.assertRaisesRegex(TypeError, r"pre\[0\] \(nnm\) got an unexpected parameter 'c'"):
            dpas.aggregate("median", g, 2, pre=[("nnm", {"c": 1.0})])

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
        try:
            import torch  # noqa: F401 (the page shows a tensor)
        except ImportError:
            self.skipTest("torch is not installed for this python3")
        page = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "docs",
                            "kernels.md")
        r = doctest.testfile(page, module_relative=False, optionflags=doctest.ELLIPSIS,
                             verbose=False)
        self.assertGreater(r.attempted, 5)
        self.assertEqual(r.failed, 0)


try:
    import torch
except ImportError:
    torch = None

needs_torch = unittest.skipIf(torch is None or np is None, "torch is not installed for this python3")


def column_ref(rows, rule, f=0):
    """The median, trimmed mean or mean of each column in plain Python floats (double), in the
    order the kernels document: the two middle values halved and added; the kept values in
    ascending order; the mean in row order."""
    n, out = len(rows), []
    for j in range(len(rows[0])):
        v = [float(r[j]) for r in rows]
        if rule == "mean":
            s = 0.0
            for x in v:
                s += x
            out.append(s / n)
            continue
        v.sort()
        if rule == "median":
            out.append(v[n // 2] if n % 2 else v[n // 2 - 1] * 0.5 + v[n // 2] * 0.5)
        else:
            s = 0.0
            for x in v[f:n - f]:
                s += x
            out.append(s / (n - 2 * f))
    return out


@needs_numpy
class Inputs(unittest.TestCase):
    """Issue 24: the gradients as people have them, read where they lie."""

    def grads(self, n=9, d=37, seed=2, dtype=np.float32 if np else None):
        rng = np.random.default_rng(seed)
        return (rng.standard_normal(d) + 0.1 * rng.standard_normal((n, d))).astype(dtype)

    def test_float64(self):
        g = self.grads(dtype=np.float64)
        for rule, f in (("median", 4), ("trimmed_mean", 2), ("mean", 0)):
            out = dpas.aggregate(rule, g, f)
            self.assertEqual(out.dtype, np.float64)
            self.assertEqual(out.tolist(), column_ref(g.tolist(), rule, f), rule)
        # the same non-finite policy
        g[3, 5] = np.nan
        self.assertTrue(np.isfinite(dpas.aggregate("krum", g, 2)).all())
        with self.assertRaisesRegex(ValueError, "1 gradient has a NaN or Inf coordinate .row 3."):
            dpas.aggregate("geometric_median", g, 0)
        # near DBL_MAX the mean is still finite (by hand: the mean of 2^1023 and 2^1022)
        big = np.array([[2.0**1023], [2.0**1022]])
        self.assertEqual(dpas.aggregate("mean", big)[0], 3 * 2.0**1021)

    def test_rows_read_where_they_lie(self):
        import dpas._rows as R
        g = self.grads()
        view = g[::2]                     # rows taken with a step: a view, not a copy
        r = R.rows(np, "grads", view)
        self.assertEqual(list(r.rows), [g.ctypes.data + 2 * i * g.strides[0] for i in range(5)])
        self.assertTrue(np.array_equal(dpas.aggregate("median", view, 2),
                                       dpas.aggregate("median", np.ascontiguousarray(view), 2)))
        rows = [g[i] for i in range(9)]   # a list of rows: row pointers, nothing stacked
        r = R.rows(np, "grads", rows)
        self.assertEqual(list(r.rows), [row.ctypes.data for row in rows])
        self.assertTrue(np.array_equal(dpas.aggregate("krum", rows, 2), dpas.aggregate("krum", g, 2)))
        self.assertTrue(np.array_equal(dpas.aggregate("median", tuple(rows), 2),
                                       dpas.aggregate("median", g, 2)))
        # the same row object twice is two gradients (ByzFL repeats its Byzantine vector f times)
        self.assertEqual(dpas.select("krum", rows[:7] + [rows[0]] * 2, 2)[0] in range(9), True)

    def test_list_refusals(self):
        g = self.grads()
        with self.assertRaisesRegex(TypeError, r"grads must share one dtype, got 2: float32 "
                                    r"\(grads\[0\] first\), float64 \(grads\[1\] first\)"):
            dpas.aggregate("median", [g[0], g[1].astype(np.float64)])
        with self.assertRaisesRegex(ValueError, r"grads\[1\] has 36 coordinates and grads\[0\] has 37"):
            dpas.aggregate("median", [g[0], g[1][:-1]])
        with self.assertRaisesRegex(TypeError, r"the coordinates of grads\[0\] are not contiguous"):
            dpas.aggregate("median", [g[0][::2], g[1][::2]])
        with self.assertRaisesRegex(ValueError, "must hold at least one gradient, got an empty list"):
            dpas.aggregate("median", [])
        with self.assertRaisesRegex(TypeError, r"grads\[0\] must be 1-D"):
            dpas.aggregate("median", [g, g])

    def test_unaligned(self):
        raw = bytearray(4 * 8 + 1)
        view = np.frombuffer(raw, dtype=np.uint8)[1:].view(np.float32).reshape(2, 4)
        with self.assertRaisesRegex(TypeError, "grads is not aligned to its 4-byte elements"):
            dpas.aggregate("mean", view)

    def test_strict_buffer_formats(self):
        raw = bytearray(np.zeros((4, 3), np.float64).tobytes())
        view = memoryview(raw).cast("B").cast("d", (4, 3))
        self.assertEqual(dpas.aggregate("mean", view).dtype, np.float64)
        with self.assertRaisesRegex(TypeError, "must be float32 or float64, got buffer format 'i'"):
            dpas.aggregate("mean", memoryview(bytearray(48)).cast("B").cast("i", (4, 3)))


@needs_torch
class Tensors(unittest.TestCase):
    def test_tensor_in_tensor_out(self):
        import dpas._rows as R
        t = torch.randn(9, 33, dtype=torch.float32, requires_grad=True)
        out = dpas.aggregate("median", t, 4)
        self.assertIsInstance(out, torch.Tensor)
        self.assertEqual(out.dtype, torch.float32)
        self.assertTrue(torch.equal(out, torch.from_numpy(
            dpas.aggregate("median", t.detach().numpy(), 4))))
        r = R.rows(np, "grads", t)   # no copy: the tensor's own memory
        self.assertEqual(r.rows[1], t.data_ptr() + t.stride(0) * 4)
        self.assertEqual(dpas.aggregate("mean", t.double()).dtype, torch.float64)
        rows = list(t.detach().unbind(0))
        self.assertTrue(torch.equal(dpas.aggregate("trimmed_mean", rows, 2),
                                    dpas.aggregate("trimmed_mean", t, 2)))
        self.assertEqual(dpas.select("krum", t, 2), dpas.select("krum", t.detach().numpy(), 2))

    def test_half_tensors(self):
        """float16 and bfloat16 tensors: computed in float32 (one copy), returned in their dtype;
        a consistency test against the float32 call on the same values."""
        t = torch.randn(5, 4)
        for dt in (torch.float16, torch.bfloat16):
            h = t.to(dt)
            got = dpas.aggregate("median", h, 1)
            self.assertEqual(got.dtype, dt)
            self.assertTrue(torch.equal(got, dpas.aggregate("median", h.float(), 1).to(dt)))
            self.assertEqual(dpas.select("krum", h, 1), dpas.select("krum", h.float(), 1))
            pre = dpas.preaggregate("clipping", list(h.unbind(0)), c=1.0)
            self.assertEqual(pre.dtype, dt)
            self.assertTrue(torch.equal(pre, dpas.preaggregate("clipping", h.float(), c=1.0).to(dt)))
        with self.assertRaisesRegex(TypeError, "grads must share one dtype, got 2: bfloat16 "
                                    r"\(grads\[\d\] first\), float16"):
            dpas.aggregate("median", [t[0].half(), t[1].bfloat16()], 0)

    def test_tensor_refusals(self):
        t = torch.randn(5, 4)
        with self.assertRaisesRegex(TypeError, "the rows of grads are not contiguous"):
            dpas.aggregate("median", t.t(), 1)
        with self.assertRaisesRegex(TypeError, r"grads\[1\] is a numpy array and grads\[0\] is not"):
            dpas.aggregate("median", [t[0], t[1].numpy()], 0)


@needs_numpy
class Workspaces(unittest.TestCase):
    def test_kept_and_explicit(self):
        rng = np.random.default_rng(4)
        g = rng.standard_normal((9, 50000)).astype(np.float32)
        ws = dpas.Workspace()
        self.assertEqual(ws.size, 0)
        a = dpas.aggregate("geometric_median", g, 2, workspace=ws)
        held = ws.size
        self.assertGreaterEqual(held, 2 * 50000 * 8)   # the two iterates of d doubles
        b = dpas.aggregate("geometric_median", g, 2, workspace=ws)
        self.assertEqual(ws.size, held)
        self.assertTrue(np.array_equal(a, b))
        self.assertTrue(np.array_equal(a, dpas.aggregate("geometric_median", g, 2, workspace=False)))
        self.assertTrue(np.array_equal(a, dpas.aggregate("geometric_median", g, 2)))
        ws.free()
        self.assertEqual(ws.size, 0)
        with ws._lock:   # a call while another holds it
            with self.assertRaisesRegex(ValueError, "workspace is in use by another call"):
                dpas.aggregate("median", g, 2, workspace=ws)
        with self.assertRaisesRegex(TypeError, "workspace must be a dpas.Workspace"):
            dpas.aggregate("median", g, 2, workspace="mine")


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


@needs_numpy
class Weights(unittest.TestCase):
    """weights= for mean, median and geometric_median: equal weights give the unweighted rule,
    integer weights the rows repeated (consistency tests), the weighted mean by hand, the
    refusals."""

    def test_properties(self):
        rng = np.random.default_rng(9)
        for dtype in (np.float32, np.float64):
            x = rng.standard_normal((7, 11)).astype(dtype)
            w = rng.integers(0, 4, 7)
            w[0] = max(w[0], 1)
            rep = np.repeat(x, w, axis=0)
            for rule in ("mean", "median", "geometric_median"):
                kw = {"tolerance": 1e-12, "iterations": 1000} if rule == "geometric_median" else {}
                eq = dpas.aggregate(rule, x, weights=[2.5] * 7, **kw)
                self.assertEqual(eq.dtype, dtype)
                tol = 1e-5 if dtype == np.float32 else 1e-9
                self.assertTrue(np.allclose(eq, dpas.aggregate(rule, x, **kw), atol=tol), rule)
                self.assertTrue(np.allclose(dpas.aggregate(rule, x, weights=w, **kw),
                                            dpas.aggregate(rule, rep, **kw), atol=tol), rule)
            self.assertTrue(np.array_equal(dpas.aggregate("median", x, weights=np.ones(7)),
                                           dpas.aggregate("median", x)))
        g = np.array([[1., 10.], [2., 20.], [3., 30.], [100., -5.]])
        self.assertEqual(dpas.aggregate("mean", g, weights=[1, 1, 2, 0]).tolist(), [2.25, 22.5])

    def test_refusals(self):
        from dpas import byzfl
        g = np.ones((4, 3))
        with self.assertRaisesRegex(TypeError, "krum does not take the option weights"):
            dpas.aggregate("krum", g, 1, weights=[1] * 4)
        with self.assertRaisesRegex(ValueError, "weights must hold one weight per row: 4 rows, "
                                    "got 3"):
            dpas.aggregate("mean", g, weights=[1] * 3)
        with self.assertRaisesRegex(ValueError, "weight 2 is -1"):
            dpas.aggregate("mean", g, weights=[1, 1, -1, 1])
        with self.assertRaisesRegex(ValueError, "weight 1 is nan"):
            dpas.aggregate("median", g, weights=[1, float("nan"), 1, 1])
        with self.assertRaisesRegex(ValueError, "are all 0"):
            dpas.aggregate("median", g, weights=[0] * 4)
        with self.assertRaisesRegex(ValueError, "weights with pre-aggregations"):
            dpas.aggregate("median", g, weights=[1] * 4, pre=["clipping"])
        with self.assertRaisesRegex(TypeError, r"weights\[1\] must be a real, got str"):
            dpas.aggregate("mean", g, weights=[1, "2", 1, 1])
        with self.assertRaisesRegex(ValueError, "TrMean has no weighted form"):
            byzfl.TrMean(f=1)(g, weights=[1] * 4)
        self.assertEqual(byzfl.Median()(g * [[1], [2], [3], [4]], weights=[4, 1, 1, 1]).tolist(),
                         [1.0] * 3)


@needs_numpy
class Batches(unittest.TestCase):
    """B aggregations in one call (dpas_aggregate_batch): a consistency test, each set against
    the same rule called on it alone; the refusals name the set or say what to convert."""

    def test_each_set_as_alone(self):
        x = np.random.default_rng(3).standard_normal((6, 9, 13))
        for dtype in (np.float32, np.float64):
            xs = x.astype(dtype)
            for rule, kw in (("mean", {}), ("median", {}), ("trimmed_mean", {"f": 2}),
                             ("krum", {"f": 2}), ("monna", {"f": 2, "idx": 1}),
                             ("meamed", {"f": 2, "pre": ["arc"]})):
                got = dpas.aggregate(rule, xs, **kw)
                self.assertEqual(got.shape, (6, 13))
                self.assertEqual(got.dtype, dtype)
                for b in range(6):
                    self.assertTrue(np.array_equal(got[b], dpas.aggregate(rule, xs[b], **kw)),
                                    (rule, b))
            for pre, kw in (("bucketing", {"s": 2, "seed": 5}), ("nnm", {}), ("clipping", {})):
                got = dpas.preaggregate(pre, xs, 2, **kw)
                self.assertEqual(got.shape, (6, 5 if pre == "bucketing" else 9, 13))
                for b in range(6):
                    self.assertTrue(np.array_equal(got[b], dpas.preaggregate(pre, xs[b], 2, **kw)))

    def test_byzfl_classes_and_tensors(self):
        import torch
        from dpas import byzfl
        x = np.random.default_rng(4).standard_normal((3, 8, 5))
        for agg in (byzfl.Average(), byzfl.MoNNA(f=2), byzfl.Bucketing(s=2, seed=1)):
            got = agg(x)
            for b in range(3):
                self.assertTrue(np.array_equal(got[b], agg(x[b])))
            t = agg(torch.from_numpy(x))
            self.assertIsInstance(t, torch.Tensor)
            self.assertTrue(np.array_equal(t.numpy(), got))

    def test_refusals(self):
        x = np.random.default_rng(5).standard_normal((4, 7, 3))
        x[2, :3, 0] = np.nan
        with self.assertRaisesRegex(dpas.InvalidValue, r"^set 2 of the batch of 4: 3 gradients "
                                    r"have a NaN or Inf coordinate"):
            dpas.aggregate("median", x, f=2)
        with self.assertRaisesRegex(dpas.ArgumentTypeError, r"C-contiguous.*shape \(4, 3, 7\)"):
            dpas.aggregate("median", x.transpose(0, 2, 1))
        with self.assertRaisesRegex(dpas.ArgumentTypeError, "cannot take start= or weights="):
            dpas.aggregate("geometric_median", np.ones((2, 3, 4)), start=np.zeros(4))
        with self.assertRaisesRegex(dpas.ArgumentTypeError, "cannot take start= or weights="):
            dpas.aggregate("mean", np.ones((2, 3, 4)), weights=[1, 2, 3])
        with self.assertRaisesRegex(dpas.InvalidValue, r"^set 0 of the batch of 4: krum"):
            dpas.aggregate("krum", np.ones((4, 7, 3)), f=3)


if __name__ == "__main__":
    unittest.main()
