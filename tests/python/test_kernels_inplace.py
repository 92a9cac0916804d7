# SPDX-License-Identifier: Apache-2.0
"""Issue 33: pre-aggregations in place and clipping fused into the mean.

CONSISTENCY tests (two of dpas's own paths compared): the in-place result (preaggregate(...,
inplace=True)) equals the out-of-place one bit for bit, and the fused clipping + mean
(aggregate("mean", pre=[clipping or arc])) equals the mean of the out-of-place clipped rows bit
for bit, on adversarial rows (DBL_MAX, FLT_MAX, 1e-300, subnormals, ties, -0.0, zero rows).
PROPERTY tests: every row clipping or ARC writes in place has a norm at most its bound (the
norm computed here in Python's exact-rounding math.fsum on scaled values, not by dpas).
And the binding's errors of issue 33 item 4, each naming the argument, the value and the rule."""
import math
import sys
import unittest

import dpas

try:
    import numpy as np
except ImportError:  # pragma: no cover
    np = None


def bits(a):
    return np.ascontiguousarray(a).view(np.uint8).tobytes()


def norm(row):
    """||row|| from exact sums of the row scaled by its largest value (Python floats)."""
    v = [float(t) for t in row]
    m = max((abs(t) for t in v), default=0.0)
    if m == 0.0:
        return 0.0
    return m * math.sqrt(math.fsum((t / m) ** 2 for t in v))


def adversarial(rng, dtype, n, d):
    big = np.finfo(dtype).max
    tiny = 1e-300 if dtype == np.float64 else 1e-38
    sub = np.finfo(dtype).smallest_subnormal
    scales = [big, big / 3, 1e20, 1.0, 1e-3, tiny, sub, 0.0]
    x = np.empty((n, d), dtype=dtype)
    for i in range(n):
        s = scales[rng.integers(len(scales))]
        with np.errstate(over="ignore", under="ignore"):
            x[i] = (rng.standard_normal(d) * s).astype(dtype) if s != big else big
    x[rng.integers(n)] = x[rng.integers(n)]  # a tie
    x[rng.integers(n), 0] = -0.0
    return np.where(np.isfinite(x), x, big).astype(dtype)


SPECS = [["clipping"], [("clipping", {"c": 1e-5})], [("clipping", {"c": 1e300})], ["arc"],
         [("bucketing", {"s": 2, "seed": 3})], [("bucketing", {"s": 3, "seed": 9})], ["nnm"],
         ["bucketing", "clipping"], [("bucketing", {"s": 2}), "arc"], ["clipping", "arc"],
         ["arc", "nnm"], ["nnm", ("bucketing", {"s": 2})]]


