# SPDX-License-Identifier: Apache-2.0
"""dpas calibrate on the seven real nccl-tests logs of tests/data/nccl-real, as they are: each is
read (collective and rank count as read by hand from the logs and their README), or refused with
a one-line message naming the option that reads it (07: its columns fit all_gather and alltoall
alike), and then read with that option; the JSON has
the issue's schema and is valid (no NaN or Infinity: null where undefined), --predict gives every
model's time, -v names the first skipped line, --plot writes an SVG with each model, and the
single-size log says why it cannot be fitted while reporting what it can.

Usage: python3 calibrate_real.py DPAS DATA_DIR"""
import json
import os
import subprocess
import sys
import tempfile

# file, collective, ranks, peak busbw (GB/s, the largest out-of-place busbw printed), sizes,
# and the options the file needs: 07 has no name and no data check (#wrong N/A), so its columns
# fit all_gather and alltoall alike and it needs --collective
LOGS = [
    ("01_ztan_h100_16ranks_all_reduce.txt", "all_reduce", 16, 338.82, 31),
    ("02_oci_a100_16ranks_all_reduce_kubectl.txt", "all_reduce", 16, 237.94, 31),
    ("03_aws_p4de_2nodes_all_reduce_srun_label.txt", "all_reduce", 16, 78.33, 29),
    ("04_aws_p5_2nodes_all_reduce_srun_label.txt", "all_reduce", 16, 487.09, 32),
    ("05_aws_batch_p5_all_reduce_mpi_tag_output.txt", "all_reduce", 8, 483.05, 32),
    ("06_gb10_2ranks_all_gather_one_size.txt", "all_gather", 2, 22.94, 1),
    ("07_dstack_a3mega_2nodes_all_gather_no_hash.txt", "all_gather", 16, 188.54, 11,
     ("--collective", "all_gather")),
]
FIT_KEYS = {"collective", "ranks", "model", "alpha_s", "beta_bytes_per_s", "max_rel_residual"}
REGIME_KEYS = {"from_bytes", "to_bytes", "alpha_s", "beta_bytes_per_s"}
PREDICTION_KEYS = {"collective", "bytes", "alpha_beta_s", "piecewise_s", "empirical_s"}


def no_constants(name):
    raise ValueError(f"JSON holds {name}")


def run(dpas, *args):
    return subprocess.run([dpas, "calibrate", *args], capture_output=True, text=True)


