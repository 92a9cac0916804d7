# SPDX-License-Identifier: Apache-2.0
"""dpas.Quantity as a units library's quantity (issue 31): arithmetic with numbers and other
byte counts, exact; the scenario's widths under the seed's names; mlsysim's unit text
"2 byte / param"; pint interop. Expected values are hand calculations written beside them."""
import fractions
import unittest

import dpas
from dpas import Quantity


class QuantityArithmetic(unittest.TestCase):
    def test_scale_by_numbers(self):
        g = Quantity(350000000000, "byte")  # the seed's reference gradient: 175e9 x 2 B
        # 2(N-1)/N at N = 128 is 1.984375, exact in binary: 350e9 x 1.984375 = 694,531,250,000
        self.assertEqual(g * 1.984375, Quantity(694531250000, "byte"))
        self.assertEqual(1.984375 * g, Quantity(694531250000, "byte"))
        self.assertEqual(g * 127, Quantity(44450000000000, "byte"))  # gather_factor x G
        self.assertEqual((g / 8).magnitude, 43750000000)
        self.assertEqual(Quantity(1, "byte") / 3, Quantity(fractions.Fraction(1, 3), "byte"))
        # a float is its binary value: 0.1 is 3602879701896397 / 2^55, kept exactly
        self.assertEqual((Quantity(1, "byte") * 0.1).magnitude,
                         fractions.Fraction(3602879701896397, 2**55))
        self.assertEqual((Quantity(3, "GB") * 2).units, "GB")

    def test_reference_scenario_by_the_seed(self):
        s = dpas.Scenarios.ReferenceJobAttackSurface
        # gather traffic against ring AllReduce traffic: (N-1) G / (2(N-1)/N G) = N/2 = 64
        ratio = (s.gradient_bytes * s.gather_factor) / (s.gradient_bytes * s.allreduce_factor)
        self.assertEqual(ratio, 64)
        self.assertEqual(s.gradient_bytes * s.allreduce_factor, Quantity(694531250000, "byte"))

    def test_numpy_scalars(self):
        try:
            import numpy as np
        except ImportError:
            self.skipTest("numpy is not installed")
        # numpy's floats are binary floats: 1.5 and 2 are exact in float16, float32 and float64
        for t in (np.float16, np.float32, np.float64):
            self.assertEqual(Quantity(t(1.5), "byte").magnitude, fractions.Fraction(3, 2))
            self.assertEqual(Quantity(3, "byte") * t(2), Quantity(6, "byte"))
            self.assertEqual(Quantity(3, "byte") / t(2), Quantity(fractions.Fraction(3, 2), "byte"))
        self.assertEqual(Quantity(np.int64(7), "GB") * np.int32(2), Quantity(14, "GB"))
        with self.assertRaises(dpas.InvalidValue):
            Quantity(3, "byte") * np.float32("nan")  # noqa: B018

    def test_add_sub_compare(self):
        self.assertEqual(Quantity(1, "GB") + Quantity(1, "MB"), Quantity(1001, "MB"))
        self.assertEqual((Quantity(1, "GB") + Quantity(1, "MB")).units, "GB")
        self.assertEqual(Quantity(1, "GiB") - Quantity(1, "MiB"), Quantity(1023, "MiB"))
        self.assertEqual(-Quantity(2, "byte"), Quantity(-2, "byte"))
        self.assertTrue(Quantity(1, "GiB") > Quantity(1, "GB"))  # 1073741824 > 1e9
        self.assertTrue(Quantity(1000, "MB") <= Quantity(1, "GB"))
        self.assertTrue(Quantity(1, "bit") < Quantity(1, "byte"))
        self.assertEqual(Quantity(1, "GiB") / Quantity(1, "MiB"), 1024)
        self.assertEqual(Quantity(1, "GB") / Quantity(1, "GiB"), fractions.Fraction(10**9, 2**30))

    def test_refusals(self):
        g = Quantity(2, "byte")
        for bad in ("x", None, [1], True):
            with self.assertRaises(TypeError):
                g * bad  # noqa: B018
        with self.assertRaises(TypeError):
            g + 1  # noqa: B018  a count of bytes plus a bare number has no meaning
        with self.assertRaises(TypeError):
            g < 3  # noqa: B018
        with self.assertRaises(ZeroDivisionError):
            g / 0  # noqa: B018
        with self.assertRaises(dpas.InvalidValue):
            g * float("inf")  # noqa: B018
        import decimal
        for bad in (decimal.Decimal("sNaN"), decimal.Decimal("NaN"), decimal.Decimal("-Infinity")):
            with self.assertRaises(dpas.InvalidValue):
                Quantity(bad, "byte")
            with self.assertRaises(dpas.InvalidValue):
                g * bad  # noqa: B018


class SeedNames(unittest.TestCase):
    def test_widths_on_the_scenario(self):
        s = dpas.Scenarios.ReferenceJobAttackSurface  # bf16 gradients, 14 B checkpoint, bf16 weights
        self.assertEqual(s.gradient_bytes_per_param, Quantity(2, "byte"))
        self.assertEqual(s.checkpoint_bytes_per_param, Quantity(14, "byte"))
        self.assertEqual(s.weight_bytes_per_param, Quantity(2, "byte"))
        t = dpas.DataParallelAttackSurfaceScenario(
            workload=dpas.Models.Language.GPT3, fleet=dpas.Systems.Clusters.Training_1K,
            dp_degree=8, gradient_bytes_per_param="4.127 bit", checkpoint_bytes_per_param="14 B")
        self.assertIsNone(t.weight_bytes_per_param)  # the seed's default: None
        self.assertEqual(t.gradient_bytes_per_param.magnitude, fractions.Fraction(4127, 8000))

    def test_mlsysim_unit_text(self):
        # mlsysim's widths are quantities of byte / param; pint prints them "2 byte / param"
        for text in ("2 byte / param", "2 byte/param", "16 bit / param", "2 B per parameter"):
            s = dpas.DataParallelAttackSurfaceScenario(
                workload=dpas.Models.Language.GPT3, fleet=dpas.Systems.Clusters.Training_1K,
                dp_degree=128, gradient_bytes_per_param=text,
                checkpoint_bytes_per_param="14 byte / param")
            self.assertEqual(s.gradient_bytes, Quantity(350000000000, "byte"), text)  # 175e9 x 2
            self.assertEqual(s.checkpoint_bytes, Quantity(2450000000000, "byte"))  # 175e9 x 14


class Pint(unittest.TestCase):
    def test_to_pint(self):
        try:
            import pint
        except ImportError:
            self.skipTest("pint is not installed (Debian's python3-pint; scripts/install-deps.sh)")
        q = Quantity(350000000000, "byte").to_pint()
        self.assertEqual(str(q.units), "byte")
        self.assertEqual(q.to("GB").magnitude, 350)
        ureg = pint.UnitRegistry()
        q2 = Quantity(fractions.Fraction(1, 8), "byte").to_pint(ureg)
        self.assertEqual(q2.to("bit").magnitude, 1)


if __name__ == "__main__":
    unittest.main()
