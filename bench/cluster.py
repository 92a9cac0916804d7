# SPDX-License-Identifier: Apache-2.0
"""How close dpas-measure's predicted step time comes to the measured one on an emulated cluster
(bench/cluster.sh, `make bench-cluster`; figures in docs/measuring.md). A benchmark, not a test:
on a shared machine the measured time moves with the load, which is printed beside every case.

  transfer  4 hosts x 1 rank. Out of sample: a calibration sweep on 2 of the hosts (one rank per
            host) whose sizes leave out every size under test (3, 6, ..., 96 MiB: no power of two),
            from which the time on all 4 hosts is predicted (basis `transferred`: the nccl model
            at a scale no file measured); beside it the same-cluster control, a sweep of the same
            sizes on the 4 hosts themselves (basis `interpolated`, or `extrapolated_size` where a
            collective is smaller than every size measured). Each case is measured once (the
            median of ITERS steps, of the slowest rank) and predicted from both calibrations with
            the same measured compute time, so the control's error is the measurement's and the
            model's at a measured scale, and the difference between the two rows is what the
            transfer from 2 to 4 hosts adds (the last line of the summary: the two predictions'
            ratio, which no measurement noise enters), where the schedule runs the collective the
            sweeps timed: here MPI_Allreduce on 4 hosts took far longer than the sharded schedules'
            exchange of the same bytes (docs/measuring.md).
  hier      2 hosts x 2 ranks: calibrated between the hosts (one rank per host) and inside one host,
            the same sizes left out, predicted at 2 x 2, a layout neither sweep ran, with the
            library's hierarchical alpha-beta model (no basis or band: it is not the nccl model).

usage: cluster.py transfer|hier MEASURE DPAS OUT.json   (inside emucluster.sh)
       cluster.py report ALL.json PART.json...          (the table, in markdown; the parts
                                                         written together to ALL.json)"""
import json
import os
import statistics
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests",
                                "cluster"))
import cluster_cases as cc  # noqa: E402  (the runs and the deterministic checks)

QUICK = bool(os.environ.get("BENCH_CLUSTER_QUICK"))  # a fast pass through the machinery
SWEEP = "192K..1536K" if QUICK else "3M..96M"
SWEEP_ITERS = 3 if QUICK else 9  # the median of 9 per size: one slow call can move a fit by 30%
GRADIENTS = (1 << 16,) if QUICK else (1 << 20, 1 << 22)  # coordinates: 4 and 16 MiB of fp32
ITERS, WARMUP = (3, 1) if QUICK else (9, 2)


def load_average():
    with open("/proc/loadavg") as f:
        return float(f.read().split()[0])


def fits(dpas, path):
    """The alpha-beta line of each collective of a sweep (the links' speed, for the record)."""
    c = cc.calibration(dpas, path)
    return {f["collective"]: {"alpha_s": f["alpha_s"], "beta_bytes_per_s": f["beta_bytes_per_s"]}
            for f in c["fits"] if f["model"] == "alpha_beta"}


def band_of(tm):
    """A time_model's band as [low, high], or None (dpas-measure's time_band_low_s/high_s)."""
    lo, hi = tm.get("time_band_low_s"), tm.get("time_band_high_s")
    return None if lo is None or hi is None else [lo, hi]


def row(case, calibrated_on, j, network=None):
    """One table row from a run's JSON: its prediction, or (network) another calibration's
    network time and band with this run's measured compute."""
    s, tm = j["summary"], j["time_model"]
    src = network or {"network_s": s["predicted_network_s"], "band_s": band_of(tm),
                      "basis": tm["time_basis"], "model": tm["network_model"]}
    c = s["compute_median_s"]
    pred = src["network_s"] + c if src["network_s"] is not None else None
    band = [src["band_s"][0] + c, src["band_s"][1] + c] if src["band_s"] else None
    t = s["time_median_s"]
    return {"case": case, "calibrated_on": calibrated_on, "basis": src["basis"],
            "model": src["model"], "predicted_s": pred, "band_s": band, "measured_s": t,
            "compute_s": c, "ratio": t / pred if pred else None,
            "inside_band": None if band is None else band[0] <= t <= band[1]}


