# SPDX-License-Identifier: Apache-2.0
"""Consistency test: one request, three front ends. Each request below (an analysis and its keys,
valid and invalid, the drift cases of issue 20 among them) goes through the CLI (flags), the
HTTP API (query parameters) and the Python binding (keyword arguments), each spelling its keys as
the library's key table says (`dpas list keys -o json`); the three must give the same rows, or
the same error: its code, its field and the library's message (each front end's hint aside).

Numbers are compared exactly: JSON's as the decimals they are written as, Python's floats as the
shortest decimals that read back to them (repr), byte counts as exact fractions on both sides.

Usage: python3 requests.py DPAS LIBDPAS PYTHON_DIR"""
import json
import os
import subprocess
import sys
import urllib.parse
from decimal import Decimal
from fractions import Fraction

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "serve"))
from serve_util import Server, multipart  # noqa: E402

REF = [("scenario", "ReferenceJobAttackSurface")]
EXAMPLES = os.path.join(HERE, "..", "..", "examples", "nccl")
NCCL8 = os.path.join(EXAMPLES, "all_reduce_perf_8ranks_synthetic.txt")
NCCL16 = os.path.join(EXAMPLES, "all_reduce_16ranks_synthetic.csv")
INLINE = [("workload", "GPT3"), ("nodes", "4"), ("accelerators_per_node", "8"), ("dp_degree", "8"),
          ("gradient_bytes_per_param", "bf16"), ("checkpoint_bytes_per_param", "14B")]
FLEETS = [("workload", "GPT3"), ("fleet", "Training_1K,Research_256"), ("dp_degree", "8"),
          ("gradient_bytes_per_param", "2 B"), ("checkpoint_bytes_per_param", "14 B")]

