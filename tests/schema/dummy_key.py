#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Adding a key is one entry in the key table (issue 30): a build with -DDPAS_TEST_KEY=ON adds
one test-only entry to src/lib/request/keys.c (dummy_test_key: an integer 3..9, default 5,
taken by cost, over HTTP, in Python and by dpas-measure) and nothing else; this test finds it,
with its type, bounds and default, in the CLI's help, in dpas list keys, in the OpenAPI document,
in Python's signature and help() and, where MPI is built, in dpas-measure's options and help;
and finds it in none of them in the normal build.

usage: dummy_key.py SOURCE_DIR NORMAL_DPAS NORMAL_LIBDPAS TEST_BUILD_DIR
(the test build is configured and built here, through the compiler cache when one is set)"""
import json
import os
import shutil
import subprocess
import sys

SRC, NORMAL_DPAS, NORMAL_LIB, BUILD = sys.argv[1:5]
sys.path.insert(0, os.path.join(SRC, "tests", "serve"))
from serve_util import Server  # noqa: E402

failures = []


def check(ok, what):
    print(("ok   " if ok else "FAIL ") + what)
    if not ok:
        failures.append(what)


# dpas-measure where the normal build has it (MPI found): the test build builds it too
NORMAL_MEASURE = os.path.join(os.path.dirname(NORMAL_DPAS), "dpas-measure")
MEASURE = os.path.exists(NORMAL_MEASURE)


def build():
    """Configure and build the test build's CLI and library (ccache makes a rerun quick)."""
    args = ["cmake", "-S", SRC, "-B", BUILD, "-G", "Ninja", "-DDPAS_TEST_KEY=ON",
            "-DDPAS_TESTS=OFF", "-DDPAS_BENCH=OFF", "-DDPAS_MEASURE=%s" % ("ON" if MEASURE else "OFF"),
            "-DCMAKE_BUILD_TYPE=RelWithDebInfo"]
    if shutil.which("ccache") and os.environ.get("CCACHE_DIR"):
        args.append("-DCMAKE_C_COMPILER_LAUNCHER=ccache")
    subprocess.run(args, check=True, stdout=subprocess.DEVNULL)
    targets = ["dpas_cli", "libdpas.so"] + (["dpas_measure"] if MEASURE else [])
    subprocess.run(["cmake", "--build", BUILD, "-j2", "--target"] + targets, check=True,
                   stdout=subprocess.DEVNULL)
    lib = os.path.join(BUILD, "libdpas.so")
    return os.path.join(BUILD, "dpas"), os.path.realpath(lib)


def measure_help(prog):
    """dpas-measure --help (one process: MPI's singleton)."""
    env = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1")
    return subprocess.run([prog, "--help"], capture_output=True, text=True, env=env,
                          timeout=120).stdout


def cli_help(dpas):
    return subprocess.run([dpas, "cost", "--help"], capture_output=True, text=True).stdout


def list_keys(dpas):
    out = subprocess.run([dpas, "list", "keys", "-o", "json"], capture_output=True,
                         text=True).stdout
    rows = json.loads(out)
    rows = rows["rows"] if isinstance(rows, dict) else rows  # a wrapped list, or a bare one
    return {row["key"]: row for row in rows}


def openapi_param(dpas):
    with Server(dpas) as srv:
        status, _, doc = srv.get_json("/api/v1/openapi.json")
    assert status == 200, status
    params = doc["paths"]["/api/v1/cost"]["get"]["parameters"]
    return next((p for p in params if p["name"] == "dummy_test_key"), None)


def python(lib):
    code = ("import dpas, inspect, pydoc; p = inspect.signature(dpas.cost).parameters; "
            "print('dummy_test_key' in p); "
            "print('dummy_test_key (integer 3..9, default 5): a key of the test build only' in "
            "pydoc.render_doc(dpas.cost, renderer=pydoc.plaintext)); "
            "print('dummy_test_key' in inspect.signature(dpas.memory).parameters)")
    env = dict(os.environ, DPAS_LIBRARY=lib, PYTHONPATH=os.path.join(SRC, "python"))
    out = subprocess.run(["/usr/bin/python3", "-c", code], capture_output=True, text=True,
                         env=env)
    assert out.returncode == 0, out.stderr
    return out.stdout.split()


dpas, lib = build()

# ---- the test build: the key is in every front end, as its one entry says ----
h = cli_help(dpas)
check("--dummy-test-key N" in h and "dummy_test_key: a key of the test build only" in h,
      "dpas cost --help lists --dummy-test-key N with its help")
check("dummy-test-key" not in subprocess.run([dpas, "memory", "--help"], capture_output=True,
                                             text=True).stdout,
      "dpas memory --help does not (memory does not take it)")
row = list_keys(dpas).get("dummy_test_key", {})
check(row.get("type") == "integer" and row.get("bounds") == "3..9" and
      row.get("default") == "5" and row.get("analyses") == "cost",
      "dpas list keys shows its type, bounds, default and analyses: %r" % row)
p = openapi_param(dpas)
check(p is not None and p["schema"] == {"type": "integer", "minimum": 3, "maximum": 9,
                                        "default": 5}
      and p.get("x-dpas-type") == "integer"
      and p["description"].startswith("a key of the test build only"),
      "OpenAPI's GET /api/v1/cost has the parameter with its schema: %r" % p)
check(python(lib) == ["True", "True", "False"],
      "Python's dpas.cost signature and help() have it; dpas.memory's does not")
if MEASURE:
    mh = measure_help(os.path.join(BUILD, "dpas-measure"))
    check("--dummy-test-key N" in mh and "dummy_test_key: a key of the test build only" in mh,
          "dpas-measure --help lists --dummy-test-key N with its help")
    check("dummy" not in measure_help(NORMAL_MEASURE), "the normal build's dpas-measure has no dummy key")
else:
    print("skip dpas-measure: the normal build has none (no MPI)")

# ---- the normal build: no trace of it ----
check("dummy" not in cli_help(NORMAL_DPAS), "the normal build's dpas cost --help has no dummy key")
check("dummy_test_key" not in list_keys(NORMAL_DPAS), "nor its dpas list keys")
check(openapi_param(NORMAL_DPAS) is None, "nor its OpenAPI document")
check(python(NORMAL_LIB)[0] == "False", "nor Python's signature")

sys.exit(1 if failures else 0)
