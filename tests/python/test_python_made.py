# SPDX-License-Identifier: Apache-2.0
"""The binding takes what Python makes (issue 29, class 6): an empty (0, d) numpy array where the
message asks for one, pathlib.Path for files, seeds in the whole of the C seed's range (uint64_t:
0 .. 2^64 - 1) and a file name holding a comma, given as one path or in a list.

Usage: python3 test_python_made.py (dpas on PYTHONPATH, DPAS_LIBRARY its libdpas)"""
import os
import pathlib
import shutil
import tempfile
import unittest

import dpas

try:
    import numpy as np
except ImportError:  # pragma: no cover - Debian's python3 has numpy
    np = None

HERE = os.path.dirname(os.path.abspath(__file__))
CALIB = os.path.join(HERE, "..", "..", "examples", "nccl", "all_reduce_perf_8ranks_synthetic.txt")
COST = dict(scenario="ReferenceJobAttackSurface", rule="mean", schedule="allreduce")


@unittest.skipIf(np is None, "numpy is not installed")
class EmptyArrays(unittest.TestCase):
    def test_zeros_0_d_is_taken_where_the_message_asks_for_it(self):
        # the message for an empty list asks for "a (0, d) array"; numpy.zeros((0, d)) has
        # strides (0, 0), which the row check read as "not contiguous"
        with self.assertRaises(dpas.ArgumentTypeError) as cm:
            dpas.attack("sign_flip", [], 1)
        self.assertIn("give a (0, d) array", str(cm.exception))
        for dtype in (np.float32, np.float64):
            with self.subTest(dtype=dtype):
                # nan needs no honest gradient: f = 2 rows of d = 4 NaNs, the dtype kept
                out = dpas.attack("nan", np.zeros((0, 4), dtype=dtype), 2)
                self.assertEqual(out.shape, (2, 4))
                self.assertEqual(out.dtype, dtype)
                self.assertTrue(np.all(np.isnan(out)))
        # an attack that needs honest gradients says so by its own rule, not "not contiguous"
        with self.assertRaises(dpas.InvalidValue) as cm:
            dpas.attack("sign_flip", np.zeros((0, 4), dtype=np.float32), 1)
        self.assertIn("sign_flip needs at least 1 honest gradients, got 0", str(cm.exception))

    def test_a_transposed_array_is_still_refused(self):
        # the control: the check still refuses what it was written for
        a = np.zeros((4, 3), dtype=np.float32).T
        with self.assertRaises(dpas.ArgumentTypeError) as cm:
            dpas.attack("sign_flip", a, 1)
        self.assertIn("not contiguous", str(cm.exception))

    def test_zero_rows_where_one_is_needed_names_the_rule(self):
        with self.assertRaises(dpas.InvalidValue) as cm:
            dpas.aggregate("mean", np.zeros((0, 4), dtype=np.float32))
        self.assertIn("must hold at least one gradient, got shape (0, 4)", str(cm.exception))


@unittest.skipIf(np is None, "numpy is not installed")
class Seeds(unittest.TestCase):
    def setUp(self):
        self.honest = np.ones((3, 5), dtype=np.float64)

    def test_seeds_up_to_2_to_the_64_minus_1(self):
        for seed in (2**63 - 1, 2**63, 2**64 - 1):
            with self.subTest(seed=seed):
                out = dpas.attack("gaussian", self.honest, 1, seed=seed)
                self.assertTrue(np.all(np.isfinite(np.asarray(out))))

    def test_seeds_beyond_the_range_are_refused(self):
        with self.assertRaises(dpas.RangeError) as cm:
            dpas.attack("gaussian", self.honest, 1, seed=2**64)
        self.assertIn("seed is out of range: must fit an unsigned 64-bit integer, got "
                      "18446744073709551616", str(cm.exception))
        with self.assertRaises(dpas.InvalidValue) as cm:
            dpas.attack("gaussian", self.honest, 1, seed=-1)
        self.assertIn("seed must be >= 0, got -1", str(cm.exception))

    def test_the_seed_is_the_seed_mod_nothing(self):
        # 2^63 and 0 are different seeds: the draw differs (a seed truncated to 63 bits would
        # make them equal); the same seed twice draws the same
        a = np.asarray(dpas.attack("gaussian", self.honest, 1, seed=2**63))
        b = np.asarray(dpas.attack("gaussian", self.honest, 1, seed=0))
        c = np.asarray(dpas.attack("gaussian", self.honest, 1, seed=2**63))
        self.assertFalse(np.array_equal(a, b))
        self.assertTrue(np.array_equal(a, c))

    def test_bucketing_seed(self):
        out = dpas.aggregate("mean", self.honest, pre=[("bucketing", {"s": 2, "seed": 2**64 - 1})])
        self.assertEqual(np.asarray(out).tolist(), [1.0] * 5)  # the mean of equal rows


