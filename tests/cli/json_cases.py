# SPDX-License-Identifier: Apache-2.0
"""CLI cases checked through their JSON: run dpas, parse stdout, compare chosen fields with values
written here by hand (from the issue, the papers' bounds, or the arithmetic in the comment).

Usage: python3 json_cases.py DPAS CASE   (CASE 'list' prints the case names)"""
import json
import math
import os
import subprocess
import sys


def rows_by(j, *keys):
    """The rows of a report (or a list of rows) by the values of keys."""
    rows = j["rows"] if isinstance(j, dict) else j
    return {tuple(r[k] for k in keys): r for r in rows}


def close(a, b, rel=1e-12):
    return a is not None and math.isclose(a, b, rel_tol=rel)


def rules_n64(j, code):
    assert code == 0
    assert j["schema_version"] == 2 and j["dpas_version"]  # a list is a document
    j = j["rows"]
    f = {r["rule"]: r["max_f"] for r in j}
    # the issue: median 31, trimmed mean 31, Krum 30 (n >= 2f+3), Bulyan 15
    assert f["median"] == 31 and f["trimmed_mean"] == 31, f
    assert f["krum"] == 30 and f["bulyan"] == 15, f
    assert f["mean"] == 0 and f["multi_krum"] == 30, f
    assert len(j) == 18  # one row per rule, its default convention
    # issue 24: ByzFL's MoNNA, CAF, SMEA and ARC need 2f < n; bucketing and clipping only f < n
    assert f["monna"] == f["caf"] == f["smea"] == f["arc"] == 31, f
    assert f["bucketing"] == f["clipping"] == 63, f


def rules_f10(j, code):
    assert code == 0
    assert j["schema_version"] == 2 and j["dpas_version"]  # a list is a document
    j = j["rows"]
    n = {r["rule"]: r["min_n"] for r in j}
    assert n["median"] == 21 and n["krum"] == 23 and n["bulyan"] == 43, n
    assert n["mean"] is None  # no n makes the mean tolerate a Byzantine replica


def rules_byzfl(j, code):
    assert code == 0
    assert j["schema_version"] == 2 and j["dpas_version"]  # a list is a document
    j = j["rows"]
    f = {r["rule"]: (r["convention"], r["max_f"]) for r in j}
    assert f["krum"] == ("byzfl", 31), f  # 2f < n
    assert f["bulyan"] == ("standard", 15), f


def rules_all(j, code):
    assert code == 0
    assert j["schema_version"] == 2 and j["dpas_version"]  # a list is a document
    j = j["rows"]
    krums = [r for r in j if r["rule"] == "krum"]
    assert {r["convention"] for r in krums} == {"blanchard", "byzfl"}
    assert {r["neighbours"] for r in krums} == {"n - f - 2", "n - f - 1"}


def cost_reference(j, code):
    assert code == 0
    r = rows_by(j, "rule", "schedule")
    ar = 350e9 * 2 * 127 / 128  # 694531250000
    assert r[("mean", "allreduce")]["bytes_per_worker"] == 694531250000
    assert r[("median", "allgather")]["bytes_per_worker"] == 127 * 350 * 10**9
    assert r[("median", "allgather")]["ratio_to_allreduce"] == 64
    assert r[("median", "sharded")]["bytes_per_worker"] == 694531250000
    assert r[("median", "sharded")]["ratio_to_allreduce"] == 1
    assert r[("krum", "sharded")]["realisable"] is False
    assert r[("krum", "sharded_distance")]["bytes_per_worker"] == 694531250000 + 8 * 127**2
    assert r[("krum", "allgather")]["max_f"] == 62  # (128 - 3) // 2
    assert r[("bulyan", "allgather")]["max_f"] == 31  # (128 - 3) // 4
    # time per step: flat 2*127/128*350e9/25e9 + 254*7e-6; hierarchical (mlsysim):
    # 2*(7/8*350e9/450e9 + 7*500e-9) + (2*127/128*350e9/8/25e9 + 254*7e-6)
    flat = ar / 25e9 + 254 * 7e-6
    hier = 2 * (7 / 8 * 350e9 / 450e9 + 7 * 500e-9) + (2 * 127 / 128 * 350e9 / 8 / 25e9 + 254 * 7e-6)
    assert close(r[("mean", "allreduce")]["time_flat_s"], flat), r[("mean", "allreduce")]
    assert close(r[("mean", "allreduce")]["time_hierarchical_s"], hier)
    assert close(r[("median", "allgather")]["time_flat_s"], 127 * 350e9 / 25e9 + 127 * 7e-6)
    # one time per row: 128 replicas on 128 nodes, no node holds two: the hierarchical schedule
    # (each replica's 8 accelerators drive 8 rings) is the one that runs; an alpha-beta time has
    # no band and no basis
    for row in j["rows"]:
        if row["realisable"]:
            assert row["time_s"] == row["time_hierarchical_s"], row
            assert row["time_model"] == "alpha_beta_hierarchical", row
            assert row["time_band_low_s"] is None and row["time_basis"] is None, row
    assert j["dp_degree"] == 128 and j["gradient_bytes"] == 350 * 10**9


