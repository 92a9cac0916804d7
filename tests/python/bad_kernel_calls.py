# SPDX-License-Identifier: Apache-2.0
"""The catalogue of bad calls of the Python kernel API (dpas.aggregate, select, attack,
preaggregate, dpas.byzfl), the Python side of tests/cli/bad_inputs.txt: each must raise the
exception class given (TypeError: dpas.ArgumentTypeError; ValueError: a dpas.Error) with a
message holding the text given, before or instead of any C call that could misread it. Issue
21's classes: integers are integers, options a rule does not take, buffers that would need a
copy, duplicates in lists, non-finite rows at every n; and issue 24's inputs.

Usage: python3 bad_kernel_calls.py            run every case, report each failure
       python3 bad_kernel_calls.py list       the case names
       python3 bad_kernel_calls.py NAME ...   those cases"""
import sys

import numpy as np

import dpas
from dpas import byzfl

G = np.random.default_rng(0).standard_normal((9, 12)).astype(np.float32)
H = G[:3].astype(np.float64)
NAN1 = np.array([[np.nan, 1.0]], dtype=np.float32)
RAW = bytearray(4 * 12 * 2 + 1)
UNALIGNED = np.frombuffer(RAW, dtype=np.uint8)[1:].view(np.float32).reshape(2, 12)