def check_log(dpas, data, name, coll, ranks, peak, sizes, given=()):
    path = os.path.join(data, name)
    if given:
        # as it is: refused, the one-line message naming the fix
        r = run(dpas, path)
        assert r.returncode == 1 and r.stdout == "", r
        # the library names the key (collective all_gather), the CLI its flag
        key = given[0].lstrip("-") + " " + " ".join(given[1:])
        assert r.stderr.count("\n") == 1 and f"give {key}" in r.stderr, r.stderr
        assert f"(choose with {given[0]} " in r.stderr, r.stderr
        path = [path, *given]
    else:
        path = [path]
    if sizes == 1:
        # one size: a size it did not measure is refused, naming the size and why (issue 29)
        r = run(dpas, *path, "--predict", "64KiB,16MiB,1GiB")
        assert r.returncode == 1 and r.stdout == "", r
        assert "cannot predict all_gather on 2 ranks at 65536 B: no model can answer (all_gather " \
               "on 2 ranks: only 17179869184 B was measured" in r.stderr, r.stderr
    p = run(dpas, *path, "-o", "json", "--predict", "16GiB" if sizes == 1 else "64KiB,16MiB,1GiB")
    assert p.returncode == 0, (name, p.stdout, p.stderr)
    assert p.stderr == "", (name, p.stderr)  # in JSON mode the notes are in the payload
    j = json.loads(p.stdout, parse_constant=no_constants)
    assert list(j) == ["dpas_version", "schema_version", "files", "tests", "fits", "nccl_models", "predictions", "notes",
                       "warnings"], list(j)
    (test,) = j["tests"]
    assert (test["collective"], test["ranks"], test["sizes"]) == (coll, ranks, sizes), test
    assert abs(test["peak_busbw_bytes_per_s"] - peak * 1e9) < 1, test
    assert [f["model"] for f in j["fits"]] == ["alpha_beta", "piecewise", "empirical", "nccl"], j["fits"]
    for f in j["fits"]:
        assert FIT_KEYS <= set(f), (name, f.keys())
        assert (f["collective"], f["ranks"]) == (coll, ranks), f
    pw = j["fits"][1]
    assert "regimes" in pw, pw
    for g in pw["regimes"]:
        assert REGIME_KEYS <= set(g), g
    assert len(j["predictions"]) == (1 if sizes == 1 else 3), j["predictions"]
    for q, b in zip(j["predictions"], (17179869184,) if sizes == 1 else (65536, 16777216, 1073741824)):
        assert PREDICTION_KEYS <= set(q) and q["bytes"] == b and q["collective"] == coll, q
    if sizes == 1:
        # one size: the lines cannot be fitted, and the fit says why; the measurement remains
        for f in j["fits"][:2]:
            assert f["alpha_s"] is None and f["beta_bytes_per_s"] is None, f
            assert "1 distinct size (17179869184 B); a fit needs at least 2" in f["error"], f
        (q,) = j["predictions"]  # the measured size: the measurement itself, every fit undefined
        assert q["time_basis"] == "measured" and q["empirical_s"] == q["time_s"] == 0.374425, q  # the file: 374425 us
        assert q["alpha_beta_s"] is None and q["piecewise_s"] is None and q["nccl_s"] is None, q
        assert j["nccl_models"][0]["defined"] is False, j["nccl_models"]
        assert any("a fit needs at least 2" in w for w in j["warnings"]), j["warnings"]
    else:
        for f in j["fits"][:2]:
            assert f["alpha_s"] >= 0 and f["beta_bytes_per_s"] > 0, f
        for q in j["predictions"]:
            if q["bytes"] >= test["min_bytes"]:
                assert q["empirical_s"] > 0 and q["piecewise_s"] > 0 and q["alpha_beta_s"] > 0, q
            # every answer says its basis, and its band holds it
            assert q["time_basis"] in ("measured", "interpolated", "extrapolated_size"), q
            assert q["time_band_low_s"] <= q["time_s"] <= q["time_band_high_s"], q
    # text: the payload on stdout, a note on stderr when the collective or ranks were inferred
    t = run(dpas, *path)
    assert t.returncode == 0 and t.stdout.startswith("file "), t
    assert f"{coll} on {ranks} ranks" in t.stdout, t.stdout
    if test["collective_from"] == "busbw_algbw" or test["ranks_from"] == "busbw_algbw":
        assert "note: " in t.stderr and "from busbw/algbw" in t.stderr, t.stderr
    # -v names the first foreign line, whole
    v = run(dpas, *path, "-v", "-o", "csv")
    assert v.returncode == 0, v
    assert "lines skipped (not nccl-tests output); the first, line 1: \"# source: https://github.com/" in v.stderr, v.stderr
    first = open(path[0], encoding="utf-8").readline().rstrip("\n")
    assert first.replace("\\", "\\\\").replace('"', '\\"') in v.stderr, (first, v.stderr)
    assert v.stdout.startswith("collective,ranks,ranks_per_node,model,regime,from_bytes,to_bytes,alpha_s,"), v.stdout
    m = run(dpas, *path, "-o", "markdown")
    assert m.returncode == 0 and "| model |" in m.stdout, m.stdout


def check_plot(dpas, data):
    with tempfile.TemporaryDirectory() as d:
        out = os.path.join(d, "p.svg")
        p = run(dpas, os.path.join(data, LOGS[0][0]), "--plot", out)
        assert p.returncode == 0, p
        svg = open(out, encoding="utf-8").read()
        assert svg.startswith("<?xml") or svg.startswith("<svg"), svg[:80]
        for name in ("measured", "alpha-beta", "piecewise", "empirical", "nccl"):
            assert f">{name}<" in svg, name
        # the same input gives the same bytes
        out2 = os.path.join(d, "q.svg")
        run(dpas, os.path.join(data, LOGS[0][0]), "--plot", out2)
        assert open(out2, encoding="utf-8").read() == svg