# (name, analysis, keys); a value with commas is a list (or a sweep's axis), as the CLI writes it
REQUESTS = [
    ("eval reference", "eval", REF),
    ("eval dp override", "eval", REF + [("dp_degree", "64")]),
    ("eval inline fleet", "eval", INLINE),
    ("eval inline workload named", "eval", [("parameters", "70.6e9"), ("workload_name", "mine")]
     + INLINE[1:]),
    ("eval attr", "eval", REF + [("attr", "gradient_bytes,allreduce_factor")]),
    ("eval explain", "eval", REF + [("explain", "true")]),
    ("eval missing dp_degree", "eval", [("workload", "GPT3"), ("fleet", "Training_1K"),
                                        ("gradient_bytes_per_param", "bf16"),
                                        ("checkpoint_bytes_per_param", "14B")]),
    ("eval workload and parameters", "eval", REF + [("workload", "GPT3"), ("parameters", "7e9")]),
    ("eval dp_degree 0", "eval", REF + [("dp_degree", "0")]),
    ("eval workload_name with a registry workload (drift)", "eval",
     INLINE + [("workload_name", "ignored?")]),
    ("eval unknown attribute", "eval", REF + [("attr", "nope")]),
    ("eval width without a unit", "eval", REF + [("gradient_bytes_per_param", "2")]),
    ("eval rule (not its key)", "eval", REF + [("rule", "median")]),
    ("cost reference", "cost", REF),
    ("cost rules and schedules", "cost", REF + [("rule", "median,krum"),
                                                ("schedule", "allgather,sharded"), ("f", "40")]),
    ("cost convention alone", "cost", REF + [("convention", "byzfl")]),
    ("cost compute rate and steps", "cost", REF + [("rule", "krum"), ("compute_rate", "1e15 FLOP/s"),
                                                   ("steps", "3")]),
    ("cost compute rate without a unit", "cost", REF + [("rule", "krum"), ("compute_rate", "1e15")]),
    ("cost compute rate in bytes", "cost", REF + [("rule", "krum"), ("compute_rate", "3 TB/s")]),
    ("cost memory bandwidth with its unit", "cost", REF + [("rule", "median"), ("schedule", "allgather"),
                                                           ("memory_bandwidth", "3.35 TB/s")]),
    ("cost memory bandwidth as a count", "cost", REF + [("rule", "median"), ("memory_bandwidth", "3B")]),
    ("cost a rule twice", "cost", REF + [("rule", "median,median")]),
    ("cost a rule twice by two names", "cost", REF + [("rule", "mda,brute")]),
    ("cost unknown schedule", "cost", REF + [("schedule", "ring")]),
    ("cost unknown convention", "cost", REF + [("convention", "blanchrd")]),
    ("cost steps 0", "cost", REF + [("steps", "0")]),
    ("cost n (not its key)", "cost", REF + [("n", "4")]),
    ("cost state (not its key)", "cost", REF + [("state", "zero16")]),
    ("rules n", "rules", [("n", "64")]),
    ("rules n f all", "rules", [("n", "64"), ("f", "10"), ("convention", "all")]),
    ("rules dp_degree (not its key)", "rules", [("dp_degree", "4")]),
    ("rules n 0", "rules", [("n", "0")]),
    ("inventory reference", "inventory", REF),
    ("inventory dp_degree too large", "inventory", REF + [("dp_degree", "2048")]),
    ("memory zero 3", "memory", REF + [("zero", "3")]),
    ("memory does not fit", "memory", REF),
    ("memory zero 7", "memory", REF + [("zero", "7")]),
    ("sweep dp range", "sweep", REF + [("dp_degree", "16..1024*4"),
                                       ("schedule", "allreduce,allgather,sharded"),
                                       ("attr", "bytes_per_worker,ratio_to_allreduce")]),
    ("sweep rule and schedule", "sweep", REF + [("dp_degree", "8,16"), ("rule", "median"),
                                                ("schedule", "sharded"),
                                                ("attr", "max_f,bytes_per_worker")]),
    ("sweep two rules, points left out", "sweep", REF + [("rule", "median,krum"),
                                                         ("schedule", "sharded_distance")]),
    ("sweep varied fleet and nodes (drift)", "sweep", FLEETS + [("nodes", "4")]),
    ("sweep varied fleet and accelerators_per_node (drift)", "sweep",
     FLEETS + [("accelerators_per_node", "4")]),
    ("sweep varied fleet and node (drift)", "sweep", FLEETS + [("node", "DGX_H100")]),
    ("sweep varied fleet and fabric (drift)", "sweep", FLEETS + [("fabric", "InfiniBand_NDR")]),
    ("sweep varied workload with workload_name (drift)", "sweep",
     REF + [("workload", "GPT3,GPT2"), ("workload_name", "mine")]),
    ("sweep a value twice", "sweep", REF + [("dp_degree", "8,8")]),
    ("sweep a width twice", "sweep", REF + [("dp_degree", "8,16"),
                                            ("gradient_bytes_per_param", "2 B,16 bit")]),
    ("sweep metric needs a schedule", "sweep", REF + [("dp_degree", "8,16"),
                                                      ("attr", "bytes_per_worker")]),
    ("sweep nothing varies", "sweep", REF),
    ("sweep y (a plot's key)", "sweep", REF + [("dp_degree", "8,16"), ("y", "gradient_bytes")]),
    # calibrations (issue 19): files of one cluster read as one model (the CLI's --calibration A,B,
    # HTTP's "calibration" parts, Python's list), every time with its basis and band
    ("cost two calibration files", "cost", REF + [("rule", "median"), ("schedule", "sharded,ps"),
                                                  ("calibration", NCCL8 + "," + NCCL16)]),
    ("cost calibration, nccl model", "cost", REF + [("rule", "median"), ("schedule", "sharded"),
                                                    ("calibration", NCCL8),
                                                    ("network_model", "nccl")]),
    ("sweep two calibration files", "sweep", REF + [("dp_degree", "8,16,512"),
                                                    ("schedule", "sharded"),
                                                    ("calibration", NCCL8 + "," + NCCL16)]),
    ("cost network_model without a calibration", "cost", REF + [("network_model", "nccl")]),
    ("cost unknown network model", "cost", REF + [("calibration", NCCL8),
                                                  ("network_model", "magic")]),
]

COUNTS = {"nodes", "accelerators_per_node", "f", "n", "steps", "iterations", "zero",
          "dp_degree"}
COMMAND = {"eval": "eval", "cost": "cost", "rules": "rules", "inventory": "inventory",
           "memory": "memory", "sweep": "sweep"}


def exact(v):
    """A value in one exact form: numbers as Fractions, containers element by element."""
    if isinstance(v, bool) or v is None or isinstance(v, str):
        return v
    if isinstance(v, (int, Fraction)):
        return Fraction(v)
    if isinstance(v, Decimal):
        return Fraction(v)
    if isinstance(v, float):
        return Fraction(Decimal(repr(v)))
    if hasattr(v, "bytes") and hasattr(v, "units"):  # a Quantity
        return Fraction(v.bytes)
    if isinstance(v, dict):
        out = {}
        for k, x in v.items():
            if k.endswith("_exact") and k[:-6] in v:
                continue
            if k in ("dpas_version", "schema_version"):  # what wrote a JSON document, not the
                continue                                 # answer (Python's objects carry none)
            out[k] = Fraction(v[k + "_exact"]) if k + "_exact" in v else exact(x)
        return out
    if isinstance(v, (list, tuple)):
        return [exact(x) for x in v]
    if hasattr(v, "as_dict"):
        return exact(v.as_dict())
    return v


