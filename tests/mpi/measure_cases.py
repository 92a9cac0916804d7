# SPDX-License-Identifier: Apache-2.0
"""MPI tests of dpas-measure: real collectives on N ranks over TCP on loopback. The expected
bytes per rank are written here from the schedules' formulas (s = gradient bytes):
  allreduce and sharded 2(N-1)/N s, allgather (N-1) s, sharded_distance 2(N-1)/N s + 8(N-1)^2;
the kernel's count of bytes written must be within 0.5% of them, every rank must hold the same
aggregate, and it must equal the single-process kernel's.

Usage: python3 measure_cases.py MPIEXEC DPAS_MEASURE CASE   (CASE 'list' prints the names)"""
import json
import os
import subprocess
import sys
import tempfile

from deadline import Deadline, ctest_timeout
from deadline import run as run_under

D = 1 << 20  # coordinates: divisible by 2, 4 and 8, so shards are equal
S = 4 * D    # fp32 gradient bytes


def expected(schedule, n, rule=None):
    if schedule in ("allreduce", "sharded"):
        return 2 * (n - 1) * S // n
    if schedule == "allgather":
        return (n - 1) * S
    if schedule == "sharded_distance" and rule == "centered_clipping":
        # an AllReduce of the n partial norms (8 B each) per iteration, 10 iterations
        return 2 * (n - 1) * S // n + 2 * (n - 1) * 8 * 10
    if schedule == "sharded_distance":
        return 2 * (n - 1) * S // n + 8 * (n - 1) ** 2
    raise ValueError(schedule)


CASES = {}
for n in (2, 4, 8):
    for sched, rule in (("allreduce", "mean"), ("allgather", "median"), ("sharded", "median")):
        CASES[f"np{n}_{sched}_{rule}"] = (n, ["--schedule", sched, "--rule", rule], "bytes")
for n in (4, 8):
    CASES[f"np{n}_sharded_distance_krum"] = (n, ["--schedule", "sharded_distance", "--rule", "krum"], "bytes")
    CASES[f"np{n}_sharded_trimmed_mean"] = (n, ["--schedule", "sharded", "--rule", "trimmed_mean"], "bytes")
CASES["np8_sharded_distance_bulyan"] = (8, ["--schedule", "sharded_distance", "--rule", "bulyan", "--f", "1"], "bytes")
CASES["np8_allgather_multi_krum_bf16"] = (8, ["--schedule", "allgather", "--rule", "multi_krum", "--grad", "bf16"], "bf16")
CASES["np8_byzantine_scaled"] = (8, ["--schedule", "sharded", "--rule", "median", "--byzantine", "3",
                                     "--attack", "scaled"], "byzantine")
CASES["np2_krum_infeasible"] = (2, ["--schedule", "sharded_distance", "--rule", "krum"], "error")

# Non-finite gradients from Byzantine ranks (issue 21): every schedule applies the kernels' policy
# to the whole gradients, as the single-process kernel does. "--attack inf" makes every coordinate
# +-Inf; "--attack nan" only the last one, which on the sharded schedules only the last rank holds.
# Within f: the non-finite gradients are left out, the aggregate is finite and verified against
# the single-process kernel (which leaves them out itself), every rank holds the same. Beyond f:
# every rank stops in the same step with the kernel's own error, exit 1, nothing on stdout, no
# rank left waiting in a collective (the run's timeout would fail the case).
NONFINITE_OK = {
    "np4_allreduce_sign_majority_nan": (4, ["--schedule", "allreduce", "--rule", "sign_majority"], 1, "nan"),
    "np4_allgather_median_inf": (4, ["--schedule", "allgather", "--rule", "median"], 1, "inf"),
    "np4_sharded_median_nan": (4, ["--schedule", "sharded", "--rule", "median"], 1, "nan"),
    "np8_sharded_trimmed_mean_nan": (8, ["--schedule", "sharded", "--rule", "trimmed_mean", "--f", "3"], 2, "nan"),
    "np4_sharded_distance_centered_clipping_inf": (4, ["--schedule", "sharded_distance", "--rule", "centered_clipping"], 1, "inf"),
    "np4_sharded_distance_centered_clipping_nan": (4, ["--schedule", "sharded_distance", "--rule", "centered_clipping"], 1, "nan"),
    "np8_sharded_distance_krum_nan": (8, ["--schedule", "sharded_distance", "--rule", "krum"], 2, "nan"),
    "np8_sharded_distance_bulyan_inf": (8, ["--schedule", "sharded_distance", "--rule", "bulyan", "--f", "1"], 1, "inf"),
}
NONFINITE_ERROR = {
    "np4_allreduce_mean_inf": (4, ["--schedule", "allreduce", "--rule", "mean"], 1, "inf", "mean"),
    "np4_allgather_median_nan_over_f": (4, ["--schedule", "allgather", "--rule", "median"], 2, "nan", "median"),
    "np4_sharded_median_nan_over_f": (4, ["--schedule", "sharded", "--rule", "median"], 2, "nan", "median"),
    "np4_sharded_distance_centered_clipping_inf_over_f": (
        4, ["--schedule", "sharded_distance", "--rule", "centered_clipping"], 2, "inf", "centered_clipping"),
    "np8_sharded_distance_krum_nan_over_f": (8, ["--schedule", "sharded_distance", "--rule", "krum"], 3, "nan", "krum"),
}
for name, (n, args, byz, attack) in NONFINITE_OK.items():
    CASES["nonfinite_" + name] = (n, args + ["--byzantine", str(byz), "--attack", attack], "nonfinite")
