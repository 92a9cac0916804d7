# SPDX-License-Identifier: Apache-2.0
"""A given value is used or refused (issue 29, class 3), from Python: a key no chosen rule uses
is an InvalidValue naming the key, the rules given and the rules that would use it, the same
sentence as the CLI's (tests/cli/bad_inputs.txt) and the server's (tests/serve/test_bad.py),
because the request layer decides it from its key table for every front end.

Usage: python3 test_used_or_refused.py (dpas on PYTHONPATH, DPAS_LIBRARY its libdpas)"""
import unittest

import dpas

REF = dict(scenario="ReferenceJobAttackSurface")
CONV = "(convention is used by krum, multi_krum)"
ITER = "(iterations is used by geometric_median, centered_clipping)"


class UsedOrRefused(unittest.TestCase):
    def refused(self, fn, field, message, **keys):
        with self.assertRaises(dpas.InvalidValue) as cm:
            fn(**REF, **keys)
        self.assertEqual(cm.exception.field, field)
        self.assertEqual(str(cm.exception), message)

    def test_convention_on_a_rule_without_conventions(self):
        self.refused(dpas.cost, "convention", "convention is not used by rule median " + CONV,
                     rule="median", convention="byzfl")
        self.refused(dpas.sweep, "convention",
                     "convention is not used by rules median,trimmed_mean " + CONV,
                     dp_degree=[2, 4], rule=["median", "trimmed_mean"], convention="byzfl")

    def test_convention_in_a_sweep_without_a_rule(self):
        self.refused(dpas.sweep, "convention",
                     "convention is not used by a sweep without a rule " + CONV,
                     dp_degree=[2, 4], convention="byzfl")

    def test_iterations_on_a_rule_that_does_not_iterate(self):
        self.refused(dpas.cost, "iterations", "iterations is not used by rule median " + ITER,
                     rule="median", iterations=5)
        self.refused(dpas.cost, "iterations", "iterations is not used by rules median,krum " + ITER,
                     rule=["median", "krum"], iterations=5)

    def test_used_keys_are_taken(self):
        # the controls: a rule of the list uses the key; no rule list means every rule in cost
        rows = dpas.cost(**REF, rule=["median", "krum"], convention="byzfl")
        self.assertEqual({r.rule: r.convention for r in rows},
                         {"median": "standard", "krum": "byzfl"})
        self.assertTrue(dpas.cost(**REF, rule=["median", "geometric_median"], iterations=5))
        self.assertTrue(dpas.cost(**REF, iterations=5))
        self.assertTrue(dpas.sweep(**REF, dp_degree=[8, 16], rule="krum", convention="byzfl"))


class EmptyOrTwice(unittest.TestCase):
    """Issue 29 round 4: a label given empty and a name given twice in two cases are refused as
    the CLI (tests/cli/bad_inputs.txt) and the server refuse them, by the request layer."""

    def refused(self, fn, field, message, **keys):
        with self.assertRaises(dpas.InvalidValue) as cm:
            fn(**keys)
        self.assertEqual(cm.exception.field, field)
        self.assertEqual(str(cm.exception), message)

    def test_empty_labels(self):
        # every TEXT key of the key table (name, workload_name, fleet_name; title: plot only)
        for key in ("name", "workload_name", "fleet_name"):
            self.refused(dpas.cost, key, key + " is empty; give a value or leave the key out",
                         **REF, **{key: ""})
        self.refused(dpas.plot, "title", "title is empty; give a value or leave the key out",
                     **REF, dp_degree="2,4", title="")

    def test_a_name_twice_in_two_cases(self):
        step = dict(model="Llama3_8B", fleet="Lab_64_H100", dp_degree=8,
                    gradient_bytes_per_param="bf16", checkpoint_bytes_per_param="14B",
                    tokens="4M")
        self.refused(dpas.step, "parallelism", 'parallelism: "DATA" is given twice (as "data")',
                     **step, parallelism=["data", "DATA"])
        self.refused(dpas.cost, "rule", 'rule: "MEDIAN" is given twice (as "median")', **REF,
                     rule=["median", "MEDIAN"])
        self.refused(dpas.cost, "schedule", 'schedule: "AllGather" is given twice (as "allgather")',
                     **REF, schedule="allgather,AllGather")


if __name__ == "__main__":
    unittest.main(verbosity=2)
