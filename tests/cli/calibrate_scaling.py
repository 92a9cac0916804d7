# SPDX-License-Identifier: Apache-2.0
"""dpas calibrate's nccl model transfers to scales no file measured.

Synthetic files (scripts/gen_nccl_scaling.py: times from the structure of NCCL's tuning model with
known latencies and bandwidths, written independently of dpas in Python) at some scales; dpas
fits them and predicts another scale, which the generator's formula gives exactly. Then the basis
of each kind of answer, the refusals (two curves at one scale, bad --at), and one real series
(Polaris, tests/data/nccl-scaling): 32 ranks predicting 2160.

Usage: python3 calibrate_scaling.py DPAS GENERATOR DATA_DIR"""
import importlib.util
import json
import os
import statistics
import subprocess
import sys
import tempfile

DPAS, GEN, DATA = sys.argv[1], sys.argv[2], sys.argv[3]
spec = importlib.util.spec_from_file_location("gen", GEN)
gen = importlib.util.module_from_spec(spec)
spec.loader.exec_module(gen)


def run(*args, code=0):
    p = subprocess.run([DPAS, "calibrate", *args], capture_output=True, text=True)
    assert p.returncode == code, (args, p.returncode, p.stdout, p.stderr)
    return p


def files(d, coll, scales):
    out = []
    for nodes, g in scales:
        path = os.path.join(d, f"{coll}_{nodes}x{g}.txt")
        with open(path, "w") as f:
            subprocess.run([sys.executable, GEN, coll, str(nodes), str(g)], stdout=f, check=True)
        out.append(path)
    return out


def transfer(d, coll, scales, at):
    """Fit at `scales`, predict at `at`; the errors against the generator, and the band's hits."""
    nodes, g = at
    doc = json.loads(run(*files(d, coll, scales), "--at", f"{nodes}x{g}", "-o", "json").stdout)
    errs, inside = [], 0
    for p in doc["predictions"]:
        assert p["time_basis"] == "transferred" and p["ranks"] == nodes * g, p
        assert p["nodes"] == nodes and p["ranks_per_node"] == g, p
        want = gen.time(coll, nodes, g, p["bytes"])
        errs.append(abs(p["time_s"] / want - 1))
        inside += p["time_band_low_s"] <= want <= p["time_band_high_s"]
    return doc, errs, inside / len(errs)


def check_transfers(d):
    cases = [("all_reduce", [(2, 4), (8, 4), (32, 4)], (128, 4)),   # more nodes: ring and tree
             ("all_gather", [(2, 4), (8, 4), (32, 4)], (128, 4)),   # ring hops grow with ranks
             ("all_reduce", [(4, 1), (4, 2), (4, 4)], (4, 8)),      # more GPUs (NICs) per node
             ("all_reduce", [(1, 4), (4, 4), (16, 4)], (1, 8)),     # inside one node
             ("all_gather", [(2, 8), (8, 8)], (64, 8))]             # two scales, 8x the nodes
    for coll, scales, at in cases:
        doc, errs, hit = transfer(d, coll, scales, at)
        worst, med = max(errs), statistics.median(errs)
        print(f"{coll} {scales} -> {at}: median {med:.2%}, worst {worst:.2%}, band holds {hit:.0%}")
        assert med <= 0.03 and worst <= 0.10, (coll, scales, at, errs)
        assert hit >= 0.8, (coll, scales, at, hit)  # the goal for the band
        model = doc["nccl_models"][0]
        if len({g for _, g in scales if _ > 1}) >= 2 or all(n > 1 for n, _ in scales):
            bw = model["inter_bw_bytes_per_s"]
            assert abs(bw / gen.INTER - 1) <= 0.05, (coll, scales, bw)


def check_bases(d):
    paths = files(d, "all_reduce", [(2, 4), (8, 4)])
    doc = json.loads(run(*paths, "--at", "8x4,32x4", "--predict", "1MiB,3MiB,4GiB", "-o",
                         "json").stdout)
    got = {(p["ranks"], p["bytes"]): p for p in doc["predictions"]}
    assert got[(32, 1 << 20)]["time_basis"] == "measured", got
    assert got[(32, 1 << 20)]["time_s"] == got[(32, 1 << 20)]["time_band_low_s"]  # out- and in-place equal
    assert got[(32, 3 << 20)]["time_basis"] == "interpolated", got
    assert got[(32, 4 << 30)]["time_basis"] == "extrapolated_size", got
    assert got[(128, 1 << 20)]["time_basis"] == "transferred", got
    for p in doc["predictions"]:
        assert p["time_band_low_s"] <= p["time_s"] <= p["time_band_high_s"], p
    # the scale as RANKS takes the files' ranks per node: 128 ranks = 32 nodes x 4
    doc = json.loads(run(*paths, "--at", "128", "--predict", "1MiB", "-o", "json").stdout)
    assert all(p["nodes"] == 32 and p["ranks_per_node"] == 4 for p in doc["predictions"]), doc


