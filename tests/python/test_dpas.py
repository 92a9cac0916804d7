"""The Python binding, with the standard library's unittest: the seed's example, every attribute
against the CLI's JSON for three scenarios, inputs in every accepted form, errors, rules and costs,
and the doctests of the package and of the README's Python examples.

Environment: PYTHONPATH names the python/ folder, DPAS_LIBRARY the built libdpas.so, DPAS_CLI
the built dpas, DPAS_README the README."""
import doctest
import fractions
import json
import os
import subprocess
import unittest

import dpas
from dpas import (DataParallelAttackSurfaceScenario, Fleet, Models, Quantity, Scenarios, Systems,
                  Workload)

CLI = os.environ.get("DPAS_CLI", "dpas")
ATTRS = ["accelerators", "nodes", "accelerators_per_node", "accelerators_per_replica", "gradient_bytes",
         "checkpoint_bytes", "weight_bytes", "allreduce_factor", "gather_factor", "gather_traffic_ratio"]


def cli_json(*args):
    p = subprocess.run([CLI, *args, "-o", "json"], capture_output=True, text=True)
    assert p.returncode == 0, p.stdout + p.stderr
    return json.loads(p.stdout)


def as_python(v):
    """A Python attribute in the CLI's JSON terms: bytes as their exact number."""
    if isinstance(v, Quantity):
        b = v.bytes
        return b if isinstance(b, int) else float(b)
    return v


class SeedExample(unittest.TestCase):
    def test_reference_accelerators(self):
        # the seed: round(float(Scenarios.ReferenceJobAttackSurface.accelerators), 4) == 1024.0
        self.assertEqual(round(float(Scenarios.ReferenceJobAttackSurface.accelerators), 4), 1024.0)

    def test_reference_values(self):
        s = Scenarios.ReferenceJobAttackSurface
        self.assertEqual(s.nodes, 128)
        self.assertEqual(s.accelerators_per_node, 8)
        self.assertEqual(s.accelerators_per_replica, 8.0)
        self.assertEqual(s.gradient_bytes, Quantity(350 * 10**9, "byte"))      # 175e9 x 2 B
        self.assertEqual(s.checkpoint_bytes.to("TB").magnitude, fractions.Fraction(245, 100))
        self.assertEqual(s.allreduce_factor, 1.984375)                         # 2 x 127 / 128
        self.assertEqual(s.gather_factor, 127)
        self.assertEqual(s.gather_traffic_ratio, 64.0)
        self.assertEqual(s.name, "Scenarios.ReferenceJobAttackSurface")


class AgainstCLI(unittest.TestCase):
    """Every seed attribute from Python equals the CLI's JSON, for three scenarios."""

    def check(self, scenario, cli_args):
        j = cli_json(*cli_args)["attributes"]
        for a in ATTRS:
            with self.subTest(attr=a):
                if j[a] is None:
                    with self.assertRaises(ValueError):
                        getattr(scenario, a)
                else:
                    self.assertEqual(as_python(getattr(scenario, a)), j[a])

    def test_reference(self):
        self.check(Scenarios.ReferenceJobAttackSurface, ["show", "ReferenceJobAttackSurface"])

    def test_llama_custom_fleet(self):
        s = DataParallelAttackSurfaceScenario(
            workload=Models.Language.Llama3_70B, fleet=Fleet(nodes=12, accelerators_per_node=8),
            dp_degree=96, gradient_bytes_per_param="bf16", checkpoint_bytes_per_param="14 B")
        self.check(s, ["eval", "--model", "Llama3_70B", "--nodes", "12", "--accelerators-per-node", "8",
                       "--dp", "96", "--grad", "bf16", "--ckpt", "14B"])

    def test_fractional_single_replica(self):
        s = DataParallelAttackSurfaceScenario(
            workload=Workload(3504873), fleet=Systems.Clusters.Lab_64_H100, dp_degree=1,
            gradient_bytes_per_param="4.127 bit", checkpoint_bytes_per_param=14,
            weight_bytes_per_param=0.5)
        self.check(s, ["eval", "--params", "3504873", "--fleet", "Lab_64_H100", "--dp", "1", "--grad",
                       "4.127 bit", "--ckpt", "14 B", "--weights", "0.5 B"])
        # exact: 3504873 x 4127/8000 B
        self.assertEqual(s.gradient_bytes.bytes, fractions.Fraction(3504873 * 4127, 8000))