def cost_steps(j, code):
    assert code == 0
    r = rows_by(j, "rule", "schedule")
    assert r[("median", "sharded")]["bytes_per_worker"] == 1000 * 694531250000
    assert close(r[("median", "sharded")]["time_flat_s"], 1000 * (694531250000 / 25e9 + 254 * 7e-6))
    # --compute-rate "1e12 FLOP/s": sharded median: 2 n d / n = 2 d flops per worker = 3.5e11 / 1e12
    assert close(r[("median", "sharded")]["compute_s"], 1000 * 2 * 175e9 / 1e12)
    # ... a roofline: the bytes, 1 pass over the 128 rows of 175e9/128 bf16 coordinates a worker
    # holds = 350e9 B a step, take 0.104 s at the H100's 3.35e12 B/s, under the 0.35 s of flops
    assert close(r[("median", "sharded")]["compute_bytes"], 1000 * 350e9)
    assert r[("median", "sharded")]["compute_bound"] == "compute"
    assert r[("median", "sharded")]["tolerates"] is True  # f = 63 <= 63


def cost_roofline(j, code):
    assert code == 0
    r = rows_by(j, "rule", "schedule")
    # --memory-bandwidth "3.35e12 B/s" alone: the peak is the fleet's H100's, 989e12 FLOP/s.
    # sharded median: 1 pass over 350e9 B (128 rows of 175e9/128 bf16 values) = 0.104478 s;
    # flops 2 x 175e9 = 3.5e11, 0.354 ms: memory-bound
    m = r[("median", "sharded")]
    assert close(m["compute_s"], 350e9 / 3.35e12) and m["compute_bound"] == "memory"
    # allgather Krum: 128 whole rows, 1 + 1/128 passes: 129 x 350e9 B = 13.478 s; flops
    # 3 x 128 x 127 / 2 x 175e9 = 4.2672e15, 4.315 s: memory-bound
    k = r[("krum", "allgather")]
    assert close(k["compute_bytes"], 129 * 350e9) and close(k["compute_flops"], 4.2672e15)
    assert close(k["compute_s"], 129 * 350e9 / 3.35e12) and k["compute_bound"] == "memory"


def cost_shared_nodes(j, code):
    assert code == 0
    r = rows_by(j, "rule", "schedule")
    # 1024 replicas on 128 nodes: 8 share each node. Pre-reducing inside a node would mix 8
    # replicas' gradients before a robust rule sees them, so the median's time is the flat
    # schedule's: the ring over 1024, 2 x 1023/1024 x 350e9 / 25e9 + 2 x 1023 x 7e-6
    m = r[("median", "sharded")]
    assert m["time_model"] == "alpha_beta_flat"
    assert close(m["time_s"], 2 * 1023 / 1024 * 350e9 / 25e9 + 2 * 1023 * 7e-6)
    # the mean may be pre-reduced (a sum is a sum): the hierarchical schedule, mlsysim's formula
    # 2 x (7/8 x 350e9/450e9 + 7 x 500e-9) + 2 x 127/128 x 43.75e9 / 25e9 + 254 x 7e-6
    a = r[("mean", "allreduce")]
    assert a["time_model"] == "alpha_beta_hierarchical"
    assert close(a["time_s"], 2 * (7 / 8 * 350e9 / 450e9 + 7 * 500e-9)
                 + 2 * 127 / 128 * 43.75e9 / 25e9 + 254 * 7e-6)


def inventory_reference(j, code):
    assert code == 0
    b = {r["item"]: r["bytes"] for r in j["rows"]}
    assert b["zero16"] == 175 * 10**9 * 16
    assert b["allgather_job_total"] == 128 * 127 * 350 * 10**9
    assert b["weights_int4"] == 87500000000


def memory_fails(j, code):
    assert code == 2, code
    # an RFC 9457 problem: the CLI's exit 2 is HTTP's 422
    assert j["status"] == 422 and j["title"] == "physics violation", j
    assert j["type"] == "urn:dpas:error:EPHYSICS" and j["code"] == "EPHYSICS", j
    assert "2800000000000 B" in j["detail"], j  # 175e9 x 16 B


