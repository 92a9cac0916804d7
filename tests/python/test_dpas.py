# SPDX-License-Identifier: Apache-2.0
"""The Python binding, with the standard library's unittest: the seed's example, every attribute
against the CLI's JSON for three scenarios, inputs in every accepted form, the analyses' typed
rows (by hand, and against the CLI's JSON in the consistency tests), errors and their classes,
hostile arguments, and the doctests of the package and of docs/python.md.

Runs under python3 -O too: every check is a self.assert*, never a bare assert.

Environment: PYTHONPATH names the python/ folder, DPAS_LIBRARY the built libdpas.so, DPAS_CLI
the built dpas."""
import ctypes
import decimal
import doctest
import fractions
import json
import os
import subprocess
import unittest

import dpas
import dpas.errors
import dpas.rows
from dpas import (DataParallelAttackSurfaceScenario, Fleet, Models, Quantity, Scenarios, Systems,
                  Workload)

CLI = os.environ.get("DPAS_CLI", "dpas")
DOCS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "docs", "python.md")
ATTRS = ["accelerators", "nodes", "accelerators_per_node", "accelerators_per_replica", "gradient_bytes",
         "checkpoint_bytes", "weight_bytes", "allreduce_factor", "gather_factor", "gather_traffic_ratio"]


def cli_json(*args):
    """The CLI's JSON, numbers with a fraction as Decimal (exact, as printed)."""
    p = subprocess.run([CLI, *args, "-o", "json"], capture_output=True, text=True)
    if p.returncode != 0:
        raise RuntimeError(f"dpas {' '.join(args)} exited {p.returncode}: {p.stdout}{p.stderr}")
    return json.loads(p.stdout, parse_float=decimal.Decimal)


def as_python(v):
    """A Python attribute in the CLI's JSON terms: bytes as their exact number."""
    if isinstance(v, Quantity):
        return v.bytes
    return v


def same(py, js):
    """A value of a dict view equals the CLI's JSON value: exact numbers exactly (JSON's decimal
    text against an int or a Fraction), reals as the same double, the rest by ==."""
    if isinstance(js, decimal.Decimal):
        if isinstance(py, float):
            return py == float(js)
        return isinstance(py, (int, fractions.Fraction)) and fractions.Fraction(js) == py
    if isinstance(js, bool) or isinstance(py, bool):
        return type(js) is type(py) and js == py
    return js == py and (js is None) == (py is None)


def make(**kw):
    args = dict(workload=Models.Language.GPT3, fleet=Systems.Clusters.Training_1K, dp_degree=128,
                gradient_bytes_per_param="2 byte", checkpoint_bytes_per_param="14 B")
    args.update(kw)
    return DataParallelAttackSurfaceScenario(**args)


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
    """Consistency: every seed attribute from Python equals the CLI's JSON, for three scenarios."""

    def check(self, scenario, cli_args):
        j = cli_json(*cli_args)["attributes"]
        for a in ATTRS:
            with self.subTest(attr=a):
                if j[a] is None:
                    with self.assertRaises(dpas.Undefined):
                        getattr(scenario, a)
                else:
                    self.assertTrue(same(as_python(getattr(scenario, a)), j[a]),
                                    f"{a}: Python {getattr(scenario, a)!r}, CLI {j[a]!r}")

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


def _np_int(v):
    """numpy's integer where numpy is (an int to Python's numbers.Integral), else the int."""
    try:
        import numpy
        return numpy.int64(v)
    except ImportError:
        return v


class Inputs(unittest.TestCase):
    def test_widths_every_form(self):
        for w in ("2 byte", "bf16", "16 bit", 2, 2.0, fractions.Fraction(2), decimal.Decimal("2"),
                  Quantity(2, "byte"), Quantity(16, "bit")):
            with self.subTest(width=w):
                self.assertEqual(make(gradient_bytes_per_param=w).gradient_bytes.bytes, 350 * 10**9)

    def test_counts_every_form(self):
        # decided: a count is an int, or a whole float up to 2^53, Decimal or Fraction; the
        # parameter count may also be exact text. An integer key (dp_degree, nodes) takes an
        # int only, as the CLI refuses --dp 128.0 (Hostile has the refusals)
        for p in (175 * 10**9, 175e9, "175e9", "175B", decimal.Decimal("175e9"),
                  fractions.Fraction(175 * 10**9)):
            with self.subTest(parameters=p):
                s = make(workload=Workload(p))
                self.assertEqual(s.parameters, 175 * 10**9)
        self.assertEqual(make(dp_degree=_np_int(128)).dp_degree, 128)

    def test_names_and_short_names(self):
        self.assertEqual(make(workload="GPT3", fleet="Training_1K").accelerators, 1024)
        self.assertIs(Models.GPT3, Models.Language.GPT3)
        self.assertEqual(Models.Language.Llama3_70B.parameters, 70600000000)
        self.assertIsNone(Models.Recommendation.DLRM.parameters)
        self.assertEqual(Systems.Clusters.Frontier_8K.total_accelerators, 8192)

    def test_inline_names_are_used(self):
        # issue 12: the name of an inline Workload or Fleet used to be dropped
        s = make(workload=Workload(175e9, name="my-model"),
                 fleet=Fleet(nodes=128, accelerators_per_node=8, name="rack A"))
        self.assertEqual((s.workload, s.fleet), ("my-model", "rack A"))
        inputs = s.report()["inputs"]
        self.assertEqual(inputs["workload"]["name"], "my-model")
        self.assertEqual(inputs["fleet"]["name"], "rack A")
        unnamed = make(workload=Workload(175e9), fleet=Fleet(nodes=128, accelerators_per_node=8))
        self.assertEqual((unnamed.workload, unnamed.fleet), ("custom", "custom"))

    def test_long_name_kept_whole_or_refused(self):
        # never a name silently cut to another one
        for n in (200, 300, 10000):
            name = "m" * n
            with self.subTest(length=n):
                try:
                    s = make(workload=Workload(175e9, name=name))
                except dpas.InvalidValue as e:
                    self.assertEqual(e.field, "workload.name")
                    self.assertIn("too long", str(e))
                else:
                    self.assertEqual(s.workload, name)

    def test_registry_node_and_fabric(self):
        s = make(fleet=Fleet(nodes=4, node=Systems.Nodes.DGX_H100, fabric="InfiniBand_HDR"), dp_degree=4)
        self.assertEqual(s.accelerators, 32)
        rows = s.cost(rule="median", schedule="allgather")
        self.assertIsNotNone(rows[0].time_flat_s)          # the fabric and node give the links
        self.assertEqual(rows.links["fabric"], "Systems.Fabrics.InfiniBand_HDR")

    def test_quantity(self):
        q = Quantity(350 * 10**9)
        self.assertEqual(q.to("GB").magnitude, 350)
        self.assertAlmostEqual(float(q.to("GiB")), 350e9 / 2**30)
        self.assertEqual(q.units, "byte")
        self.assertEqual(str(Quantity(fractions.Fraction(1, 10**30))), "0.000000000000000000000000000001 byte")
        with self.assertRaises(ValueError):
            q.to("furlong")