for name, (n, args, byz, attack, rule) in NONFINITE_ERROR.items():
    CASES["nonfinite_" + name] = (n, args + ["--byzantine", str(byz), "--attack", attack], "nonfinite_error")

# Bad input: exit 1, a message naming the option, the value and the rule, nothing on stdout.
BAD = {
    "attack_scale_trailing": (["--attack-scale", "5abc"], '--attack-scale must be a finite number, got "5abc"'),
    "attack_scale_inf": (["--attack-scale", "inf"], '--attack-scale must be a finite number, got "inf"'),
    "check_bytes_trailing": (["--check-bytes", "0.5%"], '--check-bytes must be a finite number, got "0.5%"'),
    "check_bytes_negative": (["--check-bytes", "-1"], "--check-bytes must be a percentage >= 0"),
    "iters_zero": (["--iters", "0"], "--iters must be between 1 and 1000000, got 0"),
    "iters_text": (["--iters", "5x"], "--iters"),
    "warmup_huge": (["--warmup", "99999999999999999999"], "--warmup"),
    "params_and_model": (["--model", "GPT2", "--scale", "1000"], "give workload or parameters, not both"),
    "repeated_rule": (["--rule", "median", "--rule", "mean"], "rule is given twice"),
    "repeated_iters": (["--iters", "4", "--iters", "5"], "--iters is given twice"),
    "attack_without_byzantine": (["--attack", "alie"], "--attack needs --byzantine K"),
    "attack_scale_not_scaled": (["--byzantine", "1", "--attack", "alie", "--attack-scale", "3"],
                                "--attack-scale is the factor of --attack scaled"),
    "f_negative": (["--f", "-1"], "f must be >= 0, got -1"),
    "rule_unknown": (["--rule", "krumm"], 'unknown rule "krumm"'),
    "scale_without_model": (["--scale", "10"], "--scale divides a --model's parameters: give --model NAME too"),
    "format": (["-o", "yaml"], '-o must be one of text, json, csv, got "yaml"'),
    "schedule": (["--schedule", "ring"], '--schedule: unknown schedule "ring"; expected allreduce, allgather'),
    "schedule_not_run": (["--schedule", "ps"], "--schedule ps: dpas-measure runs allreduce, allgather, sharded, sharded_distance (dpas cost models the others)"),
    "sweep_order": (["--sweep", "1M..1K"], "--sweep needs 4 <= MIN <= MAX <= 2G bytes"),
    "sweep_text": (["--sweep", "1M-2M"], '--sweep must be MIN..MAX in bytes (e.g. 64K..16M), got "1M-2M"'),
    "sweep_with_rule": (["--sweep", "1K..2K", "--rule", "median"], "--sweep times all_reduce and all_gather only"),
    "network_model_alone": (["--network-model", "alpha_beta"], "--intra-calibration and --network-model need --calibration FILE"),
    "network_model_unknown": (["--network-model", "magic"], '--network-model: network model must be default, nccl, empirical, piecewise or alpha_beta, got "magic"'),
    "calibration_missing": (["--calibration", "/nonexistent/file"], "/nonexistent/file"),
    "intra_calibration_one_host": (["--calibration", "@SWEEP@", "--intra-calibration", "@SWEEP@"],
                                   "--intra-calibration: no two hosts hold the same number (> 1) of ranks"),
    "rule_list": (["--rule", "median,krum"], "--rule takes one rule here (a run aggregates with one), got 2"),
}
for name in BAD:
    CASES["bad_" + name] = (2, [], "bad")
# every JSON document of dpas says what wrote it (issue 30): the run's and the sweep's, as the
# CLI's (a consistency test: the version and schema version are the CLI's own)
CASES["np2_json_document"] = (2, [], "document")
CASES["np4_sweep_calibration_prediction"] = (4, [], "calibrated")