@unittest.skipIf(np is None, "numpy is not installed")
class InPlace(unittest.TestCase):
    def test_consistency_inplace_equals_out_of_place_bit_for_bit(self):
        """CONSISTENCY: in place == out of place, bit for bit, every chain, both widths."""
        rng = np.random.default_rng(33)
        for dtype in (np.float32, np.float64):
            for spec in SPECS:
                for d in (1, 7, 33, 1000, 4099):
                    x = adversarial(rng, dtype, 9, d)
                    with np.errstate(all="ignore"):
                        ref = dpas.preaggregate(spec, x, f=2)
                    y = x.copy()
                    with np.errstate(all="ignore"):
                        got = dpas.preaggregate(spec, y, f=2, inplace=True)
                    self.assertTrue(np.shares_memory(got, y))
                    self.assertEqual(got.shape, ref.shape, (spec, d))
                    self.assertEqual(bits(got), bits(ref), (dtype, spec, d))

    def test_consistency_nonfinite_rows_inplace(self):
        """CONSISTENCY: NaN / Inf rows (dropped, NaN out) give the same in place."""
        rng = np.random.default_rng(4)
        for dtype in (np.float32, np.float64):
            x = rng.standard_normal((9, 50)).astype(dtype)
            x[1, 3], x[6, 0] = np.nan, -np.inf
            for spec in (["clipping"], ["arc"], [("bucketing", {"s": 2})], ["nnm"]):
                ref = dpas.preaggregate(spec, x, f=2)
                y = x.copy()
                got = dpas.preaggregate(spec, y, f=2, inplace=True)
                self.assertEqual(bits(got), bits(ref), (dtype, spec))

    def test_property_clipped_rows_within_bound_inplace(self):
        """PROPERTY: every row written in place has norm <= c (Clipping), <= the norm of the
        largest unclipped row (ARC); the unclipped rows are unchanged."""
        rng = np.random.default_rng(7)
        for dtype in (np.float32, np.float64):
            for trial in range(12):
                d = int(rng.choice([1, 5, 64, 1001]))
                x = adversarial(rng, dtype, 9, d)
                # each value is rounded once to the element type: relative 2^-24 or 2^-53, and
                # below the normal range half a subnormal step per value (absolute)
                slack = math.sqrt(d) * float(np.finfo(dtype).smallest_subnormal)
                for c in (2.0, 1e-5, 1e30):
                    y = x.copy()
                    dpas.preaggregate("clipping", y, inplace=True, c=c)
                    for i in range(9):
                        self.assertLessEqual(norm(y[i]), c * (1 + 1e-6) + slack, (dtype, trial, c, i))
                        if norm(x[i]) <= c:
                            self.assertEqual(bits(y[i]), bits(x[i]))
                y = x.copy()
                dpas.preaggregate([("arc", {"f": 2})], y, inplace=True)
                norms = sorted(norm(r) for r in x)
                k = 2 * 2 * (9 - 2) // 9
                bound = norms[9 - k - 1]
                for i in range(9):
                    self.assertLessEqual(norm(y[i]), bound * (1 + 1e-6) + slack, (dtype, trial, i))

    def test_consistency_fused_clipping_mean(self):
        """CONSISTENCY: aggregate("mean", pre=[clipping / arc]) (fused: no row written) ==
        the mean of preaggregate's rows, bit for bit."""
        rng = np.random.default_rng(12)
        for dtype in (np.float32, np.float64):
            for d in (1, 9, 700, 5000):
                x = adversarial(rng, dtype, 9, d)
                for spec in (["clipping"], [("clipping", {"c": 1e-5})], [("arc", {"f": 2})],
                             ["nnm", ("arc", {"f": 1})], [("bucketing", {"s": 2}), "clipping"]):
                    with np.errstate(all="ignore"):
                        fused = dpas.aggregate("mean", x, pre=spec)
                        steps = dpas.aggregate("mean", dpas.preaggregate(spec, x))
                    self.assertEqual(bits(fused), bits(steps), (dtype, d, spec))
                for threads in (2, 3):  # the parts split the coordinates: the same bits
                    self.assertEqual(bits(dpas.aggregate("mean", x, pre=["clipping"],
                                                         threads=threads)),
                                     bits(dpas.aggregate("mean", x, pre=["clipping"])))

    def test_batch_inplace(self):
        """CONSISTENCY: a B x n x d batch in place == out of place."""
        rng = np.random.default_rng(2)
        x = rng.standard_normal((4, 6, 40))
        for spec in (["clipping"], [("bucketing", {"s": 2, "seed": 1})]):
            ref = dpas.preaggregate(spec, x)
            y = x.copy()
            got = dpas.preaggregate(spec, y, inplace=True)
            self.assertTrue(np.shares_memory(got, y))
            self.assertEqual(bits(got), bits(ref))
        from dpas import byzfl
        y = x[0].copy()
        out = byzfl.Clipping(c=1.0, inplace=True)(y)
        self.assertTrue(np.shares_memory(out, y))
        self.assertEqual(bits(out), bits(byzfl.Clipping(c=1.0)(x[0])))

    def test_inplace_refusals(self):
        x = np.ones((4, 3))
        ro = x.copy()
        ro.flags.writeable = False
        with self.assertRaisesRegex(dpas.InvalidValue, "read-only"):
            dpas.preaggregate("clipping", ro, inplace=True)
        with self.assertRaisesRegex(dpas.ArgumentTypeError, "inplace must be True or False"):
            dpas.preaggregate("clipping", x, inplace=1)
        with self.assertRaisesRegex(dpas.ArgumentTypeError, "float16"):
            dpas.preaggregate("clipping", x.astype(np.float16), inplace=True)
        try:
            import torch
        except ImportError:
            return
        t = torch.ones(4, 3, requires_grad=True)
        with self.assertRaisesRegex(dpas.InvalidValue, "requires grad"):
            dpas.preaggregate("clipping", t, inplace=True)
        t = torch.full((4, 3), 10.0, dtype=torch.float64)
        r = dpas.preaggregate("clipping", t, inplace=True)
        self.assertTrue(math.isclose(float(t[0].norm()), 2.0, rel_tol=1e-15))
        self.assertEqual(r.data_ptr(), t.data_ptr())