class Inputs(unittest.TestCase):
    def make(self, **kw):
        args = dict(workload=Models.Language.GPT3, fleet=Systems.Clusters.Training_1K, dp_degree=128,
                    gradient_bytes_per_param="2 byte", checkpoint_bytes_per_param="14 B")
        args.update(kw)
        return DataParallelAttackSurfaceScenario(**args)

    def test_widths_every_form(self):
        for w in ("2 byte", "bf16", "16 bit", 2, 2.0, fractions.Fraction(2), Quantity(2, "byte")):
            with self.subTest(width=w):
                self.assertEqual(self.make(gradient_bytes_per_param=w).gradient_bytes.bytes, 350 * 10**9)

    def test_names_and_short_names(self):
        self.assertEqual(self.make(workload="GPT3", fleet="Training_1K").accelerators, 1024)
        self.assertIs(Models.GPT3, Models.Language.GPT3)
        self.assertEqual(Models.Language.Llama3_70B.parameters, 70600000000)
        self.assertIsNone(Models.Recommendation.DLRM.parameters)
        self.assertEqual(Systems.Clusters.Frontier_8K.total_accelerators, 8192)

    def test_quantity(self):
        q = Quantity(350 * 10**9)
        self.assertEqual(q.to("GB").magnitude, 350)
        self.assertAlmostEqual(float(q.to("GiB")), 350e9 / 2**30)
        self.assertEqual(q.units, "byte")
        with self.assertRaises(ValueError):
            q.to("furlong")


class Errors(unittest.TestCase):
    """Errors carry the C library's messages."""

    def test_value_errors(self):
        cases = [
            (dict(dp_degree=0), "dp_degree must be >= 1, got 0"),
            (dict(dp_degree=2048), "dp_degree must be <= accelerators (1024), got 2048"),
            (dict(gradient_bytes_per_param="2"), 'has no unit'),
            (dict(gradient_bytes_per_param=-2), "must be > 0"),
            (dict(workload="DLRM"), "has no parameter count"),
            (dict(workload="GTP3"), 'unknown model "GTP3"; closest: GPT3'),
            (dict(checkpoint_bytes_per_param="nan"), "finite"),
        ]
        for kw, msg in cases:
            with self.subTest(**{k: str(v) for k, v in kw.items()}):
                with self.assertRaises(ValueError) as cm:
                    Inputs.make(self, **kw)
                self.assertIn(msg, str(cm.exception))

    def test_type_errors(self):
        for kw in (dict(dp_degree="8"), dict(dp_degree=8.0), dict(dp_degree=True), dict(workload=3),
                   dict(fleet=1024), dict(gradient_bytes_per_param=[2])):
            with self.subTest(**{k: repr(v) for k, v in kw.items()}):
                with self.assertRaises(TypeError):
                    Inputs.make(self, **kw)

    def test_undefined(self):
        s = Inputs.make(self, dp_degree=1)
        with self.assertRaises(ValueError) as cm:
            s.gather_traffic_ratio
        self.assertIn("requires more than one replica", str(cm.exception))
        with self.assertRaises(ValueError) as cm:
            s.weight_bytes
        self.assertIn("requires weight_bytes_per_param", str(cm.exception))


class Analysis(unittest.TestCase):
    def test_rules(self):
        f = {r["rule"]: r["max_f"] for r in dpas.rules(n=64)}
        self.assertEqual((f["median"], f["krum"], f["bulyan"]), (31, 30, 15))
        n = {r["rule"]: r["min_n"] for r in dpas.rules(f=10)}
        self.assertEqual((n["median"], n["krum"], n["bulyan"]), (21, 23, 43))

    def test_cost(self):
        rows = Scenarios.ReferenceJobAttackSurface.cost(rule=["median", "krum"], schedule=["allgather", "sharded"])
        r = {(x["rule"], x["schedule"]): x for x in rows}
        self.assertEqual(r[("median", "allgather")]["bytes_per_worker"], 127 * 350 * 10**9)
        self.assertEqual(r[("median", "allgather")]["ratio_to_allreduce"], 64)
        self.assertEqual(r[("median", "sharded")]["bytes_per_worker"], 694531250000)
        self.assertFalse(r[("krum", "sharded")]["realisable"])
        with self.assertRaises(ValueError):
            Scenarios.ReferenceJobAttackSurface.cost(rule="krumm")

    def test_inventory_and_report(self):
        inv = {r["item"]: r["bytes"] for r in Scenarios.ReferenceJobAttackSurface.inventory()}
        self.assertEqual(inv["zero16"], 16 * 175 * 10**9)
        rep = Scenarios.ReferenceJobAttackSurface.report()
        self.assertEqual(rep["attributes"]["accelerators"], 1024)


def load_tests(loader, tests, ignore):
    tests.addTests(doctest.DocTestSuite(dpas))
    readme = os.environ.get("DPAS_README")
    if readme:
        tests.addTests(doctest.DocFileSuite(readme, module_relative=False))
    return tests


if __name__ == "__main__":
    unittest.main()