def budget(name):
    """What a case does on an idle machine, in seconds (issue 29: one 300 s for every case hit
    its timeout under load, and a hang took the whole of it): 15 s a rank count's run, doubled
    per doubling of ranks on a 2-core machine, three runs for the calibrated cases and a sweep
    for the bad cases that need one. The deadline scales it (tests/mpi/deadline.py)."""
    n, args, kind = CASES[name]
    base = 15 * max(1, n // 2)
    if kind == "calibrated":
        base *= 4
    if kind == "document":  # a run and a sweep
        base *= 2
    if kind == "bad" and "@SWEEP@" in BAD[name[4:]][0]:
        base *= 3
    return base


DEADLINE = None


def run(mpiexec, prog, n, args, base=True):
    cmd = [mpiexec, "--allow-run-as-root", "--oversubscribe", "--mca", "btl", "self,tcp",
           "--mca", "btl_tcp_if_include", "lo", "-np", str(n), prog]
    # the defaults of a run, each left out when the case gives it (an option given twice is refused)
    defaults = [("--iters", "3"), ("--warmup", "1")]
    defaults += [("--params", str(D)), ("-o", "json")] if base else []
    for opt, value in defaults:
        if opt not in args:
            cmd += [opt, value]
    cmd += args
    env = dict(os.environ, ASAN_OPTIONS="detect_leaks=0")
    return run_under(cmd, env, DEADLINE, "dpas-measure on %d ranks" % n)


def sweep(mpiexec, prog, n, path):
    """A calibration sweep on loopback, as dpas calibrate reads it."""
    # a 128x range of sizes: on a busy machine a narrow one may not even grow with size
    p = run(mpiexec, prog, n, ["--sweep", "64K..8M"], base=False)
    assert p.returncode == 0, p.stderr
    assert p.stdout.count("# Collective test starting:") == 2 and p.stdout.count("#  Rank ") == 2 * n
    with open(path, "w") as f:
        f.write(p.stdout)


def calibrated(mpiexec, prog, n):
    """--calibration: the predicted time is the alpha-beta formula with dpas calibrate's own fit
    (written out here: ring AllReduce 2(n-1)/n s / beta + 2(n-1) alpha), plus the measured compute.
    dpas calibrate prints alpha and beta to 10 digits; 1e-4 leaves room for the sum's rounding.
    The default model (the measured curve) is run too, and must say which model answered."""
    dpas = os.path.join(os.path.dirname(prog), "dpas")
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "sweep.txt")
        sweep(mpiexec, prog, n, path)
        c = subprocess.run([dpas, "calibrate", path, "-o", "json"], capture_output=True, text=True)
        assert c.returncode == 0, (c.stdout, c.stderr)
        fit = {f["collective"]: f for f in json.loads(c.stdout)["fits"] if f["model"] == "alpha_beta"}
        assert set(fit) == {"all_reduce", "all_gather"} and fit["all_reduce"]["ranks"] == n, fit
        p = run(mpiexec, prog, n, ["--calibration", path, "--network-model", "alpha_beta"])
        d = run(mpiexec, prog, n, ["--calibration", path])  # the default model: the curve itself
    assert p.returncode == 0, p.stderr
    assert d.returncode == 0, d.stderr
    jd = json.loads(d.stdout)
    # the sweep measured these ranks on this host: the curve answers at its own scale
    assert jd["time_model"]["network_model"] in ("empirical", "nccl"), jd["time_model"]
    assert jd["time_model"]["rescaled"] is False, jd["time_model"]
    assert jd["summary"]["predicted_network_s"] > 0, jd["summary"]
    j = json.loads(p.stdout)
    assert j["time_model"]["network_model"] == "alpha_beta", j["time_model"]
    a, b = fit["all_reduce"]["alpha_s"], fit["all_reduce"]["beta_bytes_per_s"]
    net = 2 * (n - 1) / n * S / b + 2 * (n - 1) * a
    s = j["summary"]
    assert j["time_model"]["inter_host"]["collective"] == "all_reduce", j["time_model"]
    assert abs(s["predicted_network_s"] - net) <= 1e-4 * net, (s, net)
    assert abs(s["predicted_time_s"] - (net + s["compute_median_s"])) <= 1e-4 * net, s
    assert abs(s["time_ratio"] - s["time_median_s"] / s["predicted_time_s"]) <= 1e-6, s
    return 0


def bad(mpiexec, prog, name):
    args, msg = BAD[name]
    with tempfile.TemporaryDirectory() as tmp:
        if "@SWEEP@" in args:
            path = os.path.join(tmp, "sweep.txt")
            sweep(mpiexec, prog, 2, path)
            args = [path if a == "@SWEEP@" else a for a in args]
        p = run(mpiexec, prog, 2, args, base=not any(a.startswith("--sweep") for a in args))
    assert p.returncode == 1, (p.returncode, p.stdout, p.stderr)
    assert msg in p.stderr, p.stderr
    assert p.stdout == "", p.stdout
    return 0