def transfer(measure, dpas, tmp):
    n = 4
    two = cc.sweep(measure, os.path.join(tmp, "sweep_2hosts.txt"), ["-np", "2"], SWEEP, SWEEP_ITERS)
    load_two = load_average()
    four = cc.sweep(measure, os.path.join(tmp, "sweep_4hosts.txt"), ["-np", "4"], SWEEP, SWEEP_ITERS)
    load_four = load_average()
    under_test = [c for d in GRADIENTS for sch, _ in cc.CASES for c in cc.collective_sizes(sch, n, d)]
    cc.check_calibration(dpas, two, 2, 1, SWEEP, under_test)
    cc.check_calibration(dpas, four, 4, 1, SWEEP, under_test)
    rows = []
    for schedule, rule in cc.CASES:
        for d in GRADIENTS:
            case = f"{schedule}+{rule}, {4 * d / cc.MiB:g} MiB"
            # measured once, predicted from the 2-host sweep ...
            j = cc.run_case(measure, n, schedule, rule, d, ["--calibration", two], ITERS, WARMUP)
            load = load_average()
            cc.check_bytes(j, n, schedule, d)
            # ... and from the 4-host sweep: one step, for its prediction only
            k = cc.run_case(measure, n, schedule, rule, d, ["--calibration", four], 1, 0)
            control = {"network_s": k["summary"]["predicted_network_s"],
                       "band_s": band_of(k["time_model"]), "basis": k["time_model"]["time_basis"],
                       "model": k["time_model"]["network_model"]}
            for r in (row(case, "2 hosts", j), row(case, "4 hosts (control)", j, control)):
                r["load"] = load
                rows.append(r)
            print(f"{case}: measured {rows[-1]['measured_s']:.4f} s, predicted "
                  f"{rows[-2]['predicted_s']:.4f} s from 2 hosts, {rows[-1]['predicted_s']:.4f} s "
                  f"from 4, load {load:.1f}", file=sys.stderr, flush=True)
    return {"part": "transfer", "title": "4 hosts x 1 rank, 1 Gbit/s links, predicted from a sweep "
            "on 2 hosts and (control) on the 4 hosts", "sweep": SWEEP, "sweep_iters": SWEEP_ITERS,
            "iters": ITERS, "warmup": WARMUP, "rows": rows,
            "calibrations": {"on 2 hosts": dict(fits(dpas, two), load=load_two),
                             "on 4 hosts": dict(fits(dpas, four), load=load_four)}}


def hier(measure, dpas, tmp):
    n = 4
    host0 = open(os.environ["DPAS_CLUSTER_HOSTFILE"]).read().split()[0]
    inter = cc.sweep(measure, os.path.join(tmp, "sweep_2hosts.txt"), ["-np", "2", "--npernode", "1"],
                     SWEEP, SWEEP_ITERS)
    load_inter = load_average()
    intra = cc.sweep(measure, os.path.join(tmp, "sweep_1host.txt"), ["-np", "2", "--host", f"{host0}:2"],
                     SWEEP, SWEEP_ITERS)
    load_intra = load_average()
    cc.check_calibration(dpas, inter, 2, 1, SWEEP, [])
    cc.check_calibration(dpas, intra, 1, 2, SWEEP, [])
    rows = []
    for schedule, rule in cc.CASES[:2]:  # the sharded schedules are not predicted here
        for d in GRADIENTS:
            case = f"{schedule}+{rule}, {4 * d / cc.MiB:g} MiB"
            j = cc.run_case(measure, n, schedule, rule, d,
                            ["--calibration", inter, "--intra-calibration", intra], ITERS, WARMUP)
            load = load_average()
            cc.check_bytes(j, n, schedule, d)
            r = row(case, "2 hosts x 1 + 1 host x 2", j)
            r["load"] = load
            rows.append(r)
            print(f"{case}: measured {r['measured_s']:.4f} s, predicted {r['predicted_s']:.4f} s, "
                  f"load {load:.1f}", file=sys.stderr, flush=True)
    return {"part": "hier", "title": "2 hosts x 2 ranks, 1 Gbit/s between hosts, predicted from "
            "sweeps between 2 hosts (1 rank each) and inside 1 host (2 ranks): the hierarchical "
            "alpha-beta model", "sweep": SWEEP, "sweep_iters": SWEEP_ITERS, "iters": ITERS,
            "warmup": WARMUP, "rows": rows,
            "calibrations": {"between hosts": dict(fits(dpas, inter), load=load_inter),
                             "inside a host": dict(fits(dpas, intra), load=load_intra)}}