def check_selection(dpas, data):
    # two logs in one file: two tests, each fitted; --collective chooses one
    with tempfile.TemporaryDirectory() as d:
        both = os.path.join(d, "both.txt")
        with open(both, "w", encoding="utf-8") as f:
            for name in (LOGS[0][0], LOGS[5][0]):
                f.write(open(os.path.join(data, name), encoding="utf-8").read())
        p = run(dpas, both, "-o", "json")
        assert p.returncode == 0, p
        j = json.loads(p.stdout, parse_constant=no_constants)
        assert [(t["collective"], t["ranks"]) for t in j["tests"]] == [("all_reduce", 16), ("all_gather", 2)]
        assert len(j["fits"]) == 8
        p = run(dpas, both, "-o", "json", "--collective", "all_gather")
        j = json.loads(p.stdout)
        assert [(t["collective"], t["ranks"]) for t in j["tests"]] == [("all_gather", 2)], j["tests"]
        assert j["files"][0]["unselected_tests"] == 1
        # with 07 (no name, no data check): --collective all_gather reads it, the all_reduce
        # table is left out; without it the all_reduce is read and the nameless table skipped
        # with its reason (a log of several tests with one unreadable test reads the others)
        with open(both, "w", encoding="utf-8") as f:
            for name in (LOGS[0][0], LOGS[6][0]):
                f.write(open(os.path.join(data, name), encoding="utf-8").read())
        p = run(dpas, both, "-o", "json", "--collective", "all_gather")
        j = json.loads(p.stdout)
        assert [(t["collective"], t["ranks"]) for t in j["tests"]] == [("all_gather", 16)], j["tests"]
        assert j["files"][0]["unselected_tests"] == 1
        p = run(dpas, both, "-o", "json")
        assert p.returncode == 0, p
        j = json.loads(p.stdout)
        assert any("fit all_gather or alltoall" in n for n in j["notes"]), j["notes"]
        assert [(t["collective"], t["ranks"]) for t in j["tests"]] == [("all_reduce", 16)], j["tests"]
        sk = j["files"][0]["skipped_tables"]
        assert len(sk) == 1 and sk[0]["reason"] == "unreadable" and "give collective all_gather" \
            in sk[0]["why"], sk
        p = run(dpas, os.path.join(data, LOGS[6][0]))  # alone: refused with the same reason
        assert p.returncode == 1 and "fit all_gather or alltoall" in p.stderr, p


def check_scaling(dpas, data):
    # a five-test file (by hand from its lines: tests named by "# Collective test starting", Rank
    # lines on hosts cnode3-002 .. cnode3-011, 8 each): all five read (alltoall and sendrecv too,
    # whose busbw/algbw, 79/80 and 1, fit their names), none skipped; nodes and ranks per node in
    # the JSON and the text
    path = os.path.join(data, "..", "nccl-scaling", "xxrjun_h100_10nodes_x8gpus_five_tests.log")
    p = run(dpas, path, "-o", "json")
    assert p.returncode == 0, p
    j = json.loads(p.stdout, parse_constant=no_constants)
    got = [(t["collective"], t["ranks"], t["nodes"], t["ranks_per_node"], t["ranks_per_node_from"], t["sizes"])
           for t in j["tests"]]
    assert got == [(c, 80, 10, 8, "rank_lines", 10)
                   for c in ("all_reduce", "all_gather", "reduce_scatter", "alltoall", "sendrecv")], got
    assert j["files"][0]["skipped_tables"] == [], j["files"][0]["skipped_tables"]
    t = run(dpas, path)
    assert t.returncode == 0, t
    assert "warning" not in t.stderr, t.stderr
    assert "test 4: alltoall on 80 ranks (10 nodes x 8, Rank lines)" in t.stdout, t.stdout
    assert ", 10 nodes x 8 ranks from the hosts of the Rank lines" in t.stdout, t.stdout
    # a failed run: refused in one line quoting its first line
    path = os.path.join(data, "..", "nccl-scaling", "polaris_nccl2.18_tuned_128nodes_512ranks_all_reduce.dat")
    r = run(dpas, path)
    assert r.returncode == 1 and r.stdout == "" and r.stderr.count("\n") == 1, r
    assert 'a run that failed prints none); 2 lines are not nccl-tests output, the first (line 1): "start failed on x3006c0s1b1n0: CXI alloc failed' in r.stderr, r.stderr


def main():
    dpas, data = sys.argv[1], sys.argv[2]
    for log in LOGS:
        check_log(dpas, data, *log)
    check_plot(dpas, data)
    check_selection(dpas, data)
    check_scaling(dpas, data)
    return 0


if __name__ == "__main__":
    sys.exit(main())