def check_refusals(d):
    a = files(d, "all_reduce", [(2, 4)])[0]
    b = os.path.join(d, "copy.txt")
    with open(a) as src, open(b, "w") as dst:
        dst.write(src.read())
    p = run(a, b, code=1)  # the same bytes twice: one run given twice, refused naming both
    assert 'holds the same bytes as' in p.stderr and "copy.txt" in p.stderr, p.stderr
    with open(a) as src, open(b, "w") as dst:  # another run of that scale (one more line)
        dst.write(src.read() + "# a second run\n")
    p = run(a, b)  # two runs of one scale: one curve, their median (here equal: spread x1)
    assert "2 runs of this scale merged" in p.stderr, p.stderr
    run(a, b, "--test", "2")  # one of them chosen: read
    for at, words in (("2161", "not a whole number of nodes"), ("0", "in digits"), ("1", "at least 2 ranks"),
                      ("x4", "NODESxRANKS_PER_NODE"), ("4x", "NODESxRANKS_PER_NODE"),
                      ("8,8", "is given twice"), ("9", "not a whole number of nodes")):
        p = run(a, "--at", at, code=1)
        assert words in p.stderr, (at, p.stderr)
        assert not p.stdout, at
    p = run(a, "--test", "3", code=1)
    assert "holds 1 test" in p.stderr, p.stderr


def check_no_node_trend(d):
    """No trend carried beyond the node counts measured (issue 27: a node-count power law fitted
    on 1-8 nodes put 4 GiB at 128 nodes at 479 ms where 95 ms was measured). Files at 2, 4 and 8
    nodes whose bandwidth across nodes falls as (nodes/2)^-0.5 (the generator's formula); at 128
    nodes the model holds the bus bandwidth of the largest node count measured (8), where the
    power law would carry it down a further (128/8)^0.5 = 4x. Property: the predicted bus
    bandwidth at 1 GiB is within 20% of the generator's at 8 nodes, x4 per node."""
    paths = []
    for nodes in (2, 4, 8):
        path = os.path.join(d, f"gamma_{nodes}x4.txt")
        with open(path, "w") as f:
            subprocess.run([sys.executable, GEN, "all_reduce", str(nodes), "4", "0.5"], stdout=f,
                           check=True)
        paths.append(path)
    doc = json.loads(run(*paths, "--at", "128x4", "--predict", "1GiB", "-o", "json").stdout)
    p = doc["predictions"][0]
    n = 128 * 4
    busbw = 2 * (n - 1) / n * (1 << 30) / p["time_s"]
    at8 = gen.INTER * 4 * (8 / 2) ** -0.5
    print(f"128 nodes from 2-8 with a node-count loss: busbw {busbw / 1e9:.2f} GB/s, "
          f"{at8 / 1e9:.2f} at 8 nodes, {at8 / 4 / 1e9:.2f} by the power law")
    assert abs(busbw / at8 - 1) <= 0.2, (busbw, at8)


def check_polaris():
    """The issue's case: fitted at 32 ranks, 16 MiB at 2160 ranks (3.5368 ms measured, line 2189
    of the 2160-rank file) came out at 0.18 s by ring steps. From the 32-rank file alone it must be
    within 2x of the measurement and the band must hold it."""
    f32 = os.path.join(DATA, "polaris_nccl2.18_tuned_8nodes_32ranks_all_reduce.dat")
    doc = json.loads(run(f32, "--at", "540x4", "--predict", "16MiB", "-o", "json").stdout)
    p = doc["predictions"][0]
    measured = 3536.8e-6
    print(f"Polaris 32 -> 2160 ranks at 16 MiB: {p['time_s'] * 1e3:.3f} ms, band "
          f"{p['time_band_low_s'] * 1e3:.3f}-{p['time_band_high_s'] * 1e3:.3f} ms, measured 3.537 ms")
    assert 0.5 <= p["time_s"] / measured <= 2, p
    assert p["time_band_low_s"] <= measured <= p["time_band_high_s"], p


def main():
    with tempfile.TemporaryDirectory() as d:
        check_transfers(d)
        check_bases(d)
        check_no_node_trend(d)
        check_refusals(d)
    check_polaris()
    return 0


if __name__ == "__main__":
    sys.exit(main())