def from_json(text):
    return json.loads(text, parse_float=Decimal)


def rows_of(analysis, doc):
    """The rows of a JSON answer: a list is a document with its rows under "rows" (eval and
    memory answer one object)."""
    return doc if analysis in ("eval", "memory") else doc["rows"]


def answer_error(obj):
    return ("error", obj.get("code"), obj.get("field"), obj.get("detail"))


class Keys:
    def __init__(self, dpas):
        table = json.loads(subprocess.run([dpas, "list", "keys", "-o", "json"],
                                          capture_output=True, check=True).stdout)
        self.by_key = {row["key"]: row for row in table["rows"]}


def cli(dpas, keys, analysis, pairs):
    args = [COMMAND[analysis]]
    for k, v in pairs:
        flag = keys.by_key[k]["cli_flag"].split(" ")
        args += flag[:1] if len(flag) == 1 else [flag[0], v]
    p = subprocess.run([dpas] + args + ["-o", "json"], capture_output=True, timeout=120)
    obj = from_json(p.stdout)
    if p.returncode:
        return answer_error(obj)
    return ("rows", exact(rows_of(analysis, obj)))


def http(server, keys, analysis, pairs):
    q = urllib.parse.urlencode([(keys.by_key[k]["query_parameter"], v) for k, v in pairs
                                if k != "calibration"])
    files = [p for k, v in pairs if k == "calibration" for p in v.split(",")]
    if files:  # the server reads no file: the logs go as the "calibration" parts of a form
        parts = []
        for path in files:
            with open(path, "rb") as f:
                parts.append(("calibration", path, f.read()))
        body, ct = multipart(parts)
        status, _, body = server.request("POST", f"/api/v1/{analysis}?{q}", body,
                                         {"Content-Type": ct})
    else:
        status, _, body = server.request("GET", f"/api/v1/{analysis}?{q}")
    obj = from_json(body)
    if status != 200:
        return answer_error(obj)
    return ("rows", exact(rows_of(analysis, obj)))


def python_value(key, value, analysis):
    if key == "explain":
        return value == "true"
    if key in COUNTS and value.lstrip("-").isdigit():
        return int(value)
    if "," in value and (analysis == "sweep" or key in ("rule", "schedule", "attr", "calibration")):
        return value.split(",")
    return value


def python(dpas_module, keys, analysis, pairs):
    kw = {keys.by_key[k]["python_keyword"] or k: python_value(k, v, analysis) for k, v in pairs}
    try:
        if analysis == "eval":
            got = dpas_module.report(**kw)
        elif analysis == "cost":
            got = [r.as_dict() for r in dpas_module.cost(**kw)]
        elif analysis == "rules":
            got = [r.as_dict() for r in dpas_module.rules(**kw)]
        elif analysis == "inventory":
            got = [r.as_dict() for r in dpas_module.inventory(**kw)]
        elif analysis == "memory":
            got = dpas_module.memory(**kw).require().as_dict()
        else:
            got = list(dpas_module.sweep(**kw))
    except dpas_module.Error as e:
        return ("error", e.name, e.field, e.message)
    return ("rows", exact(got))


def main():
    dpas, lib, pydir = sys.argv[1:4]
    os.environ["DPAS_LIBRARY"] = lib
    sys.path.insert(0, pydir)
    import dpas as dpas_module
    keys = Keys(dpas)
    failures, kinds = 0, {"rows": 0, "error": 0}
    with Server(dpas) as server:
        for name, analysis, pairs in REQUESTS:
            a = cli(dpas, keys, analysis, pairs)
            b = http(server, keys, analysis, pairs)
            c = python(dpas_module, keys, analysis, pairs)
            kinds[a[0]] += 1
            if not (a == b == c):
                failures += 1
                print(f"FAIL {name}:\n  cli    {str(a)[:400]}\n  http   {str(b)[:400]}\n"
                      f"  python {str(c)[:400]}")
    print(f"{len(REQUESTS)} requests ({kinds['rows']} answered with rows, {kinds['error']} with an "
          f"error), through the CLI, HTTP and Python: {failures} differ")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