def memory_zero3(j, code):
    assert code == 0
    assert j["fits"] is True
    assert j["state_bytes"] == 21875000000  # 16/128 x 175e9
    assert j["capacity_bytes"] == 8 * 80 * 2**30


def calibrate_example(j, code):
    assert code == 0
    (fit,) = [f for f in j["fits"] if f["model"] == "alpha_beta"]
    # examples/nccl/all_reduce_perf_8ranks_synthetic.txt was written by scripts/gen_nccl_tests.py
    # with alpha = 5 us and beta = 25e9 B/s on 8 ranks, sizes 64 B to 1 GiB doubling: 25 points
    assert (fit["collective"], fit["ranks"], fit["sizes"]) == ("all_reduce", 8, 25), fit
    assert abs(fit["alpha_s"] - 5e-6) <= 0.01 * 5e-6, fit
    assert abs(fit["beta_bytes_per_s"] - 25e9) <= 0.01 * 25e9, fit


def calibrate_predict(j, code):
    """16 MiB and 1 GiB were measured (the file's own times); 4 GiB is beyond its sizes: the nccl
    model through the 1 GiB measurement, which on data that lie on one line continues it:
    2(n-1) alpha + 2(n-1)/n size / beta = 7e-5 + 1.75 x 4294967296 / 25e9 = 0.30073769... s"""
    assert code == 0
    p = {r["bytes"]: r for r in j["predictions"]}
    assert (p[16777216]["time_basis"], p[1073741824]["time_basis"]) == ("measured", "measured"), p
    assert close(p[16777216]["time_s"], 1244.41e-6, 1e-12), p[16777216]  # the file's line
    assert close(p[1073741824]["time_s"], 75231.93e-6, 1e-12), p[1073741824]
    big = p[4294967296]
    assert big["time_basis"] == "extrapolated_size" and big["time_model"] == "nccl", big
    want = 7e-5 + 1.75 * 4294967296 / 25e9
    assert close(big["time_s"], want, 0.01), big
    assert big["time_band_low_s"] <= want <= big["time_band_high_s"], big
    # the alpha_beta and piecewise lines recover the generator's line (one regime)
    for k in ("alpha_beta_s", "piecewise_s"):
        assert close(big[k], want, 1e-3), (k, big)


EXAMPLES = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "examples", "nccl")
# A calibration file with both collectives: the two synthetic 8-rank logs one after the other.
BOTH = os.path.join(os.environ.get("TMPDIR", "/tmp"), f"dpas-json-cases-{os.getpid()}.txt")
# 8 replicas of 8388608 bf16 parameters: G = 16 MiB per replica, on one 8-accelerator node
NETWORK = ["cost", "--params", "8388608", "--grad", "2B", "--ckpt", "14B", "--nodes", "1",
           "--accelerators-per-node", "8", "--dp", "8", "--node", "DGX_H100", "--fabric",
           "InfiniBand_HDR", "--rule", "mean", "--schedule", "allreduce,allgather,ps",
           "--calibration", BOTH, "-o", "json"]


def network_default(j, code):
    assert code == 0
    assert j["network_model"] == "default", j.get("network_model")
    r = rows_by(j, "schedule")
    # empirical at measured sizes: the logs' own times, all_reduce of 16 MiB 1244.41 us and
    # all_gather of 8 x 16 MiB = 134217728 B 4732.62 us (the files' lines)
    assert close(r[("allreduce",)]["time_flat_s"], 1244.41e-6, 1e-9), r[("allreduce",)]
    assert r[("allreduce",)]["time_model"] == "empirical"
    assert close(r[("allgather",)]["time_flat_s"], 4732.62e-6, 1e-9), r[("allgather",)]
    assert r[("allgather",)]["time_extrapolated"] is False
    # a parameter server is a gather and a broadcast, which the files did not measure: timed from
    # the all_reduce's curve by bus-bandwidth equivalence, and said so
    assert r[("ps",)]["time_model"] == "empirical, transferred from all_reduce", r[("ps",)]
    assert r[("ps",)]["time_basis"] == "transferred", r[("ps",)]
    one_time(j)


def one_time(j):
    """One row, one time: each realisable row's time_s is the calibration's (time_flat_s, the
    model's answer), it names its model, and its band, when it has one, contains it (the band
    is of that same model: the library's own band of that answer, not another model's)."""
    for row in j["rows"]:
        if not row["realisable"]:
            continue
        assert row["time_s"] == row["time_flat_s"] and row["time_model"], row
        lo, hi = row["time_band_low_s"], row["time_band_high_s"]
        if lo is not None or hi is not None:
            assert lo <= row["time_s"] <= hi, row
    assert any(r["time_band_low_s"] is not None for r in j["rows"] if r["realisable"])