def document(mpiexec, prog, n):
    """dpas-measure's JSON begins with dpas_version and schema_version, the CLI's own (dpas
    --version, dpas list keys -o json), for a run and for a sweep (its rows under "rows")."""
    dpas = os.path.join(os.path.dirname(prog), "dpas")
    version = subprocess.run([dpas, "--version"], capture_output=True, text=True).stdout.split()[-1]
    schema = json.loads(subprocess.run([dpas, "list", "keys", "-o", "json"], capture_output=True,
                                       text=True).stdout)["schema_version"]
    for args, base in ((["--schedule", "allreduce"], True), (["--sweep", "64K..128K", "-o", "json"], False)):
        p = run(mpiexec, prog, n, args, base=base)
        assert p.returncode == 0, (p.returncode, p.stdout, p.stderr)
        j = json.loads(p.stdout)
        keys = list(j)
        assert keys[:2] == ["dpas_version", "schema_version"], keys
        assert j["dpas_version"] == version and j["schema_version"] == schema, (j["dpas_version"], j["schema_version"])
        assert ("per_rank" in j) if base else (len(j["rows"]) >= 2 * 2), keys
    return 0


def main():
    global DEADLINE
    if sys.argv[3] == "list":
        print(";".join(CASES))
        return 0
    if sys.argv[3] == "timeouts":  # CTest's backstop per case: SCALE SANITIZE
        print(";".join("%s:%d" % (c, ctest_timeout(budget(c), float(sys.argv[4]), sys.argv[5] == "1"))
                       for c in CASES))
        return 0
    n, args, kind = CASES[sys.argv[3]]
    DEADLINE = Deadline(budget(sys.argv[3]))
    if kind == "bad":
        return bad(sys.argv[1], sys.argv[2], sys.argv[3][4:])
    if kind == "calibrated":
        return calibrated(sys.argv[1], sys.argv[2], n)
    if kind == "document":
        return document(sys.argv[1], sys.argv[2], n)
    p = run(sys.argv[1], sys.argv[2], n, args)
    if kind == "error":
        assert p.returncode == 1, (p.returncode, p.stdout, p.stderr)
        assert "krum (blanchard) needs n >= 2f + 3" in p.stderr, p.stderr
        assert p.stdout == "", p.stdout
        return 0
    if kind == "nonfinite_error":
        byz = int(args[args.index("--byzantine") + 1])
        rule = NONFINITE_ERROR[sys.argv[3][len("nonfinite_"):]][4]
        # the kernels' own sentence, once (rank 0 speaks for all): the rows are the last ranks
        rows = ", ".join(str(r) for r in range(n - byz, n))
        want = (f"{byz} gradients have a NaN or Inf coordinate (rows {rows})" if byz > 1 else
                f"1 gradient has a NaN or Inf coordinate (row {rows})")
        assert p.returncode == 1, (p.returncode, p.stdout, p.stderr)
        assert p.stderr.count("dpas-measure: error: ") == 1, p.stderr
        assert want in p.stderr and f"given to {rule}" in p.stderr, (want, p.stderr)
        assert p.stdout == "", p.stdout
        return 0
    if p.returncode != 0:
        print(f"exit {p.returncode}\nstdout:\n{p.stdout}\nstderr:\n{p.stderr}")
        return 1
    j = json.loads(p.stdout)
    sched = args[1]
    assert j["ranks"] == n and len(j["per_rank"]) == n
    assert j["transport_visible"] is True
    assert j["consistent"] is True, j
    assert j["verified"] is True, j
    if kind == "bf16":
        want = (n - 1) * 2 * D  # 2-byte elements on the wire
    else:
        want = expected(sched, n, args[args.index("--rule") + 1] if "--rule" in args else None)
    for r in j["per_rank"]:
        assert r["predicted_bytes"] == want, (r, want)
        ratio = r["measured_bytes"] / want
        assert abs(ratio - 1) <= 0.005, f"rank {r['rank']}: measured {r['measured_bytes']} vs {want}"
    if kind == "nonfinite":
        # left out, not averaged in: the rule's aggregate is a finite distance from the honest mean
        # (the plain mean of the gradients, Inf and NaN among them, is no number: null)
        assert j["max_abs_diff"] is not None, j
        dist = j["distance_from_honest_mean"]
        assert dist["mean"] is None and dist["rule"] is not None, dist
        if "sign_majority" not in args:  # a vote's signs are not near the mean's values
            assert dist["rule"] < 1, dist
    if kind == "byzantine":
        dist = j["distance_from_honest_mean"]
        # 3 of 8 ranks send 100x their gradient: the mean is dragged ~37x the honest norm away,
        # the median stays within the honest noise
        assert dist["mean"] > 10 and dist["rule"] < 0.5, dist
    return 0


if __name__ == "__main__":
    sys.exit(main())