def fmt(x, spec=".4f"):
    return "—" if x is None else format(x, spec)


def summary(rows):
    """Median and worst |measured / predicted - 1|, and how many measured times fell in the band."""
    err = [abs(r["ratio"] - 1) for r in rows if r["ratio"] is not None]
    banded = [r for r in rows if r["inside_band"] is not None]
    inside = sum(r["inside_band"] for r in banded)
    return (f"median error {100 * statistics.median(err):.1f}%, worst {100 * max(err):.1f}%"
            + (f", inside the band {inside} of {len(banded)}" if banded else ""))


def report(parts):
    for p in parts:
        print(f"\n**{p['title']}** (sweeps {p['sweep']}, median of {p['sweep_iters']} calls per "
              f"size; each step time the median of {p['iters']} steps after {p['warmup']}):\n")
        for name, c in p["calibrations"].items():
            lines = ", ".join(f"{k} α {1e3 * v['alpha_s']:.2g} ms, β {v['beta_bytes_per_s'] / 1e6:.1f}"
                              " MB/s" for k, v in c.items() if k != "load")
            print(f"- calibration {name} (load average {c['load']:.1f}): {lines}")
        print("\n| case | calibrated on | basis | predicted s | band s | measured s | "
              "measured / predicted | inside band | load |")
        print("|---|---|---|---:|---|---:|---:|---|---:|")
        for r in p["rows"]:
            band = "—" if r["band_s"] is None else f"{r['band_s'][0]:.4f}–{r['band_s'][1]:.4f}"
            inside = {None: "—", True: "yes", False: "**no**"}[r["inside_band"]]
            print(f"| {r['case']} | {r['calibrated_on']} | {r['basis'] or '— (alpha-beta)'} | "
                  f"{fmt(r['predicted_s'])} | {band} | {fmt(r['measured_s'])} | "
                  f"{fmt(r['ratio'], '.3f')} | {inside} | {r['load']:.1f} |")
        print()
        groups = {}
        for r in p["rows"]:
            groups.setdefault(r["calibrated_on"], []).append(r)
        for name, rs in groups.items():
            print(f"- calibrated on {name}: {summary(rs)}")
        if p["part"] == "transfer":
            t = {r["case"]: r for r in groups["2 hosts"]}
            c = {r["case"]: r for r in groups["4 hosts (control)"]}
            q = [t[k]["predicted_s"] / c[k]["predicted_s"] for k in t]
            print("- the transfer's own error, predicted from 2 hosts / predicted from 4 (no "
                  f"measurement in it): median {statistics.median(q):.3f}, from {min(q):.3f} to "
                  f"{max(q):.3f}")
        loads = [r["load"] for r in p["rows"]]
        print(f"- load average (1 min) during the cases: {min(loads):.1f} to {max(loads):.1f}")


def main():
    what = sys.argv[1]
    if what == "report":
        parts = []
        for path in sys.argv[3:]:
            with open(path) as f:
                parts.append(json.load(f))
        with open(sys.argv[2], "w") as f:
            json.dump(parts, f, indent=1)
        report(parts)
        return 0
    measure, dpas, out = sys.argv[2:5]
    with tempfile.TemporaryDirectory() as tmp:
        result = {"transfer": transfer, "hier": hier}[what](measure, dpas, tmp)
    result.update(cpus=os.cpu_count(), quick=QUICK)
    with open(out, "w") as f:
        json.dump(result, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