def network_alpha_beta(j, code):
    assert code == 0
    r = rows_by(j, "schedule")
    # the files were generated with alpha = 5 us, beta = 25 GB/s (scripts/gen_nccl_tests.py):
    # all_reduce: 2(n-1) alpha + 2(n-1)/n G / beta = 7e-5 + 1.75 x 16777216 / 2.5e10
    assert close(r[("allreduce",)]["time_flat_s"], 7e-5 + 1.75 * 16777216 / 2.5e10, 1e-3)
    # all_gather: (n-1) alpha + (n-1)/n N G / beta = 3.5e-5 + 0.875 x 134217728 / 2.5e10
    assert close(r[("allgather",)]["time_flat_s"], 3.5e-5 + 0.875 * 134217728 / 2.5e10, 1e-3)
    assert r[("allreduce",)]["time_model"] == "alpha_beta"


# The scale of a step's collective: a replica of g accelerators is g rings, one per accelerator
# (docs/calibration.md). A real log of 16 ranks on 2 nodes x 8 H100 (tests/data/nccl-real/01, its
# Rank lines name two hosts) measured all_reduce of 16777216 B in 977.6 us (line 46, out of place).
H100_16 = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "data", "nccl-real",
                       "01_ztan_h100_16ranks_all_reduce.txt")


def scale_cost(dp, nodes, params):
    return ["cost", "--params", str(params), "--grad", "2B", "--ckpt", "14B", "--nodes", str(nodes),
            "--accelerators-per-node", "8", "--dp", str(dp), "--node", "DGX_H100", "--fabric",
            "InfiniBand_HDR", "--rule", "mean", "--schedule", "allreduce", "--calibration", H100_16,
            "-o", "json"]


def replicas_of_four(j, code):
    # 4 replicas of 4 accelerators on 2 nodes of 8: 4 x 4 = 16 ranks, 8 per node, G = 16 MiB:
    # the measured scale and size, so the log's own time
    assert code == 0
    (row,) = j["rows"]
    assert row["time_basis"] == "measured", row
    assert close(row["time_flat_s"], 977.6e-6, 1e-12), row


def replicas_of_two_nodes(j, code):
    # 2 replicas spanning 2 nodes each (4 nodes of 8): 16 rings of 2 ranks, each on nodes of its
    # own, with G / 2 = 16 MiB between them: a collective of 16 MiB on 2 x 8 ranks, 8 per node,
    # again the measured one (G = 2 x 16777216 bf16 parameters = 32 MiB)
    assert code == 0
    (row,) = j["rows"]
    assert row["time_basis"] == "measured", row
    assert close(row["time_flat_s"], 977.6e-6, 1e-12), row


def node_fewer_accelerators(j, code):
    # 16 nodes of 4 with the registry's DGX_A100 (8 per node): the node is kept, its NVLink
    # (300 GB/s, 500 ns) with it, beside HDR (200 Gb/s = 25e9 B/s, 7 us). By hand, G = 8.03e9 x
    # 2 B = 16.06e9 B at N = 64, flat on HDR for median: allgather (N - 1) G / 25e9 + (N - 1) 7 us,
    # sharded 2 (N - 1)/N G / 25e9 + 2 (N - 1) 7 us.
    assert code == 0
    L = j["links"]
    assert L["node"] == "Systems.Nodes.DGX_A100" and L["intra_bandwidth"] == 300e9
    assert L["intra_latency"] == 500e-9 and L["inter_bandwidth"] == 25e9
    r = rows_by(j, "rule", "schedule")
    G, N = 16.06e9, 64
    assert close(r[("median", "allgather")]["time_s"], (N - 1) * G / 25e9 + (N - 1) * 7e-6)
    assert close(r[("median", "sharded")]["time_s"], 2 * (N - 1) / N * G / 25e9 + 2 * (N - 1) * 7e-6)


def sweep_f_without_dp(j, code):
    # no dp_degree given: each point's N is Krum's min_n(f) = 2f + 3 (Blanchard et al. 2017:
    # n > 2f + 2), and the seed's factors at that N: allreduce 2 (N - 1)/N, gather N - 1,
    # ratio N / 2; Krum at N tolerates f
    assert code == 0
    assert j["schema_version"] == 2 and j["dpas_version"]  # a list is a document
    j = j["rows"]
    assert [p["f"] for p in j] == [0, 1, 2]
    for p in j:
        N = 2 * p["f"] + 3
        assert p["dp_degree"] == N and p["max_f"] == p["f"]
        assert close(p["allreduce_factor"], 2 * (N - 1) / N) and p["gather_factor"] == N - 1
        assert close(p["gather_traffic_ratio"], N / 2)


