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

D = 1 << 20  # coordinates: divisible by 2, 4 and 8, so shards are equal
S = 4 * D    # fp32 gradient bytes


def expected(schedule, n):
    if schedule in ("allreduce", "sharded"):
        return 2 * (n - 1) * S // n
    if schedule == "allgather":
        return (n - 1) * S
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


def run(mpiexec, prog, n, args):
    cmd = [mpiexec, "--allow-run-as-root", "--oversubscribe", "--mca", "btl", "self,tcp",
           "--mca", "btl_tcp_if_include", "lo", "-np", str(n), prog, "--params", str(D),
           "--iters", "3", "--warmup", "1", "-o", "json"] + args
    env = dict(os.environ, ASAN_OPTIONS="detect_leaks=0")
    return subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=300)


def main():
    if sys.argv[3] == "list":
        print(";".join(CASES))
        return 0
    n, args, kind = CASES[sys.argv[3]]
    p = run(sys.argv[1], sys.argv[2], n, args)
    if kind == "error":
        assert p.returncode == 1, (p.returncode, p.stdout, p.stderr)
        assert "krum (blanchard) needs n >= 2f + 3" in p.stderr, p.stderr
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
        want = expected(sched, n)
    for r in j["per_rank"]:
        assert r["predicted_bytes"] == want, (r, want)
        ratio = r["measured_bytes"] / want
        assert abs(ratio - 1) <= 0.005, f"rank {r['rank']}: measured {r['measured_bytes']} vs {want}"
    if kind == "byzantine":
        dist = j["distance_from_honest_mean"]
        # 3 of 8 ranks send 100x their gradient: the mean is dragged ~37x the honest norm away,
        # the median stays within the honest noise
        assert dist["mean"] > 10 and dist["rule"] < 0.5, dist
    return 0


if __name__ == "__main__":
    sys.exit(main())