class Files(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.comma = os.path.join(self.tmp.name, "a,b.txt")
        shutil.copy(CALIB, self.comma)
        self.expected = self.times(dpas.cost(**COST, calibration=[CALIB]))

    def tearDown(self):
        self.tmp.cleanup()

    @staticmethod
    def times(rows):
        return [(r.rule, r.schedule, r.time_flat_s) for r in rows]

    def test_pathlib_path(self):
        for v in (pathlib.Path(CALIB), [pathlib.Path(CALIB)], os.fsencode(CALIB)):
            with self.subTest(v=v):
                self.assertEqual(self.times(dpas.cost(**COST, calibration=v)), self.expected)

    def test_a_name_with_a_comma(self):
        # one path is one file, commas and all; in a list too (the consistency test: the same
        # file under two names gives the same rows)
        for v in (self.comma, [self.comma], pathlib.Path(self.comma)):
            with self.subTest(v=v):
                self.assertEqual(self.times(dpas.cost(**COST, calibration=v)), self.expected)
        rows = dpas.sweep(**COST, dp_degree=[8, 16], calibration=pathlib.Path(self.comma))
        self.assertEqual(len(rows), 2)

    def test_a_file_twice_is_refused(self):
        # the library's one rule (as `dpas calibrate X X` and `cost --calibration X,X`): a file
        # given twice, or a copy of it with the same bytes, is refused naming it
        with self.assertRaises(dpas.InvalidValue) as cm:
            dpas.cost(**COST, calibration=[CALIB, CALIB])
        self.assertIn('is given twice', str(cm.exception))
        with self.assertRaises(dpas.InvalidValue) as cm:
            dpas.cost(**COST, calibration=[CALIB, self.comma])
        self.assertIn("holds the same bytes as", str(cm.exception))
        self.assertIn("a,b.txt", str(cm.exception))

    def test_a_missing_file_is_named_whole(self):
        with self.assertRaises(dpas.FileError) as cm:
            dpas.cost(**COST, calibration=os.path.join(self.tmp.name, "x,y.txt"))
        self.assertIn("x,y.txt", str(cm.exception))

    def test_another_type_is_refused(self):
        for v in (3, [CALIB, 3]):
            with self.subTest(v=v):
                with self.assertRaises(dpas.ArgumentTypeError) as cm:
                    dpas.cost(**COST, calibration=v)
                self.assertIn("calibration must be a path (str, bytes or os.PathLike)",
                              str(cm.exception))
        with self.assertRaises(dpas.InvalidValue) as cm:
            dpas.cost(**COST, calibration=[])
        self.assertIn("calibration needs at least one item, got an empty list", str(cm.exception))


class Stages(unittest.TestCase):
    """issue 29: a ZeRO stage is an int; 3.0 (a float that happens to be whole), Decimal and
    True are refused as the CLI refuses --zero 3.0, naming the key; numpy's integers are ints.
    Issue 30: so is every integer key of the key table (f, n, dp_degree, nodes, ...)."""

    def test_zero_takes_an_int_only(self):
        import decimal
        for z in (3.0, True, decimal.Decimal(3)):
            with self.subTest(zero=z):
                with self.assertRaises(dpas.ArgumentTypeError) as cm:
                    dpas.memory(scenario="ReferenceJobAttackSurface", zero=z)
                self.assertIn("zero must be an int, got %s" % type(z).__name__, str(cm.exception))
                self.assertIn('the CLI and HTTP refuse "1.0" too', str(cm.exception))
        self.assertEqual(dpas.memory(scenario="ReferenceJobAttackSurface", zero=2),
                         dpas.memory(scenario="ReferenceJobAttackSurface", zero=_np_int(2)))

    def test_every_integer_key_takes_an_int_only(self):
        """Each integer key of the table (read from it) refuses 1.0 and True in every analysis
        that takes it, naming the key; a count (parameters) still takes 175e9."""
        import ctypes
        from dpas import _ffi
        lib = _ffi.lib
        calls = {"cost": lambda **k: dpas.cost(scenario="ReferenceJobAttackSurface", **k),
                 "memory": lambda **k: dpas.memory(scenario="ReferenceJobAttackSurface", **k),
                 "rules": lambda **k: dpas.rules(**k)}
        seen = 0
        for k in range(256):
            name = lib.dpas_key_name(k)
            if name is None:
                break
            kw = lib.dpas_key_keyword(k)
            if kw is None or lib.dpas_key_type_name(lib.dpas_key_type_of(k)) != b"integer":
                continue
            for analysis, call in calls.items():
                a = lib.dpas_analysis_from_name(analysis.encode())
                if not lib.dpas_analysis_takes(a, k):
                    continue
                for v in (1.0, True):
                    with self.subTest(key=kw, analysis=analysis, value=v):
                        with self.assertRaises(dpas.ArgumentTypeError) as cm:
                            call(**{kw.decode(): v})
                        self.assertIn("%s must be an int, got %s" % (kw.decode(), type(v).__name__),
                                      str(cm.exception))
                        seen += 1
        self.assertGreaterEqual(seen, 12)  # f, n, zero, nodes, dp_degree, ... in three analyses
        self.assertEqual(dpas.cost(scenario="ReferenceJobAttackSurface", parameters=175e9, rule="median",
                                   schedule="allgather")[0].bytes_per_worker,
                         dpas.cost(scenario="ReferenceJobAttackSurface", parameters=175 * 10**9,
                                   rule="median", schedule="allgather")[0].bytes_per_worker)

    def test_annotations_say_what_a_key_takes(self):
        """The signatures read the key table's type: an int for an integer key (no str outside a
        sweep), a list or a range only where the analysis sweeps."""
        import inspect
        import typing
        ann = lambda fn, k: inspect.signature(fn).parameters[k].annotation
        self.assertEqual(ann(dpas.cost, "f"), typing.Optional[int])
        self.assertEqual(ann(dpas.memory, "zero"), typing.Optional[int])
        self.assertEqual(ann(dpas.cost, "dp_degree"), typing.Optional[int])
        self.assertIn(str, typing.get_args(ann(dpas.sweep, "dp_degree")))  # a range "2..4096"
        self.assertIn(typing.Sequence[int], typing.get_args(ann(dpas.sweep, "dp_degree")))
        self.assertIn(str, typing.get_args(ann(dpas.cost, "parameters")))  # a count: '7B'
        self.assertNotIn(str, typing.get_args(ann(dpas.memory, "zero")))


def _np_int(v):
    try:
        import numpy
        return numpy.int64(v)
    except ImportError:
        return v


if __name__ == "__main__":
    unittest.main(verbosity=2)