CASES = {
    "cost_node_fewer_accelerators": (["cost", "--node", "DGX_A100", "--fabric", "InfiniBand_HDR",
                                      "--nodes", "16", "--accelerators-per-node", "4", "--model",
                                      "Llama3_8B", "--dp", "64", "--grad", "bf16", "--ckpt", "bf16",
                                      "--rule", "median", "--schedule", "allgather,sharded",
                                      "-o", "json"], node_fewer_accelerators),
    "sweep_f_without_dp": (["sweep", "--params", "1e9", "--nodes", "4", "--accelerators-per-node",
                            "8", "--grad", "bf16", "--ckpt", "14B", "--f", "0..2+1", "--rule",
                            "krum", "-o", "json"], sweep_f_without_dp),
    "cost_scale_replicas_of_four": (scale_cost(4, 2, 8388608), replicas_of_four),
    "cost_scale_replicas_of_two_nodes": (scale_cost(2, 4, 16777216), replicas_of_two_nodes),
    "cost_network_default": (NETWORK, network_default),
    "cost_network_alpha_beta": (NETWORK + ["--network-model", "alpha_beta"], network_alpha_beta),
    "rules_n64": (["rules", "--n", "64", "-o", "json"], rules_n64),
    "rules_f10": (["rules", "--f", "10", "-o", "json"], rules_f10),
    "rules_byzfl": (["rules", "--n", "64", "--convention", "byzfl", "-o", "json"], rules_byzfl),
    "rules_all": (["rules", "--convention", "all", "-o", "json"], rules_all),
    "cost_reference": (["cost", "ReferenceJobAttackSurface", "-o", "json"], cost_reference),
    "cost_steps": (["cost", "ReferenceJobAttackSurface", "--rule", "median", "--schedule", "sharded",
                    "--steps", "1000", "--compute-rate", "1e12 FLOP/s", "--f", "63", "-o", "json"], cost_steps),
    "cost_roofline": (["cost", "ReferenceJobAttackSurface", "--rule", "median,krum", "--schedule",
                       "sharded,allgather", "--memory-bandwidth", "3.35e12 B/s", "-o", "json"],
                      cost_roofline),
    "cost_shared_nodes": (["cost", "ReferenceJobAttackSurface", "--dp", "1024", "--rule", "mean,median",
                           "--schedule", "allreduce,sharded", "-o", "json"], cost_shared_nodes),
    "inventory_reference": (["inventory", "ReferenceJobAttackSurface", "-o", "json"], inventory_reference),
    "memory_fails": (["memory", "ReferenceJobAttackSurface", "-o", "json"], memory_fails),
    "memory_zero3": (["memory", "ReferenceJobAttackSurface", "--zero", "3", "-o", "json"], memory_zero3),
    "calibrate_example": (["calibrate", os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..",
                                                     "examples", "nccl", "all_reduce_perf_8ranks_synthetic.txt"),
                           "-o", "json"], calibrate_example),
    "calibrate_predict": (["calibrate", os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..",
                                                     "examples", "nccl", "all_reduce_perf_8ranks_synthetic.txt"),
                           "--predict", "16MiB,1GiB,4GiB", "-o", "json"], calibrate_predict),
}


def main():
    if sys.argv[2] == "list":
        print(";".join(CASES))
        return 0
    args, check = CASES[sys.argv[2]]
    if BOTH in args:
        with open(BOTH, "w") as f:
            for name in ("all_reduce_perf_8ranks_synthetic.txt", "all_gather_perf_8ranks_synthetic.txt"):
                f.write(open(os.path.join(EXAMPLES, name)).read())
    try:
        p = subprocess.run([sys.argv[1]] + args, capture_output=True, text=True)
    finally:
        if BOTH in args:
            os.unlink(BOTH)
    try:
        j = json.loads(p.stdout)
    except ValueError:
        print(f"stdout is not JSON (exit {p.returncode}):\n{p.stdout}\nstderr:\n{p.stderr}")
        return 1
    try:
        check(j, p.returncode)
    except AssertionError as e:
        print(f"check failed: {e}\nexit {p.returncode}\nstdout:\n{p.stdout[:4000]}\nstderr:\n{p.stderr}")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