class Rows(unittest.TestCase):
    """The analyses' rows, with expected values by hand (the seed's equations)."""

    def test_rules_by_hand(self):
        f = {r.rule: r.max_f for r in dpas.rules(n=64)}
        # median n > 2f: 31; krum n >= 2f + 3: 30; bulyan n >= 4f + 3: 15
        self.assertEqual((f["median"], f["krum"], f["bulyan"]), (31, 30, 15))
        n = {r.rule: r.min_n for r in dpas.rules(f=10)}
        self.assertEqual((n["median"], n["krum"], n["bulyan"]), (21, 23, 43))
        mean = [r for r in dpas.rules(f=1) if r.rule == "mean"][0]
        self.assertIsNone(mean.min_n)             # no n makes the mean tolerate f = 1
        self.assertTrue(mean.sums)
        krum = [r for r in dpas.rules(n=2) if r.rule == "krum"][0]
        self.assertIsNone(krum.max_f)             # n >= 2f + 3 fails at f = 0
        self.assertTrue(krum.needs_distances and krum.selects and not krum.coordinatewise)
        self.assertEqual(set(dpas.rules()[0].keys()) & {"max_f", "min_n"}, set())
        self.assertIn("max_f", dpas.rules(n=4)[0].keys())

    def test_rules_conventions(self):
        byzfl = {r.rule: r for r in dpas.rules(n=64, convention="byzfl")}
        self.assertEqual(byzfl["krum"].convention, "byzfl")
        self.assertEqual(byzfl["krum"].max_f, 31)             # 2f < n
        every = dpas.rules(convention="all")
        self.assertEqual(sum(r.rule == "krum" for r in every), 2)

    def test_cost_by_hand(self):
        rows = Scenarios.ReferenceJobAttackSurface.cost(rule=["median", "krum"],
                                                        schedule=["allgather", "sharded"])
        r = {(x.rule, x.schedule): x for x in rows}
        self.assertEqual([(x.rule, x.schedule) for x in rows],
                         [("median", "allgather"), ("median", "sharded"), ("krum", "allgather"),
                          ("krum", "sharded")])
        ag = r[("median", "allgather")]
        self.assertEqual(ag.bytes_per_worker, Quantity(127 * 350 * 10**9))   # (N - 1) x 350 GB
        self.assertEqual(ag["bytes_per_worker"], 127 * 350 * 10**9)
        self.assertEqual(ag.ratio_to_allreduce, 64.0)                        # N / 2
        self.assertEqual(ag.max_f, 63)                                       # n > 2f at 128
        self.assertIsNone(ag.tolerates)
        self.assertNotIn("tolerates", ag.keys())
        self.assertEqual(r[("median", "sharded")].bytes_per_worker.bytes, 2 * 127 * 350 * 10**9 // 128)
        un = r[("krum", "sharded")]
        self.assertFalse(un.realisable)
        self.assertIn("distances", un.why)
        self.assertIsNone(un.bytes_per_worker)
        self.assertIsNone(un["bytes_per_worker"])
        self.assertIsNone(ag.compute_s)                    # no compute rate asked for
        self.assertEqual(rows.steps, 1)
        self.assertEqual(rows.gradient_bytes, Quantity(350 * 10**9))

    def test_cost_options(self):
        s = Scenarios.ReferenceJobAttackSurface
        one = s.cost(rule="median", schedule="allgather")[0]
        three = s.cost(rule="median", schedule="allgather", steps=3, f=64, compute_rate=1e15)[0]
        self.assertEqual(three.bytes_per_worker.bytes, 3 * one.bytes_per_worker.bytes)
        self.assertFalse(three.tolerates)                  # max_f 63 < 64
        self.assertIsNotNone(three.compute_s)
        self.assertIn("tolerates", three.keys())
        # a convention alone applies to every rule (as the CLI's --convention)
        krum = [x for x in s.cost(convention="byzfl", schedule="allgather") if x.rule == "krum"]
        self.assertEqual([x.convention for x in krum], ["byzfl"])
        self.assertEqual(krum[0].max_f, 63)                # byzfl: 2f < n

    def test_cost_roofline_and_one_time(self):
        s = Scenarios.ReferenceJobAttackSurface
        (m,) = s.cost(rule="median", schedule="sharded", memory_bandwidth=1e12)
        # 1 pass over the 128 rows of 175e9/128 bf16 values a worker holds: 350e9 B at 1e12 B/s;
        # 2 x 175e9 flops at the H100's 989e12 FLOP/s take 0.354 ms: memory-bound
        self.assertAlmostEqual(m.compute_s, 0.35, places=12)
        self.assertEqual(m.compute_bound, "memory")
        self.assertEqual(m.compute_bytes, 350e9)
        self.assertIn("total_s", m.keys())
        self.assertAlmostEqual(m.total_s, m.time_s + m.compute_s, places=9)
        # one time: 128 replicas on 128 nodes, the hierarchical schedule, no band (alpha-beta)
        self.assertEqual(m.time_model, "alpha_beta_hierarchical")
        self.assertEqual(m.time_s, m.time_hierarchical_s)
        self.assertIsNone(m.time_band_low_s)
        # rates with their units (issue 29): 1 TB/s is 1e12 B/s, 0.5 TiB/s is 2^39 B/s; a number
        # is in the base unit
        (t,) = s.cost(rule="median", schedule="sharded", memory_bandwidth="1 TB/s")
        self.assertEqual(t.compute_s, m.compute_s)
        (ti,) = s.cost(rule="median", schedule="sharded", memory_bandwidth="0.5 TiB/s")
        self.assertAlmostEqual(ti.compute_s, 350e9 / 2**39, places=12)
        (c,) = s.cost(rule="median", schedule="sharded", compute_rate="1 TFLOP/s", memory_bandwidth=1e15)
        self.assertAlmostEqual(c.compute_s, 2 * 175e9 / 1e12, places=12)  # now compute-bound
        self.assertEqual(c.compute_bound, "compute")

    def test_inventory_by_hand(self):
        inv = {r.item: r for r in Scenarios.ReferenceJobAttackSurface.inventory()}
        self.assertEqual(inv["zero16"].bytes, Quantity(16 * 175 * 10**9))
        self.assertEqual(inv["zero16"]["bytes"], 16 * 175 * 10**9)
        self.assertEqual(inv["allgather_per_worker"].bytes.bytes, 127 * 350 * 10**9)
        self.assertEqual(inv["gradient_bytes"].si, "350 GB")
        self.assertEqual(inv["gradient_bytes"].where, "wire")

    def test_memory_by_hand(self):
        s = Scenarios.ReferenceJobAttackSurface
        m = s.memory()
        # 16 B x 175e9 against 8 x H100 (80 GiB each)
        self.assertEqual(m.state_bytes.bytes, 16 * 175 * 10**9)
        self.assertEqual(m.capacity_bytes.bytes, 8 * 80 * 2**30)
        self.assertFalse(m.fits)
        self.assertEqual(m.headroom_bytes.bytes, 8 * 80 * 2**30 - 16 * 175 * 10**9)
        self.assertIn("exceeds the memory", m.message)
        with self.assertRaises(dpas.PhysicsViolation) as cm:
            m.require()
        self.assertEqual(cm.exception.code, dpas.errors.by_name["EPHYSICS"].code)
        z3 = s.memory(zero=3)
        # ZeRO stage 3: 16 P / N bytes per replica
        self.assertEqual(z3.state_bytes.bytes, 16 * 175 * 10**9 // 128)
        self.assertTrue(z3.fits)
        self.assertEqual(z3.headroom_bytes.bytes, 8 * 80 * 2**30 - 16 * 175 * 10**9 // 128)
        self.assertIs(z3.require(), z3)
        self.assertIsNone(z3.message)

    def test_report(self):
        rep = Scenarios.ReferenceJobAttackSurface.report()
        self.assertEqual(rep["attributes"]["accelerators"], 1024)
        eq = Scenarios.ReferenceJobAttackSurface.report(explain=True)["equations"]
        self.assertEqual(eq["gather_factor"], "dp_degree - 1 = 128 - 1 = 127")

    def test_dict_views(self):
        row = dpas.rules(n=8)[0]
        self.assertEqual(dict(row), row.as_dict())
        self.assertEqual(list(row), list(row.keys()))
        with self.assertRaises(KeyError):
            row["display"]                     # an attribute, not a key of the CLI's JSON
        self.assertIsInstance(row.display, str)


class RowsAgainstCLI(unittest.TestCase):
    """Consistency tests: each row's dict view has the keys and values of the CLI's JSON row."""

    def rows_equal(self, py_rows, js_rows):
        self.assertEqual(len(py_rows), len(js_rows))
        for p, j in zip(py_rows, js_rows):
            # a JSON document says what wrote it; a Python object is no document
            if j.pop("dpas_version", None) is not None:
                self.assertEqual(j.pop("schema_version"), 2)
            d = p.as_dict()
            with self.subTest(row=repr(p)[:60]):
                self.assertEqual(list(d), list(j))          # same keys, same order
                for k in j:
                    self.assertTrue(same(d[k], j[k]), f"{k}: Python {d[k]!r}, CLI {j[k]!r}")

    def test_cost_reference(self):
        s = Scenarios.ReferenceJobAttackSurface
        self.rows_equal(s.cost(), cli_json("cost", "ReferenceJobAttackSurface")["rows"])
        rows = s.cost(f=40, steps=7, iterations=3, compute_rate=2e14)
        j = cli_json("cost", "ReferenceJobAttackSurface", "--f", "40", "--steps", "7",
                     "--iterations", "3", "--compute-rate", "2e14 FLOP/s")
        self.rows_equal(rows, j["rows"])
        self.assertEqual((rows.steps, rows.iterations, rows.dp_degree), (j["steps"], j["iterations"], j["dp_degree"]))
        self.assertEqual(rows.notes, j["notes"])
        for k, v in j["links"].items():
            self.assertTrue(same(rows.links[k], v), k)

    def test_cost_conventions(self):
        s = Scenarios.ReferenceJobAttackSurface
        self.rows_equal(s.cost(rule=["krum", "multi_krum"], convention="byzfl"),
                        cli_json("cost", "ReferenceJobAttackSurface", "--rule", "krum,multi_krum",
                                 "--convention", "byzfl")["rows"])
        self.rows_equal(s.cost(convention="byzfl", schedule="sharded_distance"),
                        cli_json("cost", "ReferenceJobAttackSurface", "--convention", "byzfl",
                                 "--schedule", "sharded_distance")["rows"])

    def test_cost_fractional_bytes(self):
        s = DataParallelAttackSurfaceScenario(
            workload=Workload(3504873), fleet=Fleet(nodes=1, accelerators_per_node=8), dp_degree=8,
            gradient_bytes_per_param="4.127 bit", checkpoint_bytes_per_param="14 B")
        rows = s.cost()
        j = cli_json("cost", "--params", "3504873", "--nodes", "1", "--accelerators-per-node", "8",
                     "--dp", "8", "--grad", "4.127 bit", "--ckpt", "14B")
        self.rows_equal(rows, j["rows"])
        self.assertIsNone(rows.links)
        self.assertEqual(rows.notes, j["notes"])
        self.assertTrue(any(isinstance(r["bytes_per_worker"], fractions.Fraction) for r in rows))

    def test_rules(self):
        for args, kw in ((["--n", "64", "--f", "10"], dict(n=64, f=10)), ([], {}),
                         (["--n", "3", "--convention", "all"], dict(n=3, convention="all")),
                         (["--f", "0", "--convention", "byzfl"], dict(f=0, convention="byzfl"))):
            with self.subTest(args=args):
                self.rows_equal(dpas.rules(**kw), cli_json("rules", *args)["rows"])

    def test_inventory(self):
        self.rows_equal(Scenarios.ReferenceJobAttackSurface.inventory(),
                        cli_json("inventory", "ReferenceJobAttackSurface")["rows"])
        s = DataParallelAttackSurfaceScenario(
            workload=Workload(3504873), fleet=Systems.Clusters.Lab_64_H100, dp_degree=1,
            gradient_bytes_per_param="4.127 bit", checkpoint_bytes_per_param=14)
        self.rows_equal(s.inventory(), cli_json("inventory", "--params", "3504873", "--fleet",
                                                "Lab_64_H100", "--dp", "1", "--grad", "4.127 bit",
                                                "--ckpt", "14 B")["rows"])

    def test_memory(self):
        # the CLI prints the document only when the state fits (else exit 2)
        for zero, state in ((3, "zero16"), (2, "zero16")):
            with self.subTest(zero=zero, state=state):
                m = Scenarios.ReferenceJobAttackSurface.memory(state=state, zero=zero)
                j = cli_json("memory", "ReferenceJobAttackSurface", "--zero", str(zero), "--state", state)
                self.rows_equal([m], [j])
        s = DataParallelAttackSurfaceScenario(
            workload=Workload("7e9"), fleet=Systems.Clusters.Lab_64_H100, dp_degree=8,
            gradient_bytes_per_param="bf16", checkpoint_bytes_per_param="14 B")
        for state in ("megatron18", "sgd_ckpt", "adam_8bit"):
            with self.subTest(state=state):
                j = cli_json("memory", "--params", "7e9", "--fleet", "Lab_64_H100", "--dp", "8",
                             "--grad", "bf16", "--ckpt", "14 B", "--state", state)
                self.rows_equal([s.memory(state=state)], [j])


class Errors(unittest.TestCase):
    """Errors carry the C library's messages, in classes mapped from its error table."""

    def test_value_errors(self):
        cases = [
            (dict(dp_degree=0), dpas.InvalidValue, "dp_degree", "dp_degree must be >= 1, got 0"),
            (dict(dp_degree=2048), dpas.InvalidValue, "dp_degree",
             "dp_degree must be <= accelerators (1024), got 2048"),
            (dict(gradient_bytes_per_param="2"), dpas.ParseError, "gradient_bytes_per_param", "has no unit"),
            (dict(gradient_bytes_per_param=-2), dpas.InvalidValue, "gradient_bytes_per_param", "must be > 0"),
            (dict(workload="DLRM"), dpas.InvalidValue, "workload", "has no parameter count"),
            (dict(workload="GTP3"), dpas.UnknownName, None, 'unknown model "GTP3"; closest: GPT3'),
            (dict(checkpoint_bytes_per_param="nan"), dpas.ParseError, "checkpoint_bytes_per_param", "finite"),
        ]
        for kw, cls, field, msg in cases:
            with self.subTest(**{k: str(v) for k, v in kw.items()}):
                with self.assertRaises(cls) as cm:
                    make(**kw)
                self.assertIsInstance(cm.exception, ValueError)
                self.assertIn(msg, str(cm.exception))
                self.assertEqual(cm.exception.message, str(cm.exception))
                if field is not None:
                    self.assertEqual(cm.exception.field, field)
                self.assertTrue(cm.exception.field)
                self.assertEqual(cm.exception.code, cls.code)

    def test_type_errors(self):
        for kw in (dict(dp_degree=True), dict(workload=3), dict(fleet=1024),
                   dict(gradient_bytes_per_param=[2]), dict(dp_degree=None),
                   dict(gradient_bytes_per_param=None)):
            with self.subTest(**{k: repr(v) for k, v in kw.items()}):
                with self.assertRaises(TypeError) as cm:
                    make(**kw)
                self.assertIsInstance(cm.exception, dpas.ArgumentTypeError)

    def test_undefined(self):
        s = make(dp_degree=1)
        with self.assertRaises(dpas.Undefined) as cm:
            s.gather_traffic_ratio
        self.assertIn("requires more than one replica", str(cm.exception))
        with self.assertRaises(ValueError) as cm:
            s.weight_bytes
        self.assertIn("requires weight_bytes_per_param", str(cm.exception))

    def test_classes_from_the_c_table(self):
        # consistency: each class's code is the one the C table gives its name
        lib = ctypes.CDLL(os.environ["DPAS_LIBRARY"]) if os.environ.get("DPAS_LIBRARY") else None
        if lib is not None:
            lib.dpas_err_name.restype = ctypes.c_char_p
        expected = {"EINVAL": dpas.InvalidValue, "EPARSE": dpas.ParseError, "ERANGE": dpas.RangeError,
                    "ENOENT": dpas.UnknownName, "EUNDEF": dpas.Undefined, "ENOMEM": dpas.OutOfMemory,
                    "EIO": dpas.FileError, "EPHYSICS": dpas.PhysicsViolation}
        for name, cls in expected.items():
            with self.subTest(name=name):
                self.assertIs(dpas.errors.by_name[name], cls)
                self.assertTrue(issubclass(cls, dpas.Error) and issubclass(cls, ValueError))
                self.assertLess(cls.code, 0)
                if lib is not None:
                    self.assertEqual(lib.dpas_err_name(cls.code).decode(), name)
        self.assertTrue(issubclass(dpas.UnknownName, LookupError))
        self.assertTrue(issubclass(dpas.ArgumentTypeError, TypeError))
        self.assertEqual(set(dpas.errors.by_code.values()), set(dpas.errors.by_name.values()))
        self.assertEqual(dpas.InvalidValue.title, "invalid input")
        self.assertEqual(dpas.PhysicsViolation.title, "physics violation")


def _scenario():
    return Scenarios.ReferenceJobAttackSurface


_TESTS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")


def _bad(name):
    """A file of tests/cli/bad, the CLI's bad inputs."""
    return os.path.join(_TESTS, "cli", "bad", name)


# Hostile arguments: (label, call, expected class, words the message must contain). Every one
# must raise that class, which is a ValueError or a TypeError, and never let ctypes.ArgumentError,
# AttributeError or OverflowError escape, nor answer for another value (2**64 + 64 is not 64).
HOSTILE = [
    # integers beyond int64 (issue 12: dpas.rules(n=2**64 + 64) answered for n = 64)
    ("rules n 2**64+64", lambda: dpas.rules(n=2**64 + 64), dpas.RangeError, ["n", "out of range"]),
    ("rules n 2**63", lambda: dpas.rules(n=2**63), dpas.RangeError, ["n", "out of range"]),
    ("rules f -2**63-1", lambda: dpas.rules(f=-2**63 - 1), dpas.RangeError, ["f"]),
    ("cost f 2**64", lambda: _scenario().cost(f=2**64), dpas.RangeError, ["f"]),
    ("cost steps 2**63", lambda: _scenario().cost(steps=2**63), dpas.RangeError, ["steps"]),
    ("cost iterations 2**70", lambda: _scenario().cost(iterations=2**70), dpas.RangeError, ["iterations"]),
    ("dp_degree 2**64+128", lambda: make(dp_degree=2**64 + 128), dpas.RangeError, ["dp_degree"]),
    ("parameters 2**64+64", lambda: make(workload=Workload(2**64 + 64)), dpas.RangeError,
     ["parameters", "18446744073709551680"]),
    ("nodes 2**64+128", lambda: make(fleet=Fleet(nodes=2**64 + 128, accelerators_per_node=8)),
     dpas.RangeError, ["nodes"]),
    ("memory zero 2**40", lambda: _scenario().memory(zero=2**40), dpas.InvalidValue,
     ["zero must be <= 3", str(2**40)]),
    ("memory zero 2**64", lambda: _scenario().memory(zero=2**64), dpas.RangeError, ["zero"]),
    # negatives are errors, not defaults (issue 12)
    ("rules n -1", lambda: dpas.rules(n=-1), dpas.InvalidValue, ["n must be >= 1, got -1"]),
    ("rules n 0", lambda: dpas.rules(n=0), dpas.InvalidValue, ["n must be >= 1, got 0"]),
    ("rules f -1", lambda: dpas.rules(f=-1), dpas.InvalidValue, ["f must be >= 0, got -1"]),
    ("cost f -1", lambda: _scenario().cost(f=-1), dpas.InvalidValue, ["f must be >= 0, got -1"]),
    ("cost f -5", lambda: _scenario().cost(f=-5), dpas.InvalidValue, ["f must be >= 0, got -5"]),
    ("cost steps -1", lambda: _scenario().cost(steps=-1), dpas.InvalidValue, ["steps must be >= 1, got -1"]),
    ("cost steps 0", lambda: _scenario().cost(steps=0), dpas.InvalidValue, ["steps must be >= 1, got 0"]),
    ("cost iterations 0", lambda: _scenario().cost(iterations=0), dpas.InvalidValue,
     ["iterations must be >= 1, got 0"]),
    ("cost iterations -3", lambda: _scenario().cost(iterations=-3), dpas.InvalidValue, ["iterations"]),
    ("memory zero -1", lambda: _scenario().memory(zero=-1), dpas.InvalidValue,
     ["zero must be >= 0, got -1"]),
    ("memory zero 4", lambda: _scenario().memory(zero=4), dpas.InvalidValue, ["got 4"]),
    ("dp_degree -1", lambda: make(dp_degree=-1), dpas.InvalidValue, ["dp_degree must be >= 1, got -1"]),
    ("parameters -5", lambda: make(workload=Workload(-5)), dpas.InvalidValue, ["parameters"]),
    # issue 29: the nccl reader's refusals, as the CLI's (tests/cli/bad_inputs.txt) and HTTP's
    ("calibration single Rank line of id 5", lambda: _scenario().cost(calibration=_bad("nccl_broadcast_rank5_only.txt")),
     dpas.InvalidValue, ['its 1 "#  Rank" line skips ids', "at least 6, as its lines name rank 5"]),
    ("calibration single Rank line of id 0", lambda: _scenario().cost(calibration=_bad("nccl_broadcast_rank0_only.txt")),
     dpas.InvalidValue, ['it shows one "#  Rank" line', "ranks 1 if it ran on one GPU"]),
    ("calibration elided Rank lines", lambda: _scenario().cost(calibration=_bad("nccl_broadcast_elided.txt")),
     dpas.InvalidValue, ['its "#  Rank" lines are elided (line 6)', "at least 8, as its lines name rank 7"]),
    ("calibration rows that disagree", lambda: _scenario().cost(calibration=_bad("nccl_rows_disagree.txt")),
     dpas.InvalidValue, ["busbw/algbw differs between rows: no rank count fits every row", "give ranks N"]),
    ("calibration undefined fit", lambda: _scenario().cost(
        calibration=os.path.join(_TESTS, "data", "nccl-real", "06_gb10_2ranks_all_gather_one_size.txt")),
     dpas.InvalidValue, ["all_gather on 2 ranks has 1 distinct size (17179869184 B); a fit needs at least 2"]),
    ("compute_rate -1", lambda: _scenario().cost(compute_rate=-1), dpas.InvalidValue, ["compute_rate"]),
    ("compute_rate 0", lambda: _scenario().cost(compute_rate=0), dpas.InvalidValue, ["compute_rate", "> 0"]),
    ("compute_rate nan", lambda: _scenario().cost(compute_rate=float("nan")), dpas.ParseError, ["compute_rate"]),
    ("compute_rate inf", lambda: _scenario().cost(compute_rate=float("inf")), dpas.ParseError, ["compute_rate"]),
    ("compute_rate 10**400", lambda: _scenario().cost(compute_rate=10**400), dpas.RangeError, ["compute_rate"]),
    ("memory_bandwidth 0", lambda: _scenario().cost(memory_bandwidth=0), dpas.InvalidValue, ["memory_bandwidth", "> 0"]),
    ("memory_bandwidth -1", lambda: _scenario().cost(memory_bandwidth=-1), dpas.InvalidValue, ["memory_bandwidth"]),
    # embedded NUL (issue 12: 'GPT3\x00garbage' was GPT-3)
    ("workload NUL", lambda: make(workload="GPT3\x00garbage"), dpas.InvalidValue, ["workload", "NUL"]),
    ("fleet NUL", lambda: make(fleet="Training_1K\x00x"), dpas.InvalidValue, ["fleet", "NUL"]),
    ("parameters NUL", lambda: make(workload=Workload("175e9\x00")), dpas.InvalidValue, ["parameters", "NUL"]),
    ("workload.name NUL", lambda: make(workload=Workload(175e9, name="a\x00b")), dpas.InvalidValue, ["workload_name"]),
    ("fleet.name NUL", lambda: make(fleet=Fleet(128, 8, name="a\x00b")), dpas.InvalidValue, ["fleet_name"]),
    ("fleet.node NUL", lambda: make(fleet=Fleet(128, node="DGX_H100\x00")), dpas.InvalidValue, ["node"]),
    ("fleet.fabric NUL", lambda: make(fleet=Fleet(128, 8, fabric="IB\x00")), dpas.InvalidValue, ["fabric"]),
    ("width NUL", lambda: make(gradient_bytes_per_param="bf16\x00x"), dpas.InvalidValue,
     ["gradient_bytes_per_param", "NUL"]),
    ("weight width NUL", lambda: make(weight_bytes_per_param="2 B\x00"), dpas.InvalidValue, ["weight_bytes_per_param"]),
    ("rule NUL", lambda: _scenario().cost(rule="median\x00krum"), dpas.InvalidValue, ["rule", "NUL"]),
    ("rule list NUL", lambda: _scenario().cost(rule=["median", "krum\x00"]), dpas.InvalidValue, ["rule"]),
    ("schedule NUL", lambda: _scenario().cost(schedule="allgather\x00"), dpas.InvalidValue, ["schedule"]),
    ("convention NUL", lambda: dpas.rules(convention="byzfl\x00"), dpas.InvalidValue, ["convention"]),
    ("cost convention NUL", lambda: _scenario().cost(convention="byzfl\x00"), dpas.InvalidValue, ["convention"]),
    ("state NUL", lambda: _scenario().memory(state="zero16\x00"), dpas.InvalidValue, ["state"]),
    ("lone surrogate", lambda: make(workload="GPT\udc803"), dpas.InvalidValue, ["workload", "Unicode"]),
    # bool is not an int; floats only when whole (and exact)
    ("rules n True", lambda: dpas.rules(n=True), dpas.ArgumentTypeError, ["n must be an int", "bool"]),
    ("cost f False", lambda: _scenario().cost(f=False), dpas.ArgumentTypeError, ["f"]),
    ("memory zero True", lambda: _scenario().memory(zero=True), dpas.ArgumentTypeError, ["zero"]),
    ("nodes True", lambda: make(fleet=Fleet(nodes=True, accelerators_per_node=8)), dpas.ArgumentTypeError, ["nodes"]),
    ("parameters True", lambda: make(workload=Workload(True)), dpas.ArgumentTypeError, ["parameters"]),
    ("width True", lambda: make(gradient_bytes_per_param=True), dpas.ArgumentTypeError, ["gradient_bytes_per_param"]),
    # an integer key takes an int only: a float, even a whole one, is refused as the CLI
    # refuses --n 64.0 (a count, parameters, may be 175e9)
    ("rules n 64.5", lambda: dpas.rules(n=64.5), dpas.ArgumentTypeError, ["n must be an int, got float 64.5", '"1.0"']),
    ("rules n 64.0", lambda: dpas.rules(n=64.0), dpas.ArgumentTypeError, ["n must be an int, got float 64.0"]),
    ("rules n nan", lambda: dpas.rules(n=float("nan")), dpas.ArgumentTypeError, ["n must be an int, got float nan"]),
    ("rules n inf", lambda: dpas.rules(n=float("inf")), dpas.ArgumentTypeError, ["n must be an int"]),
    ("rules n 1e300", lambda: dpas.rules(n=1e300), dpas.ArgumentTypeError, ["n must be an int"]),
    ("f 1.0", lambda: _scenario().cost(f=1.0), dpas.ArgumentTypeError, ["f must be an int, got float 1.0"]),
    ("dp_degree 128.0", lambda: make(dp_degree=128.0), dpas.ArgumentTypeError, ["dp_degree must be an int, got float 128.0"]),
    ("dp_degree Decimal 128", lambda: make(dp_degree=decimal.Decimal(128)), dpas.ArgumentTypeError, ["dp_degree must be an int"]),
    ("parameters 2**53+2 float", lambda: make(workload=Workload(float(2**53 + 2))), dpas.InvalidValue, ["2^53"]),
    ("dp_degree 1.5", lambda: make(dp_degree=1.5), dpas.InvalidValue, ["dp_degree", "whole number"]),
    ("dp_degree Fraction 1/2", lambda: make(dp_degree=fractions.Fraction(1, 2)), dpas.InvalidValue, ["dp_degree"]),
    ("dp_degree Decimal 1.5", lambda: make(dp_degree=decimal.Decimal("1.5")), dpas.InvalidValue, ["dp_degree"]),
    ("dp_degree Decimal NaN", lambda: make(dp_degree=decimal.Decimal("NaN")), dpas.InvalidValue, ["dp_degree"]),
    ("steps 2.5", lambda: _scenario().cost(steps=2.5), dpas.InvalidValue, ["steps"]),
    # wrong types
    ("rules n str", lambda: dpas.rules(n="64"), dpas.ArgumentTypeError, ["n must be an int", "str"]),
    ("rules n complex", lambda: dpas.rules(n=1j), dpas.ArgumentTypeError, ["n"]),
    ("rules convention bytes", lambda: dpas.rules(convention=b"byzfl"), dpas.ArgumentTypeError, ["convention"]),
    ("rule int", lambda: _scenario().cost(rule=3), dpas.ArgumentTypeError, ["rule"]),
    ("rule list of int", lambda: _scenario().cost(rule=["median", 3]), dpas.ArgumentTypeError, ["rule"]),
    ("rule empty list", lambda: _scenario().cost(rule=[]), dpas.InvalidValue, ["rule", "at least one"]),
    ("schedule empty tuple", lambda: _scenario().cost(schedule=()), dpas.InvalidValue, ["schedule"]),
    ("compute_rate str without a unit", lambda: _scenario().cost(compute_rate="1e15"), dpas.ParseError,
     ["compute_rate", "has no unit"]),
    ("compute_rate in bytes", lambda: _scenario().cost(compute_rate="3 TB/s"), dpas.ParseError,
     ["compute_rate", "unit of compute"]),
    ("memory_bandwidth a count", lambda: _scenario().cost(memory_bandwidth="3B"), dpas.ParseError,
     ["memory_bandwidth", "unit of bandwidth"]),
    ("memory_bandwidth a list", lambda: _scenario().cost(memory_bandwidth=[1e12]), dpas.ArgumentTypeError,
     ["memory_bandwidth"]),
    ("state int", lambda: _scenario().memory(state=16), dpas.ArgumentTypeError, ["state"]),
    ("explain str", lambda: _scenario().report(explain="yes"), dpas.ArgumentTypeError, ["explain"]),
    ("width complex", lambda: make(gradient_bytes_per_param=2j), dpas.ArgumentTypeError, ["gradient_bytes_per_param"]),
    ("width object", lambda: make(gradient_bytes_per_param=object()), dpas.ArgumentTypeError, ["gradient_bytes_per_param"]),
    ("fleet.node int", lambda: make(fleet=Fleet(128, node=5)), dpas.ArgumentTypeError, ["node"]),
    ("workload.name int", lambda: make(workload=Workload(175e9, name=5)), dpas.ArgumentTypeError, ["workload_name"]),
    ("Quantity str", lambda: Quantity("5"), dpas.ArgumentTypeError, ["magnitude"]),
    ("Quantity nan", lambda: Quantity(float("nan")), dpas.InvalidValue, ["magnitude"]),
    ("Quantity unit list", lambda: Quantity(5, ["B"]), dpas.InvalidValue, ["units"]),
    ("Quantity.to unit", lambda: Quantity(5).to(None), dpas.InvalidValue, ["units"]),
    # values the library refuses, with its message
    ("width fraction 1/3", lambda: make(gradient_bytes_per_param=fractions.Fraction(1, 3)), dpas.InvalidValue,
     ["gradient_bytes_per_param", "exact decimal"]),
    ("width inf", lambda: make(gradient_bytes_per_param=float("inf")), dpas.ParseError, ["finite"]),
    ("width Decimal NaN", lambda: make(gradient_bytes_per_param=decimal.Decimal("NaN")), dpas.ParseError, ["finite"]),
    ("width 1e400 B", lambda: make(gradient_bytes_per_param="1e400 B"), dpas.Error, ["gradient_bytes_per_param"]),
    ("unknown rule", lambda: _scenario().cost(rule="krumm"), dpas.UnknownName, ["krumm"]),
    ("unknown schedule", lambda: _scenario().cost(schedule="allgathr"), dpas.UnknownName,
     ['unknown schedule "allgathr"', "allgather"]),
    ("unknown convention", lambda: dpas.rules(convention="blanchrd"), dpas.UnknownName, ["blanchrd"]),
    ("unknown cost convention", lambda: _scenario().cost(convention="nope"), dpas.UnknownName, ["nope"]),
    ("unknown state", lambda: _scenario().memory(state="zero17"), dpas.UnknownName, ["zero17"]),
    ("ZeRO on megatron18", lambda: _scenario().memory(state="megatron18", zero=1), dpas.InvalidValue,
     ["zero16"]),
    ("unknown node", lambda: make(fleet=Fleet(128, node="DGX_H1000")), dpas.UnknownName, ["DGX_H1000"]),
    ("model as node", lambda: make(fleet=Fleet(128, node=Models.GPT3)), dpas.UnknownName, ["GPT3"]),
    ("memory without node", lambda: make(fleet=Fleet(128, 8)).memory(), dpas.InvalidValue, ["node"]),
]


class Hostile(unittest.TestCase):
    """Issue 12: every argument is checked before ctypes sees it; only ValueError or TypeError
    (dpas.Error and its subclasses) escape, with a message naming the field."""

    def test_hostile_arguments(self):
        for label, call, cls, words in HOSTILE:
            with self.subTest(label):
                try:
                    call()
                except (ctypes.ArgumentError, AttributeError, OverflowError) as e:
                    self.fail(f"{label}: {type(e).__name__} escaped: {e}")
                except (ValueError, TypeError) as e:
                    self.assertIsInstance(e, cls, f"{label}: {type(e).__name__}: {e}")
                    for w in words:
                        self.assertIn(w, str(e), label)
                    self.assertTrue(e.field, f"{label}: no field in {e!r}")
                else:
                    self.fail(f"{label}: no error")

    def test_nothing_wraps(self):
        # the answer for 2**64 + 64 must never be the answer for 64
        with self.assertRaises(dpas.RangeError):
            dpas.rules(n=2**64 + 64)
        self.assertEqual({r.rule: r.max_f for r in dpas.rules(n=_np_int(64))},
                         {r.rule: r.max_f for r in dpas.rules(n=64)})

    def test_a_failed_call_leaves_the_scenario_usable(self):
        s = Scenarios.ReferenceJobAttackSurface
        for bad in (dict(f=-1), dict(rule="krumm"), dict(steps=2**64)):
            with self.assertRaises(ValueError):
                s.cost(**bad)
        self.assertEqual(s.cost(rule="median", schedule="allgather")[0].bytes_per_worker.bytes,
                         127 * 350 * 10**9)


def load_tests(loader, tests, ignore):
    for m in (dpas, dpas.rows, dpas.errors, dpas._quantity):
        tests.addTests(doctest.DocTestSuite(m))
    # the Python examples of the README and of every docs/ page, DOCS among them, wherever a
    # restructure of the documentation puts them
    import glob
    root = os.path.normpath(os.path.join(os.path.dirname(DOCS), ".."))
    pages = glob.glob(os.path.join(root, "docs", "**", "*.md"), recursive=True)
    # the examples in ```python fences: a page's other >>> lines (numpy or torch sessions shown
    # in plain fences) are run by those features' own tests
    import re
    parser = doctest.DocTestParser()
    for page in [os.path.join(root, "README.md")] + sorted(pages):
        with open(page, encoding="utf-8") as f:
            blocks = re.findall(r"^```python\n(.*?)^```", f.read(), re.S | re.M)
        if blocks:
            test = parser.get_doctest("\n".join(blocks), {}, page, page, 0)
            tests.addTest(doctest.DocTestCase(test))
    return tests


class Signatures(unittest.TestCase):
    """cost, sweep, scenario and memory carry real signatures from the key table (issue 31)."""

    def params(self, fn, own=()):
        import inspect
        sig = inspect.signature(fn)
        for p in sig.parameters.values():
            if p.name not in own:  # plot's file may be given by position, as before
                self.assertEqual(p.kind, inspect.Parameter.KEYWORD_ONLY, p)
            self.assertIsNone(p.default, p)
        return sig.parameters

    def test_cost(self):
        # the cost options of docs/library.md's key table (analyses column "cost"), by hand
        want = {"rule", "schedule", "convention", "f", "steps", "iterations", "compute_rate",
                "memory_bandwidth", "calibration", "network_model", "dp_degree", "scenario",
                "workload", "parameters", "fleet", "gradient_bytes_per_param", "zero"}
        got = self.params(dpas.cost)
        self.assertLessEqual(want, set(got))
        for other in ("attr", "state", "n", "y", "title", "explain"):
            self.assertNotIn(other, got)
        import pydoc
        text = pydoc.render_doc(dpas.cost, renderer=pydoc.plaintext)
        # each key's type, unit, bounds and default as docs/library.md's key table lists them
        for word in ("network_model", "memory_bandwidth (rate in B/s): memory bytes/s per worker",
                     "zero (integer 0..3, default 0)", "rule (list of enum)", "CostRows"):
            self.assertIn(word, text)

    def test_step_plot_rules(self):
        # the keyword functions with their own parameters take the key table's too (the
        # analyses column of docs/library.md's key table: step, plot, rules)
        self.assertLessEqual({"tokens", "mfu", "bucket_bytes", "precision"},
                             set(self.params(dpas.step)))
        plot = self.params(dpas.plot, own=("file",))
        self.assertLessEqual({"file", "format", "width", "y", "title", "dp_degree"}, set(plot))
        self.assertEqual(list(plot)[0], "file")  # its own parameters first, as they were
        rules = self.params(dpas.rules, own=("n", "f", "convention"))
        self.assertLessEqual({"n", "f", "convention"}, set(rules))
        self.assertNotIn("dp_degree", rules)

    def test_sweep_memory_scenario(self):
        sweep = self.params(dpas.sweep)
        self.assertLessEqual({"f", "rule", "schedule", "attr", "dp_degree"}, set(sweep))
        self.assertIn("Sequence", str(sweep["f"].annotation))  # a list or a range in a sweep
        self.assertNotIn("Sequence", str(self.params(dpas.cost)["dp_degree"].annotation))
        memory = self.params(dpas.memory)
        self.assertLessEqual({"state", "zero", "dp_degree"}, set(memory))
        self.assertNotIn("rule", memory)
        self.assertLessEqual({"scenario", "workload", "fleet", "dp_degree"},
                             set(self.params(dpas.scenario)))

    def test_py_typed(self):
        self.assertTrue(os.path.isfile(os.path.join(os.path.dirname(dpas.__file__), "py.typed")))

    def test_render(self):
        # median tolerates f < n/2: max_f = floor((n - 1) / 2); Krum n >= 2f + 3: floor((n - 3) / 2)
        rows = dpas.sweep(scenario="ReferenceJobAttackSurface", dp_degree="8,16",
                          rule="median,krum", attr="max_f")
        self.assertEqual(rows.render("csv"),
                         "dp_degree,rule,max_f\n8,median,3\n8,krum,2\n16,median,7\n16,krum,6\n")
        self.assertEqual(rows.render("markdown").splitlines()[:3],
                         ["| dp_degree | rule | max_f |", "|---|---|---:|", "| 8 | median | 3 |"])
        args = ["sweep", "ReferenceJobAttackSurface", "--dp", "8,16", "--rule", "median,krum",
                "--attr", "max_f", "--no-chart"]
        for fmt in ("text", "markdown", "json"):  # the CLI's bytes (a consistency test)
            want = subprocess.run([CLI] + args + ["-o", fmt], capture_output=True, text=True,
                                  check=True).stdout
            self.assertEqual(rows.render(fmt), want, fmt)
        with self.assertRaises(dpas.InvalidValue):
            rows.render("html")

    def test_plot(self):
        import tempfile
        keys = dict(scenario="ReferenceJobAttackSurface", f="0..3+1", rule="krum,median",
                    schedule="allgather,ps", attr="bytes_per_worker")
        svg = dpas.plot(xlabel="Byzantine workers f", **keys)
        with tempfile.TemporaryDirectory() as d:
            out = os.path.join(d, "f.svg")
            subprocess.run([CLI, "sweep", "ReferenceJobAttackSurface", "--f", "0..3+1", "--rule",
                            "krum,median", "--schedule", "allgather,ps", "--attr",
                            "bytes_per_worker", "--xlabel", "Byzantine workers f", "--plot", out,
                            "-o", "csv"], check=True, capture_output=True)
            with open(out, "rb") as f:
                self.assertEqual(svg, f.read())  # the CLI's drawing (a consistency test)
            pdf_path = os.path.join(d, "f.pdf")
            pdf = dpas.plot(pdf_path, **keys)
            self.assertTrue(pdf.startswith(b"%PDF-"))
            with open(pdf_path, "rb") as f:
                self.assertEqual(f.read(), pdf)
        # two panels (one per schedule), each with its title, one legend heading per panel
        self.assertEqual(svg.count(b"(schedule allgather)</text>"), 1)
        self.assertEqual(svg.count(b"(schedule ps)</text>"), 1)
        self.assertEqual(svg.count(b">rule</text>"), 2)
        with self.assertRaises(dpas.InvalidValue):
            dpas.plot(format="eps", **keys)
        # the look's bounds are the library's, as the CLI's (100 to 20000, 4 to 72), each
        # refusal naming its field; a file's extension and the format agree
        for look, field in ((dict(width=0), "width"), (dict(width=50), "width"),
                            (dict(height=10**6), "height"), (dict(font_size=0), "font_size"),
                            (dict(font_size=1000), "font_size"), (dict(width=300.7), "width")):
            with self.assertRaises(dpas.InvalidValue) as e:
                dpas.plot(**look, **keys)
            self.assertEqual(e.exception.field, field, look)
        with self.assertRaises(dpas.ArgumentTypeError):
            dpas.plot(width=True, **keys)
        with tempfile.TemporaryDirectory() as tmp, self.assertRaises(dpas.InvalidValue) as e:
            dpas.plot(os.path.join(tmp, "q.svg"), format="png", **keys)
        self.assertEqual(e.exception.field, "format")

    def test_sweep_f(self):
        # N = min_n(f) of Krum, n >= 2f + 3: 3, 5, 7 for f = 0, 1, 2
        rows = dpas.sweep(scenario="ReferenceJobAttackSurface", f="0..2+1", rule="krum",
                          attr="max_f")
        self.assertEqual([(r["f"], r["dp_degree"], r["max_f"]) for r in rows],
                         [(0, 3, 0), (1, 5, 1), (2, 7, 2)])


if __name__ == "__main__":
    unittest.main()