# name: (call, exception, text)
CASES = {
    # integers are integers (no int() of floats, strings or bools)
    "f_float": (lambda: dpas.aggregate("median", G, f=1.0), TypeError, "f must be an int, got float 1.0"),
    "f_string": (lambda: dpas.aggregate("median", G, f="1"), TypeError, "f must be an int, got str '1'"),
    "f_bool": (lambda: dpas.aggregate("median", G, f=True), TypeError, "f must be an int, got bool True"),
    "f_negative": (lambda: dpas.aggregate("median", G, f=-1), ValueError, "f must be >= 0, got -1"),
    "f_beyond_int64": (lambda: dpas.aggregate("median", G, f=2**64), dpas.RangeError, "f is out of range"),
    "threads_float": (lambda: dpas.aggregate("median", G, 1, threads=2.0), TypeError, "threads must be an int, got float"),
    "threads_negative": (lambda: dpas.aggregate("median", G, 1, threads=-5), ValueError, "threads must be >= 0, got -5"),
    "threads_too_many": (lambda: dpas.aggregate("median", G, 1, threads=257), dpas.RangeError, "threads is out of range: must be <= 256, got 257"),
    "m_float": (lambda: dpas.aggregate("multi_krum", G, 1, m=2.0), TypeError, "m must be an int, got float"),
    "iterations_string": (lambda: dpas.aggregate("geometric_median", G, 1, iterations="3"), TypeError, "iterations must be an int, got str"),
    "idx_bool": (lambda: dpas.aggregate("monna", G, 1, idx=False), TypeError, "idx must be an int, got bool"),
    "nnm_int": (lambda: dpas.aggregate("median", G, 1, nnm=1), TypeError, "nnm must be True or False"),
    "tau_string": (lambda: dpas.aggregate("centered_clipping", G, 1, tau="1"), TypeError, "tau must be a number"),
    # options a rule does not take
    "m_for_krum": (lambda: dpas.aggregate("krum", G, 1, m=2), TypeError, "krum does not take the option m"),
    "m_zero_for_median": (lambda: dpas.aggregate("median", G, 1, m=0), TypeError, "median does not take the option m"),
    "tau_for_median": (lambda: dpas.aggregate("median", G, 1, tau=1.0), TypeError, "median does not take the option tau"),
    "iterations_for_mean": (lambda: dpas.aggregate("mean", G, iterations=3), TypeError, "mean does not take the option iterations"),
    "tolerance_for_cc": (lambda: dpas.aggregate("centered_clipping", G, 1, tolerance=1e-3), TypeError, "centered_clipping does not take the option tolerance"),
    "start_for_krum": (lambda: dpas.aggregate("krum", G, 1, start=G[0]), TypeError, "krum does not take the option start"),
    "idx_for_median": (lambda: dpas.aggregate("median", G, 1, idx=0), TypeError, "median does not take the option idx"),
    "unknown_option": (lambda: dpas.aggregate("median", G, 1, gamma=2), TypeError, "unexpected keyword argument 'gamma'"),
    "isa_unknown": (lambda: dpas.aggregate("median", G, 1, isa="sse"), ValueError, "isa must be one of generic, avx2, avx512 or None"),
    # duplicates in lists, and other pre-aggregation lists
    "pre_twice": (lambda: dpas.aggregate("median", G, 1, pre=["nnm", "nnm"]), ValueError, "pre names nnm twice"),
    "pre_twice_with_parameters": (lambda: dpas.aggregate("median", G, 1, pre=[("clipping", {"c": 1.0}), "clipping"]), ValueError, "pre names clipping twice"),
    "pre_not_a_preaggregation": (lambda: dpas.aggregate("median", G, 1, pre=["median"]), ValueError, "median, which is not a pre-aggregation"),
    "pre_a_string": (lambda: dpas.aggregate("median", G, 1, pre="nnm"), TypeError, "pre must be a list"),
    "pre_parameter_unknown": (lambda: dpas.aggregate("median", G, 1, pre=[("clipping", {"s": 2})]), TypeError, "pre[0] (clipping) got an unexpected parameter 's'"),
    "pre_c_zero": (lambda: dpas.aggregate("median", G, 1, pre=[("clipping", {"c": 0.0})]), ValueError, "c must be finite and > 0, got 0.0"),
    "pre_s_zero": (lambda: dpas.aggregate("median", G, 1, pre=[("bucketing", {"s": 0})]), ValueError, "s must be >= 1, got 0"),
    "pre_as_rule": (lambda: dpas.aggregate("arc", G, 1), ValueError, "arc is a pre-aggregation, not a rule"),
    "bucketing_leaves_too_few": (lambda: dpas.aggregate("median", G, 2, pre=[("bucketing", {"s": 4})]), ValueError, "median (standard) needs n > 2f, got n = 3 and f = 2"),
    "select_after_bucketing": (lambda: dpas.select("krum", G, 1, pre=[("bucketing", {"s": 1})]), ValueError, "krum selected buckets, not gradients"),
    "preaggregate_parameters_with_list": (lambda: dpas.preaggregate(["clipping"], G, c=1.0), TypeError, "parameters go with one pre-aggregation named by a str"),
    # gradients that would need a copy
    "grads_float16_mixed": (lambda: dpas.aggregate("median", [G[0].astype(np.float16), G[1]], 0), TypeError, "the rows of grads must share one dtype, got 2: float16 (grads[0] first), float32 (grads[1] first)"),
    "grads_int64": (lambda: dpas.aggregate("median", G.astype(np.int64), 1), TypeError, "grads must be float32 or float64, got int64"),
    "grads_big_endian": (lambda: dpas.aggregate("median", G.astype(">f4"), 1), TypeError, "not this machine's"),
    "grads_transposed": (lambda: dpas.aggregate("median", G.T, 1), TypeError, "the rows of grads are not contiguous"),
    "grads_column_slice": (lambda: dpas.aggregate("median", G[:, ::2], 1), TypeError, "the rows of grads are not contiguous"),
    "grads_unaligned": (lambda: dpas.aggregate("mean", UNALIGNED), TypeError, "grads is not aligned to its 4-byte elements"),
    "grads_one_dimension": (lambda: dpas.aggregate("median", G[0], 0), TypeError, "grads must be 2-D"),
    "grads_none": (lambda: dpas.aggregate("median", None, 0), TypeError, "grads must be a 2-D float32 or float64 array"),
    "grads_list_of_lists": (lambda: dpas.aggregate("median", [[1.0, 2.0], [3.0, 4.0]], 0), TypeError, "grads[0] is a list"),
    "grads_list_mixed_dtypes": (lambda: dpas.aggregate("median", [G[0], H[1]], 0), TypeError, "the rows of grads must share one dtype, got 2: float32 (grads[0] first), float64 (grads[1] first)"),
    "grads_list_ragged": (lambda: dpas.aggregate("median", [G[0], G[1][:5]], 0), ValueError, "grads[1] has 5 coordinates and grads[0] has 12"),
    "grads_list_strided_row": (lambda: dpas.aggregate("median", [G[0][::2], G[1][::2]], 0), TypeError, "the coordinates of grads[0] are not contiguous"),
    "grads_empty_list": (lambda: dpas.aggregate("median", [], 0), ValueError, "grads must hold at least one gradient, got an empty list"),
    "grads_no_rows": (lambda: dpas.aggregate("median", G[:0], 0), ValueError, "grads must hold at least one gradient, got shape (0, 12)"),
    # non-finite rows at every n (issue 21: brute and ByzFL's Krum returned NaN at n = 1)
    "nan_row_n1_brute": (lambda: dpas.aggregate("brute", NAN1, 0), ValueError, "1 gradient has a NaN or Inf coordinate (row 0)"),
    "nan_row_n1_krum_byzfl": (lambda: dpas.aggregate("krum", NAN1, 0, convention="byzfl"), ValueError, "1 gradient has a NaN or Inf coordinate (row 0)"),
    "nan_row_n1_multi_krum_byzfl": (lambda: dpas.aggregate("multi_krum", NAN1, 0, convention="byzfl"), ValueError, "1 gradient has a NaN or Inf coordinate (row 0)"),
    "nan_row_n1_smea": (lambda: dpas.aggregate("smea", NAN1, 0), ValueError, "1 gradient has a NaN or Inf coordinate (row 0)"),
    "nan_row_n1_caf": (lambda: dpas.aggregate("caf", NAN1, 0), ValueError, "1 gradient has a NaN or Inf coordinate (row 0)"),
    "nan_row_n1_monna": (lambda: dpas.aggregate("monna", NAN1, 0), ValueError, "1 gradient has a NaN or Inf coordinate (row 0)"),
    "nan_row_n1_nnm": (lambda: dpas.preaggregate("nnm", NAN1, 0), ValueError, "1 gradient has a NaN or Inf coordinate (row 0)"),
    "nan_row_n1_geometric_median": (lambda: dpas.aggregate("geometric_median", NAN1.astype(np.float64), 0), ValueError, "1 gradient has a NaN or Inf coordinate (row 0)"),
    # the rules' own arguments
    "monna_idx_beyond_n": (lambda: dpas.aggregate("monna", G, 1, idx=9), ValueError, "monna's idx must be below n = 9, got 9"),
    "smea_too_many_subsets": (lambda: dpas.aggregate("smea", np.zeros((40, 2), np.float32), 19), ValueError, "smea would examine C(40, 19) subsets"),
    "start_wrong_length": (lambda: dpas.aggregate("geometric_median", G, 1, start=np.zeros(3)), ValueError, "start must hold d = 12 values"),
    "start_not_finite": (lambda: dpas.aggregate("centered_clipping", G, 1, start=np.full(12, np.nan)), ValueError, "start must be finite"),
    "workspace_not_one": (lambda: dpas.aggregate("median", G, 1, workspace="mine"), TypeError, "workspace must be a dpas.Workspace"),
    "select_not_selecting": (lambda: dpas.select("median", G, 1), ValueError, "median selects no gradients"),
    "rule_with_nul": (lambda: dpas.aggregate("median\x00krum", G, 1), ValueError, "rule must not contain a NUL"),
    "convention_unknown": (lambda: dpas.aggregate("krum", G, 1, convention="garfield"), ValueError, "unknown convention \"garfield\""),
    # attacks
    "attack_f_float": (lambda: dpas.attack("ipm", H, 1.0), TypeError, "f must be an int, got float"),
    "attack_parameter_unknown": (lambda: dpas.attack("alie", H, 1, epsilon=2), TypeError, "unexpected parameter 'epsilon'; its parameter is 'z'"),
    "attack_evals_float": (lambda: dpas.attack("optimal_ipm", H, 1, evals=2.0), TypeError, "evals must be an int, got float"),
    "attack_ratio_out_of_range": (lambda: dpas.attack("optimal_alie", H, 1, ratio=1.0), ValueError, "ratio must lie strictly between 0.5 and 1, got 1"),
    "attack_seed_not_gaussian": (lambda: dpas.attack("ipm", H, 1, seed=3), TypeError, "attack 'ipm' takes no seed"),
    "attack_rule_not_optimal": (lambda: dpas.attack("ipm", H, 1, rule="median"), TypeError, "attack 'ipm' takes no rule"),
    "attack_mimic_beyond_honest": (lambda: dpas.attack("mimic", H, 1, epsilon=3), ValueError, "mimic's epsilon must be a whole number below the 3 honest gradients, got 3"),
    "attack_rule_cannot_take_it": (lambda: dpas.attack("optimal_ipm", H, 1, rule="krum", rule_options={"f": 1}), ValueError, "optimal_ipm against krum (blanchard): 3 honest and 1 Byzantine gradients with f = 1, but it needs n >= 2f + 3"),
    "attack_sigma_negative": (lambda: dpas.attack("gaussian", H, 1, sigma=-1.0), ValueError, "gaussian's sigma must be >= 0"),
    # dpas.byzfl
    "byzfl_f_float": (lambda: byzfl.TrMean(f=1.0), TypeError, "f must be an int, got float"),
    "byzfl_T_float": (lambda: byzfl.GeometricMedian(T=3.0), TypeError, "T must be an int, got float"),
    "byzfl_clipping_zero": (lambda: byzfl.Clipping(0.0), ValueError, "c must be > 0"),
    "byzfl_bucketing_zero": (lambda: byzfl.Bucketing(0), ValueError, "s must be >= 1, got 0"),
    "byzfl_unknown_keyword": (lambda: byzfl.Krum(1, gamma=2), TypeError, "unexpected keyword argument 'gamma'"),
    "byzfl_attack_unknown_keyword": (lambda: byzfl.SignFlipping(scale=2), TypeError, "SignFlipping() got an unexpected keyword argument 'scale'"),
    "byzfl_ipm_unknown_keyword": (lambda: byzfl.InnerProductManipulation(epsilon=2), TypeError, "InnerProductManipulation() got an unexpected keyword argument 'epsilon'"),
    "byzfl_optimal_agg": (lambda: byzfl.Optimal_InnerProductManipulation(agg=len), TypeError, "agg must be a dpas.byzfl aggregator"),
    "byzfl_krum_condition": (lambda: byzfl.Krum(2)(H), ValueError, "krum (byzfl) needs 2f < n, got n = 3 and f = 2"),
}


def run(name):
    call, exc, text = CASES[name]
    try:
        call()
    except exc as e:
        if text not in str(e):
            return f"{name}: {type(e).__name__} without {text!r}: {e}"
        return None
    except Exception as e:  # noqa: BLE001 (the wrong class is the finding)
        return f"{name}: {type(e).__name__}, expected {exc.__name__}: {e}"
    return f"{name}: no error, expected {exc.__name__} with {text!r}"


def main():
    args = sys.argv[1:]
    if args == ["list"]:
        print(";".join(CASES))
        return 0
    names = args or list(CASES)
    problems = [p for p in (run(n) for n in names) if p]
    for p in problems:
        print(p)
    print(f"{len(names) - len(problems)} of {len(names)} bad calls refused as they should be")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