@unittest.skipIf(np is None, "numpy is not installed")
class Permutation(unittest.TestCase):
    """PROPERTY (issue 33 item 3): permuting the rows changes median, trimmed_mean, krum and the
    weighted median not at all, and mean, weighted mean, multi_krum, geometric_median (weighted
    or not) and centered_clipping by at most 2n ulps of the largest |x| (the sums run in row
    order: the standard bound on a sum of n terms in another order, 2(n - 1) u sum|x_i| / n for
    the mean, within 2n ulp(max|x|); docs/kernels.md gives the measured maxima). Rows without
    ties, so that the selections do not depend on the tie rule (the lower index)."""

    def test_permuted_rows(self):
        rng = np.random.default_rng(2033)
        exact = ("median", "trimmed_mean", "krum", "wmedian")
        for dtype in (np.float32, np.float64):
            for name in ("mean", "wmean", "multi_krum", "geometric_median", "wgeomed",
                         "centered_clipping") + exact:
                for trial in range(25):
                    n, d = int(rng.integers(7, 20)), int(rng.integers(1, 300))
                    scale = 10.0 ** int(rng.integers(-30, 30))
                    x = (rng.standard_normal((n, d)) * scale *
                         rng.choice([1, 1, 1, 100], size=(n, 1))).astype(dtype)
                    p = rng.permutation(n)
                    w = rng.random(n) + 0.01
                    rule, f, kw, kwp = name, 2, {}, {}
                    if name[0] == "w":
                        rule, f = {"wmean": "mean", "wmedian": "median",
                                   "wgeomed": "geometric_median"}[name], 0
                        kw, kwp = {"weights": w}, {"weights": w[p]}
                    if rule == "mean":
                        f = 0
                    a = dpas.aggregate(rule, x, f, **kw).astype(np.float64)
                    b = dpas.aggregate(rule, x[p], f, **kwp).astype(np.float64)
                    if name in exact:
                        self.assertEqual(bits(a), bits(b), (dtype, name, trial))
                        continue
                    ulp = float(np.spacing(np.max(np.abs(x))))
                    self.assertLessEqual(float(np.max(np.abs(a - b))), 2 * n * ulp,
                                         (dtype, name, trial, n))


@unittest.skipIf(np is None, "numpy is not installed")
class BindingErrors(unittest.TestCase):
    """Issue 33 item 4: clear errors naming the argument, the value and the rule."""

    def test_weight_beyond_float64(self):
        x = np.ones((3, 4))
        for rule in ("mean", "median", "geometric_median"):
            with self.assertRaises(dpas.InvalidValue) as c:
                dpas.aggregate(rule, x, weights=[2 ** 1100, 1, 1])
            msg = str(c.exception)
            self.assertIn("weights[0]", msg)
            self.assertIn("1101 bits", msg)  # 2^1100 has 1101 binary digits
            self.assertIn(rule, msg)
            self.assertEqual(c.exception.field, "weights")

    def test_weight_beyond_float64_flower(self):
        from dpas import byzfl, flower
        clients = [[np.ones(3)], [np.ones(3)], [np.ones(3)]]
        with self.assertRaisesRegex(dpas.InvalidValue, r"weights\[1\].*Average"):
            flower.aggregate_layers(byzfl.Average(), clients, weights=[1, -(2 ** 1100), 1])

    def test_bfloat16_weights(self):
        try:
            import torch
        except ImportError:
            self.skipTest("torch is not installed")
        x = np.array([[0.0], [1.0], [10.0]])
        w = torch.tensor([1.0, 2.0, 1.0], dtype=torch.bfloat16)
        # weighted mean by hand: (0 * 1 + 1 * 2 + 10 * 1) / 4 = 3
        self.assertEqual(float(dpas.aggregate("mean", x, weights=w)[0]), 3.0)
        self.assertEqual(float(dpas.aggregate("mean", x, weights=w.half())[0]), 3.0)

    def test_mixed_dtypes_one_message(self):
        a, b = np.ones(3, np.float16), np.ones(3, np.float32)
        msgs = []
        for rows in ([a, b], [b, a], [b, b, a]):
            with self.assertRaises(dpas.ArgumentTypeError) as c:
                dpas.aggregate("mean", rows)
            msgs.append(str(c.exception).split(":")[0])
            self.assertIn("float16", str(c.exception))
            self.assertIn("float32", str(c.exception))
        self.assertEqual(len(set(msgs)), 1, msgs)


if __name__ == "__main__":
    unittest.main(verbosity=2 if "-v" in sys.argv else 1)
